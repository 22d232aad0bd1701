#include "core/geometry/implicit_shape.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Eigenvalues"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::testing::HasSubstr;

/// The axis-aligned cube |y_i| ≤ h as six half-spaces.
std::vector<Eigen::Vector3d> CubeNormals() {
  return {Eigen::Vector3d::UnitX(),  -Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(),
          -Eigen::Vector3d::UnitY(), Eigen::Vector3d::UnitZ(),  -Eigen::Vector3d::UnitZ()};
}

struct NamedShape {
  std::string name;
  ImplicitShape shape;
};

/// One or more shapes of each kind, with sizes of a fingertip (centimetres).
std::vector<NamedShape> Catalogue() {
  std::vector<NamedShape> shapes;
  shapes.push_back({"sphere", *ImplicitShape::Sphere(0.02)});
  for (int n : {1, 2, 5, 8, 32}) {
    shapes.push_back({"se" + std::to_string(n), *ImplicitShape::Superellipsoid(n, {0.03, 0.02, 0.015})});
  }
  for (int n : {1, 4, 8}) {
    shapes.push_back({"sec" + std::to_string(n), *ImplicitShape::SuperellipticCylinder(n, 0.01, 0.025)});
  }
  // A cube with one corner cut off, scaled rows (normalised by the factory).
  std::vector<Eigen::Vector3d> normals = CubeNormals();
  std::vector<double> offsets(6, 0.02);
  normals.push_back(Eigen::Vector3d(2, 2, 2));
  offsets.push_back(2 * 0.025 * std::sqrt(3.0));
  shapes.push_back({"polytope", *ImplicitShape::SmoothPolytope(normals, offsets, 20)});
  shapes.push_back({"cone_narrowing", *ImplicitShape::TruncatedCone(10, 0.02, 0.01, 0.03, 0.02)});
  shapes.push_back({"cone_widening", *ImplicitShape::TruncatedCone(30, 0.008, 0.015, 0.01, 0.03)});
  return shapes;
}

/// Uniform points in the shape's bounding box inflated by 20 %.
std::vector<Eigen::Vector3d> PointsAround(const ImplicitShape& shape, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  const Eigen::Vector3d center = 0.5 * (shape.local_bounds().lo + shape.local_bounds().hi);
  const Eigen::Vector3d half = 0.6 * (shape.local_bounds().hi - shape.local_bounds().lo);
  std::vector<Eigen::Vector3d> points;
  for (int i = 0; i < count; ++i) {
    points.push_back(center + half.cwiseProduct(testing::Draw<3>(unit, rng)));
  }
  return points;
}

TEST(ImplicitShapeTest, GradientAndHessianMatchCentralDifferences) {
  for (const NamedShape& named : Catalogue()) {
    const ImplicitShape& shape = named.shape;
    const double h = 1e-6 * shape.outer_radius();
    for (const Eigen::Vector3d& y : PointsAround(shape, 300, 7)) {
      Eigen::Vector3d grad;
      Eigen::Matrix3d hess;
      const double phi = shape.Evaluate(y, &grad, &hess);
      ASSERT_DOUBLE_EQ(phi, shape.Phi(y)) << named.name;
      Eigen::Vector3d fd_grad;
      Eigen::Matrix3d fd_hess;
      for (int i = 0; i < 3; ++i) {
        const Eigen::Vector3d step = h * Eigen::Vector3d::Unit(i);
        fd_grad[i] = (shape.Phi(y + step) - shape.Phi(y - step)) / (2 * h);
        Eigen::Vector3d g_plus, g_minus;
        shape.Evaluate(y + step, &g_plus, nullptr);
        shape.Evaluate(y - step, &g_minus, nullptr);
        fd_hess.col(i) = (g_plus - g_minus) / (2 * h);
      }
      // Central differences are accurate to O(h²) plus rounding ~1e-16·|φ|/h: about 1e-7 relative here.
      EXPECT_LE((grad - fd_grad).norm(), 1e-6 * grad.norm() + 1e-6) << named.name << " at " << y.transpose();
      EXPECT_LE((hess - fd_hess).norm(), 1e-5 * hess.norm() + 1e-3) << named.name << " at " << y.transpose();
      EXPECT_LE((hess - hess.transpose()).norm(), 1e-12 * hess.norm()) << named.name;
    }
  }
}

