// The near-surface lock-step of the implicit probe solve in AVX2 registers
// (implicit_probe_solver.h): four solves side by side, each lane doing the scalar solve's
// operations (implicit_signed_distance.cc: StartQuery, FastNewtonLanes, Finish; implicit_probe_functions.h:
// PsiFunction) in the same order.
#include "core/geometry/implicit_probe_solver.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include <limits>

#include "core/geometry/implicit_signed_distance.h"
#include "core/geometry/superquadric_polynomial.h"

namespace taxel::geometry::internal {
namespace {

#define TAXEL_AVX2 __attribute__((target("avx2")))
#define TAXEL_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline

// kImplicitBatch lanes of doubles in one AVX register. As GCC vectors, + − × ÷ and the comparisons
// work lane by lane with IEEE rounding, exactly as on one double (target avx2 has no FMA, so
// nothing is contracted); a comparison gives a mask of all-ones / all-zeros lanes.
using Lanes = __m256d;
using Mask = decltype(Lanes{} < Lanes{});
static_assert(kImplicitBatch == 4, "the AVX2 lock-step holds four lanes");

TAXEL_AVX2_INLINE Lanes Splat(double x) { return _mm256_set1_pd(x); }
TAXEL_AVX2_INLINE Lanes Abs(Lanes x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
TAXEL_AVX2_INLINE Lanes Sqrt(Lanes x) { return _mm256_sqrt_pd(x); }
TAXEL_AVX2_INLINE Mask Finite(Lanes x) { return Abs(x) < Splat(std::numeric_limits<double>::infinity()); }
TAXEL_AVX2_INLINE Lanes Select(Mask m, Lanes a, Lanes b) { return m ? a : b; }
TAXEL_AVX2_INLINE bool Lane(Mask m, int i) { return m[i] != 0; }
TAXEL_AVX2_INLINE bool Any(Mask m) { return _mm256_movemask_pd((Lanes)m) != 0; }
// x·x + y·y + z·z in Eigen's order for a Vector3d (squaredNorm, dot).
TAXEL_AVX2_INLINE Lanes Dot3(const Lanes* a, const Lanes* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
// std::max(a, b) lane by lane: b where a < b, else a.
TAXEL_AVX2_INLINE Lanes Max(Lanes a, Lanes b) { return a < b ? b : a; }
// max |x_i|, i < 3 (lpNorm<Infinity>; exact in any order for finite values).
TAXEL_AVX2_INLINE Lanes MaxAbs3(const Lanes* x) { return Max(Abs(x[0]), Max(Abs(x[1]), Abs(x[2]))); }

// Converged: |r_y|∞ ≤ kTolerance and |r_f| ≤ value_tolerance.
TAXEL_AVX2_INLINE Mask Converged(const Lanes* r, double value_tolerance) {
  return (MaxAbs3(r) <= kTolerance) & (Abs(r[3]) <= value_tolerance);
}
// |r|² of (r_y, r_f) in Eigen's order for a Vector4d: (r0² + r2²) + (r1² + r3²).
TAXEL_AVX2_INLINE Lanes Merit(const Lanes* r) { return (r[0] * r[0] + r[2] * r[2]) + (r[1] * r[1] + r[3] * r[3]); }

/// FastPathLockStep<kCylinder> (superellipsoids, superelliptic cylinders) with its four lanes side
/// by side in AVX registers: the same operations in the same order per lane as StartQuery,
/// FastNewtonLanes (StartResidual, Converged, NewtonStep — SE's diagonal form, SEC's
/// PsiFunction::SolveShifted —, FinalStep) and Finish, so the same bits. A lane that leaves the
/// common path in any way (QueryPhi's far branch, a failed or slow step, a value that is not
/// finite) is left to the single-centre solve, which decides it as the scalar lock-step would.
}  // namespace

template <bool kCylinder>
TAXEL_AVX2 void LockStepAvx2(const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count,
                             const double* max_distance, SignedDistanceResult* results, bool* done) {
  const double length = shape.outer_radius();
  const internal::SuperquadricPolynomial<kCylinder> psi(shape, length);
  const int n = psi.exponent();
  // Lanes past `count` repeat lane 0; their results are dropped.
  Lanes p[3], max_d;
  Mask in_batch;
  for (int i = 0; i < kImplicitBatch; ++i) {
    const int j = i < count ? i : 0;
    for (int a = 0; a < 3; ++a) p[a][i] = p_SQ[j][a];
    max_d[i] = max_distance[j];
    in_batch[i] = i < count ? -1 : 0;
  }
  // StartQuery.
  const Lanes q_norm = Sqrt(Dot3(p, p));
  const Mask culled_far = (q_norm - length) > max_d;
  const double inv_length = 1 / length;
  Lanes q[3], grad_q[3], max_s;
  for (int a = 0; a < 3; ++a) q[a] = p[a] * inv_length;
  // PsiFunction::QueryPhi, its common branch (max_s ≤ 2).
  Lanes sum;
  psi.template Lanes<Lanes>(q, grad_q, nullptr, nullptr, &max_s, &sum);
  const Mask common = ~(max_s > 2.0);
  const Lanes k = 1.0 / ((2.0 * n) * sum);
  Lanes sigma;
  if ((n & (n - 1)) == 0) {  // internal::Root2n's repeated square roots
    sigma = Sqrt(sum);
    for (int m = n; m > 1; m >>= 1) sigma = Sqrt(sigma);
  } else {
    for (int i = 0; i < kImplicitBatch; ++i) sigma[i] = internal::Root2n(sum[i], n);
  }
  const Lanes sk = sigma * k;
  for (int a = 0; a < 3; ++a) grad_q[a] = grad_q[a] * sk;
  const Lanes phi_q = sigma - 1.0;
  const Mask inside = phi_q <= 0.0;
  const Lanes g2_q = Dot3(grad_q, grad_q);
  const Mask culled_plane = ~inside & (g2_q > 0.0) & (length * phi_q > max_d * Sqrt(g2_q));
  const Mask culled = in_batch & (culled_far | (common & culled_plane));
  const Mask near = (g2_q > 0.0) & (phi_q * phi_q < (kNearSurface * kNearSurface) * g2_q);
  const Lanes ratio = phi_q / g2_q;
  Lanes y[3];
  for (int a = 0; a < 3; ++a) y[a] = q[a] - ratio * grad_q[a];
  Mask active = in_batch & ~culled & common & near & Finite(y[0]) & Finite(y[1]) & Finite(y[2]);

  // FastNewtonLanes: StartResidual.
  Lanes g[3], h[3], yz, r[4];
  psi.template Lanes<Lanes>(y, g, h, &yz, nullptr, &r[3]);
  r[3] = r[3] - 1.0;
  Lanes g2 = Dot3(g, g);
  active &= (g2 > 0.0) & Finite(g2);
  Lanes q_minus_y[3];
  for (int a = 0; a < 3; ++a) q_minus_y[a] = q[a] - y[a];
  Lanes mu = Dot3(q_minus_y, g) / g2;
  for (int a = 0; a < 3; ++a) r[a] = y[a] - q[a] + mu * g[a];
  Lanes merit = Merit(r), last = Splat(0.0);
  const double value_tolerance = (2.0 * n) * kTolerance;  // PsiFunction::value_scale()·kTolerance
  Mask solved = {0, 0, 0, 0};
  for (int iteration = 0; iteration < kFastIterations; ++iteration) {
    // A lane with a non-finite residual is left to the single-centre solve.
    active &= Finite(r[0]) & Finite(r[1]) & Finite(r[2]) & Finite(r[3]);
    const Mask now_converged = active & Converged(r, value_tolerance);
    solved |= now_converged;
    active &= ~now_converged;
    // NewtonStep.
    Lanes A[3], step[4];
    Mask regular, schur_regular;
    for (int a = 0; a < 3; ++a) A[a] = 1.0 + mu * h[a];
    if constexpr (!kCylinder) {  // the diagonal form
      Lanes P[3];
      P[0] = A[1] * A[2], P[1] = A[0] * A[2], P[2] = A[0] * A[1];
      const Lanes d = A[0] * P[0];
      const Lanes scale = Max(Max(Splat(1.0), Abs(A[0])), Max(Abs(A[1]), Abs(A[2])));
      regular = Abs(d) > kSingularRcond * scale * scale * scale;
      const Lanes schur = g[0] * g[0] * P[0] + g[1] * g[1] * P[1] + g[2] * g[2] * P[2];
      const Lanes p_max = Max(Abs(P[0]), Max(Abs(P[1]), Abs(P[2])));
      schur_regular = Abs(schur) > kSingularRcond * Dot3(g, g) * p_max;
      const Lanes d_mu = (r[3] * d - (g[0] * r[0] * P[0] + g[1] * r[1] * P[1] + g[2] * r[2] * P[2])) / schur;
      const Lanes inv_d = 1.0 / d;
      for (int a = 0; a < 3; ++a) step[a] = -(r[a] + g[a] * d_mu) * (P[a] * inv_d);
      step[3] = d_mu;
    } else {  // PsiFunction<true>::SolveShifted (x alone, the y–z block), then the Schur complement
      const Lanes c = mu * yz;
      const Lanes scale = Max(Max(Max(Splat(1.0), Abs(A[0])), Max(Abs(A[1]), Abs(A[2]))), Abs(c));
      const Lanes det12 = A[1] * A[2] - c * c;
      regular = Abs(A[0] * det12) > kSingularRcond * scale * scale * scale;
      const Lanes inv0 = 1.0 / A[0], inv12 = 1.0 / det12;
      const Lanes u[3] = {r[0] * inv0, (A[2] * r[1] - c * r[2]) * inv12, (A[1] * r[2] - c * r[1]) * inv12};
      const Lanes v[3] = {g[0] * inv0, (A[2] * g[1] - c * g[2]) * inv12, (A[1] * g[2] - c * g[1]) * inv12};
      const Lanes inverse_max = Max(Abs(inv0), Max(Max(Abs(A[1]), Abs(A[2])), Abs(c)) * Abs(inv12));
      const Lanes schur = Dot3(g, v);
      schur_regular = Abs(schur) > kSingularRcond * Dot3(g, g) * inverse_max;
      const Lanes d_mu = (r[3] - Dot3(g, u)) / schur;
      for (int a = 0; a < 3; ++a) step[a] = -u[a] - v[a] * d_mu;
      step[3] = d_mu;
    }
    active &= regular & schur_regular & Finite(step[0]) & Finite(step[1]) & Finite(step[2]) & Finite(step[3]);
    // FinalStep: taken without evaluating.
    const Lanes dy = MaxAbs3(step);
    const Mask final_step = active & (last > 0.0) & (dy * dy * dy <= (kFinalStepFactor * kTolerance) * (last * last));
    const Lanes h_step[3] = {h[0] * step[0], h[1] * step[1] + yz * step[2], h[2] * step[2] + yz * step[1]};
    for (int a = 0; a < 3; ++a) g[a] = Select(final_step, g[a] + h_step[a], g[a]);
    for (int a = 0; a < 3; ++a) y[a] = Select(active, y[a] + step[a], y[a]);
    mu = Select(active, mu + step[3], mu);
    solved |= final_step;
    active &= ~final_step;
    last = Select(active, dy, last);
    if (!Any(active)) break;
    // The residual at the new point; a lane that did not at least quarter |r|² stops.
    Lanes g_new[3], h_new[3], yz_new, r_new[4];
    psi.template Lanes<Lanes>(y, g_new, h_new, &yz_new, nullptr, &r_new[3]);
    r_new[3] = r_new[3] - 1.0;
    for (int a = 0; a < 3; ++a) r_new[a] = y[a] - q[a] + mu * g_new[a];
    const Lanes merit_new = Merit(r_new);
    for (int a = 0; a < 3; ++a) g[a] = Select(active, g_new[a], g[a]), h[a] = Select(active, h_new[a], h[a]);
    for (int a = 0; a < 4; ++a) r[a] = Select(active, r_new[a], r[a]);
    yz = Select(active, yz_new, yz);
    active &= merit_new <= 0.25 * merit;
    merit = merit_new;
  }
  solved |= active & Finite(r[0]) & Finite(r[1]) & Finite(r[2]) & Finite(r[3]) & Converged(r, value_tolerance);

  // Settled lanes (FastPathLockStep) and their answers (Finish).
  Lanes foot[3], offset[3];
  for (int a = 0; a < 3; ++a) foot[a] = length * y[a], offset[a] = foot[a] - p[a];
  const Lanes distance = Sqrt(Dot3(offset, offset));
  const Mask settled = solved & ((inside & (distance < shape.rolling_radius())) | (~inside & (mu > 0.0)));
  for (int i = 0; i < count; ++i) {
    if (Lane(culled, i)) {
      results[i] = {};
      done[i] = true;
    } else if (Lane(settled, i)) {
      results[i] = FootPointResult(Eigen::Vector3d(foot[0][i], foot[1][i], foot[2][i]),
                                   Eigen::Vector3d(g[0][i], g[1][i], g[2][i]),
                                   Lane(inside, i) ? -distance[i] : distance[i]);
      done[i] = true;
    }
  }
}

template void LockStepAvx2<false>(const ImplicitShape&, const Eigen::Vector3d*, int, const double*,
                                  SignedDistanceResult*, bool*);
template void LockStepAvx2<true>(const ImplicitShape&, const Eigen::Vector3d*, int, const double*,
                                 SignedDistanceResult*, bool*);

}  // namespace taxel::geometry::internal

#endif  // __x86_64__
