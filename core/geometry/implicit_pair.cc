#include "core/geometry/implicit_pair.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "Eigen/Dense"

namespace taxel::geometry {
namespace {

using Vector6d = Eigen::Matrix<double, 6, 1>;
using Matrix6d = Eigen::Matrix<double, 6, 6>;

// The equations. With y1 = x/α (frame 1) and y2 = R_12ᵀ(x − r)/α (frame 2), the Lagrangian of
// min α s.t. φ1(y1) ≤ 0, φ2(y2) ≤ 0 is L = α + λ1φ1(y1) + λ2φ2(y2). The chain rule through x/α:
//
//   ∂y1/∂x = I/α,  ∂y2/∂x = R_12ᵀ/α,  ∂y1/∂α = −y1/α,  ∂y2/∂α = −y2/α,
//
// so ∇xφ1 = g1/α, ∇xφ2 = R_12 g2/α, ∂αφ1 = −g1·y1/α, ∂αφ2 = −g2·y2/α (g_i = ∇φ_i(y_i) in the
// shape's frame), and the first-order conditions are
//
//   F1 = φ1(y1) = 0,  F2 = φ2(y2) = 0,
//   F3:5 = λ1∇xφ1 + λ2∇xφ2 = μ1 g1 + μ2 R_12 g2 = 0,
//   F6 = 1 + λ1∂αφ1 + λ2∂αφ2 = 1 − μ1 g1·y1 − μ2 g2·y2 = 0,        μ_i = λ_i/α.
//
// Both constraints are active at the optimum (a slack one would let α shrink). We iterate on
// z = (x, s = ln α, μ1, μ2): with α = e^s the scale stays positive, and μ_i = λ_i/α are the
// multipliers of min ln α, which are O(1) for every pose (g·y ≈ 1 on the surfaces of SE, SEC,
// polytope and cone, 2 for the sphere's |y|²/R² − 1). With a = e^{−s}, ∂y1/∂s = −y1, ∂y2/∂s = −y2,
// H_i = ∇²φ_i, w1 = H1 y1, w2 = R_12 H2 y2, c_i = g_i·y_i, G2 = R_12 g2, the Jacobian is
//
//            ∂x                              ∂s                              ∂μ1    ∂μ2
//   F1    [  a g1ᵀ                           −c1                             0      0    ]
//   F2    [  a G2ᵀ                           −c2                             0      0    ]
//   F3:5  [  a(μ1H1 + μ2 R H2 Rᵀ)            −(μ1w1 + μ2w2)                  g1     G2   ]
//   F6    [ −a(μ1(w1 + g1) + μ2(w2 + G2))ᵀ   μ1(y1ᵀH1y1 + c1) + μ2(y2ᵀH2y2 + c2)   −c1    −c2  ]
//
// Scaling. The problem is homogeneous in r: if (x, α) solves it for r, then (c·x, c·α) solves it
// for c·r (c > 0), with the same y1, y2 (hence the same normal and multipliers μ_i) — scaling r
// only scales the common factor. So every solve runs on a surrogate whose centres are a fixed
// distance ℓ apart along the true line of centres, ℓ = the mean of the two shapes' inner and outer
// radii summed, where α lies in [ℓ/(R1out + R2out), ℓ/(R1in + R2in)] ∋ 1 whatever the true
// distance: near-coincident and far pairs are as well conditioned as touching ones. The answer
// maps back by α = α_surrogate·|r|/ℓ, p1 = y1, p2 = r + R_12 y2, λ_i = α μ_i. Lengths are further
// measured in units of ℓ (x̃ = x/ℓ, ŷ = y/ℓ, ĝ = ℓg, Ĥ = ℓ²H) so that every residual and every
// Jacobian entry is O(1), which the line search and the Levenberg–Marquardt damping rely on.

constexpr double kTolerance = 1e-10;     ///< on max |F_i| (all dimensionless)
constexpr int kMaxNewtonSteps = 40;      ///< per attempt
constexpr int kMaxBacktracks = 30;       ///< halvings of the Newton step
constexpr double kArmijo = 1e-4;         ///< sufficient decrease of ½|F|²
constexpr double kMaxLogStep = 0.125;    ///< |Δs| per step: α changes by at most 13 %
constexpr double kMaxPointStep = 0.25;   ///< |Δx̃| per step (units of ℓ)
constexpr double kMinStep = 1e-6;        ///< below this the Newton direction is given up for LM
constexpr double kKeepMultiplier = 0.1;  ///< a step keeps μ_i ≥ this fraction of its value
constexpr int kMaxMarquardtTries = 12;

struct Problem {
  const ImplicitShape* shape1;
  const ImplicitShape* shape2;
  Eigen::Matrix3d R;      ///< R_12
  Eigen::Vector3d r_hat;  ///< unit line of centres, frame 1 (the surrogate centre is ℓ·r_hat)
  double l;               ///< ℓ, metres
};

/// z with its residual, merit ½|F|² and Jacobian.
struct Iterate {
  Vector6d z;
  Vector6d F;
  Matrix6d J;
  double merit;
};

/// The pose-dependent part of F and J at (x̃, s): both are affine in (μ1, μ2) given it.
struct Geometry {
  double a, phi1, phi2, c1, c2, q1, q2;  // e^{−s}, φ_i, c_i = ĝ_i·ŷ_i, q_i = ŷ_iᵀĤ_iŷ_i
  Eigen::Vector3d g1, G2, w1, w2;        // frame 1
  Eigen::Matrix3d H1, M2;                // Ĥ1 and R Ĥ2 Rᵀ
};

void EvaluateGeometry(const Problem& p, const Eigen::Vector3d& x, double s, Geometry* geo) {
  geo->a = std::exp(-s);
  const Eigen::Vector3d y1 = geo->a * x;
  const Eigen::Vector3d y2 = geo->a * (p.R.transpose() * (x - p.r_hat));
  Eigen::Vector3d g1, g2;
  Eigen::Matrix3d H1, H2;
  geo->phi1 = p.shape1->Evaluate(p.l * y1, &g1, &H1);
  geo->phi2 = p.shape2->Evaluate(p.l * y2, &g2, &H2);
  const double l2 = p.l * p.l;
  geo->g1 = p.l * g1;
  geo->G2 = p.l * (p.R * g2);
  geo->H1 = l2 * H1;
  const Eigen::Vector3d h2y = l2 * (H2 * y2);
  geo->w1 = geo->H1 * y1;
  geo->w2 = p.R * h2y;
  geo->c1 = geo->g1.dot(y1);
  geo->c2 = p.l * g2.dot(y2);
  geo->q1 = y1.dot(geo->w1);
  geo->q2 = y2.dot(h2y);
  geo->M2 = l2 * (p.R * H2 * p.R.transpose());
}

void Assemble(const Geometry& geo, double mu1, double mu2, Iterate* it) {
  const double a = geo.a;
  Vector6d& F = it->F;
  F[0] = geo.phi1;
  F[1] = geo.phi2;
  F.segment<3>(2) = mu1 * geo.g1 + mu2 * geo.G2;
  F[5] = 1 - mu1 * geo.c1 - mu2 * geo.c2;
  it->merit = 0.5 * F.squaredNorm();

  Matrix6d& J = it->J;
  J.block<1, 3>(0, 0) = a * geo.g1.transpose();
  J(0, 3) = -geo.c1;
  J(0, 4) = J(0, 5) = 0;
  J.block<1, 3>(1, 0) = a * geo.G2.transpose();
  J(1, 3) = -geo.c2;
  J(1, 4) = J(1, 5) = 0;
  J.block<3, 3>(2, 0) = a * (mu1 * geo.H1 + mu2 * geo.M2);
  J.block<3, 1>(2, 3) = -(mu1 * geo.w1 + mu2 * geo.w2);
  J.block<3, 1>(2, 4) = geo.g1;
  J.block<3, 1>(2, 5) = geo.G2;
  J.block<1, 3>(5, 0) = -a * (mu1 * (geo.w1 + geo.g1) + mu2 * (geo.w2 + geo.G2)).transpose();
  J(5, 3) = mu1 * (geo.q1 + geo.c1) + mu2 * (geo.q2 + geo.c2);
  J(5, 4) = -geo.c1;
  J(5, 5) = -geo.c2;
}

void Evaluate(const Problem& p, Iterate* it) {
  Geometry geo;
  EvaluateGeometry(p, it->z.head<3>(), it->z[3], &geo);
  Assemble(geo, it->z[4], it->z[5], it);
}

bool Finite(const Iterate& it) { return std::isfinite(it.merit) && it.J.allFinite(); }

bool Converged(const Iterate& it) { return it.F.lpNorm<Eigen::Infinity>() <= kTolerance && it.z[4] > 0 && it.z[5] > 0; }

/// How far the surface lies from the origin along the unit u (metres), for a start: γ in closed
/// form for spheres, SE and SEC; for polytopes the hard polytope's ray exit min_{a_i·u > 0} b_i/a_i·u
/// (the smoothed surface lies slightly inside), cheaper than γ's 1-D solve; γ for cones.
double RadialReach(const ImplicitShape& shape, const Eigen::Vector3d& u) {
  if (shape.kind() != ImplicitKind::kSmoothPolytope) return 1 / shape.Gamma(u);
  double reach = shape.outer_radius();
  const std::vector<Eigen::Vector3d>& normals = shape.plane_normals();
  for (size_t i = 0; i < normals.size(); ++i) {
    const double c = normals[i].dot(u);
    if (c * reach > shape.plane_offsets()[i]) reach = shape.plane_offsets()[i] / c;
  }
  return reach;
}

/// Cold start on the line of centres: each shape reaches ρ_i = 1/γ_i along it (units of ℓ), so the
/// shapes scaled by α0 = 1/(ρ1 + ρ2) meet at x0 = α0ρ1·r̂ (an upper bound of α*). `radial` picks
/// ρ_i: 0 from γ (the surface), 1 the inner radii, 2 the outer radii. The multipliers solve the
/// stationarity rows F3:6 in the least-squares sense, kept positive.
void ColdStart(const Problem& p, int radial, Iterate* it) {
  double rho1, rho2;
  if (radial == 0) {
    rho1 = RadialReach(*p.shape1, p.r_hat) / p.l;
    rho2 = RadialReach(*p.shape2, -(p.R.transpose() * p.r_hat)) / p.l;
  } else {
    const bool inner = radial == 1;
    rho1 = (inner ? p.shape1->inner_radius() : p.shape1->outer_radius()) / p.l;
    rho2 = (inner ? p.shape2->inner_radius() : p.shape2->outer_radius()) / p.l;
  }
  const double alpha0 = 1 / (rho1 + rho2);
  const Eigen::Vector3d x0 = alpha0 * rho1 * p.r_hat;
  Geometry geo;
  EvaluateGeometry(p, x0, std::log(alpha0), &geo);
  // Least squares for μ in the stationarity rows: μ1 ĝ1 + μ2 G2 = 0, μ1 c1 + μ2 c2 = 1.
  Eigen::Matrix<double, 4, 2> A;
  A << geo.g1, geo.G2, geo.c1, geo.c2;
  const Eigen::Vector2d mu = (A.transpose() * A).ldlt().solve(Eigen::Vector2d(geo.c1, geo.c2));
  it->z << x0, std::log(alpha0), (mu.allFinite() && mu[0] > 0) ? mu[0] : 0.5 / std::max(geo.c1, 1e-3),
      (mu.allFinite() && mu[1] > 0) ? mu[1] : 0.5 / std::max(geo.c2, 1e-3);
  Assemble(geo, it->z[4], it->z[5], it);
}

/// One Levenberg–Marquardt step on ½|F|²: (JᵀJ + νI)Δ = −JᵀF with ν raised until the merit falls.
bool MarquardtStep(const Problem& p, Iterate* it, Iterate* trial) {
  const Matrix6d JtJ = it->J.transpose() * it->J;
  const Vector6d JtF = it->J.transpose() * it->F;
  double nu = 1e-6 * std::max(JtJ.diagonal().maxCoeff(), 1e-12);
  for (int k = 0; k < kMaxMarquardtTries; ++k, nu *= 10) {
    Matrix6d A = JtJ;
    A.diagonal().array() += nu;
    Vector6d step = A.ldlt().solve(-JtF);
    if (!step.allFinite()) continue;
    if (std::abs(step[3]) > kMaxLogStep) step *= kMaxLogStep / std::abs(step[3]);
    trial->z = it->z + step;
    Evaluate(p, trial);
    if (Finite(*trial) && trial->merit < it->merit) {
      std::swap(*it, *trial);
      return true;
    }
  }
  return false;
}

/// Solves J·X = B in place (B: N right-hand sides) by Gaussian elimination with partial pivoting
/// on the row-major augmented matrix, every loop bound a constant (Eigen's PartialPivLU is written
/// for any size). False when a pivot vanishes or the solution is not finite.
template <int N>
bool SolveKkt(const Matrix6d& J, Eigen::Matrix<double, 6, N>* B) {
  Eigen::Matrix<double, 6, 6 + N, Eigen::RowMajor> A;
  A.template leftCols<6>() = J;
  A.template rightCols<N>() = *B;
  for (int k = 0; k < 6; ++k) {
    int pivot = k;
    double best = std::abs(A(k, k));
    for (int i = k + 1; i < 6; ++i) {
      if (std::abs(A(i, k)) > best) {
        best = std::abs(A(i, k));
        pivot = i;
      }
    }
    if (!(best > 0)) return false;
    if (pivot != k) A.row(pivot).swap(A.row(k));
    const double inverse = 1 / A(k, k);
    for (int i = k + 1; i < 6; ++i) {
      const double f = A(i, k) * inverse;
      for (int j = k + 1; j < 6 + N; ++j) A(i, j) -= f * A(k, j);
    }
  }
  for (int k = 5; k >= 0; --k) {
    for (int c = 0; c < N; ++c) {
      double v = A(k, 6 + c);
      for (int j = k + 1; j < 6; ++j) v -= A(k, j) * (*B)(j, c);
      (*B)(k, c) = v / A(k, k);
    }
  }
  return B->allFinite();
}

/// The Newton step: J·Δ = −F.
bool NewtonStep(const Matrix6d& J, const Vector6d& F, Vector6d* step) {
  *step = -F;
  return SolveKkt<1>(J, step);
}

/// Damped Newton from it (evaluated at it->z): Armijo backtracking on ½|F|², steps capped so that α changes by at
/// most e and μ_i stay positive; LM when the Newton direction fails. Counts steps in *steps.
bool Newton(const Problem& p, Iterate* it, int* steps) {
  if (!Finite(*it)) return false;
  // The current iterate and the trial alternate between two buffers (swapped by pointer).
  Iterate other;
  Iterate* cur = it;
  Iterate* trial = &other;
  bool converged = false;
  for (int k = 0; k <= kMaxNewtonSteps; ++k) {
    if (Converged(*cur)) {
      converged = true;
      break;
    }
    if (k == kMaxNewtonSteps) break;
    ++*steps;
    Vector6d step;
    bool accepted = false;
    if (NewtonStep(cur->J, cur->F, &step)) {
      double t = 1;
      if (std::abs(step[3]) > kMaxLogStep) t = kMaxLogStep / std::abs(step[3]);
      const double dx = step.head<3>().norm();
      if (t * dx > kMaxPointStep) t = kMaxPointStep / dx;
      for (int i = 4; i < 6; ++i) {
        if (step[i] < 0) t = std::min(t, (1 - kKeepMultiplier) * cur->z[i] / -step[i]);
      }
      for (int b = 0; b < kMaxBacktracks && t >= kMinStep; ++b) {
        trial->z = cur->z + t * step;
        Evaluate(p, trial);
        if (Finite(*trial) && trial->merit <= (1 - 2 * kArmijo * t) * cur->merit) {
          std::swap(cur, trial);
          accepted = true;
          break;
        }
        t *= 0.5;
      }
    }
    if (!accepted && !MarquardtStep(p, cur, trial)) break;
  }
  if (cur != it) *it = *cur;
  return converged;
}

/// Shape at continuation level k ≥ 1: smoother by a factor 2^k in n (SE, SEC; down to the ellipsoid
/// n = 1) or β (polytope, cone; as long as the shape keeps its origin inside). Spheres are returned
/// as they are. False when the level adds nothing (already as smooth as it gets).
bool Smoothed(const ImplicitShape& shape, int k, ImplicitShape* out) {
  switch (shape.kind()) {
    case ImplicitKind::kSphere: *out = shape; return true;
    case ImplicitKind::kSuperellipsoid:
    case ImplicitKind::kSuperellipticCylinder: {
      const int n = std::max(1, shape.exponent() >> k);
      const absl::StatusOr<ImplicitShape> s =
          shape.kind() == ImplicitKind::kSuperellipsoid
              ? ImplicitShape::Superellipsoid(n, shape.sizes())
              : ImplicitShape::SuperellipticCylinder(n, shape.sizes()[1], shape.sizes()[0]);
      if (!s.ok()) return false;
      *out = *s;
      return true;
    }
    case ImplicitKind::kSmoothPolytope: {
      const absl::StatusOr<ImplicitShape> s =
          ImplicitShape::SmoothPolytope(shape.plane_normals(), shape.plane_offsets(), shape.beta() / (1 << k));
      if (!s.ok()) return false;
      *out = *s;
      return true;
    }
    case ImplicitKind::kTruncatedCone: {
      const absl::StatusOr<ImplicitShape> s = ImplicitShape::TruncatedCone(
          shape.beta() / (1 << k), shape.bottom_radius(), shape.top_radius(), shape.sizes()[0], shape.sizes()[1]);
      if (!s.ok()) return false;
      *out = *s;
      return true;
    }
  }
  return false;
}

/// The last resort: solve a smoother pair (n or β divided by 2^k), then follow the solution back to
/// the true shapes level by level, each solve warm-started from the previous one. The surrogate
/// keeps the true pair's ℓ, so the iterate carries over between levels unchanged.
bool Continuation(const Problem& p, Iterate* it, int* steps) {
  constexpr int kLevels = 3;
  ImplicitShape smooth1 = *p.shape1, smooth2 = *p.shape2;
  int first = kLevels;
  while (first > 0 && !(Smoothed(*p.shape1, first, &smooth1) && Smoothed(*p.shape2, first, &smooth2))) --first;
  if (first == 0) return false;
  Problem level = p;
  level.shape1 = &smooth1;
  level.shape2 = &smooth2;
  ColdStart(level, 0, it);
  for (int k = first; k >= 0; --k) {
    if (k > 0) {
      Smoothed(*p.shape1, k, &smooth1);
      Smoothed(*p.shape2, k, &smooth2);
    } else {
      level = p;
    }
    if (k != first) Evaluate(level, it);
    if (!Newton(level, it, steps)) return false;
  }
  return true;
}

// Derivatives by the implicit function theorem. At the solution F(z; R, v) = 0 with v the
// (surrogate) centre of shape 2 in units of ℓ, so dz = −J⁻¹·∂F/∂(v, θ)·d(v, θ) with the Jacobian J
// of the converged iterate. Shape 2 enters F through y2 = a·Rᵀ(x̃ − v) only (plus the R in
// F3:5 = μ1ĝ1 + μ2R ĝ2): a translation δv moves y2 by −a·Rᵀδv, a rotation R ← (I + [δθ]×)R by
// a·Rᵀ[u]×δθ (u = x̃ − v), and rotates R ĝ2 by −[G2]×δθ. The v-derivative is therefore minus the
// shape-2 part of J's x̃ columns,
//
//   ∂F/∂v = −B,  B = [0; a G2ᵀ; a μ2 M2; −a μ2 (w2 + G2)ᵀ],   ∂F/∂θ = B·[u]× − [0; 0; μ2[G2]×; 0].
//
// The true problem is the surrogate scaled by c = |p_12|/ℓ: y1, y2, n and μ_i are invariant under
// that scaling (degree 0) and s shifts by ln c, so their derivatives in p_12 (metres) are those
// in v at the surrogate divided by |p_12|; rotations are not scaled. Then α = e^s·|p_12|/ℓ gives
// ∂α = α·∂s, y1 = ℓa·x̃ gives ∂p1 = ℓa(∂x̃ − x̃∂s), p2 = p_12 + ℓa(x̃ − v) gives
// ∂p2 = [I, 0] + ℓa(∂x̃ − ∂v − u∂s), and n = ∇φ1/|∇φ1| at p1 gives ∂n = (I − nnᵀ)∇²φ1·∂p1/|∇φ1|.
// Shape 1's columns follow by invariance (PairDerivatives in the header).
bool SolvePairDerivatives(const Problem& p, const Iterate& it, const PairSolution& s, const Eigen::Vector3d& p_12,
                          PairDerivatives* out) {
  Geometry geo;
  const Eigen::Vector3d x = it.z.head<3>();
  EvaluateGeometry(p, x, it.z[3], &geo);
  const double a = geo.a, mu2 = it.z[5];
  const Eigen::Vector3d u = x - p.r_hat;
  Eigen::Matrix<double, 6, 3> B;
  B.row(0).setZero();
  B.row(1) = a * geo.G2.transpose();
  B.middleRows<3>(2) = (a * mu2) * geo.M2;
  B.row(5) = -(a * mu2) * (geo.w2 + geo.G2).transpose();
  // dz/d(v, θ) = J⁻¹·(−∂F/∂(v, θ)), one elimination for the six columns.
  Matrix6d D;
  D.leftCols<3>() = B;
  D.rightCols<3>() = -B * Skew(u);
  D.block<3, 3>(2, 3) += mu2 * Skew(geo.G2);
  if (!SolveKkt<6>(it.J, &D)) return false;
  // Per metre of p_12 for the translation columns (the degree-0 outputs and s; x̃ scales with c,
  // but enters below only through the degree-0 combinations).
  const double distance = p_12.norm();
  D.leftCols<3>() /= distance;
  const double la = p.l * a;
  Eigen::Matrix<double, 1, 6> d_alpha = s.alpha * D.row(3);
  Eigen::Matrix<double, 3, 6> d_p1 = la * (D.topRows<3>() - x * D.row(3));
  Eigen::Matrix<double, 3, 6> d_p2 = la * (D.topRows<3>() - u * D.row(3));
  d_p2.leftCols<3>().diagonal().array() += 1 - la / distance;  // I − ℓa·∂v/∂p_12 (ℓa/|p_12| = 1/α)
  const Eigen::Matrix3d tangent = Eigen::Matrix3d::Identity() - s.normal_1 * s.normal_1.transpose();
  Eigen::Matrix<double, 3, 6> d_n = tangent * geo.H1 * d_p1 / (p.l * geo.g1.norm());
  // Shape 1: T maps its twist to the equivalent twist of shape 2 about p_12.
  Matrix6d T = Matrix6d::Zero();
  T.topLeftCorner<3, 3>() = -Eigen::Matrix3d::Identity();
  T.topRightCorner<3, 3>() = Skew(p_12);
  T.bottomRightCorner<3, 3>() = -Eigen::Matrix3d::Identity();
  auto rigid = [](const Eigen::Vector3d& q) {  // [I, −[q]×]: a point moving with both shapes
    Eigen::Matrix<double, 3, 6> m;
    m << Eigen::Matrix3d::Identity(), -Skew(q);
    return m;
  };
  out->alpha << d_alpha * T, d_alpha;
  out->normal << d_n * T, d_n;
  out->normal.block<3, 3>(0, 3) -= Skew(s.normal_1);
  out->p1 << rigid(s.p1_1) + d_p1 * T, d_p1;
  out->p2 << rigid(s.p2_1) + d_p2 * T, d_p2;
  return out->alpha.allFinite() && out->normal.allFinite();
}

}  // namespace

namespace internal {

double PairLengthScale(const ImplicitShape& shape1, const ImplicitShape& shape2) {
  return 0.5 * (shape1.inner_radius() + shape1.outer_radius() + shape2.inner_radius() + shape2.outer_radius());
}

void PairKkt(const ImplicitShape& shape1, const ImplicitShape& shape2, const Eigen::Matrix3d& R_12,
             const Eigen::Vector3d& r_hat, double length_scale, const Eigen::Matrix<double, 6, 1>& z,
             Eigen::Matrix<double, 6, 1>* residual, Eigen::Matrix<double, 6, 6>* jacobian) {
  const Problem p{&shape1, &shape2, R_12, r_hat, length_scale};
  Iterate it;
  it.z = z;
  Evaluate(p, &it);
  if (residual != nullptr) *residual = it.F;
  if (jacobian != nullptr) *jacobian = it.J;
}

}  // namespace internal

PairSolution SolveImplicitPair(const ImplicitShape& shape1, const ImplicitShape& shape2, const RigidTransform& X_12,
                               PairWarmStart* warm, PairDerivatives* derivatives) {
  const double distance = X_12.p.norm();
  const Problem p{&shape1, &shape2, X_12.R,
                  distance > 0 ? Eigen::Vector3d(X_12.p / distance) : Eigen::Vector3d::UnitX(),
                  internal::PairLengthScale(shape1, shape2)};
  // Attempts in order: the warm start, then cold starts from the surface along the line of
  // centres, from the inner and from the outer radii.
  constexpr int kColdStarts = 3;
  PairSolution out;
  Iterate it;
  bool converged = false;
  for (int attempt = (warm != nullptr && warm->valid) ? -1 : 0; attempt < kColdStarts && !converged; ++attempt) {
    if (attempt < 0) {
      it.z << warm->x, warm->s, warm->mu1, warm->mu2;
      Evaluate(p, &it);
    } else {
      ColdStart(p, attempt, &it);
    }
    converged = Newton(p, &it, &out.iterations);
  }
  if (!converged) converged = Continuation(p, &it, &out.iterations);

  const double a = std::exp(-it.z[3]);
  const Eigen::Vector3d y1 = p.l * a * it.z.head<3>();
  const Eigen::Vector3d y2 = p.l * a * (p.R.transpose() * (it.z.head<3>() - p.r_hat));
  Eigen::Vector3d g1;
  shape1.Evaluate(y1, &g1, nullptr);
  out.alpha = std::exp(it.z[3]) * distance / p.l;
  out.normal_1 = g1.normalized();
  out.p1_1 = y1;
  out.p2_1 = X_12.p + X_12.R * y2;
  out.lambda1 = out.alpha * it.z[4];
  out.lambda2 = out.alpha * it.z[5];
  out.converged = converged;
  out.residual = it.F.lpNorm<Eigen::Infinity>();
  if (derivatives != nullptr) {
    *derivatives = PairDerivatives();
    if (converged && distance > 0) derivatives->valid = SolvePairDerivatives(p, it, out, X_12.p, derivatives);
    if (!derivatives->valid) *derivatives = PairDerivatives();
  }
  if (warm != nullptr) {
    warm->valid = converged;
    warm->x = it.z.head<3>();
    warm->s = it.z[3];
    warm->mu1 = it.z[4];
    warm->mu2 = it.z[5];
  }
  return out;
}

}  // namespace taxel::geometry
