// Tests for core/geometry/heightfield.h: validation, HeightAt on both triangles of a cell by hand,
// flat and sloped fields against plane distances, the side walls, bounded queries, and random
// terrain against a brute-force reference built from explicit top and wall triangles.
#include "core/geometry/heightfield.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/geometry/closest_point_triangle.h"
#include "core/geometry/primitive_signed_distance.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::taxel::testing::UniformPoints;
using ::testing::HasSubstr;
using Vec = Eigen::Vector3d;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::shared_ptr<const Heightfield> Make(int rows, int cols, double dx, double dy, std::vector<double> h) {
  auto hf = Heightfield::Create(rows, cols, dx, dy, std::move(h));
  EXPECT_TRUE(hf.ok()) << hf.status();
  return *hf;
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

void ExpectInvalid(const absl::Status& s, const std::string& a, const std::string& b = "") {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(a));
  if (!b.empty()) {
    EXPECT_THAT(std::string(s.message()), HasSubstr(b));
  }
}

TEST(HeightfieldCreateTest, ValidationErrors) {
  const std::vector<double> six(6, 0.0);
  ExpectInvalid(Heightfield::Create(1, 6, 0.1, 0.1, six).status(), "heightfield", "at least 2x2");
  ExpectInvalid(Heightfield::Create(6, 1, 0.1, 0.1, six).status(), "heightfield", "at least 2x2");
  ExpectInvalid(Heightfield::Create(0, 0, 0.1, 0.1, {}, "terrain").status(), "terrain", "at least 2x2");
  for (auto [dx, dy] :
       {std::pair{0.0, 0.1}, std::pair{0.1, -1.0}, std::pair{std::nan(""), 0.1}, std::pair{0.1, kInf}}) {
    ExpectInvalid(Heightfield::Create(2, 3, dx, dy, six).status(), "heightfield", "spacing");
  }
  ExpectInvalid(Heightfield::Create(2, 3, 0.1, 0.1, std::vector<double>(5, 0.0)).status(), "heightfield.heights",
                "expected 2*3=6 values, got 5");
  std::vector<double> bad = six;
  bad[4] = std::nan("");
  ExpectInvalid(Heightfield::Create(2, 3, 0.1, 0.1, bad).status(), "heightfield.heights[4]", "finite");
  bad[4] = -kInf;
  ExpectInvalid(Heightfield::Create(2, 3, 0.1, 0.1, bad, "scene.terrain").status(), "scene.terrain.heights[4]");
}

// ---------------------------------------------------------------------------------------------
// One cell by hand
//
//   rows = cols = 2, dx = dy = 2: samples at x, y ∈ {−1, 1}.
//
//     y = 1   h(1,0) = 2 ------- h(1,1) = 4        diagonal from (i,j) = (0,0) to (1,1);
//               |   B        /    |                A = [(0,0), (0,1), (1,1)]  (below the diagonal)
//               |        /    A   |                B = [(0,0), (1,1), (1,0)]  (above it)
//     y = −1  h(0,0) = 0 ------- h(0,1) = 1
//             x = −1             x = 1
//
//   Plane A through (−1,−1,0), (1,−1,1), (1,1,4):   z = 0.5x + 1.5y + 2.
//   Plane B through (−1,−1,0), (1,1,4), (−1,1,2):   z = x + y + 2.
// ---------------------------------------------------------------------------------------------

std::shared_ptr<const Heightfield> OneCell() { return Make(2, 2, 2.0, 2.0, {0, 1, 2, 4}); }

TEST(HeightfieldHeightAtTest, BothTrianglesOfACellByHand) {
  const auto hf = OneCell();
  EXPECT_NEAR(hf->HeightAt(0.5, -0.5), 0.25 - 0.75 + 2, 1e-15);  // A: 1.5
  EXPECT_NEAR(hf->HeightAt(-0.5, 0.5), -0.5 + 0.5 + 2, 1e-15);   // B: 2.0
  EXPECT_NEAR(hf->HeightAt(0.9, 0.2), 0.45 + 0.3 + 2, 1e-15);    // A
  EXPECT_NEAR(hf->HeightAt(-0.8, -0.1), -0.8 - 0.1 + 2, 1e-15);  // B
  EXPECT_NEAR(hf->HeightAt(0, 0), 2, 1e-15);                     // on the diagonal: both agree
  // Samples.
  EXPECT_EQ(hf->HeightAt(-1, -1), 0);
  EXPECT_EQ(hf->HeightAt(1, -1), 1);
  EXPECT_EQ(hf->HeightAt(-1, 1), 2);
  EXPECT_EQ(hf->HeightAt(1, 1), 4);
  // Outside the footprint: clamped to it.
  EXPECT_EQ(hf->HeightAt(5, -5), 1);
  EXPECT_EQ(hf->HeightAt(-3, 3), 2);
  EXPECT_NEAR(hf->HeightAt(7, 0), 0.5 + 0 + 2, 1e-15);  // clamped to (1, 0), on A's edge
}

