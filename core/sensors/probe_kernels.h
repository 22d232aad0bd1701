// The per-probe kernels of the SDF-query sensors (ContactProbe, ContactDepthProbe,
// KinematicTaxel). They take a range [begin, end) of probes of one sensor in one env, the shapes
// the broad phase found within reach, and write that range of the sensor's outputs. No
// allocation, no virtual call per probe; a range never writes outside itself, so ranges can run
// on any thread in any order with bit-identical results.
#ifndef TAXEL_CORE_SENSORS_PROBE_KERNELS_H_
#define TAXEL_CORE_SENSORS_PROBE_KERNELS_H_

#include <limits>

#include "Eigen/Core"
#include "absl/types/span.h"
#include "core/common/ids.h"
#include "core/common/pose.h"
#include "core/geometry/aabb.h"
#include "core/geometry/mesh_sdf_grid.h"
#include "core/geometry/shape.h"
#include "core/sensors/sensor.h"

namespace taxel::sensors {

/// Kinematic state of a rigid link in world: pose, linear velocity of its origin and angular
/// velocity (m/s, rad/s, world axes).
struct LinkKinematics {
  RigidTransform X_WL;
  Eigen::Vector3d v_W = Eigen::Vector3d::Zero();
  Eigen::Vector3d w_W = Eigen::Vector3d::Zero();

  /// Velocity of the material point of this link at p_WQ.
  Eigen::Vector3d PointVelocity(const Eigen::Vector3d& p_WQ) const { return v_W + w_W.cross(p_WQ - X_WL.p); }
};

/// One shape a probe may touch, prepared by the broad phase for one (env, sensor).
struct ProbeCandidate {
  const geometry::Shape* shape = nullptr;
  RigidTransform X_SW;      ///< world → shape frame
  Eigen::Matrix3d R_WS;     ///< shape → world rotation (for normals)
  geometry::Aabb bounds_W;  ///< the shape's bounds in world (infinite allowed)
  LinkIndex link;           ///< the partner link
  const LinkKinematics* partner = nullptr;
  /// The shape's narrow-band grid when the sensor uses sdf_backend GRID and the shape is a mesh
  /// that has one (queried instead of the shape); null otherwise.
  const geometry::MeshSdfGrid* grid = nullptr;

  geometry::SignedDistanceResult SignedDistance(const Eigen::Vector3d& p_SQ, double max_distance,
                                                const Eigen::Vector3d* warm_start = nullptr) const {
    return grid != nullptr ? grid->Query(p_SQ, max_distance) : shape->SignedDistance(p_SQ, max_distance, warm_start);
  }
};

/// The deepest contact of one probe: the smallest signed distance sd = min_g sd_g(o) over the
/// candidates within reach, so that depth(R) = max(0, R − sd) for any radius R ≤ reach. Ties keep
/// the first candidate in canonical order.
struct ProbeContact {
  double sd = std::numeric_limits<double>::infinity();  ///< m; +inf: nothing within reach
  double depth = 0;                                     ///< max(0, reach − sd)
  Eigen::Vector3d normal_W = Eigen::Vector3d::Zero();   ///< out of the partner, unit
  int candidate = -1;                                   ///< index into the candidate list, −1 none
  /// The winning candidate's query, in its shape frame S (for the normal's Hessian, gradients).
  geometry::SignedDistanceResult result_S;
  Eigen::Vector3d o_S = Eigen::Vector3d::Zero();  ///< the probe centre in S

  double DepthFor(double radius) const { return radius - sd > 0 ? radius - sd : 0.0; }
};

/// Finds the deepest contact of a sphere of radius `reach` at o_W over `candidates` (reach 0:
/// indentation of the point itself). `warm`, when non-null, is the probe's warm start
/// (Sensor::warm_starts): the implicit candidate of link warm->link starts its projection from
/// warm->foot_S; the start only saves iterations, the answer does not depend on it.
ProbeContact DeepestContact(const Eigen::Vector3d& o_W, double reach, absl::Span<const ProbeCandidate> candidates,
                            const ProbeWarmStart* warm = nullptr);

/// Keeps the foot point of `contact` as the probe's next warm start when its shape is implicit
/// (else clears it: the other shapes answer without a start).
void KeepWarmStart(const ProbeContact& contact, absl::Span<const ProbeCandidate> candidates, ProbeWarmStart* warm);

/// Evaluates probes [begin, end) of `sensor` in env `env`: the ground-truth branch, and when the
/// sensor has imperfections its raw measured values (noisy radius, gain) for the pipeline.
/// `step` is the env's step counter (keys the radius noise); `raw_measured` is env e's array
/// (Sensor::raw_measured; unused without a pipeline). Scratch from `ws`. When
/// sensor.compute_gradients(), also the ground-truth gradient of each probe (probe_gradients.h):
/// zero without contact. The sensor's warm starts (Sensor::warm_starts) of the range are read and
/// updated.
void EvaluateProbeRange(Sensor& sensor, int env, int begin, int end, uint64_t step, const LinkKinematics& sensor_link,
                        absl::Span<const ProbeCandidate> candidates, float* raw_measured, Workspace& ws);

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_PROBE_KERNELS_H_
