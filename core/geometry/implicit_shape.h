// Smooth convex implicit shapes φ(y) ≤ 0 with analytic gradient and Hessian: the sphere, the
// superellipsoid, the smooth (log-sum-exp) polytope, the superelliptic cylinder and the truncated
// cone of iDCOL (Tracy, Howell, Manchester, "Differentiable collision detection for a set of convex
// primitives", ICRA 2023; and the implicit-shape formulation of "iDCOL", 2024).
//
// Every shape is described in its own frame S, contains the origin strictly inside (φ(0) < 0) and
// is bounded. φ is dimensionless and is not a distance: the metric signed distance of a point comes
// from a projection onto the zero level set (implicit_signed_distance.h).
//
//   kind                      φ(y)                                                        parameters
//   sphere                    |y|²/R² − 1                                                  R
//   superellipsoid SE         (Σ (u_i² + ε)ⁿ + 1e-16)^(1/2n) − 1,  u = (y1/a, y2/b, y3/c)  n, a, b, c
//   smooth polytope           LSE_β(z),  z_i = (a_iᵀy − b_i)/L,  L = max_i b_i            A, b, β
//   superelliptic cylinder    (((y1/h)² + ε)ⁿ + ((y2² + y3²)/R² + ε)ⁿ)^(1/2n) − 1        n, R, h
//   truncated cone TC         LSE_β(ρ²/R(y1)² − 1, −y1/a − 1, y1/b − 1)                   β, Rb, Rt, a, b
//
// with ε(n) = max(1e-12, 2e-3·t²), t = clip((n − 1)/7, 0, 1) (n = 1 is an ellipsoid up to 1e-12),
// LSE_β(z) = z_max + (1/β)·ln Σ exp(β(z_i − z_max)), polytope rows normalised to unit length (b
// scaled with them), ρ² = y2² + y3², and the cone's radius linear along x from Rb at y1 = −a to
// Rt at y1 = +b. The superelliptic cylinder and the cone have their axis along local x.
#ifndef TAXEL_CORE_GEOMETRY_IMPLICIT_SHAPE_H_
#define TAXEL_CORE_GEOMETRY_IMPLICIT_SHAPE_H_

#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/geometry/aabb.h"

namespace taxel::geometry {

enum class ImplicitKind { kSphere, kSuperellipsoid, kSmoothPolytope, kSuperellipticCylinder, kTruncatedCone };
/// Every ImplicitKind, in order.
inline constexpr ImplicitKind kImplicitKinds[] = {ImplicitKind::kSphere, ImplicitKind::kSuperellipsoid,
                                                  ImplicitKind::kSmoothPolytope, ImplicitKind::kSuperellipticCylinder,
                                                  ImplicitKind::kTruncatedCone};

absl::string_view ImplicitKindName(ImplicitKind kind);

/// Largest exponent n of superellipsoids and superelliptic cylinders (n = 32 is a box to 2 %).
inline constexpr int kMaxImplicitExponent = 32;
/// Most half-spaces of a smooth polytope.
inline constexpr int kMaxPolytopePlanes = 64;

/// A strictly convex smooth shape {y : φ(y) ≤ 0} in its frame S (metres). Value type; construct with
/// the factories, which validate their parameters (INVALID_ARGUMENT naming `field` and the rule).
class ImplicitShape {
 public:
  /// Errors: radius not finite and > 0.
  static absl::StatusOr<ImplicitShape> Sphere(double radius, absl::string_view field = "implicit");
  /// Semi-axes (a, b, c) along local x, y, z. Errors: n not an integer in [1, kMaxImplicitExponent]
  /// (pass it as a double so that 2.5 can be refused), a semi-axis not finite and > 0.
  static absl::StatusOr<ImplicitShape> Superellipsoid(double n, const Eigen::Vector3d& semi_axes,
                                                      absl::string_view field = "implicit");
  /// The half-spaces a_iᵀy ≤ b_i (rows of `normals`, any non-zero length) smoothed with sharpness
  /// β (dimensionless; larger is sharper). Errors: fewer than 4 or more than kMaxPolytopePlanes
  /// planes, a zero or non-finite row, b_i ≤ 0 after normalising (the origin must be strictly
  /// inside), an unbounded intersection, β not finite and > 0, or a β so small that the smoothed
  /// shape no longer contains the origin (φ(0) ≥ 0).
  static absl::StatusOr<ImplicitShape> SmoothPolytope(const std::vector<Eigen::Vector3d>& normals,
                                                      const std::vector<double>& offsets, double beta,
                                                      absl::string_view field = "implicit");
  /// Axis along local x, half-length h, radius R. Errors as for the superellipsoid.
  static absl::StatusOr<ImplicitShape> SuperellipticCylinder(double n, double radius, double half_length,
                                                             absl::string_view field = "implicit");
  /// Axis along local x from y1 = −a (radius Rb) to y1 = +b (radius Rt). Errors: a size not finite
  /// and > 0, β not finite or ≤ ln 3 (then the smoothed cone does not contain the origin).
  static absl::StatusOr<ImplicitShape> TruncatedCone(double beta, double bottom_radius, double top_radius, double a,
                                                     double b, absl::string_view field = "implicit");

  ImplicitKind kind() const { return kind_; }

  /// φ(p_SY). Thread-safe, no allocation.
  double Phi(const Eigen::Vector3d& p_SY) const { return Evaluate(p_SY, nullptr, nullptr); }
  /// φ(p_SY), and when non-null its gradient ∇φ (1/m) and Hessian ∇²φ (1/m²), all analytic.
  /// Thread-safe, no allocation; O(planes) for polytopes, O(1) otherwise.
  double Evaluate(const Eigen::Vector3d& p_SY, Eigen::Vector3d* gradient, Eigen::Matrix3d* hessian) const;

