// Shape against shape for two smooth convex implicit shapes: the iDCOL scaling problem (Tracy,
// Howell, Manchester, "Differentiable collision detection for a set of convex primitives", ICRA
// 2023, and its implicit-shape form, iDCOL, 2024). Both shapes are scaled about their own origins
// by a common factor α; α* is the smallest factor at which the scaled shapes still touch:
//
//   α* = min α  s.t.  φ1(x/α) ≤ 0,  φ2(R_12ᵀ(x − p_12)/α) ≤ 0        (x in frame 1, metres)
//
// α* > 1: separated, α* = 1: touching, α* < 1: penetrating. The problem is solved as the 6×6 KKT
// system of its first-order conditions in z = (x, s = ln α, λ1, λ2) by a safeguarded Newton method
// (implicit_pair.cc explains the equations, the Jacobian and the safeguards).
//
// Outputs, all in frame 1 (the frame of shape 1, whose origin is shape 1's origin):
//
//   field         meaning
//   ------------  -------------------------------------------------------------------------------
//   alpha         α* (dimensionless); exactly |p_12|/(R1 + R2) for two spheres
//   normal_1      unit normal of the contact, ∇φ1 at the witness point normalised: it points out of
//                 shape 1 towards shape 2 (and equals −R_12·∇φ2/|∇φ2| at shape 2's witness point)
//   p1_1          witness point on ∂(shape 1), x/α: where the scaled shapes touch, seen unscaled
//   p2_1          witness point on ∂(shape 2), p_12 + (x − p_12)/α
//   lambda1/2     the multipliers of min α (λ_i ≥ 0): dα*/dξ = λ2·∂φ2/∂ξ for any parameter ξ of
//                 shape 2's pose (envelope theorem), likewise λ1 for shape 1
//   iterations    Newton + Levenberg–Marquardt steps over all attempts
//   converged     the KKT residual reached the tolerance with λ1, λ2 > 0
//
// p1 − p2 = p_12·(1 − α)/α is parallel to the line of centres: |p1 − p2| = |p_12|·|1 − α|/α is the
// distance that separates (α > 1) or must separate (α < 1) the shapes along that line; for two
// spheres it is |d − R1 − R2| exactly.
//
// Measured on 10⁵ random poses per pair type (tests/core/geometry/implicit_pair_test.cc,
// docs/reference.md#implicit-pairs): success rate and speed are given there.
#ifndef TAXEL_CORE_GEOMETRY_IMPLICIT_PAIR_H_
#define TAXEL_CORE_GEOMETRY_IMPLICIT_PAIR_H_

#include "Eigen/Core"
#include "core/common/pose.h"
#include "core/geometry/implicit_shape.h"