TEST(HeightfieldQueryTest, TrianglesOfACellByHand) {
  const auto hf = OneCell();
  // Above A at (0.5, −0.5): 0.1 over the surface. Unit normal of A: (−0.5, −1.5, 1)/sqrt(3.5); the
  // distance is 0.1/sqrt(3.5) and the foot (0.514, −0.457) stays inside A.
  auto r = hf->Query(Vec(0.5, -0.5, 1.6));
  EXPECT_NEAR(r.distance, 0.1 / std::sqrt(3.5), 1e-15);
  EXPECT_EQ(r.triangle, 0);
  EXPECT_EQ(r.feature, TriangleFeature::kFace);
  EXPECT_LE((r.normal - Vec(-0.5, -1.5, 1) / std::sqrt(3.5)).norm(), 1e-14);
  // Above B at (−0.5, 0.5): normal (−1, −1, 1)/sqrt 3, distance 0.1/sqrt 3, foot (−0.467, 0.533).
  r = hf->Query(Vec(-0.5, 0.5, 2.1));
  EXPECT_NEAR(r.distance, 0.1 / std::sqrt(3.0), 1e-15);
  EXPECT_EQ(r.triangle, 1);
  EXPECT_LE((r.normal - Vec(-1, -1, 1) / std::sqrt(3.0)).norm(), 1e-14);
  // Below B, 0.1 under the surface: the walls are ≥ 0.5 away, so −0.1/sqrt 3.
  r = hf->Query(Vec(-0.5, 0.5, 1.9));
  EXPECT_NEAR(r.distance, -0.1 / std::sqrt(3.0), 1e-15);
  EXPECT_LE((r.normal - Vec(-1, -1, 1) / std::sqrt(3.0)).norm(), 1e-14);
  // On the surface.
  r = hf->Query(Vec(0.5, -0.5, 1.5));
  EXPECT_NEAR(r.distance, 0, 1e-15);
}

TEST(HeightfieldQueryTest, TriangleIndexOfCellIJ) {
  // rows 3, cols 4: cell (i, j) = (1, 2) holds triangles 2·(1·3 + 2) + {0, 1} = {10, 11}. Points
  // 1e-4 above the surface at a position inside each half (fu > fv: half 0; fu < fv: half 1).
  const auto hf = Make(3, 4, 0.5, 0.4, {0.0, 0.1, -0.2, 0.05, 0.3, -0.1, 0.2, 0.0, 0.1, 0.15, -0.05, 0.2});
  // Sample x_j = (j − 1.5)·0.5, y_i = (i − 1)·0.4: cell (1, 2) spans x ∈ [0.25, 0.75], y ∈ [0, 0.4].
  const double x_half0 = 0.25 + 0.8 * 0.5, y_half0 = 0.0 + 0.2 * 0.4;  // fu = 0.8, fv = 0.2
  const double x_half1 = 0.25 + 0.2 * 0.5, y_half1 = 0.0 + 0.8 * 0.4;  // fu = 0.2, fv = 0.8
  auto r = hf->Query(Vec(x_half0, y_half0, hf->HeightAt(x_half0, y_half0) + 1e-4));
  EXPECT_EQ(r.triangle, 10);
  r = hf->Query(Vec(x_half1, y_half1, hf->HeightAt(x_half1, y_half1) + 1e-4));
  EXPECT_EQ(r.triangle, 11);
  // Heights at the samples of that cell: h(1,2) = 0.2, h(1,3) = 0.0, h(2,2) = −0.05, h(2,3) = 0.2.
  EXPECT_EQ(hf->height(1, 2), 0.2);
  EXPECT_NEAR(hf->HeightAt(0.25, 0.0), 0.2, 1e-15);
  EXPECT_NEAR(hf->HeightAt(0.75, 0.0), 0.0, 1e-15);
  EXPECT_NEAR(hf->HeightAt(0.25, 0.4), -0.05, 1e-15);
  EXPECT_NEAR(hf->HeightAt(0.75, 0.4), 0.2, 1e-15);
}

