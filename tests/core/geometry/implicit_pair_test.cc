#include "core/geometry/implicit_pair.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Geometry"
#include "core/geometry/implicit_generators.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

ImplicitShape Sphere(double r) { return *ImplicitShape::Sphere(r); }

/// A uniformly random rotation (normalised Gaussian quaternion).
Eigen::Matrix3d RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return testing::DrawRotation(g, rng);
}

Eigen::Vector3d RandomDirection(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return testing::Draw<3>(g, rng).normalized();
}

/// Shape 2 at a random orientation, its centre at a distance uniform in [0.1·min R_in, 2·max R_out]
/// in a uniformly random direction.
RigidTransform RandomPose(const ImplicitShape& a, const ImplicitShape& b, std::mt19937& rng) {
  const double lo = 0.1 * std::min(a.inner_radius(), b.inner_radius());
  const double hi = 2 * std::max(a.outer_radius(), b.outer_radius());
  std::uniform_real_distribution<double> d(lo, hi);
  RigidTransform X;
  X.R = RandomRotation(rng);
  const double distance = d(rng);  // before the direction: a product's operands are unsequenced
  X.p = distance * RandomDirection(rng);
  return X;
}

//        ___                ___
//      /     \   <- d ->  /     \      two spheres R1 = 2 cm, R2 = 1.5 cm, centres d apart along u:
//     |   o   |--------->|   o   |    scaled by α they touch when α(R1 + R2) = d, at α R1 u.
//      \ ___ /            \ ___ /     Multipliers: g_i·y_i = 2 on |y|²/R² − 1 = 0 and
//                                     μ1∇φ1 = −μ2∇φ2 give μ_i = R_i/(2(R1 + R2)), λ_i = αμ_i.
TEST(ImplicitPairTest, SphereSphereMatchesTheClosedForm) {
  const double r1 = 0.02, r2 = 0.015;
  const ImplicitShape a = Sphere(r1), b = Sphere(r2);
  std::mt19937 rng(3);
  // Distances from near-coincident to far, including touching (α = 1).
  for (double d : {1e-9, 1e-6, 1e-3, 0.01, 0.035, 0.05, 1.0, 100.0}) {
    for (int k = 0; k < 20; ++k) {
      RigidTransform X;
      X.R = RandomRotation(rng);
      const Eigen::Vector3d u = RandomDirection(rng);
      X.p = d * u;
      const PairSolution s = SolveImplicitPair(a, b, X);
      ASSERT_TRUE(s.converged) << d;
      const double alpha = d / (r1 + r2);
      EXPECT_NEAR(s.alpha, alpha, 1e-12 * alpha) << d;
      EXPECT_NEAR((s.normal_1 - u).norm(), 0, 1e-9) << d;
      EXPECT_NEAR((s.p1_1 - r1 * u).norm(), 0, 1e-12) << d;
      EXPECT_NEAR((s.p2_1 - (X.p - r2 * u)).norm(), 0, 1e-12 * std::max(1.0, d)) << d;
      EXPECT_NEAR(s.lambda1, alpha * r1 / (2 * (r1 + r2)), 1e-10 * alpha) << d;
      EXPECT_NEAR(s.lambda2, alpha * r2 / (2 * (r1 + r2)), 1e-10 * alpha) << d;
      // The witness line: |p1 − p2| = |d − R1 − R2|.
      EXPECT_NEAR((s.p1_1 - s.p2_1).norm(), std::abs(d - r1 - r2), 1e-12 * std::max(1.0, d)) << d;
    }
  }
}

TEST(ImplicitPairTest, CoincidentOriginsGiveAlphaZero) {
  const ImplicitShape a = Sphere(0.02), b = Sphere(0.015);
  const PairSolution s = SolveImplicitPair(a, b, RigidTransform());
  EXPECT_TRUE(s.converged);
  EXPECT_EQ(s.alpha, 0);
  EXPECT_NEAR((s.normal_1 - Eigen::Vector3d::UnitX()).norm(), 0, 1e-12);
}

