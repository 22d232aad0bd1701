// Tests for core/geometry/mesh_sdf_grid.h: the narrow-band grid against closed-form signed
// distances (box, sphere, torus) and the exact mesh query, on points drawn independently of the
// build's own check points; the bound the grid reports is what is checked.
//
// Fixtures (mesh frame, metres):
//
//        box 80 × 60 × 40 mm               sphere r = 50 mm            torus R = 50, r = 20 mm
//     +-----------------+                    .-"""-.                    .-"""""""-.
//     |                 |  sharp edges      /       \   20,480         / .-"""-.  \   non-convex:
//     |                 |  and corners:     |   o   |   triangles     | (   o   ) |  a hole, saddle
//     |                 |  the grid's       \       /                  \ '-...-' /   regions
//     +-----------------+  worst case        '-...-'                    '-.....-'
//
// The band is 3 mm on each side of every surface.
#include "core/geometry/mesh_sdf_grid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/common/field_error.h"
#include "core/geometry/mesh_generators.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::taxel::testing::MakeSdf;
using ::taxel::testing::NearFeaturePoints;
using ::taxel::testing::UniformPoints;
using Vec = Eigen::Vector3d;

constexpr double kBand = 3e-3;
constexpr double kSqrt3 = 1.7320508075688772;
const Vec kBoxHalf(0.04, 0.03, 0.02);
constexpr double kSphereRadius = 0.05;
constexpr double kRing = 0.05, kTube = 0.02;

double BoxSd(const Vec& p) {
  const Vec q = p.cwiseAbs() - kBoxHalf;
  return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
}
double TorusSd(const Vec& p) { return std::hypot(std::hypot(p.x(), p.y()) - kRing, p.z()) - kTube; }
// The 100 × 40 torus mesh (vertices on the true torus) is within the sagittas of its tube and
// ring polygons of the true torus: r(1 − cos(π/40)) + (R + r)(1 − cos(π/100)) = 9.6e-5 m.
const double kTorusTessellation = kTube * (1 - std::cos(M_PI / 40)) + (kRing + kTube) * (1 - std::cos(M_PI / 100));

std::shared_ptr<const MeshSdfGrid> BuildGrid(std::shared_ptr<const MeshSignedDistance> sdf, double max_error,
                                             double band = kBand) {
  server::ThreadPool pool(2);
  auto grid = MeshSdfGrid::Build(std::move(sdf), SdfGridOptions{max_error, band}, pool, MemoryBudget::Unlimited());
  EXPECT_TRUE(grid.ok()) << grid.status();
  return grid.ok() ? *grid : nullptr;
}

// 10^5 test points of the band, drawn independently of the build's check points (another
// generator): half near vertices, edges and faces in random directions at log-uniform offsets
// up to the band, half uniform in the bounds grown by the band and kept when |sd| ≤ band.
std::vector<Vec> BandPoints(const MeshSignedDistance& sdf, uint64_t seed) {
  std::vector<Vec> points = NearFeaturePoints(sdf.mesh(), 50000, 1e-7, kBand, seed);
  points.erase(std::remove_if(points.begin(), points.end(),
                              [&](const Vec& p) { return std::abs(sdf.Query(p).distance) > kBand; }),
               points.end());
  const Vec lo = sdf.mesh().bounds().lo.array() - kBand, hi = sdf.mesh().bounds().hi.array() + kBand;
  for (uint64_t round = 0; points.size() < 100000; ++round) {
    for (const Vec& p : UniformPoints(100000, lo, hi, seed + 1000 + round)) {
      if (points.size() < 100000 && std::abs(sdf.Query(p).distance) <= kBand) points.push_back(p);
    }
  }
  return points;
}

// What the checks below found over a point set.
struct Comparison {
  double max_error = 0;
  int wrong_signs = 0;  // sign(grid) ≠ sign(reference) where |reference| > the reported bound
  int not_found = 0;    // the grid answered "farther than the band" for a band point
};

template <typename Reference>
Comparison Compare(const MeshSdfGrid& grid, const std::vector<Vec>& points, const Reference& reference) {
  Comparison c;
  const double bound = grid.stats().max_error;
  for (const Vec& p : points) {
    const SignedDistanceResult r = grid.Query(p);
    if (!r.found()) {
      ++c.not_found;
      continue;
    }
    const double ref = reference(p);
    c.max_error = std::max(c.max_error, std::abs(r.distance - ref));
    if (std::abs(ref) > bound && (r.distance < 0) != (ref < 0)) ++c.wrong_signs;
  }
  return c;
}