// ---------------------------------------------------------------------------------------------
// Flat and sloped fields against plane distances
//
//   Flat field: rows 5 (y), cols 7 (x), dx 0.1, dy 0.2, every height 0.5.
//   Footprint x ∈ [−0.3, 0.3], y ∈ [−0.4, 0.4]; top z = 0.5; the solid extends down to −∞.
//
//          z
//     0.5  +=======================+     <- top surface
//          |        solid          |     <- side walls at x = ±0.3 (and y = ±0.4)
//          |                       |
//        −0.3                     0.3  x
// ---------------------------------------------------------------------------------------------

std::shared_ptr<const Heightfield> Flat() { return Make(5, 7, 0.1, 0.2, std::vector<double>(35, 0.5)); }

TEST(HeightfieldQueryTest, FlatFieldEqualsHalfSpaceAboveAndBelow) {
  const auto hf = Flat();
  // x_0 = −(7 − 1)/2·0.1, y_0 = −(5 − 1)/2·0.2 (documented sample positions).
  EXPECT_EQ(hf->bounds().lo.z(), -kInf);
  EXPECT_LE((hf->bounds().lo.head<2>() - Eigen::Vector2d(-0.3, -0.4)).norm(), 1e-15);
  EXPECT_LE((hf->bounds().hi - Vec(0.3, 0.4, 0.5)).norm(), 1e-15);
  // Points over the interior of the footprint (≥ 0.1 from the walls), from 0.09 below the top
  // (the walls are then farther than the top) to 1 above: the half-space z ≤ 0.5.
  for (const Vec& p : UniformPoints(2000, Vec(-0.2, -0.3, 0.41), Vec(0.2, 0.3, 1.5), 3)) {
    const SignedDistanceResult r = hf->Query(p);
    const SignedDistanceResult h = HalfSpaceSignedDistance(p - Vec(0, 0, 0.5));
    ASSERT_NEAR(r.distance, h.distance, 1e-15) << p.transpose();
    // normal = (Q − C)/sd: rounding of C (~1e-17) over |sd| ≥ 1e-4.
    if (std::abs(h.distance) > 1e-4) {
      EXPECT_LE((r.normal - Vec(0, 0, 1)).norm(), 1e-12);
    }
    EXPECT_LE((r.closest - (h.closest + Vec(0, 0, 0.5))).norm(), 1e-15);
  }
}