// ---- An independent reference: support functions and the gauge of the Minkowski difference ----
//
// The scaled shapes α·B1 and p + α·R·B2 are disjoint iff a direction n separates them:
// α·h1(n) + α·h2(−Rᵀn) < n·p, with h_i the support function of B_i. Hence
//   α* = max_{|n| = 1} n·p / (h1(n) + h2(−Rᵀn)),
// a maximum of a quasi-concave function of n (its superlevel sets are convex cones), reached at the
// contact normal. h_i(n) = max over the surface of n·y, the surface point along a unit u being
// t(u)·u with φ(t·u) = 0 found by bisection (φ increases along rays from the inner origin). Both
// maxima are taken by compass search on the sphere down to 1e-7 rad. Nothing here shares code with
// the Newton solve but Phi().

/// The surface point of `shape` along the unit direction u, by bisection.
Eigen::Vector3d SurfacePoint(const ImplicitShape& shape, const Eigen::Vector3d& u) {
  // Bracket from the radial estimate 1/γ when it holds (γ is exact to ~ε), else [0, 1.001 R_out].
  const double t0 = 1 / shape.Gamma(u);
  double lo = 0.97 * t0, hi = 1.03 * t0;
  if (!(shape.Phi(lo * u) <= 0 && shape.Phi(hi * u) > 0)) lo = 0, hi = 1.001 * shape.outer_radius();
  for (int k = 0; k < 48; ++k) {
    const double mid = 0.5 * (lo + hi);
    (shape.Phi(mid * u) <= 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi) * u;
}

/// max over unit u of f(u) by compass search in the tangent plane, from u0 with a first step of
/// `step` radians down to 1e-7 (f is quadratic about a smooth maximum: 1e-14 relative); returns
/// the maximum and the maximiser in *best.
template <typename F>
double CompassMax(const F& f, Eigen::Vector3d u0, double step, Eigen::Vector3d* best) {
  Eigen::Vector3d u = u0.normalized();
  double value = f(u);
  while (step > 1e-7) {
    const Eigen::Vector3d e1 = u.unitOrthogonal(), e2 = u.cross(e1);
    bool moved = false;
    const Eigen::Vector3d directions[] = {e1, -e1, e2, -e2, e1 + e2, -e1 - e2, e1 - e2, e2 - e1};
    for (const Eigen::Vector3d& d : directions) {
      const Eigen::Vector3d v = (u + step * d).normalized();
      const double fv = f(v);
      // Gains above 1e-12 relative only (the tolerances below are 1e-7 on α, 1e-4 on the normal):
      // on a nearly flat stretch (a polytope's face) gains of a few ulps, from the bisection's last
      // bits or the inner search's, would let the search wander for as long as they last.
      if (fv > value + 1e-12 * std::abs(value)) {
        value = fv;
        u = v;
        moved = true;
        break;
      }
    }
    if (!moved) step *= 0.5;
  }
  *best = u;
  return value;
}

double Support(const ImplicitShape& shape, const Eigen::Vector3d& n) {
  Eigen::Vector3d u;
  return CompassMax([&](const Eigen::Vector3d& v) { return n.dot(SurfacePoint(shape, v)); }, n, 0.3, &u);
}

/// α* and the contact normal (frame 1) by the support-function formula above.
double ReferenceAlpha(const ImplicitShape& a, const ImplicitShape& b, const RigidTransform& X, Eigen::Vector3d* n) {
  return CompassMax(
      [&](const Eigen::Vector3d& m) {
        const double num = m.dot(X.p);
        if (num <= 0) return -1.0;
        return num / (Support(a, m) + Support(b, -(X.R.transpose() * m)));
      },
      X.p, 0.3, n);
}

TEST(ImplicitPairTest, MatchesSupportFunctionReferenceOnRandomPoses) {
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    std::mt19937 rng(27);
    for (int i = 0; i < 3; ++i) {
      const RigidTransform X = RandomPose(type.shape1, type.shape2, rng);
      const PairSolution s = SolveImplicitPair(type.shape1, type.shape2, X);
      ASSERT_TRUE(s.converged) << type.name;
      Eigen::Vector3d n;
      const double alpha = ReferenceAlpha(type.shape1, type.shape2, X, &n);
      EXPECT_NEAR(s.alpha, alpha, 1e-7 * alpha) << type.name << " pose " << i;
      EXPECT_NEAR((s.normal_1 - n).norm(), 0, 1e-4) << type.name << " pose " << i;
    }
  }
}