TEST(MeshSdfGridTest, BoxWithSharpCornersMatchesTheClosedFormWithinTheReportedBound) {
  // The box mesh is exact, so the mesh signed distance is the closed form BoxSd: the grid must be
  // within its reported bound of BoxSd itself on points it never saw.
  const auto sdf = MakeSdf(SubdividedBox(kBoxHalf, 4));
  const auto grid = BuildGrid(sdf, 2e-4);
  ASSERT_NE(grid, nullptr);
  const SdfGridStats& s = grid->stats();
  EXPECT_LE(s.max_error, 2e-4);
  EXPECT_LE(s.p99_error, s.max_error);
  EXPECT_GT(s.num_check_points, 10000);
  EXPECT_GT(s.cell_size, 0);
  EXPECT_EQ(s.bytes, grid->memory_bytes());
  const Comparison c = Compare(*grid, BandPoints(*sdf, 11), BoxSd);
  EXPECT_EQ(c.not_found, 0);
  EXPECT_EQ(c.wrong_signs, 0);
  EXPECT_LE(c.max_error, s.max_error * 1.05) << "cell " << s.cell_size;
}

TEST(MeshSdfGridTest, PlanarFaceRegionIsExactToFloatRounding) {
  // Away from edges a box face's distance is linear (z − 0.02 above the +z face), which trilinear
  // interpolation reproduces exactly: only the float rounding of the nodes remains (≤ 1e-9 m).
  const auto sdf = MakeSdf(SubdividedBox(kBoxHalf, 4));
  const auto grid = BuildGrid(sdf, 2e-4);
  ASSERT_NE(grid, nullptr);
  for (const Vec& p : UniformPoints(2000, Vec(-0.03, -0.02, 0.0185), Vec(0.03, 0.02, 0.0215), 5)) {
    const SignedDistanceResult r = grid->Query(p);
    ASSERT_TRUE(r.found());
    EXPECT_NEAR(r.distance, p.z() - 0.02, 1e-9);
    EXPECT_NEAR(r.normal.z(), 1.0, 1e-6);
  }
}

TEST(MeshSdfGridTest, SphereWithinTheBoundOfTheExactMeshAndOfTheTrueSphere) {
  const auto sdf = MakeSdf(GeodesicSphere(kSphereRadius, 32));
  const auto grid = BuildGrid(sdf, 1e-4);
  ASSERT_NE(grid, nullptr);
  const SdfGridStats& s = grid->stats();
  EXPECT_LE(s.max_error, 1e-4);
  const std::vector<Vec> points = BandPoints(*sdf, 21);
  const Comparison exact = Compare(*grid, points, [&](const Vec& p) { return sdf->Query(p).distance; });
  EXPECT_EQ(exact.not_found, 0);
  EXPECT_EQ(exact.wrong_signs, 0);
  EXPECT_LE(exact.max_error, s.max_error * 1.05);
  // Against the true sphere: add the tessellation error. Vertices lie on the sphere, so every
  // triangle lies between the sphere and the plane at R·cos θ, θ its largest vertex-to-centroid
  // angle: the mesh is within R(1 − cos θ) of the sphere (about 2e-5 m here).
  double theta = 0;
  const TriangleMesh& m = sdf->mesh();
  for (int t = 0; t < m.num_triangles(); ++t) {
    const Vec c = (m.vertex(m.triangle(t)[0]) + m.vertex(m.triangle(t)[1]) + m.vertex(m.triangle(t)[2])) / 3;
    for (int k = 0; k < 3; ++k) {
      const Vec& v = m.vertex(m.triangle(t)[k]);
      theta = std::max(theta, std::acos(std::min(1.0, c.normalized().dot(v.normalized()))));
    }
  }
  const double tessellation = kSphereRadius * (1 - std::cos(theta));
  EXPECT_LT(tessellation, 5e-5);
  const Comparison truth = Compare(*grid, points, [](const Vec& p) { return p.norm() - kSphereRadius; });
  EXPECT_LE(truth.max_error, s.max_error * 1.05 + tessellation);
  // Normals: the gradient of the interpolant against the radial direction, away from the band's
  // edge (|sd| < 2 mm).
  for (const Vec& p : points) {
    if (std::abs(p.norm() - kSphereRadius) > 2e-3) continue;
    EXPECT_GT(grid->Query(p).normal.dot(p.normalized()), 0.995) << p.transpose();
  }
}

