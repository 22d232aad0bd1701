// Tests for core/geometry/closest_point_triangle.h, which the brute-force reference of the other
// geometry tests (tests/support BruteForceSquaredDistance) is built on: hand points in each of the
// seven Voronoi regions, and random points against a dense barycentric search.
#include "core/geometry/closest_point_triangle.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using Vec = Eigen::Vector3d;

// The triangle a = (0,0,0), b = (2,0,0), c = (0,2,0) in the plane z = 0:
//
//   y
//   2 c
//     | \            regions: V0 (x<0, y<0), V1 beyond b, V2 beyond c,
//     |   \               E01 below y = 0, E20 left of x = 0, E12 beyond x + y = 2,
//     |     \             F above/below the face
//   0 a------b  x
//     0      2
struct Case {
  Vec p;
  TriangleFeature feature;
  Vec closest;
};

TEST(ClosestPointOnTriangleTest, EveryVoronoiRegion) {
  const Vec a(0, 0, 0), b(2, 0, 0), c(0, 2, 0);
  const Case cases[] = {
      {Vec(0.5, 0.5, 3), TriangleFeature::kFace, Vec(0.5, 0.5, 0)},
      {Vec(0.5, 0.5, -1), TriangleFeature::kFace, Vec(0.5, 0.5, 0)},
      {Vec(-1, -1, 1), TriangleFeature::kVertex0, a},
      {Vec(3, -1, 0), TriangleFeature::kVertex1, b},      // (p−b)·(a−b) < 0 and (p−b)·(c−b) < 0
      {Vec(-0.5, 3, 0.2), TriangleFeature::kVertex2, c},  // (p−c)·(a−c) < 0 and (p−c)·(b−c) < 0
      {Vec(1.5, -1, 2), TriangleFeature::kEdge01, Vec(1.5, 0, 0)},
      {Vec(-2, 0.7, -1), TriangleFeature::kEdge20, Vec(0, 0.7, 0)},
      // Beyond the hypotenuse: (2, 1.5, 0) projects onto x + y = 2 at (2, 1.5) − 0.75·(1, 1) = (1.25, 0.75).
      {Vec(2, 1.5, 0.5), TriangleFeature::kEdge12, Vec(1.25, 0.75, 0)},
  };
  for (const Case& k : cases) {
    TriangleFeature f;
    const Vec got = ClosestPointOnTriangle(k.p, a, b, c, &f);
    EXPECT_EQ(f, k.feature) << k.p.transpose();
    EXPECT_LE((got - k.closest).norm(), 1e-15) << k.p.transpose() << " -> " << got.transpose();
  }
}

TEST(ClosestPointOnTriangleTest, FeatureHelpers) {
  EXPECT_TRUE(IsVertex(TriangleFeature::kVertex2));
  EXPECT_FALSE(IsVertex(TriangleFeature::kEdge01));
  EXPECT_TRUE(IsEdge(TriangleFeature::kEdge20));
  EXPECT_FALSE(IsEdge(TriangleFeature::kFace));
  EXPECT_EQ(FeatureLocalIndex(TriangleFeature::kVertex0), 0);
  EXPECT_EQ(FeatureLocalIndex(TriangleFeature::kVertex2), 2);
  EXPECT_EQ(FeatureLocalIndex(TriangleFeature::kEdge01), 0);
  EXPECT_EQ(FeatureLocalIndex(TriangleFeature::kEdge12), 1);
  EXPECT_EQ(FeatureLocalIndex(TriangleFeature::kEdge20), 2);
}

TEST(ClosestPointOnTriangleTest, RandomPointsAgainstDenseBarycentricSearch) {
  // A scalene triangle in general position; the reference minimises |p − x|² over a 400×400
  // barycentric grid, then the answer must be no farther than that (and at most one grid step,
  // ~|edge|/400, closer). The answer must lie in the triangle and carry a consistent feature.
  const Vec a(0.1, -0.3, 0.2), b(1.2, 0.4, -0.5), c(-0.4, 0.9, 0.6);
  const auto points = taxel::testing::UniformPoints(300, Vec::Constant(-2), Vec::Constant(2), 77);
  constexpr int kGrid = 400;
  const double step = std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()}) / kGrid;
  for (const Vec& p : points) {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= kGrid; ++i) {
      for (int j = 0; i + j <= kGrid; ++j) {
        const Vec x = a + (b - a) * (double(i) / kGrid) + (c - a) * (double(j) / kGrid);
        best = std::min(best, (p - x).norm());
      }
    }
    TriangleFeature f;
    const Vec q = ClosestPointOnTriangle(p, a, b, c, &f);
    const double d = (p - q).norm();
    EXPECT_LE(d, best + 1e-12) << p.transpose();
    EXPECT_GE(d, best - step) << p.transpose();
    // q lies in the triangle: non-negative barycentric coordinates that sum to 1, in-plane.
    const Vec n = (b - a).cross(c - a);
    EXPECT_NEAR(n.normalized().dot(q - a), 0, 1e-14);
    const double wa = (b - q).cross(c - q).dot(n) / n.squaredNorm();
    const double wb = (c - q).cross(a - q).dot(n) / n.squaredNorm();
    const double wc = (a - q).cross(b - q).dot(n) / n.squaredNorm();
    EXPECT_GE(wa, -1e-14);
    EXPECT_GE(wb, -1e-14);
    EXPECT_GE(wc, -1e-14);
    // The feature matches where q is: vertices are exact, edges have the opposite weight 0.
    switch (f) {
      case TriangleFeature::kVertex0: EXPECT_EQ(q, a); break;
      case TriangleFeature::kVertex1: EXPECT_EQ(q, b); break;
      case TriangleFeature::kVertex2: EXPECT_EQ(q, c); break;
      case TriangleFeature::kEdge01: EXPECT_NEAR(wc, 0, 1e-14); break;
      case TriangleFeature::kEdge12: EXPECT_NEAR(wa, 0, 1e-14); break;
      case TriangleFeature::kEdge20: EXPECT_NEAR(wb, 0, 1e-14); break;
      case TriangleFeature::kFace:
        EXPECT_GT(std::min({wa, wb, wc}), -1e-14);
        // Face region: p − q is along the normal.
        EXPECT_LE((p - q).cross(n).norm(), 1e-12 * n.norm());
        break;
    }
  }
}

}  // namespace
}  // namespace taxel::geometry
