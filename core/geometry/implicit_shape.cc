#include "core/geometry/implicit_shape.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "Eigen/Dense"
#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/geometry/superquadric_polynomial.h"

namespace taxel::geometry {
namespace {

constexpr double kSuperellipsoidFloor = 1e-16;

absl::Status CheckPositive(double value, absl::string_view field, absl::string_view name) {
  if (!(value > 0) || !std::isfinite(value)) {
    return InvalidFieldError(absl::StrCat(field, ".", name), absl::StrCat("expected a finite value > 0, got ", value));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> CheckExponent(double n, absl::string_view field) {
  if (!std::isfinite(n) || n != std::floor(n) || n < 1 || n > kMaxImplicitExponent) {
    return InvalidFieldError(absl::StrCat(field, ".n"),
                             absl::StrCat("expected an integer in [1, ", kMaxImplicitExponent, "], got ", n));
  }
  return static_cast<int>(n);
}

/// x^k for an integer k ≥ 0 by repeated squaring.
double IntPow(double x, int k) {
  double result = 1;
  while (k > 0) {
    if (k & 1) result *= x;
    x *= x;
    k >>= 1;
  }
  return result;
}

using internal::Root2n;

/// The rolling radius of a convex φ: on the surface |∇φ| ≥ −φ(0)/R_out (convexity, origin inside),
/// so with the tangential Hessian bounded by `hessian_bound` (1/m²) every curvature is at most
/// hessian_bound·R_out/(−φ(0)).
double RollingRadius(double phi0, double outer_radius, double hessian_bound) {
  return -phi0 / (outer_radius * hessian_bound);
}

/// max over w ≥ 0 with Σ w_i^n ≤ 1 of Σ c_i w_i: the Hölder dual norm ‖c‖_q, 1/q + 1/n = 1.
double HolderMax(const double* c, int count, int n) {
  double best = 0;
  for (int i = 0; i < count; ++i) best = std::max(best, c[i]);
  if (n == 1) return best;
  const double q = static_cast<double>(n) / (n - 1);
  double sum = 0;
  for (int i = 0; i < count; ++i) sum += std::pow(c[i] / best, q);
  return best * std::pow(sum, 1 / q);
}

/// Log-sum-exp of `count` values f with gradients g and Hessians h (h may be null: all zero):
/// φ = LSE_β(f), ∇φ = Σ p_i g_i, ∇²φ = Σ p_i h_i + β(Σ p_i g_i g_iᵀ − ∇φ∇φᵀ), p = softmax(βf).
double LogSumExp(double beta, int count, const double* f, const Eigen::Vector3d* g, const Eigen::Matrix3d* h,
                 Eigen::Vector3d* gradient, Eigen::Matrix3d* hessian) {
  double f_max = f[0];
  for (int i = 1; i < count; ++i) f_max = std::max(f_max, f[i]);
  double sum = 0;
  for (int i = 0; i < count; ++i) sum += std::exp(beta * (f[i] - f_max));
  const double phi = f_max + std::log(sum) / beta;
  if (gradient == nullptr && hessian == nullptr) return phi;
  Eigen::Vector3d grad = Eigen::Vector3d::Zero();
  Eigen::Matrix3d second = Eigen::Matrix3d::Zero();
  for (int i = 0; i < count; ++i) {
    const double p = std::exp(beta * (f[i] - f_max)) / sum;
    grad += p * g[i];
    if (hessian != nullptr) {
      second.noalias() += (p * beta) * g[i] * g[i].transpose();
      if (h != nullptr) second += p * h[i];
    }
  }
  if (gradient != nullptr) *gradient = grad;
  if (hessian != nullptr) *hessian = second - beta * grad * grad.transpose();
  return phi;
}

}  // namespace

absl::string_view ImplicitKindName(ImplicitKind kind) {
  switch (kind) {
    case ImplicitKind::kSphere: return "sphere";
    case ImplicitKind::kSuperellipsoid: return "superellipsoid";
    case ImplicitKind::kSmoothPolytope: return "smooth_polytope";
    case ImplicitKind::kSuperellipticCylinder: return "superelliptic_cylinder";
    case ImplicitKind::kTruncatedCone: return "truncated_cone";
  }
  return "unknown";
}

double SuperquadricEpsilon(int n) {
  const double t = std::clamp((n - 1) / 7.0, 0.0, 1.0);
  return std::max(1e-12, 2e-3 * t * t);
}

absl::StatusOr<ImplicitShape> ImplicitShape::Sphere(double radius, absl::string_view field) {
  if (auto s = CheckPositive(radius, field, "radius"); !s.ok()) return s;
  ImplicitShape shape;
  shape.kind_ = ImplicitKind::kSphere;
  shape.sizes_ = Eigen::Vector3d::Constant(radius);
  shape.inner_radius_ = shape.outer_radius_ = shape.rolling_radius_ = radius;
  shape.bounds_ = Aabb::FromCenterHalf(Eigen::Vector3d::Zero(), shape.sizes_);
  return shape;
}

absl::StatusOr<ImplicitShape> ImplicitShape::Superellipsoid(double n, const Eigen::Vector3d& semi_axes,
                                                            absl::string_view field) {
  auto exponent = CheckExponent(n, field);
  if (!exponent.ok()) return exponent.status();
  static constexpr const char* kAxes[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    if (auto s = CheckPositive(semi_axes[i], field, kAxes[i]); !s.ok()) return s;
  }
  ImplicitShape shape;
  shape.kind_ = ImplicitKind::kSuperellipsoid;
  shape.n_ = *exponent;
  shape.eps_ = SuperquadricEpsilon(shape.n_);
  shape.floor_ = kSuperellipsoidFloor;
  shape.sizes_ = semi_axes;
  shape.inv_c2_ = semi_axes.cwiseProduct(semi_axes).cwiseInverse();
  // Inside: Σ s_i ≤ 1 − δ gives S = Σ s_iⁿ ≤ (Σ s_i)ⁿ ≤ 1 − δ, so φ ≤ 0 once δ ≥ the floor; a ball of
  // radius r has Σ u_i² ≤ r²/min(a)². Outside: Σ (u_i²)ⁿ ≤ 1 bounds |y|² = Σ a_i² u_i² by Hölder.
  shape.inner_radius_ = semi_axes.minCoeff() * std::sqrt(1 - 3 * shape.eps_ - 1e-15);
  const double squares[] = {semi_axes[0] * semi_axes[0], semi_axes[1] * semi_axes[1], semi_axes[2] * semi_axes[2]};
  shape.outer_radius_ = std::sqrt(HolderMax(squares, 3, shape.n_));
  shape.bounds_ = Aabb::FromCenterHalf(Eigen::Vector3d::Zero(), semi_axes);
  // On the surface (σ = 1) the tangential Hessian's blocks are r_k^(n−1)(s_k δ + 2(n−1)yyᵀ/c²)/c²
  // with r_k ≤ 1 and s_k ≤ 1: at most (2n − 1)/c_min² (the rank-one term dies in the tangent plane).
  shape.rolling_radius_ = shape.SuperquadricRollingRadius();
  return shape;
}

absl::StatusOr<ImplicitShape> ImplicitShape::SuperellipticCylinder(double n, double radius, double half_length,
                                                                   absl::string_view field) {
  auto exponent = CheckExponent(n, field);
  if (!exponent.ok()) return exponent.status();
  if (auto s = CheckPositive(radius, field, "radius"); !s.ok()) return s;
  if (auto s = CheckPositive(half_length, field, "half_length"); !s.ok()) return s;
  ImplicitShape shape;
  shape.kind_ = ImplicitKind::kSuperellipticCylinder;
  shape.n_ = *exponent;
  shape.eps_ = SuperquadricEpsilon(shape.n_);
  shape.sizes_ = {half_length, radius, radius};
  shape.inv_c2_ = shape.sizes_.cwiseProduct(shape.sizes_).cwiseInverse();
  // As for the superellipsoid, with the two terms (y1/h)² and ρ²/R².
  shape.inner_radius_ = std::min(radius, half_length) * std::sqrt(1 - 2 * shape.eps_ - 1e-15);
  const double squares[] = {half_length * half_length, radius * radius};
  shape.outer_radius_ = std::sqrt(HolderMax(squares, 2, shape.n_));
  shape.bounds_ = Aabb::FromCenterHalf(Eigen::Vector3d::Zero(), shape.sizes_);
  shape.rolling_radius_ = shape.SuperquadricRollingRadius();  // as for the superellipsoid
  return shape;
}

absl::StatusOr<ImplicitShape> ImplicitShape::TruncatedCone(double beta, double bottom_radius, double top_radius,
                                                           double a, double b, absl::string_view field) {
  if (auto s = CheckPositive(bottom_radius, field, "bottom_radius"); !s.ok()) return s;
  if (auto s = CheckPositive(top_radius, field, "top_radius"); !s.ok()) return s;
  if (auto s = CheckPositive(a, field, "a"); !s.ok()) return s;
  if (auto s = CheckPositive(b, field, "b"); !s.ok()) return s;
  // φ(0) = LSE_β(−1, −1, −1) = −1 + ln 3/β: the origin is inside only for β > ln 3.
  if (!std::isfinite(beta) || !(beta > std::log(3.0))) {
    return InvalidFieldError(absl::StrCat(field, ".beta"),
                             absl::StrCat("expected a finite value > ln 3 = 1.0986 (below it the smoothed cone "
                                          "does not contain its origin), got ",
                                          beta));
  }
  ImplicitShape shape;
  shape.kind_ = ImplicitKind::kTruncatedCone;
  shape.beta_ = beta;
  shape.bottom_radius_ = bottom_radius;
  shape.top_radius_ = top_radius;
  shape.sizes_ = {a, b, 0};
  // Inside when every term is ≤ −δ, δ = ln 3/β (LSE ≤ max + ln 3/β): −a(1−δ) ≤ y1 ≤ b(1−δ) and
  // ρ ≤ c·R(y1), c = √(1−δ); the distance from the origin to the line ρ = c(R0 + k·y1) in the
  // (y1, ρ) half-plane is c·R0/√(1 + c²k²).
  const double delta = std::log(3.0) / beta;
  const double c = std::sqrt(1 - delta);
  const double k = (top_radius - bottom_radius) / (a + b);
  const double r0 = bottom_radius + k * a;
  shape.inner_radius_ = std::min({a * (1 - delta), b * (1 - delta), c * r0 / std::sqrt(1 + c * c * k * k)});
  shape.outer_radius_ = std::max(std::hypot(a, bottom_radius), std::hypot(b, top_radius));
  const double r_max = std::max(bottom_radius, top_radius);
  shape.bounds_ = {Eigen::Vector3d(-a, -r_max, -r_max), Eigen::Vector3d(b, r_max, r_max)};
  return shape;
}

absl::StatusOr<ImplicitShape> ImplicitShape::SmoothPolytope(const std::vector<Eigen::Vector3d>& normals,
                                                            const std::vector<double>& offsets, double beta,
                                                            absl::string_view field) {
  const int m = static_cast<int>(normals.size());
  if (offsets.size() != normals.size()) {
    return InvalidFieldError(absl::StrCat(field, ".offsets"),
                             absl::StrCat("expected one offset per normal (", m, "), got ", offsets.size()));
  }
  if (m < 4 || m > kMaxPolytopePlanes) {
    return InvalidFieldError(absl::StrCat(field, ".normals"),
                             absl::StrCat("expected between 4 and ", kMaxPolytopePlanes,
                                          " half-spaces (fewer than 4 bound nothing), got ", m));
  }
  if (!std::isfinite(beta) || !(beta > 0)) {
    return InvalidFieldError(absl::StrCat(field, ".beta"), absl::StrCat("expected a finite value > 0, got ", beta));
  }
  ImplicitShape shape;
  shape.kind_ = ImplicitKind::kSmoothPolytope;
  shape.beta_ = beta;
  shape.normals_.resize(m);
  shape.offsets_.resize(m);
  for (int i = 0; i < m; ++i) {
    const double length = normals[i].norm();
    if (!normals[i].allFinite() || !(length > 0)) {
      return InvalidFieldError(absl::StrCat(field, ".normals[", i, "]"), "expected a finite non-zero vector");
    }
    if (!std::isfinite(offsets[i]) || !(offsets[i] / length > 0)) {
      return InvalidFieldError(absl::StrCat(field, ".offsets[", i, "]"),
                               absl::StrCat("expected a finite value > 0 (the origin must be strictly inside "
                                            "every half-space), got ",
                                            offsets[i]));
    }
    shape.normals_[i] = normals[i] / length;
    shape.offsets_[i] = offsets[i] / length;
  }
  shape.scale_ = *std::max_element(shape.offsets_.begin(), shape.offsets_.end());
  // Bounded ⇔ no d ≠ 0 with a_iᵀd ≤ 0 for all i. With rank(A) = 3 that cone is pointed, so it is
  // non-trivial exactly when one of its extreme rays ±(a_i × a_j) satisfies every constraint.
  Eigen::MatrixXd rows(m, 3);
  for (int i = 0; i < m; ++i) rows.row(i) = shape.normals_[i].transpose();
  const Eigen::Vector3d singular = Eigen::JacobiSVD<Eigen::MatrixXd>(rows).singularValues();
  bool bounded = singular[2] > 1e-9 * singular[0];
  Eigen::Vector3d open_direction = Eigen::Vector3d::Zero();
  for (int i = 0; i < m && bounded; ++i) {
    for (int j = i + 1; j < m && bounded; ++j) {
      const Eigen::Vector3d d = shape.normals_[i].cross(shape.normals_[j]);
      if (d.norm() < 1e-12) continue;
      for (const Eigen::Vector3d& ray : {Eigen::Vector3d(d.normalized()), Eigen::Vector3d(-d.normalized())}) {
        double worst = -1;
        for (int k = 0; k < m; ++k) worst = std::max(worst, shape.normals_[k].dot(ray));
        if (worst <= 1e-9) {
          bounded = false;
          open_direction = ray;
        }
      }
    }
  }
  if (!bounded) {
    return InvalidFieldError(
        absl::StrCat(field, ".normals"),
        absl::StrCat("the half-spaces do not bound a finite region (open along (", open_direction.x() + 0.0, ", ",
                     open_direction.y() + 0.0, ", ", open_direction.z() + 0.0, "))"));
  }
  const double phi0 = shape.Phi(Eigen::Vector3d::Zero());
  if (!(phi0 < 0)) {
    return InvalidFieldError(
        absl::StrCat(field, ".beta"),
        absl::StrCat("too small: the smoothed polytope does not contain its origin (phi(0) = ", phi0,
                     " >= 0); beta > L*ln(planes)/min(b) = ",
                     std::log(m) * shape.scale_ / *std::min_element(shape.offsets_.begin(), shape.offsets_.end()),
                     " is enough, got ", beta));
  }
  // |∇φ| ≤ 1/L, so φ(y) ≤ φ(0) + |y|/L: the ball of radius −φ(0)·L is inside. The hard polytope
  // contains the smoothed one (LSE ≥ max), so its farthest vertex bounds it from outside.
  shape.inner_radius_ = -phi0 * shape.scale_;
  Aabb box;
  double outer = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = i + 1; j < m; ++j) {
      for (int k = j + 1; k < m; ++k) {
        Eigen::Matrix3d a;
        a << shape.normals_[i].transpose(), shape.normals_[j].transpose(), shape.normals_[k].transpose();
        if (std::abs(a.determinant()) < 1e-12) continue;
        const Eigen::Vector3d v =
            a.partialPivLu().solve(Eigen::Vector3d(shape.offsets_[i], shape.offsets_[j], shape.offsets_[k]));
        bool feasible = true;
        for (int l = 0; l < m && feasible; ++l) {
          feasible = shape.normals_[l].dot(v) <= shape.offsets_[l] + 1e-9 * shape.scale_;
        }
        if (!feasible) continue;
        box.Extend(v);
        outer = std::max(outer, v.norm());
      }
    }
  }
  shape.outer_radius_ = outer * (1 + 1e-9);
  shape.bounds_ = box;
  // ∇²φ = β(Σ p_i a_i a_iᵀ/L² − ∇φ∇φᵀ): tangentially at most β/L².
  shape.rolling_radius_ = RollingRadius(phi0, shape.outer_radius_, beta / (shape.scale_ * shape.scale_));
  return shape;
}

Eigen::Matrix3d ImplicitShape::ShapeOperator(const Eigen::Vector3d& y) const {
  Eigen::Vector3d g;
  Eigen::Matrix3d h;
  Evaluate(y, &g, &h);
  const double g_norm = g.norm();
  if (!(g_norm > 0)) return Eigen::Matrix3d::Zero();
  const Eigen::Vector3d n = g / g_norm;
  const Eigen::Matrix3d p = Eigen::Matrix3d::Identity() - n * n.transpose();
  return p * h * p / g_norm;
}

double ImplicitShape::SuperquadricRollingRadius() const {
  const double c_min = sizes_.minCoeff();  // SE: min(a, b, c); SEC: min(h, R)
  return RollingRadius(Phi(Eigen::Vector3d::Zero()), outer_radius_, (2.0 * n_ - 1) / (c_min * c_min));
}

double ImplicitShape::Evaluate(const Eigen::Vector3d& y, Eigen::Vector3d* gradient, Eigen::Matrix3d* hessian) const {
  switch (kind_) {
    case ImplicitKind::kSphere: {
      const double r2 = sizes_[0] * sizes_[0];
      if (gradient != nullptr) *gradient = (2 / r2) * y;
      if (hessian != nullptr) *hessian = Eigen::Matrix3d::Identity() * (2 / r2);
      return y.squaredNorm() / r2 - 1;
    }
    case ImplicitKind::kSuperellipsoid:
    case ImplicitKind::kSuperellipticCylinder: return EvaluateSuperquadric(y, gradient, hessian);
    case ImplicitKind::kSmoothPolytope: return EvaluatePolytope(y, gradient, hessian);
    case ImplicitKind::kTruncatedCone: return EvaluateCone(y, gradient, hessian);
  }
  return 0;
}

// SE and SEC are both σ − 1 with σ = (Σ_k s_kⁿ + floor)^(1/2n) over blocks k of axes, s_k = Σ_{i∈k}
// (y_i/c_k)² + ε (SE: three blocks {x}, {y}, {z}; SEC: {x} with c = h and {y, z} with c = R). With
// r_k = s_k/σ² ∈ (0, 1]:
//   ∂φ/∂y_i   = r_k^(n−1) y_i / (σ c_k²)                                   (i in block k)
//   ∂²φ/∂y_i∂y_j = (1 − 2n)/σ · ∂_iφ ∂_jφ + [same block] r_k^(n−2)/(σ³c_k²) (s_k δ_ij + 2(n−1) y_i y_j/c_k²)
// S is summed relative to max s_k so that large n cannot overflow.
double ImplicitShape::EvaluateSuperquadric(const Eigen::Vector3d& y, Eigen::Vector3d* gradient,
                                           Eigen::Matrix3d* hessian) const {
  // SE: three blocks s_k = u_k² + ε; SEC: two, s_0 = (y1/h)² + ε and s_1 = ρ²/R² + ε (axes y, z share
  // block 1). σ = (Σ s_kⁿ + floor)^(1/2n), computed relative to s_max so that no power overflows.
  const bool cylinder = kind_ == ImplicitKind::kSuperellipticCylinder;
  const int blocks = cylinder ? 2 : 3;
  const Eigen::Vector3d yy = y.cwiseProduct(y).cwiseProduct(inv_c2_);  // (y_i/c_i)²
  double s[3];
  s[0] = yy[0] + eps_;
  s[1] = cylinder ? yy[1] + yy[2] + eps_ : yy[1] + eps_;
  s[2] = cylinder ? s[1] : yy[2] + eps_;
  const double s_max = std::max(s[0], std::max(s[1], s[2]));
  const double inv_s_max = 1 / s_max;
  double sum = floor_ != 0 ? floor_ * IntPow(inv_s_max, n_) : 0.0;
  for (int k = 0; k < blocks; ++k) sum += IntPow(s[k] * inv_s_max, n_);
  const double sigma = std::sqrt(s_max) * Root2n(sum, n_);
  if (gradient == nullptr && hessian == nullptr) return sigma - 1;

  // ∂σ/∂y_i = r_k^(n−1)·y_i/(σ c_i²), r_k = s_k/σ², with k the block of axis i.
  const double inv_sigma = 1 / sigma, inv_sigma2 = inv_sigma * inv_sigma;
  double pow_n2[3], pow_n1[3];  // r_k^(n−2), r_k^(n−1) per axis
  for (int i = 0; i < 3; ++i) {
    const double r = s[i] * inv_sigma2;
    pow_n2[i] = n_ >= 2 ? IntPow(r, n_ - 2) : 1 / r;
    pow_n1[i] = n_ >= 2 ? pow_n2[i] * r : 1;
  }
  Eigen::Vector3d grad;
  for (int i = 0; i < 3; ++i) grad[i] = pow_n1[i] * y[i] * inv_sigma * inv_c2_[i];
  if (gradient != nullptr) *gradient = grad;
  if (hessian != nullptr) {
    // ∇²σ = ((1 − 2n)/σ)∇σ∇σᵀ + per block r_k^(n−2)/(σ³c_k²)·(s_k·I + 2(n − 1)·y yᵀ/c_k²).
    Eigen::Matrix3d h = ((1.0 - 2.0 * n_) * inv_sigma) * grad * grad.transpose();
    const double inv_sigma3 = inv_sigma2 * inv_sigma, two_n1 = 2.0 * (n_ - 1);
    for (int i = 0; i < 3; ++i) {
      const double f = pow_n2[i] * inv_sigma3 * inv_c2_[i];
      h(i, i) += f * (s[i] + two_n1 * yy[i]);
    }
    if (cylinder) {  // the y–z coupling inside the ρ block
      const double f = pow_n2[1] * inv_sigma3 * inv_c2_[1] * two_n1 * y[1] * y[2] * inv_c2_[1];
      h(1, 2) += f;
      h(2, 1) += f;
    }
    *hessian = h;
  }
  return sigma - 1;
}

double ImplicitShape::EvaluatePolytope(const Eigen::Vector3d& y, Eigen::Vector3d* gradient,
                                       Eigen::Matrix3d* hessian) const {
  // z_i = (a_iᵀy − b_i)/L; ∇z_i = a_i/L; no second derivatives. One pass for z, one exp per plane.
  const int m = static_cast<int>(normals_.size());
  double z[kMaxPolytopePlanes], w[kMaxPolytopePlanes];
  double z_max = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < m; ++i) {
    z[i] = (normals_[i].dot(y) - offsets_[i]) / scale_;
    z_max = std::max(z_max, z[i]);
  }
  // Terms below e^−37 are under half an ulp of the sum (≥ 1, the largest term is 1): left out.
  double sum = 0;
  for (int i = 0; i < m; ++i) {
    const double e = beta_ * (z[i] - z_max);
    w[i] = e > -37 ? std::exp(e) : 0;
    sum += w[i];
  }
  const double phi = z_max + std::log(sum) / beta_;
  if (gradient == nullptr && hessian == nullptr) return phi;
  Eigen::Vector3d grad = Eigen::Vector3d::Zero();
  Eigen::Matrix3d second = Eigen::Matrix3d::Zero();
  for (int i = 0; i < m; ++i) {
    if (w[i] == 0) continue;
    grad += w[i] * normals_[i];
    if (hessian != nullptr) second.noalias() += w[i] * normals_[i] * normals_[i].transpose();
  }
  // p_i = w_i/sum, g_i = a_i/L.
  const double k = 1 / (sum * scale_);
  grad *= k;
  if (gradient != nullptr) *gradient = grad;
  if (hessian != nullptr) *hessian = beta_ * (second * (k / scale_) - grad * grad.transpose());
  return phi;
}

