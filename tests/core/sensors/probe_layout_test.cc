#include "core/sensors/probe_layout.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taxel::sensors {
namespace {

using ::testing::HasSubstr;

TEST(GridPointsOnPlaneTest, NormalZSpansXThenY) {
  // lo = (-1, -2, 0.5), hi = (1, 2, 0.5), normal +z, nx = 3, ny = 2:
  //   row 0 (y = -2): x = -1, 0, 1;  row 1 (y = 2): x = -1, 0, 1; z = 0.5 throughout.
  auto grid = GridPointsOnPlane({-1, -2, 0.5}, {1, 2, 0.5}, {0, 0, 1}, 3, 2);
  ASSERT_TRUE(grid.ok());
  ASSERT_EQ(grid->size(), 6u);
  const double expected[6][3] = {{-1, -2, 0.5}, {0, -2, 0.5}, {1, -2, 0.5}, {-1, 2, 0.5}, {0, 2, 0.5}, {1, 2, 0.5}};
  for (int k = 0; k < 6; ++k) {
    for (int a = 0; a < 3; ++a) EXPECT_NEAR((*grid)[k][a], expected[k][a], 1e-15) << k << "," << a;
  }
}

TEST(GridPointsOnPlaneTest, NormalSignDoesNotChangeTheGrid) {
  auto up = GridPointsOnPlane({-1, -1, 0}, {1, 1, 0}, {0, 0, 1}, 4, 5);
  auto down = GridPointsOnPlane({-1, -1, 0}, {1, 1, 0}, {0, 0, -1}, 4, 5);
  ASSERT_TRUE(up.ok() && down.ok());
  for (size_t k = 0; k < up->size(); ++k) EXPECT_TRUE((*up)[k].isApprox((*down)[k])) << k;
}

TEST(GridPointsOnPlaneTest, NormalMinusYUsesXThenZ) {
  // The Genesis example: plane y = 0 spanned by x (columns) and z (rows).
  auto grid = GridPointsOnPlane({-0.006, 0.0, 0.04}, {0.008, 0.0, 0.05}, {0, -1, 0}, 8, 8);
  ASSERT_TRUE(grid.ok());
  EXPECT_TRUE((*grid)[0].isApprox(Eigen::Vector3d(-0.006, 0, 0.04)));
  EXPECT_TRUE((*grid)[7].isApprox(Eigen::Vector3d(0.008, 0, 0.04)));
  EXPECT_TRUE((*grid)[63].isApprox(Eigen::Vector3d(0.008, 0, 0.05)));
  EXPECT_NEAR((*grid)[9].x(), -0.006 + 0.014 / 7, 1e-15);
  EXPECT_NEAR((*grid)[9].z(), 0.04 + 0.01 / 7, 1e-15);
}

TEST(GridPointsOnPlaneTest, TiltedNormalGivesPointsOnThePlane) {
  const Eigen::Vector3d n = Eigen::Vector3d(1, 1, 1).normalized();
  auto grid = GridPointsOnPlane({-1, 0, 1}, {1, 0, -1}, n, 5, 5);  // both corners have n·p = 0
  ASSERT_TRUE(grid.ok());
  for (const auto& p : *grid) EXPECT_NEAR(p.dot(n), 0.0, 1e-14);
}

TEST(GridPointsOnPlaneTest, RejectsBadInput) {
  EXPECT_THAT(GridPointsOnPlane({0, 0, 0}, {1, 1, 0}, {0, 0, 0}, 2, 2).status().message(), HasSubstr("normal"));
  EXPECT_THAT(GridPointsOnPlane({0, 0, 0}, {1, 1, 0}, {0, 0, 1}, 0, 2).status().message(), HasSubstr("nx"));
}

TEST(ProbeLayoutTest, SharedRadiusAndGrid) {
  auto layout = ProbeLayout::Create({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, {0.5}, {}, 2, 2);
  ASSERT_TRUE(layout.ok());
  EXPECT_TRUE(layout->is_grid());
  EXPECT_EQ(layout->size(), 4);
  EXPECT_EQ(layout->radius(3), 0.5);
  EXPECT_EQ(layout->num_active(), 4);
  // Bounds: centres [0,1]^2 x {0} inflated by 0.5.
  EXPECT_TRUE(layout->local_bounds().lo.isApprox(Eigen::Vector3d(-0.5, -0.5, -0.5)));
  EXPECT_TRUE(layout->local_bounds().hi.isApprox(Eigen::Vector3d(1.5, 1.5, 0.5)));
  EXPECT_EQ(layout->normal(2), Eigen::Vector3d::UnitZ());
}

TEST(ProbeLayoutTest, FillersAreNotActive) {
  auto layout = ProbeLayout::Create({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {0.1, 0.0, 0.2}, {{0, 0, 2}}, 0, 0);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->num_active(), 2);
  EXPECT_EQ(layout->max_radius(), 0.2);
  EXPECT_EQ(layout->normal(1), Eigen::Vector3d(0, 0, 1));  // normalised
}

TEST(ProbeLayoutTest, Errors) {
  auto s = ProbeLayout::Create({{0, 0, 0}, {1, 0, 0}}, {0.1, -0.1}, {}, 0, 0, "sensors[2]").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sensors[2].probe_radius[1]"));
  s = ProbeLayout::Create({{0, 0, NAN}}, {0.1}, {}, 0, 0).status();
  EXPECT_THAT(s.message(), HasSubstr("probe_local_pos[0]"));
  s = ProbeLayout::Create({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {0.1, 0.1}, {}, 0, 0).status();
  EXPECT_THAT(s.message(), HasSubstr("expected 1 or 3"));
  s = ProbeLayout::Create({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {0.1}, {}, 2, 2).status();
  EXPECT_THAT(s.message(), HasSubstr("grid 2x2"));
  s = ProbeLayout::Create({}, {0.1}, {}, 0, 0).status();
  EXPECT_THAT(s.message(), HasSubstr("at least one probe"));
  s = ProbeLayout::Create({{0, 0, 0}}, {0.1}, {{0, 0, 0}}, 0, 0).status();
  EXPECT_THAT(s.message(), HasSubstr("probe_local_normal[0]"));
}

}  // namespace
}  // namespace taxel::sensors
