#include "core/sensors/probe_gradients.h"

#include "Eigen/Geometry"
#include "core/common/pose.h"
#include "core/contact/nonlinear_law.h"
#include "core/contact/spring_damper_law.h"

namespace taxel::sensors {

PoseGradient DepthPoseGradient(const ContactGeometry& g) {
  PoseGradient d;
  d.segment<3>(0) = -g.n_W.transpose();
  d.segment<3>(3) = -(g.o_W - g.p_WL).cross(g.n_W).transpose();
  d.segment<3>(6) = g.n_W.transpose();
  d.segment<3>(9) = (g.o_W - g.p_WP).cross(g.n_W).transpose();
  return d;
}

PoseJacobian3 KinematicForcePoseJacobian(const SensorSpec& spec, const ContactGeometry& g, double depth,
                                         const Eigen::Vector3d& v_rel_W, const Eigen::Matrix3d& R_LW,
                                         const Eigen::Vector3d& f_W) {
  // The law's partial derivatives at fixed velocity; the nonlinear law sees the sensor as the
  // body, whose velocity relative to the partner is −v_rel.
  const contact::LawJacobian law = spec.force_law == SensorSpec::ForceLaw::kNonlinear
                                       ? contact::NonlinearLawJacobian(spec.nonlinear, depth, g.n_W, -v_rel_W)
                                       : contact::SpringDamperForceJacobian(spec.spring_damper, depth, g.n_W, v_rel_W);
  // J = R_LW·(∂f/∂d·∂d/∂ξ + ∂f/∂n·∂n/∂ξ), with the normal's pose Jacobian
  // ∂n/∂ξ = [H, −H·[o − p_WL]×, −H, −[n]× + H·[o − p_WP]×] expanded by blocks so that a flat
  // partner (H = 0, the common case) skips its Hessian terms.
  const Eigen::Vector3d b = R_LW * law.d_depth;
  const Eigen::Matrix3d A = R_LW * law.d_normal;
  PoseJacobian3 J = b * DepthPoseGradient(g);
  J.block<3, 3>(0, 9) -= A * Skew(g.n_W);
  if (!g.H_W.isZero(0)) {
    const Eigen::Matrix3d AH = A * g.H_W;
    J.block<3, 3>(0, 0) += AH;
    J.block<3, 3>(0, 3) -= AH * Skew(g.o_W - g.p_WL);
    J.block<3, 3>(0, 6) -= AH;
    J.block<3, 3>(0, 9) += AH * Skew(g.o_W - g.p_WP);
  }
  // F_L = R_LW·f_W and R_LW ← R_LW·exp(−δθ^) under a sensor rotation: δF_L = R_LW·[f_W]×·δθ.
  J.block<3, 3>(0, 3) += R_LW * Skew(f_W);
  return J;
}

}  // namespace taxel::sensors