namespace taxel::geometry {

/// The previous solution of a pair, kept by the caller per (env, pair) and passed back at the next
/// solve. The solver works on a rescaled copy of the problem in which the centres are a fixed
/// distance apart, so these variables are scale-free and stay close between nearby poses.
/// Default-constructed (`valid` false) means cold start.
struct PairWarmStart {
  bool valid = false;
  Eigen::Vector3d x = Eigen::Vector3d::Zero();  ///< internal: x of the rescaled problem / length scale
  double s = 0;                                 ///< internal: ln α of the rescaled problem
  double mu1 = 0, mu2 = 0;                      ///< internal: λ_i/α
};

/// The result of one pair solve (see the table in the file comment). Frame 1, metres.
struct PairSolution {
  double alpha = 0;
  Eigen::Vector3d normal_1 = Eigen::Vector3d::UnitX();
  Eigen::Vector3d p1_1 = Eigen::Vector3d::Zero();
  Eigen::Vector3d p2_1 = Eigen::Vector3d::Zero();
  double lambda1 = 0, lambda2 = 0;
  int iterations = 0;
  bool converged = false;
  /// Largest absolute entry of the scaled KKT residual at the returned point (dimensionless).
  double residual = 0;
};

/// Derivatives of a pair solution with respect to the poses of the two shapes, by the implicit
/// function theorem on the KKT system (see SolvePairDerivatives in implicit_pair.cc).
///
/// Convention (that of the probe gradients, docs/reference.md#gradients, with world = frame 1 at
/// the current instant): a pose perturbation of shape i is a twist ξ_i = (δt, δθ) (translation
/// then rotation, frame-1 axes) about shape i's origin, so that a point p of shape i moves to
/// p + δt + δθ × (p − o_i) (o_1 = 0, o_2 = p_12). Shape 2 alone: X_12 ← (exp(δθ^)·R_12, p_12 + δt).
/// Columns 0–5: ξ_1 (shape 1's twist); 6–11: ξ_2. All outputs are frame-1 quantities moving with
/// the world: a twist of shape 1 rotates the normal and moves the witness points with it.
///
/// Shape 1's columns follow from shape 2's by invariance: moving both shapes by the same twist ξ
/// (about frame 1's origin) leaves α unchanged and moves the contact rigidly (δn = δθ × n,
/// δp = δt + δθ × p); shape 1 alone is that motion followed by shape 2 moving by −ξ, i.e. by the
/// twist T·ξ_1 about its own origin with T = [[−I, [p_12]×], [0, −I]]. Hence
///
///   ∂α/∂ξ_1 = ∂α/∂ξ_2·T,   ∂n/∂ξ_1 = [0, −[n]×] + ∂n/∂ξ_2·T,   ∂p/∂ξ_1 = [I, −[p]×] + ∂p/∂ξ_2·T.
///
/// Envelope check (tests): ∂α/∂t_2 = −(λ2/α)·Gᵀ, ∂α/∂θ_2 = −λ2·((p2 − p_12) × G)ᵀ with
/// G = R_12·∇φ2 at shape 2's witness point, and ∂α/∂ξ_1 likewise with λ1, ∇φ1 and p1.
struct PairDerivatives {
  bool valid = false;                                                          ///< false: not computed (see below)
  Eigen::Matrix<double, 1, 12> alpha = Eigen::Matrix<double, 1, 12>::Zero();   ///< 1/m, 1/rad
  Eigen::Matrix<double, 3, 12> normal = Eigen::Matrix<double, 3, 12>::Zero();  ///< ∂normal_1: 1/m, 1/rad
  Eigen::Matrix<double, 3, 12> p1 = Eigen::Matrix<double, 3, 12>::Zero();      ///< ∂p1_1: m/m, m/rad
  Eigen::Matrix<double, 3, 12> p2 = Eigen::Matrix<double, 3, 12>::Zero();      ///< ∂p2_1: m/m, m/rad
};

/// Solves the scaling problem for shape 2 at pose X_12 (R_12, p_12: shape 2's frame in frame 1).
/// `warm` may be null (cold start); when non-null it is read (if valid) and overwritten with the
/// new solution (marked invalid when the solve fails, so that the next call starts cold).
///
/// `derivatives`, when non-null, receives the PairDerivatives of the solution: one elimination of
/// the KKT Jacobian at the solution with its six pose right-hand sides (about 0.5 µs more). It is
/// left invalid (zeros) when the solve did not converge, at p_12 = 0 (α is not differentiable
/// there) or when the Jacobian is singular (not met on the four pair types).
///
/// Degenerate input: p_12 = 0 (coincident origins) returns α = 0 with the witness points along
/// frame 1's +x axis (the limit of p_12 → 0 along +x). @pre X_12 finite, R_12 a rotation.
/// No allocation; O(iterations × the cost of the two shapes' Evaluate). Thread-safe.
PairSolution SolveImplicitPair(const ImplicitShape& shape1, const ImplicitShape& shape2, const RigidTransform& X_12,
                               PairWarmStart* warm = nullptr, PairDerivatives* derivatives = nullptr);

namespace internal {

/// The scaled KKT residual F(z) and its Jacobian at z = (x̃, s, μ1, μ2) for the rescaled problem
/// (shape 2 at R_12, centre `length_scale`·r_hat); exposed for tests. See implicit_pair.cc.
void PairKkt(const ImplicitShape& shape1, const ImplicitShape& shape2, const Eigen::Matrix3d& R_12,
             const Eigen::Vector3d& r_hat, double length_scale, const Eigen::Matrix<double, 6, 1>& z,
             Eigen::Matrix<double, 6, 1>* residual, Eigen::Matrix<double, 6, 6>* jacobian);

/// The length scale (metres) at which SolveImplicitPair places shape 2's centre.
double PairLengthScale(const ImplicitShape& shape1, const ImplicitShape& shape2);

}  // namespace internal
}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_IMPLICIT_PAIR_H_