// An ellipsoid (SE with n = 1: the ellipsoid to 1e-12) against a sphere of radius ρ: the scaled
// sphere touches the scaled ellipsoid α·E when dist(p, α·E) = α·ρ. The distance from q (outside) to
// the ellipsoid with semi-axes e_i is |q − y| with y_i = q_i e_i²/(e_i² + t) and t > 0 the root of
// Σ e_i² q_i²/(e_i² + t)² = 1 (decreasing in t: bisection). dist(p, αE) − αρ falls with α, so α* is
// found by bisection too; inside α·E (t < 0) the difference is negative.
double EllipsoidSphereAlpha(const Eigen::Vector3d& axes, double rho, const Eigen::Vector3d& q) {
  auto gap = [&](double alpha) {
    const Eigen::Vector3d e = alpha * axes;
    if ((q.cwiseQuotient(e)).squaredNorm() <= 1) return -1.0;
    double lo = 0, hi = q.norm() * e.maxCoeff();
    for (int k = 0; k < 200; ++k) {
      const double t = 0.5 * (lo + hi);
      double sum = 0;
      for (int i = 0; i < 3; ++i) sum += std::pow(e[i] * q[i] / (e[i] * e[i] + t), 2);
      (sum > 1 ? lo : hi) = t;
    }
    const double t = 0.5 * (lo + hi);
    Eigen::Vector3d y;
    for (int i = 0; i < 3; ++i) y[i] = e[i] * e[i] * q[i] / (e[i] * e[i] + t);
    return (q - y).norm() - alpha * rho;
  };
  double lo = 0, hi = 1;
  while (gap(hi) > 0) hi *= 2;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    (gap(mid) > 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

TEST(ImplicitPairTest, EllipsoidSphereMatchesTheSecularEquation) {
  const Eigen::Vector3d axes(0.03, 0.02, 0.012);
  const ImplicitShape ellipsoid = *ImplicitShape::Superellipsoid(1, axes);
  const double rho = 0.01;
  const ImplicitShape ball = Sphere(rho);
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    const RigidTransform X = RandomPose(ellipsoid, ball, rng);
    const double alpha = EllipsoidSphereAlpha(axes, rho, X.p);
    const PairSolution s = SolveImplicitPair(ellipsoid, ball, X);
    ASSERT_TRUE(s.converged);
    EXPECT_NEAR(s.alpha, alpha, 1e-9 * alpha) << X.p.transpose();
    // And the other way round: the sphere as shape 1 (pose inverted).
    RigidTransform X_21;
    X_21.R = X.R.transpose();
    X_21.p = -(X.R.transpose() * X.p);
    EXPECT_NEAR(SolveImplicitPair(ball, ellipsoid, X_21).alpha, alpha, 1e-9 * alpha);
  }
}

TEST(ImplicitPairTest, SwappingTheShapesGivesTheSameContact) {
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    std::mt19937 rng(8);
    for (int i = 0; i < 500; ++i) {
      const RigidTransform X = RandomPose(type.shape1, type.shape2, rng);
      RigidTransform X_21;
      X_21.R = X.R.transpose();
      X_21.p = -(X.R.transpose() * X.p);
      const PairSolution s = SolveImplicitPair(type.shape1, type.shape2, X);
      const PairSolution t = SolveImplicitPair(type.shape2, type.shape1, X_21);
      ASSERT_TRUE(s.converged && t.converged) << type.name;
      EXPECT_NEAR(t.alpha, s.alpha, 1e-9 * s.alpha) << type.name;
      // t's frame is frame 2: its normal points out of shape 2, its p1 is on shape 2.
      EXPECT_NEAR((X.R * t.normal_1 + s.normal_1).norm(), 0, 1e-6) << type.name;
      EXPECT_NEAR((X * t.p1_1 - s.p2_1).norm(), 0, 1e-8) << type.name;
      EXPECT_NEAR((X * t.p2_1 - s.p1_1).norm(), 0, 1e-8) << type.name;
      EXPECT_NEAR(t.lambda1, s.lambda2, 1e-7 * (s.lambda1 + s.lambda2)) << type.name;
    }
  }
}

