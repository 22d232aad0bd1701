#include "core/geometry/implicit_signed_distance.h"

#include <algorithm>
#include <cmath>

#include "Eigen/Dense"
#include "core/common/cpu_features.h"
#include "core/geometry/implicit_probe_functions.h"
#include "core/geometry/implicit_probe_solver.h"

namespace taxel::geometry {
namespace {

using internal::kFastIterations;
using internal::kFinalStepFactor;
using internal::kNearSurface;
using internal::kSingularRcond;
using internal::kTolerance;
using internal::PhiFunction;
using internal::PsiFunction;

constexpr int kMaxIterations = 60;
/// A solve that stalls (no step decreases the residual any more) below this still counts.
constexpr double kStallTolerance = 1e-10;
/// Iterations in a row without progress after which a start is abandoned.
constexpr int kMaxSlowIterations = 6;

/// Whether |r_y|∞ ≤ tolerance and |r_f| ≤ value_scale·tolerance.
bool Converged(const Eigen::Vector4d& r, double tolerance, double value_scale) {
  return r.head<3>().lpNorm<Eigen::Infinity>() <= tolerance && std::abs(r[3]) <= value_scale * tolerance;
}

/// The Newton step (dy, dμ) of the closest-point equations at (y, μ) with residual r = (r_y, r_f),
/// g = ∇'f and h = ∇'²f; false when the Jacobian is near-singular. J = [[A, g], [gᵀ, 0]] with
/// A = I + μ∇'²f, by its Schur complement: with u = A⁻¹r_y and v = A⁻¹g, gᵀ(−u − v·dμ) = −r_f
/// gives dμ = (r_f − gᵀu)/(gᵀv) and dy = −u − v·dμ. A small determinant or Schur complement means
/// near-singular.
template <class Function>
bool NewtonStep(const typename Function::Hessian& h, const Eigen::Vector3d& g, double mu, const Eigen::Vector4d& r,
                Eigen::Vector4d* step) {
  if constexpr (Function::kDiagonal) {
    // A = diag(a): with P_i = Π_{j≠i} a_j and D = Π a_j, A⁻¹ = diag(P)/D, so
    // dμ = (r_f·D − Σ g_i r_i P_i)/Σ g_i² P_i and dy_i = −(r_i + g_i·dμ)·P_i/D: one division on
    // the dependency chain (1/D goes alongside). The same singularity tests, multiplied by |D|.
    const double a[3] = {1 + mu * h.diagonal[0], 1 + mu * h.diagonal[1], 1 + mu * h.diagonal[2]};
    const double p[3] = {a[1] * a[2], a[0] * a[2], a[0] * a[1]};
    const double d = a[0] * p[0];
    const double scale = std::max(std::max(1.0, std::abs(a[0])), std::max(std::abs(a[1]), std::abs(a[2])));
    if (!(std::abs(d) > kSingularRcond * scale * scale * scale)) return false;
    const double schur = g[0] * g[0] * p[0] + g[1] * g[1] * p[1] + g[2] * g[2] * p[2];
    const double p_max = std::max(std::abs(p[0]), std::max(std::abs(p[1]), std::abs(p[2])));
    if (!(std::abs(schur) > kSingularRcond * g.squaredNorm() * p_max)) return false;
    const double d_mu = (r[3] * d - (g[0] * r[0] * p[0] + g[1] * r[1] * p[1] + g[2] * r[2] * p[2])) / schur;
    const double inv_d = 1 / d;
    for (int i = 0; i < 3; ++i) (*step)[i] = -(r[i] + g[i] * d_mu) * (p[i] * inv_d);
    (*step)[3] = d_mu;
  } else {
    Eigen::Vector3d u, v;
    double inverse_max = 0;
    if (!Function::SolveShifted(h, mu, r.head<3>(), g, &u, &v, &inverse_max)) return false;
    const double schur = g.dot(v);
    if (!(std::abs(schur) > kSingularRcond * g.squaredNorm() * inverse_max)) return false;
    const double d_mu = (r[3] - g.dot(u)) / schur;
    step->head<3>() = -u - v * d_mu;
    (*step)[3] = d_mu;
  }
  return step->allFinite();
}

/// Whether the Newton step `step` lands on the root within the tolerance, so that it can be taken
/// without evaluating f at its end; `last` is |dy|∞ of the previous iteration when that was a full
/// Newton step (0 otherwise). Quadratic convergence: |dy_{k+1}| ≈ κ|dy_k|² with the contraction
/// κ ≈ |dy_k|/|dy_{k−1}|² (Deuflhard, "Newton Methods for Nonlinear Problems", 2004); the step is
/// final when the next correction would be below kFinalStepFactor·kTolerance.
bool FinalStep(const Eigen::Vector4d& step, double last) {
  if (!(last > 0)) return false;
  const double dy = step.head<3>().lpNorm<Eigen::Infinity>();
  return dy * dy * dy <= (kFinalStepFactor * kTolerance) * (last * last);  // κ|dy|² without a division
}

/// The residual r = (y' − q' + μ∇'f, f) of the closest-point equations at the start y, with ∇'f
/// into *g, ∇'²f into *h and μ by least squares; false when ∇'f vanishes or is not finite. The
/// first stage of SolveFrom and FastNewtonLanes.
template <class Function>
bool StartResidual(const Function& f, const Eigen::Vector3d& q, const Eigen::Vector3d& y, Eigen::Vector3d* g,
                   typename Function::Hessian* h, double* mu, Eigen::Vector4d* r) {
  (*r)[3] = f.Evaluate(y, g, h);
  const double g2 = g->squaredNorm();
  if (!(g2 > 0) || !std::isfinite(g2)) return false;
  *mu = (q - y).dot(*g) / g2;
  r->head<3>() = y - q + *mu * *g;
  return true;
}

/// Damped Newton on the closest-point equations r = (y' − q' + μ'∇'f, f) of the scaled query q'
/// and a function f with the shape's zero set (PhiFunction or PsiFunction), from the scaled start
/// y (any point; μ from least squares). On success sets *y and *mu to the solution, and *grad to
/// ∇'f there (a direction for the normal). Counts iterations and evaluations into *stats.
/// `give_up_when_slow`: abandon a start that stops converging (for inside points, where other
/// starts exist and the problem is not convex).
template <class Function>
bool SolveFrom(const Function& f, const Eigen::Vector3d& q, bool give_up_when_slow, Eigen::Vector3d* y, double* mu,
               Eigen::Vector3d* grad, ImplicitProbeStats* stats) {
  using Hessian = typename Function::Hessian;
  Eigen::Vector3d& g = *grad;
  Hessian h;
  Eigen::Vector4d r;
  ++stats->evaluations;
  if (!StartResidual(f, q, *y, &g, &h, mu, &r)) return false;
  double merit = r.squaredNorm();
  double lambda = 0;         // Levenberg–Marquardt damping; 0: plain Newton
  int slow = 0;              // consecutive iterations that did not halve the residual
  double last_newton = 0;    // |dy|∞ of the previous iteration when it was a full Newton step, else 0
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    if (Converged(r, kTolerance, f.value_scale())) return true;
    ++stats->iterations;
    Eigen::Vector4d step;
    bool newton = false;
    if (lambda == 0) {
      newton = NewtonStep<Function>(h, g, *mu, r, &step);
      if (!newton) lambda = 1e-6;
    }
    if (!newton) {
      Eigen::Matrix4d jacobian;
      jacobian.topLeftCorner<3, 3>() = Eigen::Matrix3d::Identity() + *mu * Function::Dense(h);
      jacobian.topRightCorner<3, 1>() = g;
      jacobian.bottomLeftCorner<1, 3>() = g.transpose();
      jacobian(3, 3) = 0;
      // Near-singular (medial axis, centre of curvature): a regularised Gauss–Newton step.
      Eigen::Matrix4d normal = jacobian.transpose() * jacobian;
      normal.diagonal().array() += lambda * (1 + normal.diagonal().array());
      step = normal.ldlt().solve(-jacobian.transpose() * r);
    }
    if (newton && FinalStep(step, last_newton)) {
      g += Function::Times(h, step.head<3>());
      *y += step.head<3>();
      *mu += step[3];
      return true;
    }
    // Trust region: never move the foot point more than half the outer radius per iteration.
    const double move = step.head<3>().norm();
    if (move > 0.5) step *= 0.5 / move;
    const double merit_before = merit;
    // Backtracking on |r|² (Armijo).
    bool accepted = false, full = false;
    double t = 1;
    for (int halving = 0; halving < 10 && !accepted; ++halving, t *= 0.5) {
      const Eigen::Vector3d y_try = *y + t * step.head<3>();
      const double mu_try = *mu + t * step[3];
      Eigen::Vector3d g_try;
      Hessian h_try;
      Eigen::Vector4d r_try;
      r_try[3] = f.Evaluate(y_try, &g_try, &h_try);
      ++stats->evaluations;
      r_try.head<3>() = y_try - q + mu_try * g_try;
      const double merit_try = r_try.squaredNorm();
      if (std::isfinite(merit_try) && merit_try < (1 - 1e-4 * t) * merit) {
        *y = y_try, *mu = mu_try, g = g_try, h = h_try, r = r_try, merit = merit_try;
        accepted = true;
        full = t == 1;
      }
    }
    // A start that creeps (a minimum of |r|² that is no root, far from the answer) is abandoned:
    // Newton near a root at least halves |r|² per iteration.
    slow = merit > 0.25 * merit_before ? slow + 1 : 0;
    if (give_up_when_slow && slow >= kMaxSlowIterations) return Converged(r, kStallTolerance, f.value_scale());
    last_newton = full && newton && move <= 0.5 ? step.head<3>().lpNorm<Eigen::Infinity>() : 0;
    if (accepted) {
      lambda = newton ? 0 : (lambda > 1e-9 ? lambda * 0.1 : 0);
    } else {
      if (Converged(r, kStallTolerance, f.value_scale())) return true;
      lambda = std::max(lambda * 10, 1e-6);
      if (lambda > 1e8) return false;
    }
  }
  return Converged(r, kStallTolerance, f.value_scale());
}

/// Plain Newton from the scaled starts y[i] of the scaled queries q[i], i < count ≤ N, for starts
/// expected within its quadratic range (the gradient projection of a point near the surface): no
/// line search, no damping, at most kFastIterations steps, each of which must at least halve the
/// residual. Lanes with active[i] false are skipped. On return solved[i] says whether lane i
/// converged, with y[i], mu[i] and grad[i] set as SolveFrom sets them; a lane that stops
/// converging quadratically is not solved (the damped SolveFrom then takes over from its start).
/// The lanes run stage by stage, so that their dependent chains (divisions, square roots) overlap;
/// each lane's operations are those of a single start, in the same order. Counts into *stats when
/// non-null.
template <class Function, int N>
void FastNewtonLanes(const Function& f, const Eigen::Vector3d* q, int count, bool* active, Eigen::Vector3d* y,
                     double* mu, Eigen::Vector3d* grad, bool* solved, ImplicitProbeStats* stats) {
  typename Function::Hessian h[N];
  Eigen::Vector4d r[N];
  double merit[N], last[N];
  for (int i = 0; i < count; ++i) {
    solved[i] = false;
    if (!active[i]) continue;
    if (stats != nullptr) ++stats->evaluations;
    if (!StartResidual(f, q[i], y[i], &grad[i], &h[i], &mu[i], &r[i])) {
      active[i] = false;
      continue;
    }
    merit[i] = r[i].squaredNorm();
    last[i] = 0;
  }
  for (int iteration = 0; iteration < kFastIterations; ++iteration) {
    for (int i = 0; i < count; ++i) {
      if (!active[i]) continue;
      if (Converged(r[i], kTolerance, f.value_scale())) {
        active[i] = false, solved[i] = true;
        continue;
      }
      if (stats != nullptr) ++stats->iterations;
      Eigen::Vector4d step;
      if (!NewtonStep<Function>(h[i], grad[i], mu[i], r[i], &step)) {
        active[i] = false;
        continue;
      }
      if (FinalStep(step, last[i])) {
        grad[i] += Function::Times(h[i], step.head<3>());
        y[i] += step.head<3>();
        mu[i] += step[3];
        active[i] = false, solved[i] = true;
        continue;
      }
      y[i] += step.head<3>();
      mu[i] += step[3];
      last[i] = step.head<3>().lpNorm<Eigen::Infinity>();  // read only if the residual halves below
    }
    for (int i = 0; i < count; ++i) {
      if (!active[i]) continue;
      r[i][3] = f.Evaluate(y[i], &grad[i], &h[i]);
      if (stats != nullptr) ++stats->evaluations;
      r[i].template head<3>() = y[i] - q[i] + mu[i] * grad[i];
      const double merit_before = merit[i];
      merit[i] = r[i].squaredNorm();
      if (!(merit[i] <= 0.25 * merit_before)) active[i] = false;
    }
  }
  for (int i = 0; i < count; ++i) {
    if (active[i]) solved[i] = Converged(r[i], kTolerance, f.value_scale());
  }
}

/// FastNewtonLanes for one start *y: true when converged.
template <class Function>
bool FastNewton(const Function& f, const Eigen::Vector3d& q, Eigen::Vector3d* y, double* mu, Eigen::Vector3d* grad,
                ImplicitProbeStats* stats) {
  bool active = true, solved = false;
  FastNewtonLanes<Function, 1>(f, &q, 1, &active, y, mu, grad, &solved, stats);
  return solved;
}

/// The best solve so far.
struct Candidate {
  Eigen::Vector3d foot = Eigen::Vector3d::Zero();  // metres, in S
  Eigen::Vector3d grad = Eigen::Vector3d::Zero();  // ∇φ at foot (any positive scale)
  double distance = std::numeric_limits<double>::infinity();
  bool converged = false;
};

/// The answer for `best` at signed distance `distance`: the normal ∇φ/|∇φ| at its foot point.
SignedDistanceResult Finish(const Candidate& best, double distance) {
  return internal::FootPointResult(best.foot, best.grad, distance);
}

/// The first stage of a query at p_SQ: its culls and its gradient-projection start (shared by
/// SignedDistanceWith and the lock-step batch, which must agree bit for bit).
struct QueryStart {
  bool culled = false;         // farther than max_distance: "not found" without a solve
  double q_norm = 0;           // |p_SQ| (m)
  Eigen::Vector3d q;           // p_SQ / L (scaled)
  bool inside = false;         // φ(q) ≤ 0
  bool near = false;           // the gradient projection is the first start
  Eigen::Vector3d projected;   // q − φ∇'φ/|∇'φ|² when near, else q
};

template <class Function>
QueryStart StartQuery(const Function& f, const ImplicitShape& shape, const Eigen::Vector3d& p_SQ,
                      double max_distance) {
  QueryStart qs;
  const double length = shape.outer_radius();
  qs.q_norm = p_SQ.norm();
  // The shape lies in the ball of radius R_out: the distance is at least |q| − R_out.
  if (qs.q_norm - length > max_distance) {
    qs.culled = true;
    return qs;
  }
  qs.q = p_SQ * (1 / length);
  Eigen::Vector3d grad_q;  // ∇'φ(q) = L∇φ(q)
  const double phi_q = f.QueryPhi(qs.q, &grad_q);
  qs.inside = phi_q <= 0;
  const double g2 = grad_q.squaredNorm();
  // φ(q)/|∇φ(q)| = L·φ(q)/|∇'φ(q)|: the first-order signed distance. Where φ is a convex function,
  // its tangent plane at q lies below it, so every surface point y (φ(y) = 0) has
  // ∇φ(q)·(q − y) ≥ φ(q): outside, the distance is at least φ(q)/|∇φ(q)| — a cull without a solve.
  if (!qs.inside && shape.convex_function() && g2 > 0 && length * phi_q > max_distance * std::sqrt(g2)) {
    qs.culled = true;
    return qs;
  }
  // Near the surface (|φ/∇φ| < kNearSurface·L; the tactile case), the gradient projection
  // q − φ∇φ/|∇φ|² is within O(sd²·curvature) of the foot point, far closer than the radial one on a
  // flat face, and closer than a warm start one step stale (grasp probes 0.5–1.5 mm deep in SE(4),
  // moving 0.1 mm per step: 1.75 iterations from it, 2.0 from the warm start): it goes first there.
  qs.near = g2 > 0 && phi_q * phi_q < (kNearSurface * kNearSurface) * g2;
  qs.projected = qs.near ? Eigen::Vector3d(qs.q - (phi_q / g2) * grad_q) : qs.q;
  return qs;
}

/// ImplicitSignedDistance with the Newton solves on `f` (PhiFunction or PsiFunction).
template <class Function>
SignedDistanceResult SignedDistanceWith(const Function& f, const ImplicitShape& shape, const Eigen::Vector3d& p_SQ,
                                        double max_distance, const Eigen::Vector3d* warm_start,
                                        ImplicitProbeStats& st) {
  const double length = shape.outer_radius(), inv_length = 1 / length;
  const QueryStart qs = StartQuery(f, shape, p_SQ, max_distance);
  if (qs.culled) return {};
  const double q_norm = qs.q_norm;
  const Eigen::Vector3d& q = qs.q;
  const bool inside = qs.inside, near = qs.near;
  const Eigen::Vector3d& projected = qs.projected;

  Candidate best;
  // Solves from the scaled `start` and keeps the result if it beats `best`. True when converged to
  // an admissible point (outside: μ > 0, the unique minimum). `fast`: plain Newton first
  // (FastNewton), the damped solve only when it gives up.
  auto try_start = [&](const Eigen::Vector3d& start, bool fast = false) {
    if (!start.allFinite()) return false;
    ++st.starts;
    Eigen::Vector3d y = start, grad = Eigen::Vector3d::Zero();
    double mu = 0;
    bool solved = fast && FastNewton(f, q, &y, &mu, &grad, &st);
    if (!solved) {
      y = start;
      solved = SolveFrom(f, q, inside, &y, &mu, &grad, &st);
    }
    const bool ok = solved && (inside || mu > 0);
    const Eigen::Vector3d foot = length * y;
    const double distance = (foot - p_SQ).norm();
    if ((ok && !best.converged) || (ok == best.converged && distance < best.distance)) {
      best = {foot, grad, distance, ok};
    }
    return ok;
  };
  const bool radial_defined = q_norm > 1e-9 * length;
  // The sphere's radial projection is its exact foot point: no warm start needed.
  if (shape.kind() == ImplicitKind::kSphere && radial_defined) warm_start = nullptr;
  // The radial start q/γ(q) (γ is a 1-D solve for polytopes and cones: computed only when tried).
  const auto radial = [&] { return Eigen::Vector3d(q / shape.Gamma(p_SQ)); };

  if (shape.kind() == ImplicitKind::kSphere && radial_defined) {
    try_start(radial());  // exact: R·q/|q|
  } else if (!inside) {
    // Convex problem: the first admissible solution is the answer.
    bool done = (near && try_start(projected, true)) || (warm_start != nullptr && try_start(*warm_start * inv_length)) ||
                (radial_defined && try_start(radial()));
    for (int axis = 0; axis < 3 && !done; ++axis) {
      for (double sign : {1.0, -1.0}) {
        const Eigen::Vector3d e = sign * Eigen::Vector3d::Unit(axis);
        if (!done) done = try_start(e * (inv_length / shape.Gamma(e)));
      }
    }
  } else {
    // Non-convex: the smallest of the local solutions from several starts, unless one of the first
    // two lies within the shape's rolling radius: then it is the global answer (a ball of that
    // radius rolls freely inside, so it touches the surface only at the foot point).
    const auto certain = [&] { return best.converged && best.distance < shape.rolling_radius(); };
    if (near) try_start(projected, true);
    if (!certain() && warm_start != nullptr) try_start(*warm_start * inv_length);
    if (!certain() && radial_defined) try_start(radial());
    if (certain()) {
      st.converged = true;
      return Finish(best, -best.distance);
    }
    const double hi = 1.01 * length + q_norm;  // |q + hi·d| > R_out: outside
    auto try_ray = [&](const Eigen::Vector3d& d) {
      try_start((p_SQ + shape.RaySurface(p_SQ, d, 0, hi, 1e-7 * hi) * d) * inv_length);
    };
    for (int axis = 0; axis < 3; ++axis) {
      try_ray(Eigen::Vector3d::Unit(axis));
      try_ray(-Eigen::Vector3d::Unit(axis));
    }
    if (shape.kind() == ImplicitKind::kSmoothPolytope) {
      // The face of the hard polytope with the least slack b_i − a_iᵀq.
      const auto& normals = shape.plane_normals();
      int nearest = 0;
      double slack = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < normals.size(); ++i) {
        const double s = shape.plane_offsets()[i] - normals[i].dot(p_SQ);
        if (s < slack) slack = s, nearest = static_cast<int>(i);
      }
      try_ray(normals[nearest]);
    } else if (shape.kind() == ImplicitKind::kTruncatedCone || shape.kind() == ImplicitKind::kSuperellipticCylinder) {
      // Radially out from the axis (local x), towards the side.
      const Eigen::Vector3d rho(0, p_SQ.y(), p_SQ.z());
      if (rho.norm() > 1e-9 * length) try_ray(rho.normalized());
    }
  }
  st.converged = best.converged;
  return Finish(best, inside ? -best.distance : best.distance);
}