TEST(MeshSdfGridTest, TorusIsNonConvexAndStaysWithinTheBound) {
  const auto sdf = MakeSdf(Torus(kRing, kTube, 100, 40));
  const auto grid = BuildGrid(sdf, 1e-4);
  ASSERT_NE(grid, nullptr);
  const SdfGridStats& s = grid->stats();
  EXPECT_LE(s.max_error, 1e-4);
  const std::vector<Vec> points = BandPoints(*sdf, 31);
  const Comparison c = Compare(*grid, points, [&](const Vec& p) { return sdf->Query(p).distance; });
  EXPECT_EQ(c.not_found, 0);
  EXPECT_EQ(c.wrong_signs, 0);
  EXPECT_LE(c.max_error, s.max_error * 1.05);
  const Comparison truth = Compare(*grid, points, TorusSd);
  EXPECT_LE(truth.max_error, s.max_error * 1.05 + kTorusTessellation);
}

// An L-shaped prism, 40 × 30 mm in x, y with 10 mm arms, 20 mm tall: a concave (reflex) edge
// along z at (10, 10) mm, where the outside distance has a crease.
//
//   y 30 +--+
//        |  |
//     10 |  +--------+
//        |           |
//      0 +-----------+ x
//        0  10       40 mm
MeshData LPrism() {
  const double s = 0.01, h = 0.02;
  const double xy[6][2] = {{0, 0}, {4, 0}, {4, 1}, {1, 1}, {1, 3}, {0, 3}};  // counter-clockwise
  MeshData m;
  for (double z : {0.0, h}) {
    for (const auto& p : xy) m.vertices.emplace_back(s * p[0], s * p[1], z);
  }
  const int cap[4][3] = {{0, 1, 2}, {0, 2, 3}, {0, 3, 4}, {0, 4, 5}};  // fan from p0, inside the L
  for (const auto& t : cap) {
    m.triangles.push_back({t[0] + 6, t[1] + 6, t[2] + 6});  // top, facing +z
    m.triangles.push_back({t[0], t[2], t[1]});              // bottom, facing −z
  }
  for (int i = 0; i < 6; ++i) {  // sides: outward is to the right of the counter-clockwise edge
    const int j = (i + 1) % 6;
    m.triangles.push_back({i, j, j + 6});
    m.triangles.push_back({i, j + 6, i + 6});
  }
  return m;
}

TEST(MeshSdfGridTest, NonConvexPrismWithAConcaveEdgeStaysWithinTheBound) {
  const auto sdf = MakeSdf(LPrism());
  ASSERT_TRUE(sdf->mesh().is_watertight());
  EXPECT_NEAR(sdf->mesh().volume(), 6e-4 * 0.02, 1e-12);  // the L's area 6 cm² × 2 cm
  const auto grid = BuildGrid(sdf, 2e-4);
  ASSERT_NE(grid, nullptr);
  const SdfGridStats& s = grid->stats();
  EXPECT_LE(s.max_error, 2e-4);
  const Comparison c = Compare(*grid, BandPoints(*sdf, 61), [&](const Vec& p) { return sdf->Query(p).distance; });
  EXPECT_EQ(c.not_found, 0);
  EXPECT_EQ(c.wrong_signs, 0);
  EXPECT_LE(c.max_error, s.max_error * 1.05) << "cell " << s.cell_size;
  // In the concave corner, outside: (11, 11, 10) mm is 1 mm from the face x = 10 mm (y in its
  // span [10, 30]) and 1 mm from the face y = 10 mm (x in [10, 40]), √2 mm from the reflex edge:
  // sd = 1 mm, on the crease where the two face distances meet.
  EXPECT_NEAR(grid->Query(Vec(0.011, 0.011, 0.01)).distance, 0.001, s.max_error * 1.05);
}

TEST(MeshSdfGridTest, BeyondTheBandOutsideIsFarAndInsideIsExact) {
  const auto sdf = MakeSdf(Torus(kRing, kTube, 100, 40));
  const auto grid = BuildGrid(sdf, 1e-4);
  ASSERT_NE(grid, nullptr);
  // A cell's corners are within √3·h of any of its points: beyond band + 2√3·h no corner is.
  const double beyond = kBand + 2 * kSqrt3 * grid->cell_size();
  int far_outside = 0, deep_inside = 0;
  for (const Vec& p : UniformPoints(20000, Vec(-0.09, -0.09, -0.04), Vec(0.09, 0.09, 0.04), 41)) {
    const double exact = TorusSd(p);
    const SignedDistanceResult r = grid->Query(p);
    if (exact > beyond + kTorusTessellation) {
      EXPECT_FALSE(r.found()) << p.transpose();
      ++far_outside;
    } else if (exact < -beyond - kTorusTessellation) {
      EXPECT_EQ(r.distance, sdf->Query(p).distance) << p.transpose();
      ++deep_inside;
    }
  }
  EXPECT_GT(far_outside, 1000);
  EXPECT_GT(deep_inside, 100);
  // Off the lattice altogether.
  EXPECT_FALSE(grid->Query(Vec(5, 0, 0)).found());
  EXPECT_FALSE(grid->Query(Vec(0, 0, -1e300)).found());
}