TEST(ImplicitShapeTest, ValuesMatchTheirClosedForms) {
  // Sphere R = 2 cm: φ = |y|²/R² − 1.
  const ImplicitShape sphere = *ImplicitShape::Sphere(0.02);
  EXPECT_DOUBLE_EQ(sphere.Phi({0.01, 0.02, -0.02}), (1e-4 + 4e-4 + 4e-4) / 4e-4 - 1);

  // ε(n): 1e-12 for n = 1, 2e-3·(3/7)² for n = 4, 2e-3 from n = 8 on.
  EXPECT_DOUBLE_EQ(SuperquadricEpsilon(1), 1e-12);
  EXPECT_DOUBLE_EQ(SuperquadricEpsilon(4), 2e-3 * 9.0 / 49.0);
  EXPECT_DOUBLE_EQ(SuperquadricEpsilon(8), 2e-3);
  EXPECT_DOUBLE_EQ(SuperquadricEpsilon(20), 2e-3);

  // SE n = 1 is the ellipsoid: on x²/a² + y²/b² + z²/c² = 1, φ = √(1 + 3e-12 + 1e-16) − 1 ≈ 1.5e-12.
  const Eigen::Vector3d axes(0.03, 0.02, 0.015);
  const ImplicitShape ellipsoid = *ImplicitShape::Superellipsoid(1, axes);
  for (double theta : {0.1, 0.7, 1.3, 2.9}) {
    for (double psi : {-1.2, 0.0, 0.4}) {
      const Eigen::Vector3d on(axes[0] * std::cos(theta) * std::cos(psi), axes[1] * std::sin(theta) * std::cos(psi),
                               axes[2] * std::sin(psi));
      EXPECT_NEAR(ellipsoid.Phi(on), 1.5e-12, 1e-14);
    }
  }

  // SE n = 4 at (a, 0, 0): ((1 + ε)⁴ + 2ε⁴ + 1e-16)^(1/8) − 1.
  const ImplicitShape se4 = *ImplicitShape::Superellipsoid(4, axes);
  const double e4 = SuperquadricEpsilon(4);
  EXPECT_NEAR(se4.Phi({axes[0], 0, 0}), std::pow(std::pow(1 + e4, 4) + 2 * std::pow(e4, 4) + 1e-16, 1.0 / 8) - 1,
              1e-15);

  // SEC n = 8, h = 2.5 cm, R = 1 cm at (0, 0.6R, 0.8R): (ε⁸ + (1 + ε)⁸)^(1/16) − 1.
  const ImplicitShape sec = *ImplicitShape::SuperellipticCylinder(8, 0.01, 0.025);
  EXPECT_NEAR(sec.Phi({0, 0.006, 0.008}), std::pow(std::pow(2e-3, 8) + std::pow(1 + 2e-3, 8), 1.0 / 16) - 1, 1e-15);

  // Cube of half-size h, β = 50: at the face centre (h, 0, 0) z = (0, −2, −1, −1, −1, −1), so
  // φ = ln(1 + e^(−2β) + 4e^(−β))/β; at the origin φ = −1 + ln 6/β.
  const ImplicitShape cube = *ImplicitShape::SmoothPolytope(CubeNormals(), std::vector<double>(6, 0.02), 50);
  EXPECT_NEAR(cube.Phi({0.02, 0, 0}), std::log(1 + std::exp(-100.0) + 4 * std::exp(-50.0)) / 50, 1e-17);
  EXPECT_NEAR(cube.Phi(Eigen::Vector3d::Zero()), -1 + std::log(6.0) / 50, 1e-15);
  EXPECT_NEAR(cube.inner_radius(), 0.02 * (1 - std::log(6.0) / 50), 1e-15);
  EXPECT_NEAR(cube.outer_radius(), 0.02 * std::sqrt(3.0), 1e-10);  // the corner, +1e-9 relative margin

  // Cone Rb = 2 cm at x = −3 cm, Rt = 1 cm at x = +2 cm, β = 10: the radius at x = 0 is
  // 2 − 3/5 = 1.4 cm, so at (0, 1.4 cm, 0) the terms are (0, −1, −1): φ = ln(1 + 2e^(−10))/10.
  const ImplicitShape cone = *ImplicitShape::TruncatedCone(10, 0.02, 0.01, 0.03, 0.02);
  EXPECT_NEAR(cone.Phi({0, 0.014, 0}), std::log(1 + 2 * std::exp(-10.0)) / 10, 1e-15);
  EXPECT_NEAR(cone.Phi(Eigen::Vector3d::Zero()), -1 + std::log(3.0) / 10, 1e-15);
}

