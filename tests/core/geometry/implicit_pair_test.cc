#include "core/geometry/implicit_pair.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Geometry"
#include "gtest/gtest.h"

namespace taxel::geometry {
namespace {

ImplicitShape Sphere(double r) { return *ImplicitShape::Sphere(r); }

/// Hexagonal prism: six sides 2 cm from the axis (z), caps at ±1.5 cm; β = 20.
ImplicitShape HexPrism() {
  std::vector<Eigen::Vector3d> normals;
  std::vector<double> offsets;
  for (int k = 0; k < 6; ++k) {
    normals.emplace_back(std::cos(k * M_PI / 3), std::sin(k * M_PI / 3), 0);
    offsets.push_back(0.02);
  }
  normals.emplace_back(0, 0, 1);
  normals.emplace_back(0, 0, -1);
  offsets.insert(offsets.end(), {0.015, 0.015});
  return *ImplicitShape::SmoothPolytope(normals, offsets, 20);
}

/// A 3 cm cube with one corner cut off; β = 20.
ImplicitShape CutCube() {
  std::vector<Eigen::Vector3d> normals = {
      Eigen::Vector3d::UnitX(), -Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(), -Eigen::Vector3d::UnitY(),
      Eigen::Vector3d::UnitZ(), -Eigen::Vector3d::UnitZ(), Eigen::Vector3d(1, 1, 1)};
  std::vector<double> offsets = {0.015, 0.015, 0.015, 0.015, 0.015, 0.015, 0.02 * std::sqrt(3.0)};
  return *ImplicitShape::SmoothPolytope(normals, offsets, 20);
}

struct PairType {
  std::string name;
  ImplicitShape shape1, shape2;
};

/// The four pair types of the success-rate test and of bench/implicit_pair_cases.cc (same shapes).
std::vector<PairType> PairTypes() {
  return {
      {"se_se", *ImplicitShape::Superellipsoid(4, {0.03, 0.02, 0.015}),
       *ImplicitShape::Superellipsoid(8, {0.02, 0.015, 0.01})},
      {"poly_poly", HexPrism(), CutCube()},
      {"poly_se", HexPrism(), *ImplicitShape::Superellipsoid(4, {0.03, 0.02, 0.015})},
      {"tc_sec", *ImplicitShape::TruncatedCone(20, 0.02, 0.01, 0.03, 0.02),
       *ImplicitShape::SuperellipticCylinder(4, 0.01, 0.025)},
  };
}

/// A uniformly random rotation (normalised Gaussian quaternion).
Eigen::Matrix3d RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return Eigen::Quaterniond(g(rng), g(rng), g(rng), g(rng)).normalized().toRotationMatrix();
}

Eigen::Vector3d RandomDirection(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return Eigen::Vector3d(g(rng), g(rng), g(rng)).normalized();
}

/// Shape 2 at a random orientation, its centre at a distance uniform in [0.1·min R_in, 2·max R_out]
/// in a uniformly random direction.
RigidTransform RandomPose(const ImplicitShape& a, const ImplicitShape& b, std::mt19937& rng) {
  const double lo = 0.1 * std::min(a.inner_radius(), b.inner_radius());
  const double hi = 2 * std::max(a.outer_radius(), b.outer_radius());
  std::uniform_real_distribution<double> d(lo, hi);
  RigidTransform X;
  X.R = RandomRotation(rng);
  X.p = d(rng) * RandomDirection(rng);
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

TEST(ImplicitPairTest, SuccessRateOnRandomPoses) {
  constexpr int kPoses = 100000;
  for (const PairType& type : PairTypes()) {
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