TEST(HeightfieldQueryTest, SlopedPlaneAwayFromTheBorders) {
  // Heights z = a·x + c with a = 0.5, c = 0.2 (linear in x, so the triangulation is exact);
  // rows 9, cols 11, dx = dy = 0.1: x ∈ [−0.5, 0.5], y ∈ [−0.4, 0.4].
  // Plane distance (z − a x − c)/sqrt(1 + a²), unit normal (−a, 0, 1)/sqrt(1 + a²).
  // Sampled points: x ∈ [−0.3, 0.3], y ∈ [−0.2, 0.2], within ±0.15 of the plane vertically: the foot
  // moves at most 0.15·a/sqrt(1+a²) = 0.067 sideways (stays inside), and the walls are ≥ 0.2 away
  // while |sd| ≤ 0.15, so the plane is the nearest part of the boundary.
  const double a = 0.5, c = 0.2;
  std::vector<double> h(9 * 11);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 11; ++j) h[i * 11 + j] = a * (j - 5) * 0.1 + c;
  const auto hf = Make(9, 11, 0.1, 0.1, h);
  const double s = std::sqrt(1 + a * a);
  const Vec n(-a / s, 0, 1 / s);
  int inside = 0;
  for (const Vec& q : UniformPoints(3000, Vec(-0.3, -0.2, -0.15), Vec(0.3, 0.2, 0.15), 4)) {
    const Vec p(q.x(), q.y(), a * q.x() + c + q.z());
    const double want = q.z() / s;
    const SignedDistanceResult r = hf->Query(p);
    ASSERT_NEAR(r.distance, want, 1e-14) << p.transpose();
    inside += want < 0;
    if (std::abs(want) > 1e-9) {
      EXPECT_LE((r.normal - n).norm(), 1e-12) << p.transpose();
    }
    EXPECT_NEAR(r.closest.z(), a * r.closest.x() + c, 1e-14);  // closest point on the plane
    EXPECT_NEAR(hf->HeightAt(p.x(), p.y()), a * p.x() + c, 1e-14);
  }
  EXPECT_GT(inside, 1000);
  EXPECT_LT(inside, 2000);
  // Exactly on the surface (z from HeightAt): distance 0 up to rounding, and the normal is the
  // closest feature's, i.e. the plane's (signed_distance_result.h).
  for (const Vec& q : UniformPoints(500, Vec(-0.45, -0.35, 0), Vec(0.45, 0.35, 0), 8)) {
    const Vec p(q.x(), q.y(), hf->HeightAt(q.x(), q.y()));
    const SignedDistanceResult r = hf->Query(p);
    ASSERT_LE(std::abs(r.distance), 1e-15) << p.transpose();
    EXPECT_LE((r.normal - n).norm(), 1e-12) << p.transpose();
    EXPECT_GE(r.triangle, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Side walls (flat field above: x ∈ [−0.3, 0.3], y ∈ [−0.4, 0.4], top 0.5)
// ---------------------------------------------------------------------------------------------

TEST(HeightfieldQueryTest, PointsBesideTheFootprintGetTheSideWallDistance) {
  const auto hf = Flat();
  // Beside −x, below the top: the wall x = −0.3 is 0.2 away.
  auto r = hf->Query(Vec(-0.5, 0.1, 0.2));
  EXPECT_NEAR(r.distance, 0.2, 1e-15);
  EXPECT_LE((r.closest - Vec(-0.3, 0.1, 0.2)).norm(), 1e-15);
  EXPECT_LE((r.normal - Vec(-1, 0, 0)).norm(), 1e-15);
  // Far below, beside +y: still the wall (the solid extends to −∞).
  r = hf->Query(Vec(0.1, 0.7, -100));
  EXPECT_NEAR(r.distance, 0.3, 1e-14);
  EXPECT_LE((r.normal - Vec(0, 1, 0)).norm(), 1e-15);
  // Beside and above the top: the top edge (−0.3, 0.1, 0.5): offset (−0.3, 0, 0.4) -> 0.5.
  r = hf->Query(Vec(-0.6, 0.1, 0.9));
  EXPECT_NEAR(r.distance, 0.5, 1e-15);
  EXPECT_LE((r.closest - Vec(-0.3, 0.1, 0.5)).norm(), 1e-15);
  EXPECT_LE((r.normal - Vec(-0.6, 0, 0.8)).norm(), 1e-14);
  // Diagonally off a corner, below the top: the vertical corner line (0.3, −0.4, z): offset
  // (0.3, −0.4, 0) -> 0.5.
  r = hf->Query(Vec(0.6, -0.8, 0));
  EXPECT_NEAR(r.distance, 0.5, 1e-15);
  EXPECT_LE((r.closest - Vec(0.3, -0.4, 0)).norm(), 1e-15);
  EXPECT_LE((r.normal - Vec(0.6, -0.8, 0)).norm(), 1e-14);
  // Off a corner and above: the corner vertex (0.3, 0.4, 0.5): offset (0.2, 0.2, 0.1) -> 0.3.
  r = hf->Query(Vec(0.5, 0.6, 0.6));
  EXPECT_NEAR(r.distance, 0.3, 1e-15);
  // Inside, nearer a wall than the top: (−0.29, 0, −5) is 0.01 from x = −0.3.
  r = hf->Query(Vec(-0.29, 0, -5));
  EXPECT_NEAR(r.distance, -0.01, 1e-15);
  EXPECT_LE((r.normal - Vec(-1, 0, 0)).norm(), 1e-15);
  EXPECT_LE((r.closest - Vec(-0.3, 0, -5)).norm(), 1e-15);
  // Inside near +y: wall 0.01 away, top 0.05 away.
  r = hf->Query(Vec(0, 0.39, 0.45));
  EXPECT_NEAR(r.distance, -0.01, 1e-15);
  EXPECT_LE((r.normal - Vec(0, 1, 0)).norm(), 1e-15);
}

TEST(HeightfieldQueryTest, BoundedQuery) {
  const auto hf = Flat();
  // 1.0 above the top with reach 0.5: nothing within reach -> +inf.
  EXPECT_EQ(hf->Query(Vec(0, 0, 1.5), 0.5).distance, kInf);
  EXPECT_FALSE(hf->Query(Vec(0, 0, 1.5), 0.5).found());
  EXPECT_NEAR(hf->Query(Vec(0, 0, 1.5), 1.5).distance, 1.0, 1e-15);
  // Beside, 0.2 from the wall, reach 0.1 -> +inf; reach 0.2 (inclusive) -> 0.2.
  EXPECT_EQ(hf->Query(Vec(-0.5, 0.1, 0.2), 0.1).distance, kInf);
  EXPECT_NEAR(hf->Query(Vec(-0.5, 0.1, 0.2), 0.25).distance, 0.2, 1e-15);
  // Deep inside with a tiny reach: exact depth, the nearest wall (x = ±0.3) at 0.3.
  const SignedDistanceResult r = hf->Query(Vec(0, 0, -10), 0.01);
  EXPECT_NEAR(r.distance, -0.3, 1e-15);
  EXPECT_EQ(std::abs(r.normal.x()), 1.0);
}

TEST(HeightfieldQueryTest, VeryDistantPoints) {
  const auto hf = Flat();
  // Straight above, 1e10 m: distance 1e10 − 0.5 to the top (relative rounding only).
  auto r = hf->Query(Vec(0.01, 0.02, 1e10));
  EXPECT_NEAR(r.distance, 1e10 - 0.5, 1e-5);
  EXPECT_LE((r.normal - Vec(0, 0, 1)).norm(), 1e-9);  // closest point's x, y carry 1e10·ε rounding
  // Beside, far out along +x at the height of the solid: the wall, 1e10 − 0.3 away.
  r = hf->Query(Vec(1e10, 0, 0));
  EXPECT_NEAR(r.distance, 1e10 - 0.3, 1e-5);
  // Far below: inside, the nearest wall 0.3 away.
  r = hf->Query(Vec(0, 0, -1e10));
  EXPECT_NEAR(r.distance, -0.3, 1e-9);
  // Bounded: nothing within reach.
  EXPECT_EQ(hf->Query(Vec(0.01, 0.02, 1e10), 1.0).distance, kInf);
  EXPECT_EQ(hf->Query(Vec(-1e12, 3e11, 0.0), 1.0).distance, kInf);
}

// ---------------------------------------------------------------------------------------------
// Random terrain against brute force
// ---------------------------------------------------------------------------------------------

// The boundary of the solid as explicit triangles: the two top triangles of every cell (as
// documented) and each side wall as trapezoids from the edge profile down to z = −50.
std::vector<std::array<Vec, 3>> BoundaryTriangles(const Heightfield& hf) {
  const int rows = hf.rows(), cols = hf.cols();
  const double x0 = -0.5 * (cols - 1) * hf.dx(), y0 = -0.5 * (rows - 1) * hf.dy();
  auto sample = [&](int i, int j) { return Vec(x0 + j * hf.dx(), y0 + i * hf.dy(), hf.height(i, j)); };
  std::vector<std::array<Vec, 3>> tris;
  for (int i = 0; i + 1 < rows; ++i) {
    for (int j = 0; j + 1 < cols; ++j) {
      tris.push_back({sample(i, j), sample(i, j + 1), sample(i + 1, j + 1)});
      tris.push_back({sample(i, j), sample(i + 1, j + 1), sample(i + 1, j)});
    }
  }
  auto wall = [&](const Vec& a, const Vec& b) {
    const Vec a_low(a.x(), a.y(), -50), b_low(b.x(), b.y(), -50);
    tris.push_back({a, b, b_low});
    tris.push_back({a, b_low, a_low});
  };
  for (int i = 0; i + 1 < rows; ++i) {
    wall(sample(i, 0), sample(i + 1, 0));
    wall(sample(i, cols - 1), sample(i + 1, cols - 1));
  }
  for (int j = 0; j + 1 < cols; ++j) {
    wall(sample(0, j), sample(0, j + 1));
    wall(sample(rows - 1, j), sample(rows - 1, j + 1));
  }
  return tris;
}

// Surface height by barycentric interpolation on the documented triangle of the cell (written
// independently of HeightAt: 2D barycentric weights from signed areas).
double ReferenceHeight(const Heightfield& hf, double x, double y) {
  const int rows = hf.rows(), cols = hf.cols();
  const double x0 = -0.5 * (cols - 1) * hf.dx(), y0 = -0.5 * (rows - 1) * hf.dy();
  const int j = std::min(cols - 2, static_cast<int>((x - x0) / hf.dx()));
  const int i = std::min(rows - 2, static_cast<int>((y - y0) / hf.dy()));
  auto sample = [&](int ii, int jj) { return Vec(x0 + jj * hf.dx(), y0 + ii * hf.dy(), hf.height(ii, jj)); };
  const double fu = (x - x0) / hf.dx() - j, fv = (y - y0) / hf.dy() - i;
  const Vec a = sample(i, j), b = fu >= fv ? sample(i, j + 1) : sample(i + 1, j + 1),
            c = fu >= fv ? sample(i + 1, j + 1) : sample(i + 1, j);
  auto area = [](const Vec& p, const Vec& q, const Vec& r) {
    return (q.x() - p.x()) * (r.y() - p.y()) - (r.x() - p.x()) * (q.y() - p.y());
  };
  const Vec p(x, y, 0);
  const double total = area(a, b, c);
  return (area(p, b, c) * a.z() + area(a, p, c) * b.z() + area(a, b, p) * c.z()) / total;
}

TEST(HeightfieldQueryTest, RandomTerrainAgainstBruteForce) {
  const int rows = 6, cols = 5;
  const double dx = 0.2, dy = 0.15;
  std::vector<double> h;
  for (const Vec& v : UniformPoints(rows * cols, Vec::Constant(-0.1), Vec::Constant(0.1), 5)) h.push_back(v.x());
  const auto hf = Make(rows, cols, dx, dy, h);
  const auto tris = BoundaryTriangles(*hf);
  const double x1 = 0.5 * (cols - 1) * dx, y1 = 0.5 * (rows - 1) * dy;
  int inside = 0, beside = 0;
  for (const Vec& p : UniformPoints(3000, Vec(-x1 - 0.3, -y1 - 0.3, -0.5), Vec(x1 + 0.3, y1 + 0.3, 0.5), 6)) {
    double best = kInf;
    for (const auto& t : tris) {
      TriangleFeature f;
      best = std::min(best, (p - ClosestPointOnTriangle(p, t[0], t[1], t[2], &f)).norm());
    }
    if (best < 1e-9) continue;
    const bool in_footprint = std::abs(p.x()) <= x1 && std::abs(p.y()) <= y1;
    const bool is_inside = in_footprint && p.z() < ReferenceHeight(*hf, p.x(), p.y());
    inside += is_inside;
    beside += !in_footprint;
    if (in_footprint) {
      ASSERT_NEAR(hf->HeightAt(p.x(), p.y()), ReferenceHeight(*hf, p.x(), p.y()), 1e-15);
    }
    const double want = is_inside ? -best : best;
    const SignedDistanceResult r = hf->Query(p);
    ASSERT_NEAR(r.distance, want, 1e-14) << p.transpose();
    EXPECT_NEAR((p - r.closest).norm(), best, 1e-14);
    EXPECT_NEAR(r.normal.norm(), 1, 1e-12);
    EXPECT_LE((r.closest + r.distance * r.normal - p).norm(), 1e-13);
    // Bounded: exact inside; outside exact within reach, +inf (or exact) beyond.
    for (double reach : {0.02, 0.1}) {
      const SignedDistanceResult b = hf->Query(p, reach);
      if (is_inside || best <= reach) {
        ASSERT_NEAR(b.distance, want, 1e-14) << p.transpose() << " reach " << reach;
      } else {
        ASSERT_TRUE(!b.found() || std::abs(b.distance - want) < 1e-14) << p.transpose();
      }
    }
  }
  EXPECT_GT(inside, 300);
  EXPECT_GT(beside, 300);
}

}  // namespace
}  // namespace taxel::geometry
