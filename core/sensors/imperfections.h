// The measured branch of every sensor: hardware-style imperfections and timing (docs/reference.md#sensors).
//
// A sensor's kernel writes, per (env, probe), a "raw measured" vector of C channels computed with
// the noisy radius and the per-(env, probe) gain. MeasuredPipeline then applies, per env:
// crosstalk → hysteresis → random walk → white noise → bias → quantisation → dead taxels, then
// update period, history and delay. Every random draw comes from the counter-based generator
// keyed by (scene seed, purpose, sensor, global env = env_offset + env, probe·8 + channel, env step or
// reset count), so results never depend on thread count, scheduling or how the envs are sharded.
#ifndef TAXEL_CORE_SENSORS_IMPERFECTIONS_H_
#define TAXEL_CORE_SENSORS_IMPERFECTIONS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/common/rng.h"
#include "core/common/workspace.h"
#include "core/sensors/probe_layout.h"
#include "core/sensors/sensor_spec.h"

namespace taxel::sensors {

/// How the channels of one probe are laid out for crosstalk:
///  - kScalar: one value (depth) — the "normal" kernel;
///  - kForceLike: three components (force, displacement) split along the probe normal: the normal
///    component gets the normal kernel, the tangential part the shear kernel;
///  - kTorque: three components, the torque kernel.
enum class ChannelGroup { kScalar, kForceLike, kTorque };

/// Odd rows × cols Gaussian kernel, row-major, L1-normalised: K[a][b] ∝ exp(−(((a − rows/2)·row_spacing)²
/// + ((b − cols/2)·col_spacing)²) / (2σ²)). Errors: even or non-positive sizes, σ ≤ 0, spacing ≤ 0.
absl::StatusOr<std::vector<double>> GaussianCrosstalkKernel(int rows, int cols, double sigma, double row_spacing,
                                                            double col_spacing);

/// Width in channels of a channel group (1 for scalars, 3 for vectors).
inline int GroupWidth(ChannelGroup g) { return g == ChannelGroup::kScalar ? 1 : 3; }
/// The Gaussian kernel blended with the identity at `strength` s: (1 − s)·δ + s·G.
std::vector<double> BlendWithIdentity(std::vector<double> g, int rows, int cols, double strength);
/// True when K (rows × cols, odd) is the discrete delta: 1 at the centre, 0 elsewhere.
bool IsIdentityKernel(const std::vector<double>& K, int rows, int cols);

/// Checks an ImperfectionSpec against its layout; field names like "sensor.imperfections.noise".
absl::Status ValidateImperfections(const ImperfectionSpec& spec, const ProbeLayout& layout, absl::string_view field);

/// Purposes of the random streams (the Philox stream id).
enum RandomStream : uint32_t {
  kStreamRadius = 101,
  kStreamGain = 102,
  kStreamDead = 103,
  kStreamDeadValue = 104,
  kStreamWalk = 105,
  kStreamNoise = 106,
  kStreamJitter = 107,
};

class MeasuredPipeline {
 public:
  /// `groups` describes the C channels of a probe (their widths sum to C). Env e (local, 0-based)
  /// keys its random draws by the global env index env_offset + e (env sharding: the scene's
  /// SceneSpec::env_offset), so a pipeline with offset k draws what envs k.. of one with offset 0 draw.
  /// @pre ValidateImperfections(spec, layout) is OK; env_offset + num_envs <= 2^32.
  MeasuredPipeline(const ImperfectionSpec& spec, const ProbeLayout& layout, std::vector<ChannelGroup> groups,
                   int num_envs, uint64_t seed, int32_t sensor_id, uint32_t env_offset = 0);

  int channels() const { return channels_; }
  const ImperfectionSpec& spec() const { return spec_; }

