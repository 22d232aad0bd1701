#include "core/geometry/implicit_surface.h"

#include <cmath>
#include <vector>

#include "core/geometry/shape.h"
#include "core/geometry/surface_sampling.h"
#include "gtest/gtest.h"

namespace taxel::geometry {
namespace {

constexpr double kPi = 3.141592653589793;

TEST(ImplicitSurfaceTest, SamplesLieOnTheSurface) {
  const ImplicitShape se = *ImplicitShape::Superellipsoid(8, {0.03, 0.02, 0.015});
  std::vector<Eigen::Vector3d> points;
  std::vector<double> areas;
  SampleImplicitSurface(se, 2000, &points, &areas);
  ASSERT_EQ(points.size(), 2000u);
  for (const Eigen::Vector3d& p : points) EXPECT_LT(std::abs(se.Phi(p)), 1e-12);
}

TEST(ImplicitSurfaceTest, AreaOfTheSphereAndOfASpheroid) {
  // Sphere 4πR²; oblate spheroid (a = b > c), e² = 1 − c²/a²: 2πa²(1 + (1 − e²)/e·atanh e).
  EXPECT_NEAR(ImplicitSurfaceArea(*ImplicitShape::Sphere(0.02)), 4 * kPi * 0.02 * 0.02, 1e-4 * 4 * kPi * 4e-4);
  const double a = 0.03, c = 0.015, e = std::sqrt(1 - c * c / (a * a));
  const double spheroid = 2 * kPi * a * a * (1 + (1 - e * e) / e * std::atanh(e));
  EXPECT_NEAR(ImplicitSurfaceArea(*ImplicitShape::Superellipsoid(1, {a, a, c})), spheroid, 1e-3 * spheroid);
  // SE(32) approaches its box 2(4ab + 4bc + 4ca) from below.
  const double box = 8 * (0.03 * 0.02 + 0.02 * 0.015 + 0.015 * 0.03);
  const double se32 = ImplicitSurfaceArea(*ImplicitShape::Superellipsoid(32, {0.03, 0.02, 0.015}));
  EXPECT_LT(se32, box);
  EXPECT_GT(se32, 0.93 * box);
}

TEST(ImplicitSurfaceTest, ShapeKindSamplesAndAreas) {
  // Through the Shape dispatch: the area and area-uniform random points (their centroid is the
  // origin for a centred ellipsoid; its mean |z| is the Archimedes-like half-height for the sphere,
  // R/2, since the sphere's area is uniform in z).
  const Shape sphere = Shape::FromImplicit(std::make_shared<const ImplicitShape>(*ImplicitShape::Sphere(0.02)));
  EXPECT_NEAR(SurfaceArea(sphere), 4 * kPi * 4e-4, 1e-3 * 4 * kPi * 4e-4);
  const std::vector<Eigen::Vector3d> points = RandomSurfacePoints(sphere, 20000, 7);
  ASSERT_EQ(points.size(), 20000u);
  double mean_abs_z = 0;
  for (const Eigen::Vector3d& p : points) {
    EXPECT_NEAR(p.norm(), 0.02, 1e-12);
    mean_abs_z += std::abs(p.z()) / points.size();
  }
  EXPECT_NEAR(mean_abs_z, 0.01, 3e-4);  // σ of the mean: 0.02/√12/√20000 = 4e-5
}

TEST(ImplicitSurfaceTest, RandomPointsOfAnElongatedShapeAreAreaUniform) {
  // A prolate ellipsoid 5:1:1: the fraction of random points with |x| < a/2 against that of the
  // area by the lattice quadrature (uniform directions would put far too few near the tips).
  const ImplicitShape shape = *ImplicitShape::Superellipsoid(1, {0.05, 0.01, 0.01});
  const Shape s = Shape::FromImplicit(std::make_shared<const ImplicitShape>(shape));
  std::vector<Eigen::Vector3d> lattice;
  std::vector<double> areas;
  SampleImplicitSurface(shape, 20000, &lattice, &areas);
  double middle = 0, total = 0;
  for (size_t i = 0; i < lattice.size(); ++i) {
    total += areas[i];
    if (std::abs(lattice[i].x()) < 0.025) middle += areas[i];
  }
  const std::vector<Eigen::Vector3d> points = RandomSurfacePoints(s, 20000, 3);
  int inside = 0;
  for (const Eigen::Vector3d& p : points) inside += std::abs(p.x()) < 0.025;
  EXPECT_NEAR(static_cast<double>(inside) / points.size(), middle / total, 0.015);  // 4σ of a binomial
}

}  // namespace
}  // namespace taxel::geometry
