// What a client asks for when it adds a sensor: the kind, the link, the probe layout and options.
#ifndef TAXEL_CORE_SENSORS_SENSOR_SPEC_H_
#define TAXEL_CORE_SENSORS_SENSOR_SPEC_H_

#include <optional>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/string_view.h"
#include "core/contact/spring_damper_law.h"

namespace taxel::sensors {

enum class SensorKind {
  kContactProbe,       ///< contact flag per probe (Schmitt trigger on the depth)
  kContactDepthProbe,  ///< penetration depth (+ normal, cap area, partner link)
  kKinematicTaxel,     ///< spring–damper force and torque per probe
  kElastomerTaxel,     ///< gel-skin marker displacement (planned)
  kProximityTaxel,     ///< point-cloud proximity force (planned)
};

absl::string_view SensorKindName(SensorKind kind);

/// A sensor as specified by a client (unvalidated; Scene::AddSensor validates it).
struct SensorSpec {
  std::string name;  ///< unique in the scene
  SensorKind kind = SensorKind::kContactDepthProbe;
  /// The link carrying the sensor: "entity/link", or just "link" when that is unambiguous.
  std::string link;

  // Probe layout (link frame L). See ProbeLayout::Create.
  std::vector<Eigen::Vector3d> probe_local_pos;
  int grid_rows = 0, grid_cols = 0;  ///< rows·cols == probes for a grid, 0 for a flat list
  std::vector<double> probe_radius = {0.0};  ///< 1 shared value or one per probe (m)
  std::vector<Eigen::Vector3d> probe_local_normal;  ///< 0, 1 shared or one per probe

  /// Links whose geometry this sensor ignores (same naming as `link`).
  std::vector<std::string> filter_links;

  // ContactProbe: Schmitt trigger. On when depth ≥ contact_threshold; off when depth <
  // release_threshold (defaults to contact_threshold: no hysteresis; may be negative).
  double contact_threshold = 1e-4;
  std::optional<double> release_threshold;

  // KinematicTaxel force law.
  contact::SpringDamperParams spring_damper;
};

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_SENSOR_SPEC_H_