// The first-order conditions checked from the outputs alone: both witness points on their
// surfaces, the gradients there opposite, the stationarity in α (1 = λ1 g1·y1/α + λ2 g2·y2/α, from
// ∂α of the Lagrangian α + λ1φ1(x/α) + λ2φ2(·/α), y_i the witness points about each origin), and
// the witness line parallel to the line of centres: p1 − p2 = p(1 − α)/α.
TEST(ImplicitPairTest, OutputsSatisfyTheKktConditions) {
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    std::mt19937 rng(9);
    for (int i = 0; i < 500; ++i) {
      const RigidTransform X = RandomPose(type.shape1, type.shape2, rng);
      const PairSolution s = SolveImplicitPair(type.shape1, type.shape2, X);
      ASSERT_TRUE(s.converged) << type.name;
      Eigen::Vector3d g1, g2;
      const Eigen::Vector3d y1 = s.p1_1, y2 = X.InverseApply(s.p2_1);
      EXPECT_NEAR(type.shape1.Evaluate(y1, &g1, nullptr), 0, 1e-9) << type.name;
      EXPECT_NEAR(type.shape2.Evaluate(y2, &g2, nullptr), 0, 1e-9) << type.name;
      const Eigen::Vector3d G2 = X.R * g2;
      // ∇x of the Lagrangian: (λ1 g1 + λ2 R g2)/α = 0, relative to the terms' size.
      EXPECT_LE((s.lambda1 * g1 + s.lambda2 * G2).norm(), 1e-8 * s.lambda1 * g1.norm()) << type.name;
      EXPECT_NEAR((s.lambda1 * g1.dot(y1) + s.lambda2 * g2.dot(y2)) / s.alpha, 1, 1e-8) << type.name;
      EXPECT_NEAR((s.normal_1 - g1.normalized()).norm(), 0, 1e-12) << type.name;
      EXPECT_GT(s.normal_1.dot(X.p), 0) << type.name;
      EXPECT_NEAR((s.p1_1 - s.p2_1 - X.p * (1 - s.alpha) / s.alpha).norm(), 0, 1e-9) << type.name;
      EXPECT_GT(s.lambda1, 0);
      EXPECT_GT(s.lambda2, 0);
    }
  }
}

TEST(ImplicitPairTest, KktJacobianMatchesCentralDifferences) {
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    std::mt19937 rng(10);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int i = 0; i < 50; ++i) {
      const Eigen::Matrix3d R = RandomRotation(rng);
      const Eigen::Vector3d r_hat = RandomDirection(rng);
      const double l = internal::PairLengthScale(type.shape1, type.shape2);
      Eigen::Matrix<double, 6, 1> z;
      z << 0.5 * r_hat + 0.2 * testing::Draw<3>(u, rng), 0.3 * u(rng), 0.5 + 0.3 * u(rng),
          0.5 + 0.3 * u(rng);
      Eigen::Matrix<double, 6, 6> J;
      internal::PairKkt(type.shape1, type.shape2, R, r_hat, l, z, nullptr, &J);
      const double h = 1e-6;
      for (int k = 0; k < 6; ++k) {
        Eigen::Matrix<double, 6, 1> plus, minus;
        internal::PairKkt(type.shape1, type.shape2, R, r_hat, l, z + h * Eigen::Matrix<double, 6, 1>::Unit(k), &plus,
                          nullptr);
        internal::PairKkt(type.shape1, type.shape2, R, r_hat, l, z - h * Eigen::Matrix<double, 6, 1>::Unit(k), &minus,
                          nullptr);
        const Eigen::Matrix<double, 6, 1> fd = (plus - minus) / (2 * h);
        EXPECT_LE((J.col(k) - fd).norm(), 1e-6 * (1 + J.col(k).norm())) << type.name << " column " << k;
      }
    }
  }
}