  /// The shape operator at a surface point p_SY (1/m): W = P·∇²φ·P/|∇φ| with P = I − nnᵀ,
  /// n = ∇φ/|∇φ|; its eigenvalues in the tangent plane are the principal curvatures (0 along n).
  /// Zero where ∇φ = 0.
  Eigen::Matrix3d ShapeOperator(const Eigen::Vector3d& p_SY) const;

  /// Radial scale γ(q) > 0 with φ(q/γ) ≈ 0, so that q/γ lies on the surface along the ray from the
  /// origin through q (γ < 1 inside, > 1 outside). Closed form for the sphere (exact) and for SE /
  /// SEC (of the ε = 0 shape: off the surface by at most ~ε·size); a safeguarded 1-D Newton solve for
  /// polytopes and cones (to 1e-12 relative). @pre q ≠ 0.
  double Gamma(const Eigen::Vector3d& p_SQ) const;

  /// The t in [lo, hi] with φ(o + t·d) = 0 (unit d, metres), given φ(o + lo·d) ≤ 0 ≤ φ(o + hi·d):
  /// safeguarded Newton (bisecting when a step leaves the bracket), to `tolerance` in t.
  double RaySurface(const Eigen::Vector3d& o, const Eigen::Vector3d& d, double lo, double hi, double tolerance) const;

  /// Radii of the largest origin-centred ball inside the shape and the smallest containing it
  /// (metres; both guaranteed bounds, computed once at creation: 0 < inner ≤ outer).
  double inner_radius() const { return inner_radius_; }
  double outer_radius() const { return outer_radius_; }
  /// Bounds of the solid in S.
  const Aabb& local_bounds() const { return bounds_; }
  /// A radius r (metres) such that a ball of radius r rolls freely inside the shape: every principal
  /// curvature of the surface is ≤ 1/r, so (Blaschke's rolling theorem) an interior point at
  /// distance t < r along the inner normal of a surface point has that point as its unique closest
  /// one. A guaranteed bound from |∇φ| ≥ −φ(0)/R_out on the surface (φ convex) and a bound on the
  /// tangential Hessian: sphere R; SE/SEC (−φ(0))·c_min²/((2n − 1)·R_out); polytope
  /// (−φ(0))·L²/(β·R_out). 0 for the truncated cone (its φ is not convex): no shortcut.
  double rolling_radius() const { return rolling_radius_; }
  /// Whether φ itself is a convex function (not only its sublevel set): sphere, SE, SEC and the
  /// polytope (norms and log-sum-exp of affine maps); not the truncated cone (ρ²/R(y1)²). Then
  /// φ(q)/|∇φ(q)| is a lower bound on the distance of an outside point q.
  bool convex_function() const { return kind_ != ImplicitKind::kTruncatedCone; }

  // Parameters (as validated; polytope rows normalised).
  int exponent() const { return n_; }
  double epsilon() const { return eps_; }
  /// SE: the 1e-16 added under the root (so that φ is smooth at the origin); 0 otherwise.
  double superquadric_floor() const { return floor_; }
  double beta() const { return beta_; }
  /// Sphere: (R, R, R); SE: (a, b, c); SEC: (h, R, R); TC: (a, b, 0).
  const Eigen::Vector3d& sizes() const { return sizes_; }
  /// SE and SEC: 1/c_i² per axis, c = sizes() (1/m²); zero otherwise.
  const Eigen::Vector3d& inverse_squared_sizes() const { return inv_c2_; }
  double bottom_radius() const { return bottom_radius_; }
  double top_radius() const { return top_radius_; }
  const std::vector<Eigen::Vector3d>& plane_normals() const { return normals_; }
  const std::vector<double>& plane_offsets() const { return offsets_; }
  /// The polytope's L = max_i b_i (metres).
  double polytope_scale() const { return scale_; }

 private:
  ImplicitShape() = default;
  double EvaluateSuperquadric(const Eigen::Vector3d& y, Eigen::Vector3d* gradient, Eigen::Matrix3d* hessian) const;
  double EvaluatePolytope(const Eigen::Vector3d& y, Eigen::Vector3d* gradient, Eigen::Matrix3d* hessian) const;
  double EvaluateCone(const Eigen::Vector3d& y, Eigen::Vector3d* gradient, Eigen::Matrix3d* hessian) const;
  /// SE and SEC: the rolling radius from the tangential Hessian bound (2n − 1)/c_min².
  double SuperquadricRollingRadius() const;

  ImplicitKind kind_ = ImplicitKind::kSphere;
  int n_ = 1;
  double eps_ = 0, beta_ = 0, floor_ = 0;
  Eigen::Vector3d sizes_ = Eigen::Vector3d::Zero();
  Eigen::Vector3d inv_c2_ = Eigen::Vector3d::Zero();  ///< SE/SEC: 1/c_i² per axis
  double bottom_radius_ = 0, top_radius_ = 0;
  std::vector<Eigen::Vector3d> normals_;
  std::vector<double> offsets_;
  double scale_ = 1;
  double inner_radius_ = 0, outer_radius_ = 0, rolling_radius_ = 0;
  Aabb bounds_;
};

/// ε(n) of superellipsoids and superelliptic cylinders: max(1e-12, 2e-3·t²), t = clip((n − 1)/7, 0, 1).
double SuperquadricEpsilon(int n);

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_IMPLICIT_SHAPE_H_
