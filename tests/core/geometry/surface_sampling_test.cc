// Surface sampling: points on the surface, area weighting, farthest-point spreading, seeds.
#include "core/geometry/surface_sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/geometry/mesh_generators.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

std::vector<Shape> Primitives() {
  return {*Shape::Sphere(0.03), *Shape::Box({0.01, 0.02, 0.03}), *Shape::Capsule(0.01, 0.025),
          *Shape::Cylinder(0.015, 0.02)};
}

double MinPairwiseDistance(const std::vector<Eigen::Vector3d>& p) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < p.size(); ++i) {
    for (size_t j = i + 1; j < p.size(); ++j) best = std::min(best, (p[i] - p[j]).norm());
  }
  return best;
}

TEST(SurfaceSamplingTest, AreasMatchClosedForms) {
  // Sphere 4πr²; box 2(ab + bc + ca) with full edges; capsule 4πr² + 2πr·2l; cylinder 2πr² + 2πr·2l.
  const auto s = Primitives();
  EXPECT_NEAR(SurfaceArea(s[0]), 4 * M_PI * 9e-4, 1e-15);
  EXPECT_NEAR(SurfaceArea(s[1]), 2 * (0.02 * 0.04 + 0.04 * 0.06 + 0.06 * 0.02), 1e-15);
  EXPECT_NEAR(SurfaceArea(s[2]), 4 * M_PI * 1e-4 + 2 * M_PI * 0.01 * 0.05, 1e-15);
  EXPECT_NEAR(SurfaceArea(s[3]), 2 * M_PI * 0.015 * 0.015 + 2 * M_PI * 0.015 * 0.04, 1e-15);
  EXPECT_EQ(SurfaceArea(Shape::HalfSpace()), 0.0);
  EXPECT_TRUE(RandomSurfacePoints(Shape::HalfSpace(), 10, 1).empty());
}

TEST(SurfaceSamplingTest, RandomPointsLieOnTheSurface) {
  for (const Shape& s : Primitives()) {
    const auto pts = RandomSurfacePoints(s, 2000, 42);
    ASSERT_EQ(pts.size(), 2000u) << ShapeKindName(s.kind());
    for (const auto& p : pts) {
      EXPECT_LT(std::abs(s.SignedDistance(p).distance), 1e-12) << ShapeKindName(s.kind()) << " " << p.transpose();
    }
  }
  // A mesh: the points lie on its triangles (distance to the surface ~ rounding).
  const Shape mesh = Shape::FromMesh(testing::MakeSdf(GeodesicSphere(0.02, 4)));
  for (const auto& p : RandomSurfacePoints(mesh, 500, 3)) {
    EXPECT_LT(std::abs(mesh.SignedDistance(p).distance), 1e-12) << p.transpose();
  }
}

TEST(SurfaceSamplingTest, PointsAreAreaWeighted) {
  // Box with half extents (a, b, c) = (1, 2, 3) cm: the face pairs ⟂ x, y, z have areas ∝ bc = 6,
  // ca = 3, ab = 2, so the fractions of points are 6/11, 3/11, 2/11. Capsule with l = 2.5 cm,
  // r = 1 cm: side 2πr·2l = 0.1π, ends 4πr² = 0.04π → fraction on the side 5/7. Binomial
  // standard deviation over n = 20000: ≤ 0.0036; tolerance 5σ ≈ 0.018.
  const int n = 20000;
  const double tol = 0.018;
  for (bool as_mesh : {false, true}) {
    const Eigen::Vector3d h(0.01, 0.02, 0.03);
    const Shape box = as_mesh ? Shape::FromMesh(testing::MakeSdf(SubdividedBox(h, 3))) : *Shape::Box(h);
    int count[3] = {0, 0, 0};
    for (const auto& p : RandomSurfacePoints(box, n, 5)) {
      for (int a = 0; a < 3; ++a) {
        if (std::abs(std::abs(p[a]) - h[a]) < 1e-12) {
          ++count[a];
          break;
        }
      }
    }
    EXPECT_NEAR(count[0] / double(n), 6.0 / 11, tol) << "mesh " << as_mesh;
    EXPECT_NEAR(count[1] / double(n), 3.0 / 11, tol) << "mesh " << as_mesh;
    EXPECT_NEAR(count[2] / double(n), 2.0 / 11, tol) << "mesh " << as_mesh;
  }
  const Shape capsule = *Shape::Capsule(0.01, 0.025);
  int side = 0;
  for (const auto& p : RandomSurfacePoints(capsule, n, 6)) side += std::abs(p.z()) < 0.025;
  EXPECT_NEAR(side / double(n), 5.0 / 7, tol);
}

