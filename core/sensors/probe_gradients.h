// Gradients of the probe readings with respect to the poses of the sensor link and the partner
// link (ReadSpec.gradients, docs/reference.md#gradients).
//
// Convention. A pose perturbation of a link L is a world twist ξ = (δt, δθ) (translation then
// rotation, world axes) applied about the link's origin p_WL: a material point p_W of L moves to
//   p_W + δt + δθ × (p_W − p_WL)            (X_WL ← (exp(δθ^)·R_WL, p_WL + δt) to first order),
// the same (v, ω) a StepRequest's twists hold, so that ḋ = ∂d/∂ξ_sensor · twist_sensor +
// ∂d/∂ξ_partner · twist_partner. With o the probe centre (moving with the sensor link), n the
// unit normal out of the partner at its foot point and sd the signed distance, depth d = R − sd:
//
//   ∂d/∂t_sensor = −n        ∂d/∂θ_sensor = −(o − p_WL) × n
//   ∂d/∂t_partner = n        ∂d/∂θ_partner = (o − p_WP) × n  (= (y − p_WP) × n, y = o − sd·n)
//
// (p_WL, p_WP: the sensor and partner link origins). The normal moves with both poses through
// the Hessian H = ∇²sd (world) at o:
//
//   ∂n/∂t_sensor = H         ∂n/∂θ_sensor = −H·[o − p_WL]×
//   ∂n/∂t_partner = −H       ∂n/∂θ_partner = −[n]× + H·[o − p_WP]×
//
// A KinematicTaxel's force F_L = R_LW·f(d, n, v) takes the chain rule through its law (law_jacobian.h)
// at fixed velocities v (the relative velocity at the probe is held, so the result is the exact
// derivative when the links' angular velocities are zero), plus the rotation of the link frame:
// ∂F_L/∂θ_sensor gains R_LW·[f]×.
#ifndef TAXEL_CORE_SENSORS_PROBE_GRADIENTS_H_
#define TAXEL_CORE_SENSORS_PROBE_GRADIENTS_H_

#include "Eigen/Core"
#include "core/sensors/sensor_spec.h"

namespace taxel::sensors {

/// Columns 0–5: the sensor link's twist (δt, δθ); 6–11: the partner link's.
using PoseJacobian3 = Eigen::Matrix<double, 3, 12>;
using PoseGradient = Eigen::Matrix<double, 1, 12>;

/// The geometry of one probe contact, all in world: probe centre o_W, unit normal n_W out of the
/// partner, ∇²sd at o_W (1/m; H_W = R_WS·H_S·R_SW), the two link origins.
struct ContactGeometry {
  Eigen::Vector3d o_W, n_W, p_WL, p_WP;
  Eigen::Matrix3d H_W = Eigen::Matrix3d::Zero();
};

/// ∂d/∂ξ of the depth d = R − sd (any R while d > 0).
PoseGradient DepthPoseGradient(const ContactGeometry& g);

/// ∂F_L/∂ξ of a KinematicTaxel's force (link frame, N per m or rad) for the contact of depth
/// `depth` > 0 with relative velocity v_rel_W of the partner with respect to the sensor at o.
/// R_LW: world → sensor link rotation; f_W: the law's force in world (R_LW·f_W is the reading).
/// The law (spring-damper or nonlinear) is spec.force_law. About 300 flops on a flat partner
/// (H = 0: faces, planes), 500 on a curved one.
PoseJacobian3 KinematicForcePoseJacobian(const SensorSpec& spec, const ContactGeometry& g, double depth,
                                         const Eigen::Vector3d& v_rel_W, const Eigen::Matrix3d& R_LW,
                                         const Eigen::Vector3d& f_W);

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_PROBE_GRADIENTS_H_
