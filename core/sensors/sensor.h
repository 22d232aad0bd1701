// A sensor at run time: its validated configuration, output buffers and per-env state.
#ifndef TAXEL_CORE_SENSORS_SENSOR_H_
#define TAXEL_CORE_SENSORS_SENSOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/common/ids.h"
#include "core/common/workspace.h"
#include "core/sensors/imperfections.h"
#include "core/sensors/probe_layout.h"
#include "core/sensors/sensor_spec.h"

namespace taxel::sensors {

class TrackedGeometry;  // elastomer / proximity state, defined in tracked_geometry.h

/// Which branch a read returns: with imperfections (measured) or clean (ground truth). A sensor
/// without imperfections returns the same numbers on both.
enum class Branch { kGroundTruth = 0, kMeasured = 1 };

/// Output channels. Which ones a sensor fills depends on its kind:
///   ContactProbe       contact, depth
///   ContactDepthProbe  depth, normal, area, partner
///   KinematicTaxel     force, torque
///   ElastomerTaxel     displacement
///   ProximityTaxel     force, torque
/// Layout: env-major, then probe, then channel: index (env·n + probe)·width + c.
enum class Channel { kContact, kDepth, kNormal, kArea, kPartner, kForce, kTorque, kDisplacement };
inline constexpr int kNumChannels = 8;
absl::string_view ChannelName(Channel c);

/// Which kernel evaluates a sensor kind (Scene::EvaluateSensors).
enum class Evaluator {
  kProbeRange,  ///< per probe against the broad-phase candidates (probe_kernels.h), any probe range
  kElastomer,   ///< the whole gel per env: dilation + shear (tracked_geometry.h)
  kProximity,   ///< per probe against the tracked links' point clouds
};

/// What a sensor kind is, in one row per kind (the switches over kinds read this table).
struct SensorKindTraits {
  absl::string_view name;            ///< "contact_probe", ... (SensorKindName)
  std::vector<Channel> channels;     ///< ground-truth and measured outputs, in order
  std::vector<ChannelGroup> groups;  ///< how the measured pipeline sees a probe's channels
  std::vector<Channel> history;      ///< channels ReadSensors.history can return
  bool tracks_links = false;         ///< has track_links and sampled surface points
  bool needs_velocities = false;     ///< reads link velocities (twists or finite differences)
  Evaluator evaluator = Evaluator::kProbeRange;
};
const SensorKindTraits& TraitsOf(SensorKind kind);
/// Values per probe for a channel (3 for vectors, else 1).
int ChannelWidth(Channel c);

/// Area (m²) of the spherical cap a surface cuts from a probe of radius R (m) at depth d (m):
/// π(2Rd − d²) with d clamped to [0, 2R]. Both branches of a ContactDepthProbe use it on the depth
/// they report (as stored, float), so equal depths give bit-identical areas.
inline double SphericalCapArea(double radius, double depth) {
  const double d = depth < 0 ? 0.0 : depth > 2 * radius ? 2 * radius : depth;
  return 3.141592653589793 * (2 * radius * d - d * d);
}

struct SensorOutputs {
  std::vector<uint8_t> contact;     ///< 0/1
  std::vector<float> depth;         ///< m
  std::vector<float> normal;        ///< unit, link frame, out of the partner
  std::vector<float> area;          ///< m², spherical cap π(2Rd − d²)
  std::vector<int32_t> partner;     ///< canonical link index of the deepest partner, −1 none
  std::vector<float> force;         ///< N, link frame
  std::vector<float> torque;        ///< N·m, link frame
  std::vector<float> displacement;  ///< m, link frame (marker displacement)
  // Gradients (ground truth only, allocated by Sensor::EnableGradients; probe_gradients.h):
  std::vector<float> depth_gradient;  ///< [E, n, 2, 6]: ∂depth/∂(sensor, partner) twist, m/m and m/rad
  std::vector<float> force_gradient;  ///< [E, n, 3, 2, 6]: ∂force_L/∂(sensor, partner) twist, N/m, N/rad
  /// The gradient buffer of channel c: force_gradient for kForce, depth_gradient otherwise.
  std::vector<float>& gradient_of(Channel c) { return c == Channel::kForce ? force_gradient : depth_gradient; }
  const std::vector<float>& gradient_of(Channel c) const {
    return c == Channel::kForce ? force_gradient : depth_gradient;
  }
};

/// The channel whose gradient a sensor kind reports (ReadSpec.gradients): kDepth for
/// ContactProbe and ContactDepthProbe, kForce for KinematicTaxel; false for the other kinds.
bool GradientChannelOf(SensorKind kind, Channel* channel);
/// Floats of gradient per probe of a sensor kind: 12 for a depth, 36 for a force, 0 without.
int GradientWidth(SensorKind kind);
/// The reading name of a channel's gradient: "depth_gradient", "force_gradient".
absl::string_view GradientName(Channel c);

/// Where a probe's last implicit projection ended (Sensor::warm_starts): the partner link and the
/// foot point in that shape's frame, float (a start needs no more). link −1: none.
struct ProbeWarmStart {
  int32_t link = -1;
  float foot_S[3] = {0, 0, 0};
};

class Sensor {
 public:
  /// Probes per evaluation task of the non-elastomer kinds (see probes_per_task()).
  static constexpr int kProbesPerTask = 1024;

