#include "core/geometry/implicit_signed_distance.h"

#include <algorithm>
#include <cmath>

#include "Eigen/Dense"

namespace taxel::geometry {
namespace {

constexpr int kMaxIterations = 60;
/// Scaled residual (position / R_out and φ) at which a solve has converged.
constexpr double kTolerance = 1e-12;
/// A solve that stalls (no step decreases the residual any more) below this still counts.
constexpr double kStallTolerance = 1e-10;
/// Reciprocal condition number under which the Newton Jacobian counts as singular.
constexpr double kSingularRcond = 1e-10;
/// Iterations in a row without progress after which a start is abandoned.
constexpr int kMaxSlowIterations = 6;
/// |φ(q)|/|∇φ(q)| below this fraction of the outer radius: q counts as near the surface, where the
/// gradient projection is the better start.
constexpr double kNearSurface = 0.1;

/// The closest-point equations in the scaled unknowns y' = y/L, μ' = μ/L² (dimensionless):
/// r = (y' − q' + μ'∇'φ, φ) with ∇'φ = L∇φ, ∇'²φ = L²∇²φ.
struct Equations {
  const ImplicitShape& shape;
  Eigen::Vector3d q;  // scaled query point
  double length;      // L = outer radius (m)

  Eigen::Vector4d Residual(const Eigen::Vector3d& y, double mu, Eigen::Vector3d* g, Eigen::Matrix3d* h) const {
    const double phi = shape.Evaluate(length * y, g, h);
    *g *= length;
    if (h != nullptr) *h *= length * length;
    Eigen::Vector4d r;
    r.head<3>() = y - q + mu * *g;
    r[3] = phi;
    return r;
  }
};

bool Converged(const Eigen::Vector4d& r, double tolerance) {
  return r.head<3>().lpNorm<Eigen::Infinity>() <= tolerance && std::abs(r[3]) <= tolerance;
}

/// Damped Newton from the scaled start y (any point; μ from least squares). On success sets *y and
/// *mu to the solution, and *grad to the scaled ∇φ there (a direction for the normal). Counts iterations into *iterations. `give_up_when_slow`: abandon a start
/// that stops converging (for inside points, where other starts exist and the problem is not convex).
bool SolveFrom(const Equations& eq, bool give_up_when_slow, Eigen::Vector3d* y, double* mu, Eigen::Vector3d* grad,
               int* iterations) {
  Eigen::Vector3d& g = *grad;
  Eigen::Matrix3d h;
  // μ from least squares at the start, then the residual from the same evaluation.
  Eigen::Vector4d r = eq.Residual(*y, 0, &g, &h);
  const double g2 = g.squaredNorm();
  if (!(g2 > 0) || !std::isfinite(g2)) return false;
  *mu = (eq.q - *y).dot(g) / g2;
  r.head<3>() += *mu * g;
  double merit = r.squaredNorm();
  double lambda = 0;  // Levenberg–Marquardt damping; 0: plain Newton
  int slow = 0;       // consecutive iterations that did not halve the residual
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    if (Converged(r, kTolerance)) return true;
    ++*iterations;
    const Eigen::Matrix3d a = Eigen::Matrix3d::Identity() + *mu * h;
    Eigen::Vector4d step;
    bool newton = false;
    if (lambda == 0) {
      // J = [[A, g], [gᵀ, 0]] by its Schur complement: with u = −A⁻¹r_y and v = A⁻¹g,
      // gᵀ(u − v·dμ) = −r_φ gives dμ = (gᵀu + r_φ)/(gᵀv) and dy = u − v·dμ. A (symmetric, 3×3) is
      // inverted by cofactors; a small determinant or Schur complement means near-singular.
      Eigen::Matrix3d a_inv;
      double det = 0;
      bool invertible = false;
      const double scale = std::max(1.0, a.cwiseAbs().maxCoeff());
      a.computeInverseAndDetWithCheck(a_inv, det, invertible, kSingularRcond * scale * scale * scale);
      if (invertible) {
        const Eigen::Vector3d u = -(a_inv * r.head<3>());
        const Eigen::Vector3d v = a_inv * g;
        const double schur = g.dot(v);
        if (std::abs(schur) > kSingularRcond * g.squaredNorm() * a_inv.cwiseAbs().maxCoeff()) {
          const double d_mu = (g.dot(u) + r[3]) / schur;
          step.head<3>() = u - v * d_mu;
          step[3] = d_mu;
          newton = step.allFinite();
        }
      }
      if (!newton) lambda = 1e-6;
    }
    if (!newton) {
      Eigen::Matrix4d jacobian;
      jacobian.topLeftCorner<3, 3>() = a;
      jacobian.topRightCorner<3, 1>() = g;
      jacobian.bottomLeftCorner<1, 3>() = g.transpose();
      jacobian(3, 3) = 0;
      // Near-singular (medial axis, centre of curvature): a regularised Gauss–Newton step.
      Eigen::Matrix4d normal = jacobian.transpose() * jacobian;
      normal.diagonal().array() += lambda * (1 + normal.diagonal().array());
      step = normal.ldlt().solve(-jacobian.transpose() * r);
    }
    // Trust region: never move the foot point more than half the outer radius per iteration.
    const double move = step.head<3>().norm();
    if (move > 0.5) step *= 0.5 / move;
    const double merit_before = merit;
    // Backtracking on |r|² (Armijo).
    bool accepted = false;
    double t = 1;
    for (int halving = 0; halving < 10 && !accepted; ++halving, t *= 0.5) {
      const Eigen::Vector3d y_try = *y + t * step.head<3>();
      const double mu_try = *mu + t * step[3];
      Eigen::Vector3d g_try;
      Eigen::Matrix3d h_try;
      const Eigen::Vector4d r_try = eq.Residual(y_try, mu_try, &g_try, &h_try);
      const double merit_try = r_try.squaredNorm();
      if (std::isfinite(merit_try) && merit_try < (1 - 1e-4 * t) * merit) {
        *y = y_try, *mu = mu_try, g = g_try, h = h_try, r = r_try, merit = merit_try;
        accepted = true;
      }
    }
    // A start that creeps (a minimum of |r|² that is no root, far from the answer) is abandoned:
    // Newton near a root at least halves |r|² per iteration.
    slow = merit > 0.25 * merit_before ? slow + 1 : 0;
    if (give_up_when_slow && slow >= kMaxSlowIterations) return Converged(r, kStallTolerance);
    if (accepted) {
      lambda = newton ? 0 : (lambda > 1e-9 ? lambda * 0.1 : 0);
    } else {
      if (Converged(r, kStallTolerance)) return true;
      lambda = std::max(lambda * 10, 1e-6);
      if (lambda > 1e8) return false;
    }
  }
  return Converged(r, kStallTolerance);
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
  SignedDistanceResult result;
  result.closest = best.foot;
  result.distance = distance;
  const double grad_norm = best.grad.norm();
  result.normal = grad_norm > 0 ? Eigen::Vector3d(best.grad / grad_norm) : Eigen::Vector3d::UnitZ();
  return result;
}

}  // namespace