// Poses 1e-4 apart along a smooth path: warm starts converge to the cold answer in fewer steps.
TEST(ImplicitPairTest, WarmStartTracksASmoothPath) {
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    PairWarmStart warm;
    long warm_steps = 0, cold_steps = 0;
    constexpr int kSteps = 2000;
    const double mid = type.shape1.outer_radius() + type.shape2.outer_radius();
    for (int k = 0; k < kSteps; ++k) {
      const double t = 1e-4 * k * 50;
      RigidTransform X;
      X.R = Eigen::AngleAxisd(t, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
      X.p = mid * (0.8 + 0.3 * std::sin(1.3 * t)) *
            Eigen::Vector3d(std::cos(0.7 * t), std::sin(0.7 * t) * std::cos(0.4 * t), std::sin(0.4 * t)).normalized();
      const PairSolution cold = SolveImplicitPair(type.shape1, type.shape2, X);
      const PairSolution hot = SolveImplicitPair(type.shape1, type.shape2, X, &warm);
      ASSERT_TRUE(cold.converged && hot.converged) << type.name;
      EXPECT_NEAR(hot.alpha, cold.alpha, 1e-10 * cold.alpha);
      if (k > 0) {
        warm_steps += hot.iterations;
        cold_steps += cold.iterations;
      }
    }
    EXPECT_LT(warm_steps, 0.6 * cold_steps) << type.name;
    EXPECT_TRUE(warm.valid);
  }
}

// ---- Derivatives (PairDerivatives) ----

//   o---------> p = d·u          two spheres: α = d/(R1 + R2) and n = u = p/d, so
//   shape 1      shape 2         ∂α/∂t2 = uᵀ/(R1 + R2), ∂n/∂t2 = (I − uuᵀ)/d, ∂p1/∂t2 = R1(I − uuᵀ)/d,
//                                nothing changes when a sphere turns about its centre (∂/∂θ_i = 0),
//                                and translating shape 1 is translating shape 2 backwards with p1
//                                carried along: ∂α/∂t1 = −∂α/∂t2, ∂p1/∂t1 = I − ∂p1/∂t2.
TEST(ImplicitPairTest, SphereDerivativesMatchTheClosedForm) {
  const double r1 = 0.02, r2 = 0.015;
  std::mt19937 rng(31);
  for (double d : {0.01, 0.035, 0.08}) {
    RigidTransform X;
    X.R = RandomRotation(rng);
    const Eigen::Vector3d u = RandomDirection(rng);
    X.p = d * u;
    PairDerivatives D;
    ASSERT_TRUE(SolveImplicitPair(Sphere(r1), Sphere(r2), X, nullptr, &D).converged);
    ASSERT_TRUE(D.valid);
    const Eigen::Matrix3d P = Eigen::Matrix3d::Identity() - u * u.transpose();
    const double tol = 1e-9;
    EXPECT_LE((D.alpha.segment<3>(6) - u.transpose() / (r1 + r2)).norm(), tol / (r1 + r2)) << d;
    EXPECT_LE((D.alpha.segment<3>(0) + u.transpose() / (r1 + r2)).norm(), tol / (r1 + r2)) << d;
    EXPECT_LE(D.alpha.segment<3>(3).norm() + D.alpha.segment<3>(9).norm(), tol) << d;
    EXPECT_LE((D.normal.block<3, 3>(0, 6) - P / d).norm(), tol / d) << d;
    EXPECT_LE((D.normal.block<3, 3>(0, 0) + P / d).norm(), tol / d) << d;
    EXPECT_LE((D.normal.block<3, 3>(0, 3).norm() + D.normal.block<3, 3>(0, 9).norm()), tol) << d;
    EXPECT_LE((D.p1.block<3, 3>(0, 6) - r1 * P / d).norm(), tol) << d;
    EXPECT_LE((D.p1.block<3, 3>(0, 0) - (Eigen::Matrix3d::Identity() - r1 * P / d)).norm(), tol) << d;
    EXPECT_LE((D.p2.block<3, 3>(0, 6) - (Eigen::Matrix3d::Identity() - r2 * P / d)).norm(), tol) << d;
  }
}

/// The solution polished to machine precision by Newton steps on internal::PairKkt (the solver
/// stops at a residual of 1e-10, which a difference quotient would divide by its step), as the
/// world quantities of the file comment: α, n, p1, p2 (frame 1).
struct Polished {
  double alpha;
  Eigen::Vector3d n, p1, p2;
};