  /// Validates the kind-specific options (the scene resolves links first). `link` is the sensor
  /// link; `ignored_links` its filter list; `num_links` the scene's link count; `seed` the
  /// scene's seed and `env_offset` its global index of env 0 (imperfection draws are keyed by
  /// env_offset + env). Errors: INVALID_ARGUMENT naming `field` and the option.
  /// @pre env_offset + num_envs <= 2^32.
  static absl::StatusOr<std::unique_ptr<Sensor>> Create(SensorId id, SensorSpec spec, LinkIndex link,
                                                        const std::vector<LinkIndex>& ignored_links, int num_links,
                                                        int num_envs, uint64_t seed, absl::string_view field,
                                                        uint32_t env_offset = 0);
  ~Sensor();

  /// Bytes the buffers of a sensor with this spec would take for `num_envs` envs (for limits,
  /// checked before anything is allocated), with its warm starts when `warm_starts`.
  static size_t EstimateBytes(const SensorSpec& spec, int num_envs, bool warm_starts = false);

  SensorId id() const { return id_; }
  const SensorSpec& spec() const { return spec_; }
  SensorKind kind() const { return spec_.kind; }
  LinkIndex link() const { return link_; }
  const ProbeLayout& layout() const { return layout_; }
  int num_probes() const { return layout_.size(); }
  int num_envs() const { return num_envs_; }
  /// True if this sensor ignores link l (its own link and its filter_links).
  bool ignores(LinkIndex l) const { return ignored_[l.value()] != 0; }
  double release_threshold() const { return release_threshold_; }
  /// The channels this kind produces, in the order of the Channel enum.
  const std::vector<Channel>& channels() const { return channels_; }
  bool has_channel(Channel c) const;

  /// The outputs of branch b. The measured force and torque of a kinematic or proximity taxel whose
  /// pipeline keeps a ring (a delay or a history) stay in the ring after a step; the first call
  /// for the measured branch after a step copies them into the arrays (thread-safe). Readers that
  /// copy them out anyway use CopyMeasured instead, which reads them where they are.
  const SensorOutputs& outputs(Branch b) const {
    if (b != Branch::kMeasured || !pipeline_) return truth_;
    if (measured_in_ring()) MaterializeMeasured();
    return measured_;
  }
  SensorOutputs& mutable_truth() { return truth_; }
  /// Schmitt-trigger latch per (env, probe) of the ground-truth branch.
  std::vector<uint8_t>& latch() { return latch_; }

