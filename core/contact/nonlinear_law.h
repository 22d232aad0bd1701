// The nonlinear contact law (docs/reference.md#contact-laws), in the style of Karana's NonlinearContactForce and MSC
// Adams' IMPACT function: a power-law spring, damping ramped in smoothly with the penetration (so
// the force is continuous at first touch), and regularised Coulomb friction with a smooth
// stick–slip transition.
//
//   F_n = max(0, k_p·δ^n + k_c·S(δ/d_max)·v_n),   S(a) = a²(3 − 2a), a clipped to [0, 1]
//   μ(s) = μ_s·(3u − u³)/2                          s ≤ v_s,       u = s/v_s
//        = μ_s + (μ_d − μ_s)·w²(3 − 2w)             v_s < s < v_d, w = (s − v_s)/(v_d − v_s)
//        = μ_d                                       s ≥ v_d
//   friction = −μ(s)·F_n·ŝ (against the slip direction ŝ)
//
// δ is the penetration (m, > 0 in contact), v_n the closing speed (m/s, > 0 approaching), s the
// slip speed (m/s). Used as a force law (N) by the KinematicTaxel and as a pressure law (Pa) over
// sampled contact area by the contact matrix.
#ifndef TAXEL_CORE_CONTACT_NONLINEAR_LAW_H_
#define TAXEL_CORE_CONTACT_NONLINEAR_LAW_H_

#include <optional>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/contact/law_jacobian.h"

namespace taxel::contact {

struct NonlinearLawParams {
  double stiffness = 1e5;                 ///< k_p
  double exponent = 1.5;                  ///< n (> 0)
  double damping = 100.0;                 ///< k_c (full damping once δ ≥ d_max)
  double damping_depth = 1e-3;            ///< d_max (m, > 0)
  std::optional<double> static_friction;  ///< μ_s; defaults to μ_d
  double dynamic_friction = 0.5;          ///< μ_d
  double stiction_speed = 0.01;           ///< v_s (m/s)
  double transition_speed = 0.05;         ///< v_d (m/s), > v_s
};

/// INVALID_ARGUMENT naming `field`: k_p < 0, n ≤ 0, k_c < 0, d_max ≤ 0, μ < 0, not 0 < v_s < v_d,
/// or any NaN/inf.
absl::Status ValidateNonlinearLaw(const NonlinearLawParams& p, absl::string_view field);

/// S(a) = a²(3 − 2a) with a clipped to [0, 1].
inline double SmoothStep(double a) {
  a = a < 0 ? 0 : (a > 1 ? 1 : a);
  return a * a * (3 - 2 * a);
}

/// F_n(δ, v_n); 0 for δ ≤ 0.
double NormalForce(const NonlinearLawParams& p, double depth, double closing_speed);

/// μ(s) for slip speed s ≥ 0.
double FrictionCoefficient(const NonlinearLawParams& p, double slip_speed);

/// Everything the law computed for one contact, for inspection.
struct ContactScratch {
  double penetration = 0;                                       ///< δ (m)
  Eigen::Vector3d relative_velocity = Eigen::Vector3d::Zero();  ///< of the body relative to the partner (m/s)
  double closing_speed = 0;                                     ///< v_n (m/s)
  Eigen::Vector3d slip = Eigen::Vector3d::Zero();               ///< tangential relative velocity (m/s)
  double friction_coefficient = 0;                              ///< μ(|slip|)
  double normal_force = 0;                                      ///< F_n (N or Pa)
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();             ///< unit, pushing the body out of the partner
  Eigen::Vector3d friction = Eigen::Vector3d::Zero();           ///< −μ·F_n·ŝ
  Eigen::Vector3d force = Eigen::Vector3d::Zero();              ///< F_n·n + friction
};

/// The law at one contact: penetration `depth`, unit normal n pushing the body out of the partner,
/// and the velocity v of the body relative to the partner at the contact (so v_n = −v·n).
ContactScratch EvaluateNonlinearLaw(const NonlinearLawParams& p, double depth, const Eigen::Vector3d& n,
                                    const Eigen::Vector3d& v);

/// ∂μ/∂s at slip speed s ≥ 0 (the derivative of FrictionCoefficient; 0 beyond v_d).
double FrictionCoefficientSlope(const NonlinearLawParams& p, double slip_speed);

/// ∂F/∂δ and ∂F/∂n of EvaluateNonlinearLaw(p, depth, n, v).force at fixed body velocity v, by
/// the chain rule through F = F_n·n − μ(s)·F_n·σ/s with v_n = −v·n and slip σ = v + v_n·n.
/// Zero where F_n is clamped at 0; without slip (s = 0) the friction term contributes nothing.
LawJacobian NonlinearLawJacobian(const NonlinearLawParams& p, double depth, const Eigen::Vector3d& n,
                                 const Eigen::Vector3d& v);

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_NONLINEAR_LAW_H_
