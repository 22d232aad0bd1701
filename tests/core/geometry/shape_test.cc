// Tests for core/geometry/shape.h: factory validation (code and message), local bounds and the
// signed-distance dispatch to each kind.
#include "core/geometry/shape.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/geometry/mesh_generators.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::testing::HasSubstr;
using Vec = Eigen::Vector3d;

constexpr double kInf = std::numeric_limits<double>::infinity();

void ExpectInvalid(const absl::Status& s, const std::string& substr) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(substr));
}

TEST(ShapeTest, FactoriesRejectNonPositiveOrNonFiniteSizes) {
  for (double bad : {0.0, -1.0, std::nan(""), kInf}) {
    ExpectInvalid(Shape::Sphere(bad, "links[2].shapes[0]").status(), "links[2].shapes[0].radius");
    ExpectInvalid(Shape::Capsule(bad, 1.0).status(), "shape.radius");
    ExpectInvalid(Shape::Capsule(1.0, bad).status(), "shape.half_length");
    ExpectInvalid(Shape::Cylinder(bad, 1.0).status(), "shape.radius");
    ExpectInvalid(Shape::Cylinder(1.0, bad).status(), "shape.half_length");
    for (int a = 0; a < 3; ++a) {
      Vec h(1, 2, 3);
      h[a] = bad;
      ExpectInvalid(Shape::Box(h).status(), "shape.half_extents[" + std::to_string(a) + "]");
    }
  }
  EXPECT_THAT(std::string(Shape::Sphere(-2.0).status().message()), HasSubstr("> 0"));
}

TEST(ShapeTest, LocalBounds) {
  EXPECT_EQ(Shape::Sphere(0.5)->local_bounds().hi, Vec(0.5, 0.5, 0.5));
  EXPECT_EQ(Shape::Box(Vec(1, 2, 3))->local_bounds().lo, Vec(-1, -2, -3));
  // Capsule: radius 0.5, half-length 1 -> z extent 1.5.
  EXPECT_EQ(Shape::Capsule(0.5, 1)->local_bounds().hi, Vec(0.5, 0.5, 1.5));
  EXPECT_EQ(Shape::Cylinder(0.5, 1)->local_bounds().hi, Vec(0.5, 0.5, 1));
  const Aabb hs = Shape::HalfSpace().local_bounds();
  EXPECT_EQ(hs.hi.z(), 0);
  EXPECT_EQ(hs.lo.z(), -kInf);
  EXPECT_EQ(hs.hi.x(), kInf);
  const auto sdf = taxel::testing::MakeSdf(SubdividedBox(Vec(1, 2, 3), 1));
  EXPECT_EQ(Shape::FromMesh(sdf).local_bounds().hi, Vec(1, 2, 3));
  auto hf = Heightfield::Create(2, 2, 1, 1, {0, 0, 0, 1});
  ASSERT_TRUE(hf.ok());
  const Aabb hb = Shape::FromHeightfield(*hf).local_bounds();
  EXPECT_EQ(hb.lo, Vec(-0.5, -0.5, -kInf));
  EXPECT_EQ(hb.hi, Vec(0.5, 0.5, 1));
}

TEST(ShapeTest, DispatchesToEachKind) {
  // One hand point per kind: (2, 0, 0) is 1.5 from a sphere of radius 0.5, 1 from the unit cube's
  // +x face, 1.5 from a capsule (r 0.5, l 1) side, 1.5 from a cylinder (r 0.5, l 1) side; 0.25
  // under the half-space's plane at (0, 0, −0.25).
  EXPECT_DOUBLE_EQ(Shape::Sphere(0.5)->SignedDistance(Vec(2, 0, 0)).distance, 1.5);
  EXPECT_DOUBLE_EQ(Shape::Box(Vec(1, 1, 1))->SignedDistance(Vec(2, 0, 0)).distance, 1.0);
  EXPECT_DOUBLE_EQ(Shape::Capsule(0.5, 1)->SignedDistance(Vec(2, 0, 0)).distance, 1.5);
  EXPECT_DOUBLE_EQ(Shape::Cylinder(0.5, 1)->SignedDistance(Vec(2, 0, 0)).distance, 1.5);
  EXPECT_DOUBLE_EQ(Shape::HalfSpace().SignedDistance(Vec(3, 4, -0.25)).distance, -0.25);
  EXPECT_EQ(Shape::Sphere(0.5)->kind(), ShapeKind::kSphere);
  EXPECT_EQ(ShapeKindName(ShapeKind::kHalfSpace), "half_space");
  EXPECT_EQ(ShapeKindName(ShapeKind::kMesh), "mesh");

  // Mesh: the unit cube mesh; (2, 0, 0) is 1 away; with a reach of 0.5 nothing -> +inf.
  const Shape mesh = Shape::FromMesh(taxel::testing::MakeSdf(SubdividedBox(Vec(1, 1, 1), 2)));
  EXPECT_EQ(mesh.kind(), ShapeKind::kMesh);
  EXPECT_NEAR(mesh.SignedDistance(Vec(2, 0, 0)).distance, 1.0, 1e-15);
  EXPECT_EQ(mesh.SignedDistance(Vec(2, 0, 0), 0.5).distance, kInf);
  EXPECT_NEAR(mesh.SignedDistance(Vec(0.5, 0, 0), 0.01).distance, -0.5, 1e-15);

  // Heightfield: flat at 0 over [−0.5, 0.5]²; 0.3 above -> 0.3; reach 0.1 -> +inf.
  auto hf = Heightfield::Create(2, 2, 1, 1, {0, 0, 0, 0});
  ASSERT_TRUE(hf.ok());
  const Shape terrain = Shape::FromHeightfield(*hf);
  EXPECT_EQ(terrain.kind(), ShapeKind::kHeightfield);
  EXPECT_NEAR(terrain.SignedDistance(Vec(0.1, 0.1, 0.3)).distance, 0.3, 1e-15);
  EXPECT_EQ(terrain.SignedDistance(Vec(0.1, 0.1, 0.3), 0.1).distance, kInf);

  // Implicit: the ellipsoid SE(1; 1, 0.5, 0.25); (2, 0, 0) is 1 from its +x vertex (to ~1e-12);
  // reach 0.5: |q| − R_out = 1 > 0.5 -> +inf without solving. Bounds: the semi-axes.
  const Shape ellipsoid =
      Shape::FromImplicit(std::make_shared<const ImplicitShape>(*ImplicitShape::Superellipsoid(1, Vec(1, 0.5, 0.25))));
  EXPECT_EQ(ellipsoid.kind(), ShapeKind::kImplicit);
  EXPECT_EQ(ShapeKindName(ShapeKind::kImplicit), "implicit");
  EXPECT_NEAR(ellipsoid.SignedDistance(Vec(2, 0, 0)).distance, 1.0, 1e-11);
  EXPECT_EQ(ellipsoid.SignedDistance(Vec(2, 0, 0), 0.5).distance, kInf);
  EXPECT_NEAR(ellipsoid.SignedDistance(Vec(0, 0, 0.05), 0.0).distance, -0.2, 1e-11);
  EXPECT_EQ(ellipsoid.local_bounds().hi, Vec(1, 0.5, 0.25));
}

}  // namespace
}  // namespace taxel::geometry