  // ---- Measured branch ----
  /// The imperfection pipeline, or nullptr when the sensor has no imperfection configured.
  MeasuredPipeline* pipeline() { return pipeline_.get(); }
  const MeasuredPipeline* pipeline() const { return pipeline_.get(); }
  /// Values per probe of the measured pipeline (1 depth; 6 force + torque; 3 displacement).
  int measured_width() const;
  /// Probes per evaluation task: a sensor with at most this many is evaluated by one task per
  /// env (the elastomer's dilation couples every marker of an env: always one task).
  int probes_per_task() const { return kind() == SensorKind::kElastomerTaxel ? num_probes() : kProbesPerTask; }
  /// One task per env evaluates the whole sensor, and runs its measured branch right after.
  bool one_task_per_env() const { return num_probes() <= probes_per_task(); }
  /// Where the kernels write the measured branch's raw values (gain and noisy radius applied),
  /// n·width values for env e. A sensor evaluated by one task per env takes them from the task's
  /// workspace (the kernel and FinishMeasured run back to back in that task, inside one
  /// Workspace::Scope); a larger one keeps [E·n·width] of its own, read by a later pass.
  float* raw_measured(int env, Workspace& ws);
  /// Runs the pipeline for env e on `raw` (from raw_measured) and fills the measured outputs.
  void FinishMeasured(int env, uint64_t step, uint64_t steps_since_reset, double dt, float* raw, Workspace& ws);
  /// True when some env's measured force and torque are still in the pipeline's ring (see outputs()).
  bool measured_in_ring() const { return ring_pending_.load(std::memory_order_acquire); }
  /// Copies channel c (kForce or kTorque) of env e's measured reading into out (n·3 floats, any
  /// alignment: e.g. a response buffer) from where it is: the ring or the output arrays. The same
  /// values as outputs(kMeasured) holds. @pre pipeline() and the kind has c.
  void CopyMeasured(int env, Channel c, void* out) const;
  /// Grows the pipeline's ring when a step of `dt` needs more slots, first copying readings still
  /// in the old ring into the output arrays. Call before the step's measured branches.
  void PrepareMeasured(double dt);
  /// The channels a history read returns (those carried by the pipeline).
  const std::vector<Channel>& history_channels() const;
  /// Copies history sample h (0 newest) of env e, channel c, into out (n·width floats; zeros
  /// before that many samples). @pre pipeline() and c in history_channels().
  void CopyHistory(int env, int h, Channel c, float* out) const;

  // ---- Gradients (ReadSpec.gradients) ----
  /// Bytes EnableGradients allocates (0 when already enabled or the kind has no gradient).
  size_t GradientBytes() const;
  /// Allocates the gradient buffer of the ground-truth outputs (zeros); idempotent.
  void EnableGradients();
  /// Whether the kernels write gradients for the envs of the current step (Scene::Step sets it).
  void set_compute_gradients(bool on) { compute_gradients_ = on && GradientWidth(kind()) > 0; }
  bool compute_gradients() const { return compute_gradients_; }

  // ---- Warm starts of the implicit probe solve (per env, probe) ----
  /// Allocates one ProbeWarmStart per (env, probe) for the kinds evaluated per probe range (the
  /// scene does, when it has implicit shapes; counted by EstimateBytes(..., true)); idempotent.
  void EnableWarmStarts();
  /// The n warm starts of env e, or nullptr when not enabled.
  ProbeWarmStart* warm_starts(int env) {
    return warm_.empty() ? nullptr : &warm_[static_cast<size_t>(env) * layout_.size()];
  }

  // ---- Elastomer / proximity state (set by the scene) ----
  void set_tracked(std::unique_ptr<TrackedGeometry> tracked);
  TrackedGeometry* tracked() { return tracked_.get(); }
  const TrackedGeometry* tracked() const { return tracked_.get(); }

  /// Zeroes the outputs and per-env state of env e (Reset); redraws imperfection draws with
  /// `reset_count`.
  void ResetEnv(int env, uint32_t reset_count);
  size_t memory_bytes() const;

 private:
  Sensor() = default;
  SensorId id_;
  SensorSpec spec_;
  LinkIndex link_;
  ProbeLayout layout_;
  int num_envs_ = 0;
  std::vector<uint8_t> ignored_;
  double release_threshold_ = 0;
  std::vector<Channel> channels_;
  SensorOutputs truth_;
  // measured_'s force and torque of env e are at measured_ring_[e] (n·6 interleaved floats in the
  // pipeline's ring) when that is not null; ring_pending_ when any is. MaterializeMeasured copies
  // them into measured_ under materialize_mu_.
  mutable SensorOutputs measured_;
  mutable std::vector<const float*> measured_ring_;
  mutable std::atomic<bool> ring_pending_{false};
  mutable std::mutex materialize_mu_;
  void MaterializeMeasured() const;
  // The measured outputs of env e from the pipeline's sample `out` (nullptr: zeros), streamed
  // without a fence (FinishMeasured fences).
  void WriteMeasuredOutputs(int env, const float* out, Workspace& ws);
  std::vector<uint8_t> latch_, latch_measured_;
  std::vector<ProbeWarmStart> warm_;
  std::unique_ptr<MeasuredPipeline> pipeline_;
  std::vector<float> raw_measured_;
  std::unique_ptr<TrackedGeometry> tracked_;
  bool compute_gradients_ = false;
};

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_SENSOR_H_