  /// Radii used by the measured branch of probes [begin, end) of env e at env step `step`:
  /// end − begin values, max(0, R + (2u − 1)·probe_radius_noise) with u the uniform of Philox
  /// block (sensor, env, ⌊probe / 4⌋, step), word probe mod 4; R itself without radius noise and
  /// for fillers. The array is taken from `ws`, valid until the caller's Workspace::Scope ends.
  const double* MeasuredRadii(int env, int begin, int end, uint64_t step, Workspace& ws) const;
  /// Current gain of (env, probe).
  double gain(int env, int probe) const { return gains_[static_cast<size_t>(env) * n_ + probe]; }
  /// Overrides the gains of env e (n values) until the next reset redraws them (when a resample
  /// range is set) — Genesis' set_gain.
  void SetGains(int env, const double* gains);
  /// Replaces the noise levels (noise, random walk, bias) at run time.
  void SetNoise(double noise, double random_walk, double bias);

  /// Clears the state of env e and redraws its dead taxels, and its gains when a resample range is
  /// set, for reset number `reset_count` (0 at creation, which also sets the configured gains).
  /// Without a resample range, gains set with SetGains survive the reset.
  void ResetEnv(int env, uint32_t reset_count);

  /// Ring slots per env a step of `dt` needs: the history, and the largest delay (with jitter)
  /// in steps plus the current sample. A double: 1 s of delay at dt = 1e-12 s is 1e12 slots.
  double RingSlotsFor(double dt) const;
  /// Bytes the ring will hold after Prepare(dt) when it must grow for `dt` (the new ring is
  /// allocated before the old one is freed), 0 when it has room already.
  double RingGrowthBytes(double dt) const;
  /// Grows the delay ring if `dt` needs more slots than it has (call before Process in a step).
  /// @pre RingSlotsFor(dt) fits an int and its bytes were reserved (RingGrowthBytes).
  void Prepare(double dt);
  /// Bytes held by the per-env state, the ring and the kernels.
  size_t memory_bytes() const;

  /// Runs the stages for env e on raw[n·C] (the kernel's output with gain and noisy radius) and
  /// returns the measured sample the sensor reports now (n·C values, in raw, in the pipeline's state
  /// or taken from `ws`: valid until the next Process call for env e or the end of the caller's
  /// Workspace::Scope, whichever comes first), or nullptr when it reads 0 (a delay not yet filled). `step` is the
  /// env's step counter since creation (keys the random draws; 1 for its first step),
  /// `steps_since_reset` the count since its last reset (phases the update period; 1 for the
  /// first step). May work on raw in place. The ring slot is written with StreamCopyUnfenced: the
  /// caller issues StreamFence() before another thread may read the env's ring (as
  /// Sensor::FinishMeasured does).
  const float* Process(int env, uint64_t step, uint64_t steps_since_reset, double dt, float* raw, Workspace& ws);

  /// With `on`, Process returns the reported sample's ring slot whenever the pipeline keeps a ring
  /// (a delay or a history), never a workspace copy, and does not prefetch it: for a caller that
  /// reads it later, from the ring (Sensor's ring-backed readings). Off by default.
  void set_report_in_ring(bool on) { report_in_ring_ = on; }
  /// True when p points into the ring (a sample stays there until the env's next Process or
  /// ResetEnv, or a Prepare that grows the ring).
  bool InRing(const float* p) const {
    return !ring_data_.empty() && p >= ring_data_.data() && p < ring_data_.data() + ring_data_.size();
  }

  /// History sample h (0 = newest) of env e: n·C floats, or nullptr when fewer than h + 1
  /// samples exist since the last reset (the sample then reads 0).
  const float* History(int env, int h) const;
  int history_length() const { return spec_.history_length; }

 private:
  // Age in samples of what env e reports at `step` with a delay (0: the current sample), ≤ ring_ − 1.
  int DelayAge(int env, uint64_t step, double dt) const;
  // The value stages (hysteresis … quantisation, dead taxels, fillers) on sample xs[n·C] of env e.
  void ApplyStages(int env, uint64_t step, double dt, float* xs);
  void Crosstalk(const float* x, float* y, Workspace& ws) const;
  void CrossCorrelate(const float* x, int stride, int offset, const std::vector<double>& kernel, float* y, int y_stride,
                      int y_offset, Workspace& ws) const;
  // The Gaussian kernel's product form: (1 − s)·x + s·(g_rows ⊗ g_cols) ⋆ x, two 1D passes in
  // float. All channels of x (n·C, channel-interleaved) into y.
  void SeparableCorrelate(const float* x, float* y, Workspace& ws) const;