SignedDistanceResult ImplicitSignedDistance(const ImplicitShape& shape, const Eigen::Vector3d& p_SQ,
                                            double max_distance, const Eigen::Vector3d* warm_start,
                                            ImplicitProbeStats* stats) {
  ImplicitProbeStats local;
  ImplicitProbeStats& st = stats != nullptr ? *stats : local;
  st = ImplicitProbeStats{};
  const double length = shape.outer_radius();
  const double q_norm = p_SQ.norm();
  // The shape lies in the ball of radius R_out: the distance is at least |q| − R_out.
  if (q_norm - length > max_distance) return {};
  Eigen::Vector3d grad_q;
  const double phi_q = shape.Evaluate(p_SQ, &grad_q, nullptr);
  const bool inside = phi_q <= 0;
  const double grad_q_norm = grad_q.norm();
  // φ(q)/|∇φ(q)|: the first-order signed distance. Where φ is a convex function, its tangent plane
  // at q lies below it, so every surface point y (φ(y) = 0) has ∇φ(q)·(q − y) ≥ φ(q): outside, the
  // distance is at least φ(q)/|∇φ(q)| — a cull that needs no solve.
  const double linear_sd = grad_q_norm > 0 ? phi_q / grad_q_norm : 0;
  if (!inside && shape.convex_function() && linear_sd > max_distance) return {};
  const Equations eq{shape, p_SQ / length, length};

  Candidate best;
  // Solves from `start` (metres) and keeps the result if it beats `best`. True when converged to
  // an admissible point (outside: μ > 0, the unique minimum).
  auto try_start = [&](const Eigen::Vector3d& start) {
    if (!start.allFinite()) return false;
    ++st.starts;
    Eigen::Vector3d y = start / length, grad = Eigen::Vector3d::Zero();
    double mu = 0;
    const bool ok = SolveFrom(eq, inside, &y, &mu, &grad, &st.iterations) && (inside || mu > 0);
    const double distance = (length * y - p_SQ).norm();
    if ((ok && !best.converged) || (ok == best.converged && distance < best.distance)) {
      best = {length * y, grad, distance, ok};
    }
    return ok;
  };
  const bool radial_defined = q_norm > 1e-9 * length;
  // Near the surface (the tactile case), the gradient projection q − φ∇φ/|∇φ|² is within
  // O(sd²·curvature) of the foot point, far closer than the radial one on a flat face, and closer
  // than a warm start one step stale (grasp probes 0.5–1.5 mm deep in SE(4), moving 0.1 mm per
  // step: 1.6 iterations from it, 2.0 from the warm start): it goes first there.
  const bool near = grad_q_norm > 0 && std::abs(linear_sd) < kNearSurface * length;
  const Eigen::Vector3d projected = near ? Eigen::Vector3d(p_SQ - linear_sd * grad_q / grad_q_norm) : p_SQ;
  // The sphere's radial projection is its exact foot point: no warm start needed.
  if (shape.kind() == ImplicitKind::kSphere && radial_defined) warm_start = nullptr;
  // The radial start q/γ(q) (γ is a 1-D solve for polytopes and cones: computed only when tried).
  const auto radial = [&] { return Eigen::Vector3d(p_SQ / shape.Gamma(p_SQ)); };

  if (shape.kind() == ImplicitKind::kSphere && radial_defined) {
    try_start(radial());  // exact: R·q/|q|
  } else if (!inside) {
    // Convex problem: the first admissible solution is the answer.
    bool done = (near && try_start(projected)) || (warm_start != nullptr && try_start(*warm_start)) ||
                (radial_defined && try_start(radial()));
    for (int axis = 0; axis < 3 && !done; ++axis) {
      for (double sign : {1.0, -1.0}) {
        const Eigen::Vector3d e = sign * Eigen::Vector3d::Unit(axis);
        if (!done) done = try_start(e / shape.Gamma(e));
      }
    }
  } else {
    // Non-convex: the smallest of the local solutions from several starts, unless one of the first
    // two lies within the shape's rolling radius: then it is the global answer (a ball of that
    // radius rolls freely inside, so it touches the surface only at the foot point).
    const auto certain = [&] { return best.converged && best.distance < shape.rolling_radius(); };
    if (near) try_start(projected);
    if (!certain() && warm_start != nullptr) try_start(*warm_start);
    if (!certain() && radial_defined) try_start(radial());
    if (certain()) {
      st.converged = true;
      return Finish(best, -best.distance);
    }
    const double hi = 1.01 * length + q_norm;  // |q + hi·d| > R_out: outside
    auto try_ray = [&](const Eigen::Vector3d& d) { try_start(p_SQ + shape.RaySurface(p_SQ, d, 0, hi, 1e-7 * hi) * d); };
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

}  // namespace taxel::geometry
