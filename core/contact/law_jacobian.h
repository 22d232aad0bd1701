// Derivatives of a contact law's force with respect to its geometric inputs.
#ifndef TAXEL_CORE_CONTACT_LAW_JACOBIAN_H_
#define TAXEL_CORE_CONTACT_LAW_JACOBIAN_H_

#include "Eigen/Core"

namespace taxel::contact {

/// ∂F/∂δ and ∂F/∂n of a law's force F(δ, n, v) at fixed velocity v, in the frame of F and n.
/// Where the law is not differentiable (F_n clamped at 0, zero slip for the friction term) the
/// one-sided value of the branch taken is returned.
struct LawJacobian {
  Eigen::Vector3d d_depth = Eigen::Vector3d::Zero();   ///< ∂F/∂δ (N/m)
  Eigen::Matrix3d d_normal = Eigen::Matrix3d::Zero();  ///< ∂F/∂n (N per unit of n)
};

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_LAW_JACOBIAN_H_
