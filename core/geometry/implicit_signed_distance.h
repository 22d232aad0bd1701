// Exact metric signed distance from a point to the zero level set of an ImplicitShape.
//
// φ is not a distance (implicit_shape.h), so the distance comes from the closest-point problem
//   min |y − q|  over the surface φ(y) = 0,
// whose stationary points solve the 4 equations in (y, μ)
//   y − q + μ∇φ(y) = 0,   φ(y) = 0,     Jacobian [[I + μ∇²φ, ∇φ], [∇φᵀ, 0]],
// by a damped Newton method (backtracking on the squared residual; a Levenberg–Marquardt step
// whenever the Jacobian is near-singular, as on the medial axis or at the centre of curvature).
// Variables are scaled by the shape's outer radius so that tolerances are relative to its size.
// The superellipsoid and the superelliptic cylinder iterate on their polynomial
// ψ = (φ + 1)^{2n} − 1 instead (superquadric_polynomial.h): the same zero set, a gradient parallel to
// ∇φ, so the same solutions; no 2n-th root, and I + μ∇²ψ is diagonal (SE) or block-diagonal (SEC).
// From the gradient projection, plain Newton runs first (no line search, given up for the damped
// method as soon as a step fails to halve the residual); a Newton step whose successor would be
// below the tolerance by the contraction estimate κ ≈ |dy_k|/|dy_{k−1}|² is taken without
// evaluating at its end.
//
//   query point         starts                                      why the answer is global
//   ------------------  ------------------------------------------  --------------------------------
//   outside (φ(q) > 0)  the gradient projection (near), the warm     convex problem: its only KKT
//                       start if given, q/γ(q); on failure, the 6    point (μ > 0) is the minimum
//                       axis-ray starts below
//   inside (φ(q) ≤ 0)   the gradient projection, the warm start,     non-convex: the smallest of the
//                       q/γ(q), and the exits of the rays from q     local solutions, unless one lies
//                       along ±x, ±y, ±z (and, for a polytope,       within the rolling radius;
//                       along its nearest face)                      checked against brute force
//
// The gradient projection q − φ(q)∇φ(q)/|∇φ(q)|² is tried when |φ(q)|/|∇φ(q)| < 0.1·R_out (near the
// surface, where probes touch): it lies within O(sd²·curvature) of the foot point. Outside points
// whose first-order distance φ(q)/|∇φ(q)| — a lower bound where φ is a convex function — exceeds
// max_distance are culled without a solve.
//
// A start that stops converging (a minimum of the residual that is no root) is abandoned after a
// few iterations when other starts remain (inside points only; outside, the problem is convex).
//
// Accuracy: the foot point satisfies both equations to 1e-12 relative to the outer radius (so the
// distance is exact to ~1e-12·size; after a final step taken without evaluating, by the contraction
// estimate, with a margin of 100); the tests check the sphere exactly, the ellipsoid against its
// secular equation to 1e-9 m, SE(32) against the box, every kind against a dense brute force.
// Convergence on 10⁵ random points per kind in the bounding box inflated by 20 % (16–36 % inside):
// 100 %, with 9–13.1 Newton iterations per point on average over all starts (sphere 0: closed form).
// Outside, 3.5–7 iterations from the radial start and 1.3–2 from a warm start 1e-4·R_out away.
#ifndef TAXEL_CORE_GEOMETRY_IMPLICIT_SIGNED_DISTANCE_H_
#define TAXEL_CORE_GEOMETRY_IMPLICIT_SIGNED_DISTANCE_H_

#include <limits>

#include "Eigen/Core"
#include "core/geometry/implicit_shape.h"
#include "core/geometry/signed_distance_result.h"

namespace taxel::geometry {

/// What a solve did (for tests, benchmarks and warm starts).
struct ImplicitProbeStats {
  /// Newton (or Levenberg–Marquardt) iterations over all starts.
  int iterations = 0;
  /// Starts tried.
  int starts = 0;
  /// Evaluations of the shape's function with its gradient and Hessian inside the Newton solves
  /// (not counting the one of φ and ∇φ at the query point).
  int evaluations = 0;
  /// False when no start met the tolerance: the result is then the best foot point found (its
  /// distance is an upper bound on |distance| accurate to the remaining residual).
  bool converged = true;
};

/// Signed distance from p_SQ (shape frame S, metres) to the surface of `shape`, with the bounded
/// semantics of SignedDistanceResult: returns "not found" without solving when |q| − R_out >
/// max_distance (R_out the outer radius); otherwise an exact distance (negative inside), the foot
/// point `closest` in S and the outward unit normal ∇φ/|∇φ| at it.
///
/// `warm_start`, when non-null, is a previous foot point p_SY (e.g. the last step's for the same
/// probe); it need not lie on the surface. `stats`, when non-null, receives the iteration counts.
/// Thread-safe, no allocation; O(1) per iteration (O(planes) for polytopes).
/// Degenerate input: q at the origin (or anywhere on the medial axis) gets one of the nearest
/// points, deterministically.
SignedDistanceResult ImplicitSignedDistance(const ImplicitShape& shape, const Eigen::Vector3d& p_SQ,
                                            double max_distance = std::numeric_limits<double>::infinity(),
                                            const Eigen::Vector3d* warm_start = nullptr,
                                            ImplicitProbeStats* stats = nullptr);

/// Most probe centres ImplicitSignedDistanceBatch takes per call.
inline constexpr int kImplicitBatch = 4;

/// ImplicitSignedDistance for `count` ≤ kImplicitBatch probe centres at once, each with its own
/// max_distance and warm start (warm_starts, or any entry of it, may be null): results[i] equals
/// ImplicitSignedDistance(shape, p_SQ[i], max_distance[i], warm_starts[i]) bit for bit. For
/// superellipsoids, the common case of a centre near the surface (the culls, the gradient
/// projection and plain Newton from it) runs for all centres in lock-step, so that their
/// dependent chains of divisions and square roots overlap; a centre that needs more (another
/// start, the damped solve) then takes the single-centre solve. Other kinds loop.
void ImplicitSignedDistanceBatch(const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count,
                                 const double* max_distance, const Eigen::Vector3d* const* warm_starts,
                                 SignedDistanceResult* results);

namespace internal {
/// ImplicitSignedDistanceBatch with the superellipsoids' lock-step in portable code (`portable`)
/// or in the fastest form this CPU has (AVX2 registers, what ImplicitSignedDistanceBatch uses).
/// For tests: both equal the single-centre solve bit for bit.
void ImplicitSignedDistanceBatchWith(bool portable, const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count,
                                     const double* max_distance, const Eigen::Vector3d* const* warm_starts,
                                     SignedDistanceResult* results);
}  // namespace internal

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_IMPLICIT_SIGNED_DISTANCE_H_