/// The lock-step fast path of ImplicitSignedDistanceBatch for SE (kCylinder false) or SEC: the
/// steps of SignedDistanceWith up to and including the first start's FastNewton from the gradient
/// projection, stage by stage over the lanes, with the same operations in the same order per lane
/// (hence the same bits). Sets done[i] and results[i] for the lanes it answers; the others are left
/// to the single-centre solve.
template <bool kCylinder>
void FastPathLockStep(const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count, const double* max_distance,
                      SignedDistanceResult* results, bool* done) {
  const PsiFunction<kCylinder> f(shape, shape.outer_radius());
  const double length = shape.outer_radius();
  Eigen::Vector3d q[kImplicitBatch], y[kImplicitBatch], g[kImplicitBatch];
  bool inside[kImplicitBatch], active[kImplicitBatch];
  // SignedDistanceWith's first stage; a lane that is not near the surface (or not a plain finite
  // start) goes to the single-centre solve.
  for (int i = 0; i < count; ++i) {
    const QueryStart qs = StartQuery(f, shape, p_SQ[i], max_distance[i]);
    active[i] = false;
    if (qs.culled) {
      results[i] = {};
      done[i] = true;
      continue;
    }
    q[i] = qs.q, inside[i] = qs.inside, y[i] = qs.projected;
    active[i] = qs.near && y[i].allFinite();
  }
  double mu[kImplicitBatch];
  bool solved[kImplicitBatch];
  FastNewtonLanes<PsiFunction<kCylinder>, kImplicitBatch>(f, q, count, active, y, mu, g, solved, nullptr);
  // try_start's verdict on the first start, and SignedDistanceWith's answer when it settles it:
  // outside, an admissible solution (μ > 0) is the answer; inside, one within the rolling radius.
  for (int i = 0; i < count; ++i) {
    if (done[i] || !solved[i]) continue;
    const Eigen::Vector3d foot = length * y[i];
    const double distance = (foot - p_SQ[i]).norm();
    const bool settled = inside[i] ? distance < shape.rolling_radius() : mu[i] > 0;
    if (!settled) continue;
    Candidate best;
    best.foot = foot, best.grad = g[i], best.distance = distance, best.converged = true;
    results[i] = Finish(best, inside[i] ? -distance : distance);
    done[i] = true;
  }
}

