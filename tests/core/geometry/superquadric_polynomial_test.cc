#include "core/geometry/superquadric_polynomial.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry::internal {
namespace {

struct Case {
  std::string name;
  ImplicitShape shape;
};

std::vector<Case> Superquadrics() {
  std::vector<Case> cases;
  for (int n : {1, 2, 3, 4, 32}) {
    cases.push_back({"se" + std::to_string(n), *ImplicitShape::Superellipsoid(n, {0.03, 0.02, 0.015})});
  }
  for (int n : {1, 4, 5}) {
    cases.push_back({"sec" + std::to_string(n), *ImplicitShape::SuperellipticCylinder(n, 0.01, 0.025)});
  }
  return cases;
}

/// Points in the shape's bounding box inflated by 20 % (inside and outside).
std::vector<Eigen::Vector3d> Points(const ImplicitShape& shape, int count) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> unit(-1.2, 1.2);
  const Eigen::Vector3d half = shape.local_bounds().hi;
  std::vector<Eigen::Vector3d> points;
  for (int i = 0; i < count; ++i) points.push_back(half.cwiseProduct(testing::Draw<3>(unit, rng)));
  return points;
}

/// S = ψ + 1, ∇'ψ, ∇'²ψ in y' = y/L for either kind.
double Sum(const ImplicitShape& shape, double length, const Eigen::Vector3d& y, Eigen::Vector3d* g,
           Eigen::Matrix3d* h) {
  if (shape.kind() == ImplicitKind::kSuperellipticCylinder) {
    const SuperquadricPolynomial<true> psi(shape, length);
    SuperquadricPolynomial<true>::Hessian hessian;
    const double value = psi.Sum(y, g, &hessian);
    *h = SuperquadricPolynomial<true>::Dense(hessian);
    return value;
  }
  const SuperquadricPolynomial<false> psi(shape, length);
  SuperquadricPolynomial<false>::Hessian hessian;
  const double value = psi.Sum(y, g, &hessian);
  *h = SuperquadricPolynomial<false>::Dense(hessian);
  EXPECT_EQ(hessian.yz, 0.0);  // SE: ψ is a sum of functions of one coordinate each
  return value;
}

TEST(SuperquadricPolynomialTest, IsTheTwoNthPowerOfPhiPlusOne) {
  // S = ψ + 1 = (φ + 1)^{2n} by definition of φ (implicit_shape.h); checked through φ's own
  // evaluation. (S itself, not ψ: near the origin ψ ≈ −1 and ψ + 1 would lose the digits of S.)
  for (const Case& c : Superquadrics()) {
    SCOPED_TRACE(c.name);
    const double length = c.shape.outer_radius();
    const int n = c.shape.exponent();
    for (const Eigen::Vector3d& p : Points(c.shape, 300)) {
      Eigen::Vector3d g;
      Eigen::Matrix3d h;
      const double sum = Sum(c.shape, length, p / length, &g, &h);
      const double expected = std::pow(c.shape.Phi(p) + 1, 2 * n);
      ASSERT_NEAR(sum, expected, 1e-12 * expected) << p.transpose();
    }
  }
}

TEST(SuperquadricPolynomialTest, GradientIsParallelToPhisGradient) {
  // ∇ψ = 2n(φ + 1)^{2n−1}∇φ; in y' = y/L the gradient carries one more factor L.
  for (const Case& c : Superquadrics()) {
    SCOPED_TRACE(c.name);
    const double length = c.shape.outer_radius();
    const int n = c.shape.exponent();
    for (const Eigen::Vector3d& p : Points(c.shape, 300)) {
      Eigen::Vector3d g, grad_phi;
      Eigen::Matrix3d h;
      Sum(c.shape, length, p / length, &g, &h);
      const double phi = c.shape.Evaluate(p, &grad_phi, nullptr);
      const Eigen::Vector3d expected = 2 * n * std::pow(phi + 1, 2 * n - 1) * length * grad_phi;
      ASSERT_LT((g - expected).norm(), 1e-10 * expected.norm()) << p.transpose();
    }
  }
}

TEST(SuperquadricPolynomialTest, DerivativesMatchCentralDifferences) {
  // Central differences of ψ and ∇ψ with step δ = 1e-5 in y' (truncation error O(δ²)·∇³ψ).
  for (const Case& c : Superquadrics()) {
    SCOPED_TRACE(c.name);
    const double length = c.shape.outer_radius();
    const double delta = 1e-5;
    for (const Eigen::Vector3d& p : Points(c.shape, 100)) {
      const Eigen::Vector3d y = p / length;
      Eigen::Vector3d g;
      Eigen::Matrix3d h;
      Sum(c.shape, length, y, &g, &h);
      for (int i = 0; i < 3; ++i) {
        const Eigen::Vector3d e = delta * Eigen::Vector3d::Unit(i);
        Eigen::Vector3d g_plus, g_minus;
        Eigen::Matrix3d unused;
        const double plus = Sum(c.shape, length, y + e, &g_plus, &unused);
        const double minus = Sum(c.shape, length, y - e, &g_minus, &unused);
        const double scale = 1 + g.norm() + h.norm();
        ASSERT_NEAR(g[i], (plus - minus) / (2 * delta), 1e-5 * scale) << p.transpose();
        ASSERT_LT((h.col(i) - (g_plus - g_minus) / (2 * delta)).norm(), 1e-5 * scale) << p.transpose();
      }
    }
  }
}

TEST(SuperquadricPolynomialTest, RootOfTwoN) {
  // x^(1/2n) for powers of two (square roots) and otherwise (std::pow): 2^(1/2), 3^(1/8), 5^(1/6).
  EXPECT_DOUBLE_EQ(Root2n(2, 1), std::sqrt(2.0));
  EXPECT_NEAR(Root2n(3, 4), std::exp(std::log(3.0) / 8), 1e-15);
  EXPECT_NEAR(Root2n(5, 3), std::exp(std::log(5.0) / 6), 1e-15);
  EXPECT_EQ(Root2n(0, 4), 0.0);
}

}  // namespace
}  // namespace taxel::geometry::internal