  ImperfectionSpec spec_;
  const ProbeLayout* layout_;
  std::vector<ChannelGroup> groups_;
  int n_, channels_, num_envs_;
  Philox4x32 rng_radius_, rng_gain_, rng_dead_, rng_dead_value_, rng_walk_, rng_noise_, rng_jitter_;
  int32_t sensor_id_;
  uint32_t env_offset_;  // global index of env 0: the env word of every random key is env_offset_ + env
  uint32_t GlobalEnv(int env) const { return env_offset_ + static_cast<uint32_t>(env); }

  // Crosstalk: one kernel per class (normal, shear, torque), size kr × kc; source weights for
  // the renormalize border mode.
  bool crosstalk_ = false;
  int kr_ = 0, kc_ = 0;
  std::vector<double> kernel_normal_, kernel_shear_, kernel_torque_;
  std::vector<double> source_weight_normal_, source_weight_shear_, source_weight_torque_;
  // Gaussian crosstalk: the same kernel for every channel, G[a, b] = g_rows[a]·g_cols[b].
  bool separable_ = false;
  std::vector<float> g_rows_, g_cols_;
  std::vector<float> inv_source_weight_;  // [n·C] 1 / source weight of each value's probe (renormalize), for the blur
  std::vector<uint8_t> active_;           // radius > 0

  // Per-env state.
  std::vector<double> gains_;                      // [E·n]
  // Dead probes as bits, DeadWords() 64-bit words per env (bit k of word k / 64: probe k), so
  // that a step finds an env's few dead probes from one cache line.
  std::vector<uint64_t> dead_;                     // [E·DeadWords()]
  size_t DeadWords() const { return (static_cast<size_t>(n_) + 63) / 64; }
  uint64_t* DeadBits(int env) { return &dead_[static_cast<size_t>(env) * DeadWords()]; }
  const uint64_t* DeadBits(int env) const { return &dead_[static_cast<size_t>(env) * DeadWords()]; }
  // Calls f(k, r) for each dead probe k of env e, ascending, r = 0, 1, … its rank among them.
  template <typename F>
  void ForEachDead(int env, F&& f) const;
  int DeadCount(int env) const {
    int count = 0;
    for (size_t w = 0; w < DeadWords(); ++w) count += __builtin_popcountll(DeadBits(env)[w]);
    return count;
  }
  std::vector<int32_t> inactive_;                  // probes with radius 0 (fillers), ascending
  // [E·n·C]: env e's block holds the values of its r-th dead probe at [r·C, (r + 1)·C).
  std::vector<float> dead_values_;
  std::vector<float> hyst_xi_, hyst_prev_, walk_;  // [E·n·C]
  std::vector<float> held_;  // [E·n·C] last sample while there is no ring (update period > 1 only)
  // Per block of kHystBlock values: 1 when its hysteresis state (ξ and x_prev) is all +0.
  static constexpr size_t kChunk = 512, kHystBlock = 64;
  size_t hyst_blocks_ = 0;
  std::vector<uint8_t> hyst_zero_;  // [E·hyst_blocks_]
  // Offset of the slot holding sample number `sample` of env e in a ring of `ring` slots per env.
  size_t RingOffset(int env, uint64_t sample, int ring) const {
    return (static_cast<size_t>(env) * ring + sample % ring) * static_cast<size_t>(n_) * channels_;
  }
  // Ring of the last `ring_` samples per env: [E][ring_][n·C]; written_[e] = samples pushed.
  int ring_ = 0;
  bool report_in_ring_ = false;
  std::vector<float> ring_data_;
  std::vector<uint64_t> written_;
};

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_IMPERFECTIONS_H_