// The lock-step of SE (kCylinder false) or SEC: in AVX2 registers where the CPU has them and
// `portable` is false, else on scalar registers (FastPathLockStep).
template <bool kCylinder>
void LockStep(bool portable, const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count,
              const double* max_distance, SignedDistanceResult* results, bool* done) {
#if defined(__x86_64__)
  if (!portable && CpuHasAvx2()) {
    return internal::LockStepAvx2<kCylinder>(shape, p_SQ, count, max_distance, results, done);
  }
#endif
  FastPathLockStep<kCylinder>(shape, p_SQ, count, max_distance, results, done);
}

}  // namespace

void ImplicitSignedDistanceBatch(const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count,
                                 const double* max_distance, const Eigen::Vector3d* const* warm_starts,
                                 SignedDistanceResult* results) {
  internal::ImplicitSignedDistanceBatchWith(false, shape, p_SQ, count, max_distance, warm_starts, results);
}

namespace internal {

void ImplicitSignedDistanceBatchWith(bool portable, const ImplicitShape& shape, const Eigen::Vector3d* p_SQ, int count,
                                     const double* max_distance, const Eigen::Vector3d* const* warm_starts,
                                     SignedDistanceResult* results) {
  bool done[kImplicitBatch] = {};
  if (shape.kind() == ImplicitKind::kSuperellipsoid) {
    LockStep<false>(portable, shape, p_SQ, count, max_distance, results, done);
  } else if (shape.kind() == ImplicitKind::kSuperellipticCylinder) {
    LockStep<true>(portable, shape, p_SQ, count, max_distance, results, done);
  }
  for (int i = 0; i < count; ++i) {
    if (done[i]) continue;
    results[i] = ImplicitSignedDistance(shape, p_SQ[i], max_distance[i], warm_starts != nullptr ? warm_starts[i] : nullptr);
  }
}

}  // namespace internal