TEST(ImplicitShapeTest, RadialBoundsHoldInEveryDirection) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  for (const NamedShape& named : Catalogue()) {
    const ImplicitShape& shape = named.shape;
    ASSERT_GT(shape.inner_radius(), 0) << named.name;
    ASSERT_LE(shape.inner_radius(), shape.outer_radius()) << named.name;
    double closest = shape.outer_radius(), farthest = 0;
    for (int i = 0; i < 2000; ++i) {
      const Eigen::Vector3d u = testing::Draw<3>(normal, rng).normalized();
      // Up to rounding: the sphere's bounds are its surface.
      EXPECT_LE(shape.Phi(shape.inner_radius() * u), 1e-15) << named.name;
      EXPECT_GE(shape.Phi(shape.outer_radius() * u), -1e-15) << named.name;
      const Eigen::Vector3d surface = u / shape.Gamma(u);
      closest = std::min(closest, surface.norm());
      farthest = std::max(farthest, surface.norm());
      EXPECT_TRUE(shape.local_bounds().Inflated(1e-12).Contains(surface)) << named.name;
      if (shape.kind() == ImplicitKind::kSmoothPolytope || shape.kind() == ImplicitKind::kTruncatedCone) {
        EXPECT_NEAR(shape.Phi(surface), 0, 1e-11) << named.name;  // the 1-D solve
      } else {
        // Closed form of the ε = 0 shape: off by about ε (relative).
        EXPECT_NEAR(shape.Phi(surface), 0, 2 * shape.epsilon() + 1e-12) << named.name;
      }
    }
    // The bounds are not loose: the surface comes within 10 % of both (2000 directions). The
    // polytope's inner bound −φ(0)·L uses |∇φ| ≤ 1/L with L the farthest plane (the cut corner,
    // 2.5 cm) while the faces are 2 cm away: 1 − 0.71·2.5/2 = 11 % below the nearest face.
    const double slack = shape.kind() == ImplicitKind::kSmoothPolytope ? 1.15 : 1.1;
    EXPECT_LT(closest, slack * shape.inner_radius()) << named.name;
    EXPECT_GT(farthest, 0.9 * shape.outer_radius()) << named.name;
  }
}

TEST(ImplicitShapeTest, RollingRadiusBoundsEveryPrincipalCurvature) {
  // Principal curvatures at surface points: the eigenvalues of P·∇²φ·P/|∇φ| (P = I − nnᵀ), on 5000
  // random directions; the largest must not exceed 1/rolling_radius. For the sphere the bound is
  // exact (1/R); the others are guaranteed bounds, checked here for not being vacuous (within 40×).
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  for (const NamedShape& named : Catalogue()) {
    const ImplicitShape& shape = named.shape;
    if (shape.kind() == ImplicitKind::kTruncatedCone) {
      EXPECT_EQ(shape.rolling_radius(), 0) << named.name;  // no convex φ: no bound
      continue;
    }
    ASSERT_GT(shape.rolling_radius(), 0) << named.name;
    double kappa_max = 0;
    for (int i = 0; i < 5000; ++i) {
      const Eigen::Vector3d u = testing::Draw<3>(normal, rng).normalized();
      Eigen::Vector3d y = u / shape.Gamma(u);
      for (int k = 0; k < 3; ++k) {  // onto φ = 0 along the gradient (Newton, to 1e-15)
        Eigen::Vector3d g;
        const double phi = shape.Evaluate(y, &g, nullptr);
        y -= phi * g / g.squaredNorm();
      }
      Eigen::Vector3d g;
      Eigen::Matrix3d h;
      shape.Evaluate(y, &g, &h);
      const Eigen::Vector3d n = g.normalized();
      const Eigen::Matrix3d p = Eigen::Matrix3d::Identity() - n * n.transpose();
      const Eigen::Matrix3d w = p * h * p / g.norm();
      kappa_max = std::max(kappa_max, Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(w).eigenvalues().maxCoeff());
    }
    EXPECT_LE(kappa_max, (1 + 1e-9) / shape.rolling_radius()) << named.name;
    EXPECT_GE(kappa_max, 1 / (40 * shape.rolling_radius())) << named.name;
  }
}