double ImplicitShape::EvaluateCone(const Eigen::Vector3d& y, Eigen::Vector3d* gradient,
                                   Eigen::Matrix3d* hessian) const {
  const double a = sizes_[0], b = sizes_[1];
  // R(y1) = Rb + k(y1 + a); held at half the smaller radius beyond the narrow end (far outside the
  // shape, where the cap term dominates), so that the side term stays finite.
  double k = (top_radius_ - bottom_radius_) / (a + b);
  double radius = bottom_radius_ + k * (y[0] + a);
  const double radius_min = 0.5 * std::min(bottom_radius_, top_radius_);
  if (radius < radius_min) {
    radius = radius_min;
    k = 0;
  }
  const double rho2 = y[1] * y[1] + y[2] * y[2];
  const double r2 = radius * radius;
  const double f[3] = {rho2 / r2 - 1, -y[0] / a - 1, y[0] / b - 1};
  if (gradient == nullptr && hessian == nullptr) return LogSumExp(beta_, 3, f, nullptr, nullptr, nullptr, nullptr);
  const Eigen::Vector3d g[3] = {Eigen::Vector3d(-2 * rho2 * k / (r2 * radius), 2 * y[1] / r2, 2 * y[2] / r2),
                                Eigen::Vector3d(-1 / a, 0, 0), Eigen::Vector3d(1 / b, 0, 0)};
  Eigen::Matrix3d h[3] = {Eigen::Matrix3d::Zero(), Eigen::Matrix3d::Zero(), Eigen::Matrix3d::Zero()};
  h[0](0, 0) = 6 * rho2 * k * k / (r2 * r2);
  h[0](0, 1) = h[0](1, 0) = -4 * y[1] * k / (r2 * radius);
  h[0](0, 2) = h[0](2, 0) = -4 * y[2] * k / (r2 * radius);
  h[0](1, 1) = h[0](2, 2) = 2 / r2;
  return LogSumExp(beta_, 3, f, g, h, gradient, hessian);
}