SignedDistanceResult ImplicitSignedDistance(const ImplicitShape& shape, const Eigen::Vector3d& p_SQ,
                                            double max_distance, const Eigen::Vector3d* warm_start,
                                            ImplicitProbeStats* stats) {
  ImplicitProbeStats local;
  ImplicitProbeStats& st = stats != nullptr ? *stats : local;
  st = ImplicitProbeStats{};
  const double length = shape.outer_radius();
  SignedDistanceResult result;
  switch (shape.kind()) {
    case ImplicitKind::kSuperellipsoid:
      result = SignedDistanceWith(PsiFunction<false>(shape, length), shape, p_SQ, max_distance, warm_start, st);
      break;
    case ImplicitKind::kSuperellipticCylinder:
      result = SignedDistanceWith(PsiFunction<true>(shape, length), shape, p_SQ, max_distance, warm_start, st);
      break;
    default: return SignedDistanceWith(PhiFunction{shape, length}, shape, p_SQ, max_distance, warm_start, st);
  }
  if (st.converged || !result.found()) return result;
  // ψ's solves all failed (rare: inside points near the medial axis, where ψ's steep degree-2n
  // growth throws the damped solves off): the same starts on φ itself, whose gradient grows
  // linearly. The statistics count both attempts.
  ImplicitProbeStats retry;
  const SignedDistanceResult on_phi =
      SignedDistanceWith(PhiFunction{shape, length}, shape, p_SQ, max_distance, warm_start, retry);
  st.iterations += retry.iterations;
  st.evaluations += retry.evaluations;
  st.starts += retry.starts;
  st.converged = retry.converged;
  return retry.converged || std::abs(on_phi.distance) < std::abs(result.distance) ? on_phi : result;
}

}  // namespace taxel::geometry