TEST(ImplicitShapeTest, GammaScalesThePointOntoTheSurface) {
  // The ellipsoid: γ(2p) = 2 for a surface point p, and γ(p/4) = 1/4.
  const Eigen::Vector3d axes(0.03, 0.02, 0.015);
  const ImplicitShape ellipsoid = *ImplicitShape::Superellipsoid(1, axes);
  const Eigen::Vector3d on(axes[0] * 0.6, axes[1] * 0.0, axes[2] * 0.8);
  EXPECT_NEAR(ellipsoid.Gamma(2 * on), 2, 1e-14);
  EXPECT_NEAR(ellipsoid.Gamma(on / 4), 0.25, 1e-14);
  const ImplicitShape sphere = *ImplicitShape::Sphere(0.02);
  EXPECT_DOUBLE_EQ(sphere.Gamma({0, 0.03, 0.04}), 2.5);
}

TEST(ImplicitShapeTest, BadParametersAreRefusedNamingTheField) {
  auto expect_error = [](const absl::Status& status, const std::string& field, const std::string& rule) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr(field));
    EXPECT_THAT(std::string(status.message()), HasSubstr(rule));
  };
  expect_error(ImplicitShape::Sphere(-1, "s").status(), "s.radius", "> 0");
  expect_error(ImplicitShape::Superellipsoid(2.5, {1, 1, 1}, "s").status(), "s.n", "integer in [1, 32]");
  expect_error(ImplicitShape::Superellipsoid(0, {1, 1, 1}, "s").status(), "s.n", "got 0");
  expect_error(ImplicitShape::Superellipsoid(33, {1, 1, 1}, "s").status(), "s.n", "got 33");
  expect_error(ImplicitShape::Superellipsoid(2, {1, 0, 1}, "s").status(), "s.b", "> 0");
  expect_error(ImplicitShape::SuperellipticCylinder(2, 1, NAN, "s").status(), "s.half_length", "> 0");
  expect_error(ImplicitShape::TruncatedCone(1.0, 1, 1, 1, 1, "s").status(), "s.beta", "ln 3");
  expect_error(ImplicitShape::TruncatedCone(5, 1, 1, 0, 1, "s").status(), "s.a", "> 0");

  const std::vector<double> ones(6, 1.0);
  std::vector<double> bad_offsets = ones;
  bad_offsets[3] = 0;
  expect_error(ImplicitShape::SmoothPolytope(CubeNormals(), bad_offsets, 10, "s").status(), "s.offsets[3]",
               "strictly inside");
  expect_error(ImplicitShape::SmoothPolytope(CubeNormals(), {1, 1, 1}, 10, "s").status(), "s.offsets",
               "one offset per normal");
  std::vector<Eigen::Vector3d> zero_row = CubeNormals();
  zero_row[2] = Eigen::Vector3d::Zero();
  expect_error(ImplicitShape::SmoothPolytope(zero_row, ones, 10, "s").status(), "s.normals[2]", "non-zero");
  // The cube without its −z face is open downwards.
  std::vector<Eigen::Vector3d> open = CubeNormals();
  open.pop_back();
  const auto unbounded = ImplicitShape::SmoothPolytope(open, {1, 1, 1, 1, 1}, 10, "s");
  expect_error(unbounded.status(), "s.normals", "do not bound a finite region");
  EXPECT_THAT(std::string(unbounded.status().message()), HasSubstr("(0, 0, -1)"));
  // Six faces 1 m away, β = 1: φ(0) = −1 + ln 6 > 0.
  expect_error(ImplicitShape::SmoothPolytope(CubeNormals(), ones, 1, "s").status(), "s.beta",
               "does not contain its origin");
  expect_error(ImplicitShape::SmoothPolytope(CubeNormals(), ones, 0, "s").status(), "s.beta", "> 0");
}

}  // namespace
}  // namespace taxel::geometry
