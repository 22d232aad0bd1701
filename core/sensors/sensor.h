// A sensor at run time: its validated configuration, output buffers and per-env state.
#ifndef TAXEL_CORE_SENSORS_SENSOR_H_
#define TAXEL_CORE_SENSORS_SENSOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/common/ids.h"
#include "core/sensors/probe_layout.h"
#include "core/sensors/sensor_spec.h"

namespace taxel::sensors {

/// Which branch a read returns: with imperfections (measured) or clean (ground truth). Until a
/// sensor has an imperfection configured, both branches hold the same numbers.
enum class Branch { kGroundTruth = 0, kMeasured = 1 };

/// Output channels. Which ones a sensor fills depends on its kind:
///   ContactProbe       contact, depth
///   ContactDepthProbe  depth, normal, area, partner
///   KinematicTaxel     force, torque
/// Layout: env-major, then probe, then channel: index (env·n + probe)·channels + c.
enum class Channel { kContact, kDepth, kNormal, kArea, kPartner, kForce, kTorque };
inline constexpr int kNumChannels = 7;
absl::string_view ChannelName(Channel c);
/// Values per probe for a channel (3 for vectors, else 1).
int ChannelWidth(Channel c);

struct SensorOutputs {
  std::vector<uint8_t> contact;  ///< 0/1
  std::vector<float> depth;      ///< m
  std::vector<float> normal;     ///< unit, link frame, out of the partner
  std::vector<float> area;       ///< m², spherical cap π(2Rd − d²)
  std::vector<int32_t> partner;  ///< canonical link index of the deepest partner, −1 none
  std::vector<float> force;      ///< N, link frame
  std::vector<float> torque;     ///< N·m, link frame
};

class Sensor {
 public:
  /// Validates the kind-specific options (the scene resolves links first). `link` is the sensor
  /// link; `ignored_links` its filter list; `num_links` the scene's link count.
  /// Errors: INVALID_ARGUMENT naming `field` and the option.
  static absl::StatusOr<std::unique_ptr<Sensor>> Create(SensorId id, SensorSpec spec, LinkIndex link,
                                                        const std::vector<LinkIndex>& ignored_links,
                                                        int num_links, int num_envs, absl::string_view field);

  /// Bytes the buffers of a sensor with this spec would take for `num_envs` envs (for limits,
  /// checked before anything is allocated).
  static size_t EstimateBytes(const SensorSpec& spec, int num_envs);

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

  const SensorOutputs& outputs(Branch b) const { return b == Branch::kMeasured && has_measured_ ? measured_ : truth_; }
  SensorOutputs& mutable_truth() { return truth_; }
  /// Schmitt-trigger latch per (env, probe) of the ground-truth branch.
  std::vector<uint8_t>& latch() { return latch_; }

  /// Zeroes the outputs and per-env state of env e (Reset).
  void ResetEnv(int env);
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
  SensorOutputs truth_, measured_;
  bool has_measured_ = false;
  std::vector<uint8_t> latch_;
};

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_SENSOR_H_