Polished PolishedSolve(const ImplicitShape& a, const ImplicitShape& b, const RigidTransform& X) {
  const PairSolution s = SolveImplicitPair(a, b, X);
  EXPECT_TRUE(s.converged);
  const double l = internal::PairLengthScale(a, b), d = X.p.norm();
  const Eigen::Vector3d r_hat = X.p / d;
  Eigen::Matrix<double, 6, 1> z, F;
  Eigen::Matrix<double, 6, 6> J;
  const double s_surrogate = std::log(s.alpha * l / d);
  z << std::exp(s_surrogate) * s.p1_1 / l, s_surrogate, s.lambda1 / s.alpha, s.lambda2 / s.alpha;
  for (int k = 0; k < 3; ++k) {
    internal::PairKkt(a, b, X.R, r_hat, l, z, &F, &J);
    z -= J.fullPivLu().solve(F);
  }
  const double scale = l * std::exp(-z[3]);
  Polished out;
  out.alpha = std::exp(z[3]) * d / l;
  out.p1 = scale * z.head<3>();
  out.p2 = X.p + scale * (z.head<3>() - r_hat);
  Eigen::Vector3d g;
  a.Evaluate(out.p1, &g, nullptr);
  out.n = g.normalized();
  return out;
}

Eigen::Matrix3d ExpRotation(const Eigen::Vector3d& w) {
  const double angle = w.norm();
  return angle == 0 ? Eigen::Matrix3d::Identity() : Eigen::AngleAxisd(angle, w / angle).toRotationMatrix();
}

/// The pair after the twist h·e_k of column k (0–5 shape 1, 6–11 shape 2; the PairDerivatives
/// convention), solved afresh and expressed in the unperturbed frame 1 (the world).
Polished Perturbed(const ImplicitShape& a, const ImplicitShape& b, const RigidTransform& X, int k, double h) {
  Eigen::Matrix<double, 6, 1> xi = Eigen::Matrix<double, 6, 1>::Zero();
  xi[k % 6] = h;
  const RigidTransform move{ExpRotation(xi.tail<3>()), xi.head<3>()};
  if (k >= 6) return PolishedSolve(a, b, RigidTransform{move.R * X.R, X.p + move.p});
  // Shape 1 moves to X_W1 = move: solve in its new frame, map the results back to the world.
  Polished q = PolishedSolve(a, b, move.Inverse() * X);
  q.n = move.R * q.n;
  q.p1 = move * q.p1;
  q.p2 = move * q.p2;
  return q;
}

// Every column of every output against central differences of re-solves (polished), on random
// poses of the four pair types; translations by 3e-6·ℓ, rotations by 3e-6 rad. Measured worst
// relative difference: 2e-7 (se_se), 3e-6 (poly_poly), 5.5e-6 (poly_se), 5e-8 (tc_sec) — the
// smoothed polytopes' larger third derivatives; the bound is 1e-5.
TEST(ImplicitPairTest, DerivativesMatchCentralDifferencesOfResolves) {
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    std::mt19937 rng(33);
    const double l = internal::PairLengthScale(type.shape1, type.shape2);
    double worst = 0;
    for (int i = 0; i < 20; ++i) {
      const RigidTransform X = RandomPose(type.shape1, type.shape2, rng);
      PairDerivatives D;
      ASSERT_TRUE(SolveImplicitPair(type.shape1, type.shape2, X, nullptr, &D).converged) << type.name;
      ASSERT_TRUE(D.valid) << type.name;
      PairDerivatives fd;
      for (int k = 0; k < 12; ++k) {
        const double h = k % 6 < 3 ? 3e-6 * l : 3e-6;
        const Polished plus = Perturbed(type.shape1, type.shape2, X, k, h);
        const Polished minus = Perturbed(type.shape1, type.shape2, X, k, -h);
        fd.alpha[k] = (plus.alpha - minus.alpha) / (2 * h);
        fd.normal.col(k) = (plus.n - minus.n) / (2 * h);
        fd.p1.col(k) = (plus.p1 - minus.p1) / (2 * h);
        fd.p2.col(k) = (plus.p2 - minus.p2) / (2 * h);
      }
      // Relative to each block's size, or to 1e-3 of its natural unit (1/ℓ per metre for α and n,
      // 1 per radian; 1 and ℓ for the points) when smaller: a block that nearly vanishes (a
      // witness point that hardly moves) is left with the re-solves' rounding, ~1e-15/h.
      for (int c = 0; c < 12; c += 3) {
        const bool rotation = c % 6 == 3;
        const auto check = [&](const auto& got, const auto& want, double unit, const char* what) {
          const double err = (got - want).norm() / std::max(want.norm(), 1e-3 * unit);
          worst = std::max(worst, err);
          EXPECT_LE(err, 1e-5) << type.name << " pose " << i << " " << what << " columns " << c;
        };
        check(D.alpha.segment<3>(c), fd.alpha.segment<3>(c), rotation ? 1 : 1 / l, "alpha");
        check(D.normal.block<3, 3>(0, c), fd.normal.block<3, 3>(0, c), rotation ? 1 : 1 / l, "normal");
        check(D.p1.block<3, 3>(0, c), fd.p1.block<3, 3>(0, c), rotation ? l : 1, "p1");
        check(D.p2.block<3, 3>(0, c), fd.p2.block<3, 3>(0, c), rotation ? l : 1, "p2");
      }
    }
    std::printf("%s: worst relative difference %.2e\n", type.name.c_str(), worst);
  }
}

