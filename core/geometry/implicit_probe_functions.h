// Internal to the implicit probe solve (implicit_signed_distance.cc): the two functions its Newton
// solves work on, φ itself for any shape and the superquadric polynomial ψ for superellipsoids and
// superelliptic cylinders, each with its value, scaled derivatives and shifted-system solve.
#ifndef TAXEL_CORE_GEOMETRY_IMPLICIT_PROBE_FUNCTIONS_H_
#define TAXEL_CORE_GEOMETRY_IMPLICIT_PROBE_FUNCTIONS_H_

#include <algorithm>
#include <cmath>

#include "Eigen/Dense"
#include "core/geometry/implicit_probe_solver.h"
#include "core/geometry/implicit_shape.h"
#include "core/geometry/superquadric_polynomial.h"

namespace taxel::geometry::internal {

/// The solver's view of a function f with the shape's zero set, in the scaled unknowns y' = y/L
/// (L = outer radius, metres): Evaluate gives f, ∇'f = L∇f and ∇'²f = L²∇²f; SolveShifted solves
/// (I + μ∇'²f)x = b for two right-hand sides; QueryPhi gives φ and ∇'φ at the scaled query point.
///
/// PhiFunction: φ itself, any kind of shape.
struct PhiFunction {
  using Hessian = Eigen::Matrix3d;
  static constexpr bool kDiagonal = false;
  const ImplicitShape& shape;
  double length;  // L (m)

  double Evaluate(const Eigen::Vector3d& y, Eigen::Vector3d* g, Hessian* h) const {
    const double phi = shape.Evaluate(length * y, g, h);
    *g *= length;
    *h *= length * length;
    return phi;
  }
  double QueryPhi(const Eigen::Vector3d& y, Eigen::Vector3d* g) const {
    const double phi = shape.Evaluate(length * y, g, nullptr);
    *g *= length;
    return phi;
  }
  /// The tolerance on f = φ is kTolerance.
  double value_scale() const { return 1; }
  static Eigen::Matrix3d Dense(const Hessian& h) { return h; }
  static Eigen::Vector3d Times(const Hessian& h, const Eigen::Vector3d& x) { return h * x; }
  /// Solves A x = b for b = r and b = g, A = I + μ∇'²φ (symmetric 3×3, inverted by cofactors); false
  /// when A is near-singular. *inverse_max: max |A⁻¹_ij|.
  static bool SolveShifted(const Hessian& h, double mu, const Eigen::Vector3d& r, const Eigen::Vector3d& g,
                           Eigen::Vector3d* x_r, Eigen::Vector3d* x_g, double* inverse_max) {
    const Eigen::Matrix3d a = Eigen::Matrix3d::Identity() + mu * h;
    Eigen::Matrix3d a_inv;
    double det = 0;
    bool invertible = false;
    const double scale = std::max(1.0, a.cwiseAbs().maxCoeff());
    a.computeInverseAndDetWithCheck(a_inv, det, invertible, kSingularRcond * scale * scale * scale);
    if (!invertible) return false;
    *x_r = a_inv * r;
    *x_g = a_inv * g;
    *inverse_max = a_inv.cwiseAbs().maxCoeff();
    return true;
  }
};

/// PsiFunction: SE and SEC solve on their polynomial ψ = (φ + 1)^{2n} − 1 (superquadric_polynomial.h):
/// same solutions, no root, and A = I + μ∇'²ψ is diagonal (SE) or a scalar and a 2×2 block (SEC).
template <bool kCylinder>
struct PsiFunction {
  using Polynomial = SuperquadricPolynomial<kCylinder>;
  using Hessian = typename Polynomial::Hessian;
  static constexpr bool kDiagonal = !kCylinder;  // SE: A = I + μ∇'²ψ is diagonal (NewtonStep)
  const ImplicitShape& shape;
  double length;  // L (m)
  Polynomial psi;

  PsiFunction(const ImplicitShape& s, double l) : shape(s), length(l), psi(s, l) {}

  double Evaluate(const Eigen::Vector3d& y, Eigen::Vector3d* g, Hessian* h) const { return psi.Sum(y, g, h) - 1; }
  /// φ = S^{1/2n} − 1 and ∇'φ = ∇'ψ·(φ + 1)/(2nS) from S = ψ + 1; where a power could overflow
  /// (far outside: some s_k > 2), from φ directly.
  double QueryPhi(const Eigen::Vector3d& y, Eigen::Vector3d* g) const {
    double max_s = 0;
    const double sum = psi.Sum(y, g, nullptr, &max_s);
    if (max_s > 2) {
      const double phi = shape.Evaluate(length * y, g, nullptr);
      *g *= length;
      return phi;
    }
    const double k = 1 / (2.0 * psi.exponent() * sum);  // alongside the root, not after it
    const double sigma = Root2n(sum, psi.exponent());
    *g *= sigma * k;
    return sigma - 1;
  }
  /// ψ = 2nφ + O(φ²): |ψ| ≤ 2n·tolerance is |φ| ≤ tolerance to first order.
  double value_scale() const { return 2.0 * psi.exponent(); }
  static Eigen::Matrix3d Dense(const Hessian& h) { return Polynomial::Dense(h); }
  static Eigen::Vector3d Times(const Hessian& h, const Eigen::Vector3d& x) { return Polynomial::Times(h, x); }
  /// SEC (SE takes NewtonStep's diagonal form): as PhiFunction::SolveShifted, for A = I + μ∇'²ψ, x
  /// alone and the 2×2 block of y and z, with the same singularity test (|det A| ≤ kSingularRcond·scale³).
  static bool SolveShifted(const Hessian& h, double mu, const Eigen::Vector3d& r, const Eigen::Vector3d& g,
                           Eigen::Vector3d* x_r, Eigen::Vector3d* x_g, double* inverse_max) {
    static_assert(kCylinder, "SE solves its diagonal system in NewtonStep");
    const double a[3] = {1 + mu * h.diagonal[0], 1 + mu * h.diagonal[1], 1 + mu * h.diagonal[2]};
    const double c = mu * h.yz;
    const double scale =
        std::max(std::max(std::max(1.0, std::abs(a[0])), std::max(std::abs(a[1]), std::abs(a[2]))), std::abs(c));
    const double det12 = a[1] * a[2] - c * c;
    if (!(std::abs(a[0] * det12) > kSingularRcond * scale * scale * scale)) return false;
    const double inv0 = 1 / a[0], inv12 = 1 / det12;
    *x_r = Eigen::Vector3d(r[0] * inv0, (a[2] * r[1] - c * r[2]) * inv12, (a[1] * r[2] - c * r[1]) * inv12);
    *x_g = Eigen::Vector3d(g[0] * inv0, (a[2] * g[1] - c * g[2]) * inv12, (a[1] * g[2] - c * g[1]) * inv12);
    *inverse_max =
        std::max(std::abs(inv0), std::max(std::max(std::abs(a[1]), std::abs(a[2])), std::abs(c)) * std::abs(inv12));
    return true;
  }
};

}  // namespace taxel::geometry::internal

#endif  // TAXEL_CORE_GEOMETRY_IMPLICIT_PROBE_FUNCTIONS_H_