TEST(SurfaceSamplingTest, DeterministicForASeed) {
  const Shape s = *Shape::Capsule(0.01, 0.02);
  const auto a = RandomSurfacePoints(s, 300, 9);
  const auto b = RandomSurfacePoints(s, 300, 9);
  const auto c = RandomSurfacePoints(s, 300, 10);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << i;
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == c[i];
  EXPECT_EQ(same, 0);
  // A prefix is stable: point i depends on i only.
  const auto prefix = RandomSurfacePoints(s, 50, 9);
  for (size_t i = 0; i < prefix.size(); ++i) EXPECT_EQ(prefix[i], a[i]) << i;
  EXPECT_EQ(FarthestPointSample(a, 40), FarthestPointSample(b, 40));
}

// The plain greedy scan, written here as the reference: every candidate's distance to the chosen
// set updated at every step, the first largest taken.
std::vector<Eigen::Vector3d> BruteForceFps(const std::vector<Eigen::Vector3d>& c, int n) {
  std::vector<Eigen::Vector3d> out;
  if (c.empty() || n <= 0) return out;
  n = std::min<int>(n, static_cast<int>(c.size()));
  std::vector<double> d2(c.size(), std::numeric_limits<double>::infinity());
  size_t next = 0;
  for (int k = 0; k < n; ++k) {
    out.push_back(c[next]);
    size_t best = 0;
    double best_d = -1;
    for (size_t i = 0; i < c.size(); ++i) {
      d2[i] = std::min(d2[i], (c[i] - c[next]).squaredNorm());
      if (d2[i] > best_d) best_d = d2[i], best = i;
    }
    next = best;
  }
  return out;
}

// The indexed sampling chooses exactly the brute-force points, in order: random clouds, a box's
// surface, clusters and exact duplicates (ties resolved by the lowest index).
TEST(SurfaceSamplingTest, FarthestPointSampleEqualsTheBruteForceScan) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<Eigen::Vector3d>> clouds;
  std::vector<Eigen::Vector3d> random, dup;
  for (int i = 0; i < 3000; ++i) random.push_back(testing::Draw<3>(u, gen).cwiseProduct(Eigen::Vector3d(1, 1, 0.01)));
  clouds.push_back(random);
  clouds.push_back(RandomSurfacePoints(*Shape::Box({0.05, 0.02, 0.01}), 4000, 3));
  for (int i = 0; i < 500; ++i) dup.push_back(Eigen::Vector3d(i % 7, (i / 7) % 3, 0) * 0.01);  // 21 points, repeated
  clouds.push_back(dup);
  for (const auto& c : clouds) {
    for (int n : {1, 2, 17, 300, 600}) EXPECT_EQ(FarthestPointSample(c, n), BruteForceFps(c, n)) << n;
  }
}

TEST(SurfaceSamplingTest, FarthestPointSampleSpreadsPoints) {
  const Shape s = *Shape::Sphere(0.05);
  const auto candidates = RandomSurfacePoints(s, 4000, 17);
  const int n = 100;
  const auto fps = FarthestPointSample(candidates, n);
  ASSERT_EQ(fps.size(), static_cast<size_t>(n));
  EXPECT_EQ(fps[0], candidates[0]);  // starts at the first candidate
  const std::vector<Eigen::Vector3d> first(candidates.begin(), candidates.begin() + n);
  // 100 well-spread points on a sphere of radius 5 cm are ~1.8 cm apart (area 4πr²/100 per
  // point); 100 random ones have a closest pair far below that.
  EXPECT_GT(MinPairwiseDistance(fps), 2 * MinPairwiseDistance(first));
  EXPECT_GT(MinPairwiseDistance(fps), 0.008);
  // Every chosen point is a candidate, chosen once.
  for (size_t i = 0; i < fps.size(); ++i) {
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), fps[i]), candidates.end());
    for (size_t j = i + 1; j < fps.size(); ++j) EXPECT_NE(fps[i], fps[j]);
  }
  // Asking for more than there are returns them all; nothing for nothing.
  EXPECT_EQ(FarthestPointSample(first, 1000).size(), first.size());
  EXPECT_TRUE(FarthestPointSample({}, 5).empty());
  EXPECT_TRUE(FarthestPointSample(first, 0).empty());
}

}  // namespace
}  // namespace taxel::geometry