double ImplicitShape::Gamma(const Eigen::Vector3d& q) const {
  switch (kind_) {
    case ImplicitKind::kSphere: return q.norm() / sizes_[0];
    case ImplicitKind::kSuperellipsoid:
    case ImplicitKind::kSuperellipticCylinder: {
      // γ = ‖w‖_{2n} of w = (|q1|/c1, ...): φ + 1 of the ε = 0 shape, homogeneous of degree 1.
      double w[3];
      int count = 3;
      w[0] = std::abs(q[0]) / sizes_[0];
      if (kind_ == ImplicitKind::kSuperellipticCylinder) {
        w[1] = std::hypot(q[1], q[2]) / sizes_[1];
        count = 2;
      } else {
        w[1] = std::abs(q[1]) / sizes_[1];
        w[2] = std::abs(q[2]) / sizes_[2];
      }
      double w_max = 0;
      for (int i = 0; i < count; ++i) w_max = std::max(w_max, w[i]);
      if (w_max == 0) return 0;
      double sum = 0;
      for (int i = 0; i < count; ++i) sum += IntPow(w[i] / w_max, 2 * n_);
      return w_max * Root2n(sum, n_);
    }
    case ImplicitKind::kSmoothPolytope:
    case ImplicitKind::kTruncatedCone: {
      const double length = q.norm();
      return length /
             RaySurface(Eigen::Vector3d::Zero(), q / length, inner_radius_, outer_radius_, 1e-13 * outer_radius_);
    }
  }
  return 1;
}

double ImplicitShape::RaySurface(const Eigen::Vector3d& o, const Eigen::Vector3d& d, double lo, double hi,
                                 double tolerance) const {
  // Newton on t, kept inside the bracket [lo, hi] with φ(o + lo·d) ≤ 0 ≤ φ(o + hi·d), bisecting
  // whenever a step leaves it.
  double t = 0.5 * (lo + hi);
  for (int iteration = 0; iteration < 100; ++iteration) {
    Eigen::Vector3d grad;
    const double f = Evaluate(o + t * d, &grad, nullptr);
    if (f == 0) return t;
    (f < 0 ? lo : hi) = t;
    const double slope = grad.dot(d);
    double next = slope > 0 ? t - f / slope : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - t) <= tolerance) return next;
    t = next;
  }
  return t;
}

}  // namespace taxel::geometry
