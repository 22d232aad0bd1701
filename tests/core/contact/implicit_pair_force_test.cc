// The implicit pair force's Jacobian (core/contact/implicit_pair_force.h) against the hand-derived
// derivative of two spheres and against central differences of full re-solves on random
// overlapping poses of the four iDCOL pair types, with link origins away from the shapes and
// moving links (damping on).
#include "core/contact/implicit_pair_force.h"

#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "Eigen/Geometry"
#include "core/common/pose.h"
#include "core/contact/pair_contact.h"
#include "core/geometry/implicit_generators.h"
#include "core/geometry/shape.h"
#include "gtest/gtest.h"

namespace taxel::contact {
namespace {

constexpr double kPi = 3.141592653589793;
using Twist = Eigen::Matrix<double, 6, 1>;

std::shared_ptr<const geometry::Shape> ImplicitShape(const geometry::ImplicitShape& s) {
  return std::make_shared<const geometry::Shape>(
      geometry::Shape::FromImplicit(std::make_shared<const geometry::ImplicitShape>(s)));
}

// A link carrying one shape at X_LS, with its world pose and twist.
struct Link {
  explicit Link(std::shared_ptr<const geometry::Shape> s) : shape(std::move(s)) {}
  std::shared_ptr<const geometry::Shape> shape;
  RigidTransform X_WL, X_LS;
  Eigen::Vector3d v_W = Eigen::Vector3d::Zero(), w_W = Eigen::Vector3d::Zero();
  PlacedShape Placed() const { return {shape.get(), X_WL * X_LS, nullptr, v_W, w_W, X_WL.p}; }
  // The link after the world twist ξ about its origin: X_WL ← (exp(δθ)·R, p + δt).
  Link Moved(const Twist& xi) const {
    Link l = *this;
    const double angle = xi.tail<3>().norm();
    const Eigen::Matrix3d R =
        angle == 0 ? Eigen::Matrix3d::Identity() : Eigen::AngleAxisd(angle, xi.tail<3>() / angle).toRotationMatrix();
    l.X_WL = RigidTransform{R * X_WL.R, X_WL.p + xi.head<3>()};
    return l;
  }
};

NonlinearLawParams Law() {
  NonlinearLawParams law;  // a pressure law with damping (Pa, Pa·s/m)
  law.stiffness = 1e9;
  law.exponent = 1.5;
  law.damping = 1e5;
  law.damping_depth = 2e-3;
  return law;
}

Eigen::Vector3d Force(const NonlinearLawParams& law, const Link& a, const Link& b) {
  return ComputePairForce(law, a.Placed(), b.Placed()).normal;
}

// Central differences with Richardson extrapolation, (4·D(h/2) − D(h))/3: error O(h⁴), so that
// the comparison is limited by the re-solves' rounding rather than the step.
PairForceJacobian Differences(const NonlinearLawParams& law, const Link& a, const Link& b, double length) {
  PairForceJacobian J;
  for (int k = 0; k < 12; ++k) {
    const double h = k % 6 < 3 ? 2e-5 * length : 2e-5;
    auto D = [&](double step) {
      Twist xi = Twist::Zero();
      xi[k % 6] = step;
      const Eigen::Vector3d plus = k < 6 ? Force(law, a.Moved(xi), b) : Force(law, a, b.Moved(xi));
      const Eigen::Vector3d minus = k < 6 ? Force(law, a.Moved(-xi), b) : Force(law, a, b.Moved(-xi));
      return Eigen::Vector3d((plus - minus) / (2 * step));
    };
    J.col(k) = (4 * D(h / 2) - D(h)) / 3;
  }
  return J;
}

// Two spheres, radii 3 and 2 cm, centres 4.9 cm apart (δ = 1 mm), at rest. The force on A is
// F = −f(d)·u with u = (c_B − c_A)/d and f(d) = 2π·R_e·k·δ^(n+1)/(n+1), R_e = R1R2/(R1 + R2) =
// 1.2 cm, δ = R1 + R2 − d. So ∂F/∂c_B = −f'(d)·uuᵀ − f(d)/d·(I − uuᵀ) with f'(d) = −2π·R_e·k·δ^n,
// ∂F/∂c_A = −∂F/∂c_B; the link rotations act through the centres' offsets from the link origins.
TEST(ImplicitPairForceTest, SpheresMatchTheHandDerivative) {
  NonlinearLawParams law = Law();
  law.damping = 0;
  const double r1 = 0.03, r2 = 0.02, d = 0.049, delta = r1 + r2 - d, re = r1 * r2 / (r1 + r2);
  Link a(ImplicitShape(*geometry::ImplicitShape::Sphere(r1)));
  Link b(ImplicitShape(*geometry::ImplicitShape::Sphere(r2)));
  const Eigen::Vector3d u = Eigen::Vector3d(1, 2, 2) / 3;
  // Link origins 1 cm off the centres: rotating a link about its origin moves its centre by
  // δθ × (c − o).
  a.X_LS.p = Eigen::Vector3d(0.01, 0, 0), a.X_WL.p = -a.X_LS.p;
  b.X_LS.p = Eigen::Vector3d(0, -0.01, 0), b.X_WL.p = d * u - b.X_LS.p;
  PairForceJacobian J;
  const PairForce f = ComputePairForce(law, a.Placed(), b.Placed(), nullptr, &J);
  const double fd = 2 * kPi * re * law.stiffness * std::pow(delta, 2.5) / 2.5;
  ASSERT_NEAR(f.normal.norm(), fd, 1e-3 * fd);  // R_e from the curvatures: exact for spheres
  const double fprime = -2 * kPi * re * law.stiffness * std::pow(delta, 1.5);
  const Eigen::Matrix3d P = u * u.transpose();
  const Eigen::Matrix3d dF_dcb = -fprime * P - fd / d * (Eigen::Matrix3d::Identity() - P);
  const double tol = 1e-6 * dF_dcb.norm();
  EXPECT_LE((J.middleCols<3>(6) - dF_dcb).norm(), tol);
  EXPECT_LE((J.middleCols<3>(0) + dF_dcb).norm(), tol);
  // δc = δθ × (c − o) = −[c − o]×·δθ.
  EXPECT_LE((J.middleCols<3>(9) + dF_dcb * Skew(b.X_LS.p)).norm(), tol * 0.01);
  EXPECT_LE((J.middleCols<3>(3) - dF_dcb * Skew(a.X_LS.p)).norm(), tol * 0.01);
}

// A pose of B's link relative to A's with the shapes overlapping: B's shape centre at a random
// direction, at a distance between the inner-radius sum and 0.9 of the touching distance.
void RandomOverlap(const geometry::ImplicitPairType& type, std::mt19937& rng, Link* a, Link* b) {
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  auto gaussian = [&] {
    Eigen::Vector4d v;
    for (int i = 0; i < 4; ++i) v[i] = g(rng);
    return v;
  };
  auto rotation = [&] { return Eigen::Quaterniond(gaussian()).normalized().toRotationMatrix(); };
  auto offset = [&] { return Eigen::Vector3d(0.01 * gaussian().head<3>()); };
  a->X_WL = RigidTransform{rotation(), offset()};
  a->X_LS = RigidTransform{rotation(), offset()};
  b->X_LS = RigidTransform{rotation(), offset()};
  const Eigen::Vector3d dir = gaussian().head<3>().normalized();
  const RigidTransform X_WSa = a->X_WL * a->X_LS;
  const Eigen::Matrix3d R_WSb = rotation();
  // Touching distance along dir: bisection on α (the pair solve) between the inner and outer sums.
  const double lo0 = type.shape1.inner_radius() + type.shape2.inner_radius();
  double lo = lo0, hi = type.shape1.outer_radius() + type.shape2.outer_radius();
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    const RigidTransform X_AB{X_WSa.R.transpose() * R_WSb, mid * (X_WSa.R.transpose() * dir)};
    (geometry::SolveImplicitPair(type.shape1, type.shape2, X_AB).alpha < 1 ? lo : hi) = mid;
  }
  const double dist = lo0 + (0.9 * lo - lo0) * (0.5 + 0.5 * u(rng));
  const RigidTransform X_WSb{R_WSb, X_WSa.p + dist * dir};
  b->X_WL = X_WSb * b->X_LS.Inverse();
  a->v_W = 0.05 * gaussian().head<3>(), a->w_W = gaussian().head<3>();
  b->v_W = 0.05 * gaussian().head<3>(), b->w_W = gaussian().head<3>();
}

// Every column against Richardson-extrapolated central differences of full re-solves, relative to
// the Jacobian's size, on 10 random overlapping poses per pair type.
TEST(ImplicitPairForceTest, JacobianMatchesCentralDifferencesOfResolves) {
  const NonlinearLawParams law = Law();
  for (const geometry::ImplicitPairType& type : geometry::ImplicitPairTypes()) {
    std::mt19937 rng(5);
    Link a(ImplicitShape(type.shape1)), b(ImplicitShape(type.shape2));
    const double length = type.shape1.outer_radius() + type.shape2.outer_radius();
    double worst = 0;
    for (int i = 0; i < 10; ++i) {
      RandomOverlap(type, rng, &a, &b);
      PairForceJacobian J;
      const PairForce f = ComputePairForce(law, a.Placed(), b.Placed(), nullptr, &J);
      ASSERT_GT(f.normal.norm(), 0) << type.name << " pose " << i;
      const PairForceJacobian fd = Differences(law, a, b, length);
      for (int c = 0; c < 12; c += 3) {
        // Translations in N/m, rotations in N/rad: compared per block, relative to its size or
        // to |F|/length when smaller.
        const double unit = f.normal.norm() * (c % 6 == 0 ? 1 / length : 1.0);
        const double err = (J.middleCols<3>(c) - fd.middleCols<3>(c)).norm() /
                           std::max(fd.middleCols<3>(c).norm(), 1e-2 * unit);
        worst = std::max(worst, err);
        EXPECT_LE(err, 1e-6) << type.name << " pose " << i << " columns " << c;
      }
    }
    std::printf("%s: worst relative difference %.2e\n", type.name.c_str(), worst);
  }
}

// The pair's order does not matter: the Jacobian of the force on B is minus that on A with the
// two links' blocks swapped (ComputePairForce solves from the lexicographically smaller origin).
TEST(ImplicitPairForceTest, SwappingThePairNegatesAndSwapsTheBlocks) {
  const NonlinearLawParams law = Law();
  const geometry::ImplicitPairType type = geometry::ImplicitPairTypes()[0];
  std::mt19937 rng(8);
  Link a(ImplicitShape(type.shape1)), b(ImplicitShape(type.shape2));
  RandomOverlap(type, rng, &a, &b);
  PairForceJacobian ab, ba;
  ComputePairForce(law, a.Placed(), b.Placed(), nullptr, &ab);
  ComputePairForce(law, b.Placed(), a.Placed(), nullptr, &ba);
  EXPECT_GT(ab.norm(), 0);
  EXPECT_LE((ab.leftCols<6>() + ba.rightCols<6>()).norm(), 1e-12 * ab.norm());
  EXPECT_LE((ab.rightCols<6>() + ba.leftCols<6>()).norm(), 1e-12 * ab.norm());
}

// Apart: no force, a zero Jacobian.
TEST(ImplicitPairForceTest, SeparatedShapesHaveAZeroJacobian) {
  Link a(ImplicitShape(*geometry::ImplicitShape::Sphere(0.02))), b(ImplicitShape(*geometry::ImplicitShape::Sphere(0.02)));
  b.X_WL.p = Eigen::Vector3d(0.041, 0, 0);
  PairForceJacobian J = PairForceJacobian::Constant(1);
  EXPECT_EQ(ComputePairForce(Law(), a.Placed(), b.Placed(), nullptr, &J).normal.norm(), 0);
  EXPECT_EQ(J.norm(), 0);
}

}  // namespace
}  // namespace taxel::contact
