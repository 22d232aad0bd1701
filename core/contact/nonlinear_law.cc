#include "core/contact/nonlinear_law.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"

namespace taxel::contact {

absl::Status ValidateNonlinearLaw(const NonlinearLawParams& p, absl::string_view field) {
  auto bad = [&](absl::string_view name, absl::string_view rule, double v) {
    return InvalidFieldError(absl::StrCat(field, ".", name), absl::StrCat("expected ", rule, ", got ", v));
  };
  if (!(p.stiffness >= 0) || !std::isfinite(p.stiffness)) return bad("stiffness", "a finite value >= 0", p.stiffness);
  if (!(p.exponent > 0) || !std::isfinite(p.exponent)) return bad("exponent", "a finite value > 0", p.exponent);
  if (!(p.damping >= 0) || !std::isfinite(p.damping)) return bad("damping", "a finite value >= 0", p.damping);
  if (!(p.damping_depth > 0) || !std::isfinite(p.damping_depth)) {
    return bad("damping_depth", "a finite value > 0", p.damping_depth);
  }
  if (p.static_friction && (!(*p.static_friction >= 0) || !std::isfinite(*p.static_friction))) {
    return bad("static_friction", "a finite value >= 0", *p.static_friction);
  }
  if (!(p.dynamic_friction >= 0) || !std::isfinite(p.dynamic_friction)) {
    return bad("dynamic_friction", "a finite value >= 0", p.dynamic_friction);
  }
  if (!(p.stiction_speed > 0) || !std::isfinite(p.stiction_speed)) {
    return bad("stiction_speed", "a finite value with 0 < stiction_speed < transition_speed", p.stiction_speed);
  }
  if (!(p.transition_speed > p.stiction_speed) || !std::isfinite(p.transition_speed)) {
    return bad("transition_speed", absl::StrCat("a finite value > stiction_speed (", p.stiction_speed, ")"),
               p.transition_speed);
  }
  return absl::OkStatus();
}

double NormalForce(const NonlinearLawParams& p, double depth, double closing_speed) {
  if (!(depth > 0)) return 0;
  const double spring = p.exponent == 1.0 ? p.stiffness * depth : p.stiffness * std::pow(depth, p.exponent);
  const double f = spring + p.damping * SmoothStep(depth / p.damping_depth) * closing_speed;
  return f > 0 ? f : 0;
}

double FrictionCoefficient(const NonlinearLawParams& p, double s) {
  const double mu_s = p.static_friction.value_or(p.dynamic_friction);
  const double mu_d = p.dynamic_friction;
  if (s <= p.stiction_speed) {
    const double u = s / p.stiction_speed;
    return mu_s * (3 * u - u * u * u) / 2;
  }
  if (s < p.transition_speed) {
    const double w = (s - p.stiction_speed) / (p.transition_speed - p.stiction_speed);
    return mu_s + (mu_d - mu_s) * w * w * (3 - 2 * w);
  }
  return mu_d;
}

ContactScratch EvaluateNonlinearLaw(const NonlinearLawParams& p, double depth, const Eigen::Vector3d& n,
                                    const Eigen::Vector3d& v) {
  ContactScratch c;
  c.penetration = depth;
  c.relative_velocity = v;
  c.normal = n;
  c.closing_speed = -v.dot(n);
  c.slip = v + c.closing_speed * n;  // v − (v·n)n
  c.normal_force = NormalForce(p, depth, c.closing_speed);
  const double s = c.slip.norm();
  c.friction_coefficient = FrictionCoefficient(p, s);
  if (s > 0 && c.normal_force > 0) c.friction = -(c.friction_coefficient * c.normal_force / s) * c.slip;
  c.force = c.normal_force * n + c.friction;
  return c;
}

}  // namespace taxel::contact

namespace taxel::contact {

double FrictionCoefficientSlope(const NonlinearLawParams& p, double s) {
  const double mu_s = p.static_friction.value_or(p.dynamic_friction);
  const double mu_d = p.dynamic_friction;
  if (s <= p.stiction_speed) {
    const double u = s / p.stiction_speed;
    return mu_s * 3 * (1 - u * u) / (2 * p.stiction_speed);
  }
  if (s < p.transition_speed) {
    const double span = p.transition_speed - p.stiction_speed;
    const double w = (s - p.stiction_speed) / span;
    return (mu_d - mu_s) * 6 * w * (1 - w) / span;
  }
  return 0;
}

LawJacobian NonlinearLawJacobian(const NonlinearLawParams& p, double depth, const Eigen::Vector3d& n,
                                 const Eigen::Vector3d& v) {
  LawJacobian j;
  const double closing = -v.dot(n);
  const double f_n = NormalForce(p, depth, closing);
  if (!(f_n > 0)) return j;  // clamped: no force, no derivative
  // F_n = k_p·δ^e + k_c·S(δ/d_max)·v_n, S'(a) = 6a(1 − a) inside (0, 1).
  const double a = depth / p.damping_depth;
  const double dS = a > 0 && a < 1 ? 6 * a * (1 - a) / p.damping_depth : 0.0;
  const double dFn_dd = (p.exponent == 1.0 ? p.stiffness : p.stiffness * p.exponent * std::pow(depth, p.exponent - 1)) +
                        p.damping * dS * closing;
  const Eigen::RowVector3d dFn_dn = -p.damping * SmoothStep(a) * v.transpose();  // ∂v_n/∂n = −vᵀ
  j.d_depth = dFn_dd * n;
  j.d_normal = f_n * Eigen::Matrix3d::Identity() + n * dFn_dn;
  const Eigen::Vector3d slip = v + closing * n;
  const double s = slip.norm();
  if (s > 0) {
    // friction g = −F_n·h(σ), h = μ(s)·σ/s, ∂h/∂σ = (μ/s)(I − σ̂σ̂ᵀ) + μ'(s)·σ̂σ̂ᵀ, ∂σ/∂n = v_n·I − n·vᵀ.
    const double mu = FrictionCoefficient(p, s);
    const Eigen::Vector3d u = slip / s;
    const Eigen::Vector3d h = mu * u;
    const Eigen::Matrix3d dh = (mu / s) * (Eigen::Matrix3d::Identity() - u * u.transpose()) +
                               FrictionCoefficientSlope(p, s) * u * u.transpose();
    const Eigen::Matrix3d dslip = closing * Eigen::Matrix3d::Identity() - n * v.transpose();
    j.d_depth -= dFn_dd * h;
    j.d_normal -= h * dFn_dn + f_n * dh * dslip;
  }
  return j;
}

}  // namespace taxel::contact
