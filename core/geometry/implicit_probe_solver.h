// Internal to the implicit probe solve (implicit_signed_distance.cc): the constants its Newton
// solves share with the AVX2 lock-step (implicit_lock_step_avx2.cc), and that lock-step.
#ifndef TAXEL_CORE_GEOMETRY_IMPLICIT_PROBE_SOLVER_H_
#define TAXEL_CORE_GEOMETRY_IMPLICIT_PROBE_SOLVER_H_

#include "Eigen/Core"
#include "core/geometry/implicit_shape.h"
#include "core/geometry/signed_distance_result.h"

namespace taxel::geometry::internal {

/// Scaled residual (position / R_out and φ) at which a solve has converged.
inline constexpr double kTolerance = 1e-12;
/// Reciprocal condition number under which the Newton Jacobian counts as singular.
inline constexpr double kSingularRcond = 1e-10;
/// A Newton step is taken without evaluating at its end when the next correction, by the
/// contraction estimate, would be below this fraction of kTolerance.
inline constexpr double kFinalStepFactor = 0.01;
/// Most steps of the plain Newton method tried first from the gradient projection.
inline constexpr int kFastIterations = 4;
/// |φ(q)|/|∇φ(q)| below this fraction of the outer radius: q counts as near the surface, where the
/// gradient projection is the better start.
inline constexpr double kNearSurface = 0.1;

/// The answer for a foot point `foot` (metres, in S) at signed distance `distance`, with ∇φ along
/// `grad` there (any positive scale): the normal grad/|grad|, +z where grad vanishes.
inline SignedDistanceResult FootPointResult(const Eigen::Vector3d& foot, const Eigen::Vector3d& grad,
                                            double distance) {
  SignedDistanceResult result;
  result.closest = foot;
  result.distance = distance;
  const double grad_norm = grad.norm();
  result.normal = grad_norm > 0 ? Eigen::Vector3d(grad * (1 / grad_norm)) : Eigen::Vector3d::UnitZ();
  return result;
}

#if defined(__x86_64__)
/// The near-surface lock-step of a superellipsoid (kCylinder false) or superelliptic cylinder for
/// count ≤ kImplicitBatch centres, its four lanes side by side in AVX2 registers: sets done[i] and
/// results[i] for the lanes it settles, bit for bit as the scalar lock-step and the single solve
/// would; the others are left to the single-centre solve. @pre the CPU has AVX2.
template <bool kCylinder>
__attribute__((target("avx2"))) void LockStepAvx2(const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count,
                                                  const double* max_distance, SignedDistanceResult* results,
                                                  bool* done);
#endif

}  // namespace taxel::geometry::internal

#endif  // TAXEL_CORE_GEOMETRY_IMPLICIT_PROBE_SOLVER_H_
