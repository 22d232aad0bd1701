// The spring–damper contact law of the KinematicTaxel (docs/reference.md#sensors).
#ifndef TAXEL_CORE_CONTACT_SPRING_DAMPER_LAW_H_
#define TAXEL_CORE_CONTACT_SPRING_DAMPER_LAW_H_

#include <cmath>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "core/contact/law_jacobian.h"

namespace taxel::contact {

/// Parameters (SI): F = k_n·s·n + c_n·s·v_n·n − k_t·v_t with s = δ^p.
struct SpringDamperParams {
  double normal_stiffness = 1000.0;  ///< k_n, N/m^p
  double normal_damping = 1.0;       ///< c_n, N·s/m^(p+1)
  double exponent = 1.0;             ///< p (1 linear, 1.5 Hertz)
  double shear_damping = 1.0;        ///< k_t, N·s/m (tangential, viscous)
  double twist_damping = 1.0;        ///< k_tw, N·m·s/rad (torsion about the normal)
};

/// INVALID_ARGUMENT naming `field` when a parameter is negative or non-finite, or p ≤ 0.
absl::Status ValidateSpringDamperParams(const SpringDamperParams& params, const char* field);

/// Force on the sensor (any frame, same frame as n and v) from a contact with penetration
/// `depth` > 0 (m), unit normal n pointing out of the partner into the sensor, and velocity v of
/// the partner relative to the sensor at the contact point (m/s; v·n > 0 when approaching).
inline Eigen::Vector3d SpringDamperForce(const SpringDamperParams& k, double depth, const Eigen::Vector3d& n,
                                         const Eigen::Vector3d& v) {
  const double s = k.exponent == 1.0 ? depth : std::pow(depth, k.exponent);
  const double v_n = v.dot(n);
  const Eigen::Vector3d v_t = v - v_n * n;
  return (k.normal_stiffness * s + k.normal_damping * s * v_n) * n - k.shear_damping * v_t;
}

/// ∂SpringDamperForce/∂depth and ∂/∂n at fixed v (same frame): with s = δ^p, v_n = v·n,
///   ∂F/∂δ = (k_n + c_n·v_n)·p·δ^(p−1)·n,
///   ∂F/∂n = (k_n·s + c_n·s·v_n + k_t·v_n)·I + (c_n·s + k_t)·n·vᵀ.
/// @pre depth > 0.
inline LawJacobian SpringDamperForceJacobian(const SpringDamperParams& k, double depth, const Eigen::Vector3d& n,
                                             const Eigen::Vector3d& v) {
  const double s = k.exponent == 1.0 ? depth : std::pow(depth, k.exponent);
  const double ds = k.exponent == 1.0 ? 1.0 : k.exponent * std::pow(depth, k.exponent - 1);
  const double v_n = v.dot(n);
  LawJacobian j;
  j.d_depth = (k.normal_stiffness + k.normal_damping * v_n) * ds * n;
  j.d_normal =
      (k.normal_stiffness * s + k.normal_damping * s * v_n + k.shear_damping * v_n) * Eigen::Matrix3d::Identity() +
      (k.normal_damping * s + k.shear_damping) * n * v.transpose();
  return j;
}

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_SPRING_DAMPER_LAW_H_