// Just beyond the band, a cell may mix finite corners with ±inf ones (corners lie within √3·h of
// any point of their cell, and a node is ±inf beyond band + √3·h):
//
//   sd:  −band−2√3h    −band          0          band     band+2√3h
//          |  inside shell  |   band    |   band    |  outside shell  |
//
// In the outside shell a point reads "far" or an interpolated distance; in the inside shell the
// exact distance or an interpolated one; never a non-finite distance from an infinite corner. An
// interpolated value is a convex combination of corner values, each within √3·h of the point's
// mesh distance (1-Lipschitz), so it is within √3·h (plus the tessellation) of the closed form.
TEST(MeshSdfGridTest, CellsWithAnInfiniteCornerReadFarOutsideAndExactInside) {
  const auto sdf = MakeSdf(Torus(kRing, kTube, 100, 40));
  const auto grid = BuildGrid(sdf, 1e-4);
  ASSERT_NE(grid, nullptr);
  const double h = grid->cell_size(), shell = 2 * kSqrt3 * h;
  const double interpolation_bound = kSqrt3 * h + kTorusTessellation + 1e-6;  // + float rounding
  int far = 0, interpolated_outside = 0, exact_inside = 0, interpolated_inside = 0;
  for (const Vec& p : UniformPoints(100000, Vec(-0.075, -0.075, -0.025), Vec(0.075, 0.075, 0.025), 43)) {
    const double closed_form = TorusSd(p);
    const SignedDistanceResult r = grid->Query(p);
    if (closed_form > kBand + kTorusTessellation && closed_form < kBand + shell) {
      if (!r.found()) {
        ++far;
        continue;
      }
      ASSERT_TRUE(std::isfinite(r.distance)) << p.transpose();
      EXPECT_NEAR(r.distance, closed_form, interpolation_bound) << p.transpose();
      ++interpolated_outside;
    } else if (closed_form < -kBand - kTorusTessellation && closed_form > -kBand - shell) {
      ASSERT_TRUE(std::isfinite(r.distance)) << p.transpose();
      if (r.distance == sdf->Query(p).distance) {
        ++exact_inside;
      } else {
        EXPECT_NEAR(r.distance, closed_form, interpolation_bound) << p.transpose();
        ++interpolated_inside;
      }
    }
  }
  // Both kinds of answer occur in each shell: the cells there do mix finite and infinite corners.
  EXPECT_GT(far, 100);
  EXPECT_GT(interpolated_outside, 100);
  EXPECT_GT(exact_inside, 100);
  EXPECT_GT(interpolated_inside, 100);
}

TEST(MeshSdfGridTest, SameGridOnAnyNumberOfThreads) {
  const auto sdf = MakeSdf(GeodesicSphere(kSphereRadius, 16));
  InlineExecutor inline_executor;
  server::ThreadPool pool(3);
  auto one = MeshSdfGrid::Build(sdf, SdfGridOptions{1e-4, kBand}, inline_executor, MemoryBudget::Unlimited());
  auto three = MeshSdfGrid::Build(sdf, SdfGridOptions{1e-4, kBand}, pool, MemoryBudget::Unlimited());
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ((*one)->cell_size(), (*three)->cell_size());
  EXPECT_EQ((*one)->stats().max_error, (*three)->stats().max_error);
  for (const Vec& p : BandPoints(*sdf, 51)) {
    const SignedDistanceResult a = (*one)->Query(p), b = (*three)->Query(p);
    ASSERT_EQ(a.distance, b.distance);
    ASSERT_EQ(a.normal, b.normal);
  }
}

TEST(MeshSdfGridTest, RefusesGridsThatDoNotFit) {
  const auto sdf = MakeSdf(GeodesicSphere(kSphereRadius, 8));
  InlineExecutor executor;
  // 1 µm on a 5 cm sphere needs tens of megabytes: a 1 MB budget refuses before allocating.
  FixedMemoryBudget small(1e6);
  auto bad = MeshSdfGrid::Build(sdf, SdfGridOptions{1e-6, kBand}, executor, small);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(FieldOf(bad.status()), "grid.max_error");
  EXPECT_NE(bad.status().message().find("signed-distance grid"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace taxel::geometry