// The envelope theorem (the file comment of implicit_pair.h): dα/dξ is the derivative of the
// Lagrangian at the solution, ∂α/∂t2 = −(λ2/α)·G and ∂α/∂θ2 = −λ2·((p2 − p_12) × G) with
// G = R_12·∇φ2(y2); ∂α/∂t1 = −(λ1/α)·∇φ1(p1), ∂α/∂θ1 = −λ1·(p1 × ∇φ1(p1)).
TEST(ImplicitPairTest, AlphaDerivativeMatchesTheEnvelopeTheorem) {
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    std::mt19937 rng(34);
    for (int i = 0; i < 500; ++i) {
      const RigidTransform X = RandomPose(type.shape1, type.shape2, rng);
      PairDerivatives D;
      const PairSolution s = SolveImplicitPair(type.shape1, type.shape2, X, nullptr, &D);
      ASSERT_TRUE(s.converged && D.valid) << type.name;
      Eigen::Vector3d g1, g2;
      type.shape1.Evaluate(s.p1_1, &g1, nullptr);
      type.shape2.Evaluate(X.InverseApply(s.p2_1), &g2, nullptr);
      const Eigen::Vector3d G = X.R * g2;
      Eigen::Matrix<double, 1, 12> envelope;
      envelope << -(s.lambda1 / s.alpha) * g1.transpose(), -s.lambda1 * s.p1_1.cross(g1).transpose(),
          -(s.lambda2 / s.alpha) * G.transpose(), -s.lambda2 * (s.p2_1 - X.p).cross(G).transpose();
      for (int c = 0; c < 12; c += 3) {
        EXPECT_LE((D.alpha.segment<3>(c) - envelope.segment<3>(c)).norm(), 1e-7 * envelope.segment<3>(c).norm() + 1e-9)
            << type.name << " pose " << i << " columns " << c;
      }
    }
  }
}

TEST(ImplicitPairTest, DerivativesAreInvalidAtCoincidentOrigins) {
  PairDerivatives D;
  D.alpha.setOnes();
  SolveImplicitPair(Sphere(0.02), Sphere(0.015), RigidTransform(), nullptr, &D);
  EXPECT_FALSE(D.valid);
  EXPECT_TRUE(D.alpha.isZero(0));
}

TEST(ImplicitPairTest, SuccessRateOnRandomPoses) {
  constexpr int kPoses = 100000;
  for (const ImplicitPairType& type : ImplicitPairTypes()) {
    std::mt19937 rng(15);
    int failures = 0;
    long iterations = 0;
    for (int i = 0; i < kPoses; ++i) {
      const RigidTransform X = RandomPose(type.shape1, type.shape2, rng);
      const PairSolution s = SolveImplicitPair(type.shape1, type.shape2, X);
      failures += !s.converged;

      iterations += s.iterations;
    }
    std::printf("%s: %d / %d failed, mean iterations %.2f\n", type.name.c_str(), failures, kPoses,
                static_cast<double>(iterations) / kPoses);
    EXPECT_EQ(failures, 0) << type.name;
  }
}

}  // namespace
}  // namespace taxel::geometry
