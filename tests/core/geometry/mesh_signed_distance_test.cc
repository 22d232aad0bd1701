// Tests for core/geometry/mesh_signed_distance.h: tessellated sphere, box and torus against the
// signed distance of the true shapes within tessellation bounds derived below, the sign at points
// very close to edges and vertices, winding numbers, open meshes, bounded queries and normals.
#include "core/geometry/mesh_signed_distance.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/geometry/closest_point_triangle.h"
#include "core/geometry/mesh_generators.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

// Tolerance of a distance d queried at p: 1e-14 relative, plus the rounding of the brute-force
// reference itself, whose closest point is formed in coordinates of magnitude |p| (one ulp of
// |p| is 1.4e-14 m at 100 m, as for the offset sphere) — four ulps of the largest coordinate.
double DistanceTolerance(const Eigen::Vector3d& p, double d) {
  return 1e-14 * (1 + d) + 4 * std::numeric_limits<double>::epsilon() * p.cwiseAbs().maxCoeff();
}

using ::taxel::testing::BruteForceSquaredDistance;
using ::taxel::testing::BruteForceWindingNumber;
using ::taxel::testing::MakeMesh;
using ::taxel::testing::MakeSdf;
using ::taxel::testing::NearFeaturePoints;
using ::taxel::testing::UniformPoints;
using Vec = Eigen::Vector3d;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;
// Accuracy of the hierarchical (first-order, β = 2) winding number; derivation at the test below.
constexpr double kWindingTolerance = 0.1;

// ---------------------------------------------------------------------------------------------
// The true shapes (closed forms) and the tessellation bounds.
// ---------------------------------------------------------------------------------------------

constexpr double kSphereRadius = 1.0;
constexpr int kSphereFrequency = 16;  // 5120 triangles
const Vec kBoxHalf(0.5, 0.75, 1.25);
constexpr double kRingRadius = 1.0, kTubeRadius = 0.3;
constexpr int kSegments = 64, kSides = 32;  // 4096 triangles

double SphereSd(const Vec& p) { return p.norm() - kSphereRadius; }
double BoxSd(const Vec& p) {
  const Vec q = p.cwiseAbs() - kBoxHalf;
  return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
}
double TorusSd(const Vec& p) { return std::hypot(std::hypot(p.x(), p.y()) - kRingRadius, p.z()) - kTubeRadius; }

// Smallest distance from `centre` to the plane of any triangle, from the vertices alone.
double MinPlaneDistance(const TriangleMesh& m, const Vec& centre = Vec::Zero()) {
  double h = kInf;
  for (const Triangle& t : m.triangles()) {
    const Vec &a = m.vertex(t[0]), &b = m.vertex(t[1]), &c = m.vertex(t[2]);
    h = std::min(h, std::abs((b - a).cross(c - a).normalized().dot(a - centre)));
  }
  return h;
}

// A small sphere (1 cm) far from the origin of its frame (a realistic user mesh exported in
// world coordinates): the query points are then ~100 m from the origin while the features are
// 1e-3 m apart, which exercises the precision of the BVH bounds.
const Vec kSmallCentre(100.0, -50.0, 30.0);
constexpr double kSmallRadius = 0.01;
MeshData OffsetSmallSphere() {
  MeshData d = GeodesicSphere(kSmallRadius, 12);
  for (Vec& v : d.vertices) v += kSmallCentre;
  return d;
}
double SmallSphereSd(const Vec& p) { return (p - kSmallCentre).norm() - kSmallRadius; }

// Sphere: every vertex is on the sphere of radius r, every face plane at least h_min from the
// centre, so B(h_min) ⊆ mesh ⊆ B(r) (the surface is made of chords of the ball, and no face comes
// nearer than h_min to the centre). Signed distance is monotone under inclusion (A ⊆ B implies
// sd_B ≤ sd_A), so   |p| − r  ≤  sd_mesh(p)  ≤  |p| − h_min:   the error is within the maximal
// sagitta r − h_min, and one-sided.
//
// Torus: vertex (i, j) is T(u_i, v_j) with cylindrical (ρ, z) = (R + r cos v_j, r sin v_j). A point
// of quad (i, j) is ρ_c(t)·((1−s)e_i + s e_{i+1}) + z_c(t) ẑ, where (ρ_c, z_c) runs along the chord
// of the tube's N-gon and |(1−s)e_i + s e_{i+1}| ∈ [cos(π/S), 1]. So its (ρ, z) is within
// r(1 − cos(π/N)) (chord sagitta of the tube circle) plus (R + r)(1 − cos(π/S)) (chord sagitta of
// the ring) of the tube circle, and symmetrically every torus point is that close to the mesh:
//   ε = r(1 − cos(π/N)) + (R + r)(1 − cos(π/S))   bounds the Hausdorff distance of the surfaces.
// The sets {sd_T > ε} and {sd_T < −ε} are connected (the outside of a fatter torus, the inside of
// a thinner one) and the mesh surface avoids both, so they lie wholly outside / inside the mesh
// (the tube-centre circle is inside every N-gon cross-section). Hence for |sd_T(p)| > ε the signs
// agree and |sd_mesh − sd_T| ≤ ε.
double TorusEpsilon() {
  return kTubeRadius * (1 - std::cos(kPi / kSides)) + (kRingRadius + kTubeRadius) * (1 - std::cos(kPi / kSegments));
}

struct ShapeCase {
  std::string name;
  std::function<MeshData()> make;
  std::function<double(const Vec&)> analytic;
  // Tessellation bound ε: for |analytic| > ε the sign is the analytic one and the error ≤ ε.
  std::function<double(const TriangleMesh&)> epsilon;
  // Near the medial axis of the true shape (its gradient undefined or turning fast).
  std::function<bool(const Vec&)> near_medial_axis;
  friend void PrintTo(const ShapeCase& c, std::ostream* os) { *os << c.name; }
};

std::vector<ShapeCase> ShapeCases() {
  return {
      {"geodesic_sphere", [] { return GeodesicSphere(kSphereRadius, kSphereFrequency); }, SphereSd,
       [](const TriangleMesh& m) { return kSphereRadius - MinPlaneDistance(m); },
       [](const Vec& p) { return p.norm() < 0.3 * kSphereRadius; }},
      // The mesh IS the box: ε = 0 (1e-12 for rounding).
      {"subdivided_box", [] { return SubdividedBox(kBoxHalf, 4); }, BoxSd, [](const TriangleMesh&) { return 1e-12; },
       [](const Vec& p) {
         Vec q = p.cwiseAbs() - kBoxHalf;
         if (q.maxCoeff() > 0) return false;
         std::sort(q.data(), q.data() + 3);
         return q[2] - q[1] < 1e-3;  // two faces (nearly) equidistant inside
       }},
      {"torus", [] { return Torus(kRingRadius, kTubeRadius, kSegments, kSides); }, TorusSd,
       [](const TriangleMesh&) { return TorusEpsilon(); },
       [](const Vec& p) { return std::hypot(p.x(), p.y()) < 0.1 || TorusSd(p) < -0.25; }},
      {"offset_small_sphere", OffsetSmallSphere, SmallSphereSd,
       [](const TriangleMesh& m) { return kSmallRadius - MinPlaneDistance(m, kSmallCentre); },
       [](const Vec& p) { return (p - kSmallCentre).norm() < 0.3 * kSmallRadius; }},
  };
}

class MeshSdfShapeTest : public ::testing::TestWithParam<ShapeCase> {
 protected:
  void SetUp() override {
    sdf_ = MakeSdf(GetParam().make());
    eps_ = GetParam().epsilon(sdf_->mesh());
    scale_ = sdf_->mesh().bounds().half_extents().maxCoeff();
    ASSERT_TRUE(sdf_->mesh().is_watertight());
  }
  std::vector<Vec> UniformAround(int n, double scale, uint64_t seed) const {
    const Aabb& b = sdf_->mesh().bounds();
    return UniformPoints(n, b.center() - scale * b.half_extents(), b.center() + scale * b.half_extents(), seed);
  }
  std::shared_ptr<const MeshSignedDistance> sdf_;
  double eps_ = 0;
  double scale_ = 1;  // half the largest extent of the mesh
};

TEST_P(MeshSdfShapeTest, TessellationBoundIsSmall) {
  // Sanity of the derived bounds: sphere f=16: sagitta ≈ 1 − cos(~0.04) ≈ 9e-4;
  // torus: 0.3(1 − cos(π/32)) + 1.3(1 − cos(π/64)) ≈ 3.0e-3.
  EXPECT_GT(eps_, 0);
  EXPECT_LT(eps_, 4e-3);
}

TEST_P(MeshSdfShapeTest, DistanceWithinTessellationBoundOfTheTrueShape) {
  auto points = UniformAround(4000, 1.3, 11);
  const auto near = NearFeaturePoints(sdf_->mesh(), 3000, 1e-6, 0.1, 12);
  points.insert(points.end(), near.begin(), near.end());
  int checked = 0;
  for (const Vec& p : points) {
    const double truth = GetParam().analytic(p);
    if (std::abs(truth) <= eps_) continue;
    const double got = sdf_->Query(p).distance;
    ASSERT_EQ(got < 0, truth < 0) << GetParam().name << " at " << p.transpose();
    ASSERT_LE(std::abs(got - truth), eps_ + 1e-12) << GetParam().name << " at " << p.transpose();
    ++checked;
  }
  EXPECT_GT(checked, 4000);
}

TEST_P(MeshSdfShapeTest, SignAt10000PointsIncludingNearEdgesAndVertices) {
  // 4000 points uniform in 1.2× the bounds and 6000 within 1e-6..1e-3 of vertices, edge points and
  // face points (random directions). Reference side: the analytic shape where |sd| > ε (the
  // tessellation bound), and everywhere the brute-force winding number (exact for these closed
  // meshes, independent of the pseudo-normal rule the library uses for them).
  auto points = UniformAround(4000, 1.2, 21);
  const auto near = NearFeaturePoints(sdf_->mesh(), 6000, 1e-6, 1e-3, 22);
  points.insert(points.end(), near.begin(), near.end());
  ASSERT_EQ(points.size(), 10000u);
  int by_analytic = 0, near_inside = 0, near_outside = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const Vec& p = points[i];
    const double w = BruteForceWindingNumber(sdf_->mesh(), p);
    ASSERT_LT(std::abs(w - std::round(w)), 1e-6) << "point on the surface? " << p.transpose();
    const bool inside = std::round(w) == 1;
    const double truth = GetParam().analytic(p);
    if (std::abs(truth) > eps_) {
      ASSERT_EQ(inside, truth < 0) << "reference disagreement at " << p.transpose();
      ++by_analytic;
    }
    if (i >= 4000) (inside ? near_inside : near_outside)++;
    const SignedDistanceResult r = sdf_->Query(p);
    ASSERT_EQ(r.distance < 0, inside) << GetParam().name << " point " << i << " at " << p.transpose() << " sd "
                                      << r.distance;
    ASSERT_EQ(sdf_->IsInside(p), inside) << p.transpose();
  }
  // Both sides well represented near the features, and the analytic classification used.
  EXPECT_GT(near_inside, 1500);
  EXPECT_GT(near_outside, 1500);
  EXPECT_GT(by_analytic, 3500);
}

TEST_P(MeshSdfShapeTest, SignByPseudoNormalUpToASixteenthOfTheMeshMatchesTheWindingNumber) {
  // Query takes the side from the closest feature's pseudo-normal up to 4 sign-grid cells from the
  // surface (the grid has 64 cells along the longest side: 1/16 of it) and from the grid beyond.
  // 4000 points 0.5–1.5 cells and 3.5–4.5 cells from vertices, edge points and face points, in
  // random directions, so that both rules and the switch between them are crossed near every kind
  // of feature; the side must be the brute-force winding number's (independent of both rules).
  const double cell = (sdf_->mesh().bounds().hi - sdf_->mesh().bounds().lo).maxCoeff() / 64;
  auto points = NearFeaturePoints(sdf_->mesh(), 2000, 0.5 * cell, 1.5 * cell, 31);
  const auto farther = NearFeaturePoints(sdf_->mesh(), 2000, 3.5 * cell, 4.5 * cell, 32);
  points.insert(points.end(), farther.begin(), farther.end());
  int inside = 0, by_pseudo_normal_beyond_one_cell = 0;
  for (const Vec& p : points) {
    const double w = BruteForceWindingNumber(sdf_->mesh(), p);
    ASSERT_LT(std::abs(w - std::round(w)), 1e-6) << "point on the surface? " << p.transpose();
    const bool is_inside = std::round(w) == 1;
    const SignedDistanceResult r = sdf_->Query(p);
    ASSERT_EQ(r.distance < 0, is_inside) << GetParam().name << " at " << p.transpose() << " sd " << r.distance;
    inside += is_inside;
    const double d = std::abs(r.distance);
    by_pseudo_normal_beyond_one_cell += d > cell && d < 4 * cell;
  }
  EXPECT_GT(inside, 400);
  EXPECT_LT(inside, 3600);
  EXPECT_GT(by_pseudo_normal_beyond_one_cell, 1000);  // the band the rule was widened to is covered
}

TEST_P(MeshSdfShapeTest, MagnitudeIsTheBruteForceDistance) {
  auto points = UniformAround(1500, 1.3, 31);
  const auto near = NearFeaturePoints(sdf_->mesh(), 1500, 1e-6, 0.05, 32);
  points.insert(points.end(), near.begin(), near.end());
  for (const Vec& p : points) {
    const double d = std::sqrt(BruteForceSquaredDistance(sdf_->mesh(), p));
    const SignedDistanceResult r = sdf_->Query(p);
    ASSERT_NEAR(std::abs(r.distance), d, DistanceTolerance(p, d)) << p.transpose();
    // The closest point lies on the reported triangle, |Q − C| = |sd|.
    ASSERT_GE(r.triangle, 0);
    const Triangle& t = sdf_->mesh().triangle(r.triangle);
    TriangleFeature f;
    const Vec c = ClosestPointOnTriangle(r.closest, sdf_->mesh().vertex(t[0]), sdf_->mesh().vertex(t[1]),
                                         sdf_->mesh().vertex(t[2]), &f);
    EXPECT_LE((c - r.closest).norm(), 1e-15 * (1 + c.norm()));
    EXPECT_NEAR((p - r.closest).norm(), d, DistanceTolerance(p, d));
  }
}

TEST_P(MeshSdfShapeTest, WindingNumberIsOneInsideZeroOutside) {
  // Tolerance of the far field: every node farther than β = 2 times its radius ρ is replaced by
  // its dipole, A·n̄·(c − q)/(4π|c − q|³). For a flat disk of radius ρ seen on its axis from 2ρ the
  // exact solid angle is 2π(1 − 2/√5) = 0.664 sr and the dipole gives πρ²/(2ρ)² = 0.785 sr: one
  // node at the acceptance radius is off by 0.12 sr / 4π ≈ 1e-2 of a winding number, and a query
  // sees several of them (Barill et al. reach ~1e-3 only with second-order terms). Tolerance
  // kWindingTolerance = 0.1: a few such nodes, still 5× inside the 1/2 decision threshold. Points
  // farther than max(ε, 1e-2 · half extent) from the true surface.
  auto points = UniformAround(3000, 1.3, 41);
  int checked = 0;
  for (const Vec& p : points) {
    const double truth = GetParam().analytic(p);
    if (std::abs(truth) <= std::max(eps_, 1e-2 * scale_)) continue;
    EXPECT_NEAR(sdf_->WindingNumber(p), truth < 0 ? 1.0 : 0.0, kWindingTolerance) << p.transpose();
    ++checked;
  }
  EXPECT_GT(checked, 2000);
  // Also close to the surface (1e-6..1e-3 from features), against the brute-force sum.
  for (const Vec& p : NearFeaturePoints(sdf_->mesh(), 300, 1e-6, 1e-3, 42)) {
    EXPECT_NEAR(sdf_->WindingNumber(p), BruteForceWindingNumber(sdf_->mesh(), p), kWindingTolerance) << p.transpose();
  }
}

TEST_P(MeshSdfShapeTest, BoundedQuery) {
  // Bounded semantics (signed_distance_result.h): inside -> always the exact negative distance;
  // outside within max_distance -> exact; outside beyond -> +inf or the exact value. Points beyond
  // the bounds inflated by 10% of the largest extent must read +inf (they are in cells of the
  // coarse sign grid that no triangle touches).
  const Aabb& b = sdf_->mesh().bounds();
  const double margin = 0.1 * (b.hi - b.lo).maxCoeff();
  const Aabb far_box = b.Inflated(margin);
  auto points = UniformAround(2000, 1.6, 51);
  const auto near = NearFeaturePoints(sdf_->mesh(), 1000, 1e-6, 0.05, 52);
  points.insert(points.end(), near.begin(), near.end());
  for (double max_distance : {1e-3, 0.02, 0.1}) {
    int inside = 0, within = 0, beyond = 0, beyond_inf = 0;
    for (const Vec& p : points) {
      const double d = std::sqrt(BruteForceSquaredDistance(sdf_->mesh(), p));
      const bool is_inside = BruteForceWindingNumber(sdf_->mesh(), p) > 0.5;
      const SignedDistanceResult r = sdf_->Query(p, max_distance);
      if (is_inside) {
        ++inside;
        ASSERT_NEAR(r.distance, -d, DistanceTolerance(p, d))
            << "inside, max " << max_distance << " at " << p.transpose();
      } else if (d <= max_distance) {
        ++within;
        ASSERT_NEAR(r.distance, d, DistanceTolerance(p, d)) << p.transpose();
      } else {
        ++beyond;
        if (r.found()) {
          ASSERT_NEAR(r.distance, d, DistanceTolerance(p, d)) << p.transpose();
        } else {
          ++beyond_inf;
          EXPECT_EQ(r.distance, kInf);
        }
        if (!far_box.Contains(p)) {
          ASSERT_FALSE(r.found()) << "far point " << p.transpose() << " max " << max_distance;
        }
      }
    }
    EXPECT_GT(inside, 300);
    EXPECT_GT(within, 50);
    EXPECT_GE(beyond_inf, beyond / 2) << "far-outside probes should mostly be pruned";
  }
}

TEST_P(MeshSdfShapeTest, NormalsAreUnitAndPointOutwards) {
  auto points = UniformAround(2000, 1.3, 61);
  const auto near = NearFeaturePoints(sdf_->mesh(), 2000, 1e-6, 0.05, 62);
  points.insert(points.end(), near.begin(), near.end());
  // Outward direction of the true shape: central-difference gradient of the analytic distance.
  auto analytic_gradient = [&](const Vec& p) {
    Vec g;
    for (int a = 0; a < 3; ++a) {
      Vec e = Vec::Zero();
      e[a] = 1e-7;
      g[a] = (GetParam().analytic(p + e) - GetParam().analytic(p - e)) / 2e-7;
    }
    return g;
  };
  int compared = 0;
  for (const Vec& p : points) {
    const SignedDistanceResult r = sdf_->Query(p);
    ASSERT_NEAR(r.normal.norm(), 1, 1e-12);
    if (std::abs(r.distance) > 1e-9) {
      // Gradient of the signed distance: Q = C + sd·n.
      EXPECT_LE((r.closest + r.distance * r.normal - p).norm(), 1e-12) << p.transpose();
    }
    // Away from the true shape's medial axis (and from its surface by a few ε), the normal is
    // within ~25° of the true outward normal.
    const double truth = GetParam().analytic(p);
    const Vec g = analytic_gradient(p);
    if (std::abs(truth) < 3 * eps_ + 1e-6 || std::abs(g.norm() - 1) > 1e-3) continue;
    if (GetParam().near_medial_axis(p)) continue;
    EXPECT_GT(r.normal.dot(g), 0.9) << p.transpose();
    ++compared;
  }
  EXPECT_GT(compared, 2000);
  // Queries exactly at the vertices: distance 0, normal = the vertex pseudo-normal (outward).
  const TriangleMesh& m = sdf_->mesh();
  for (int v = 0; v < m.num_vertices(); v += 7) {
    const SignedDistanceResult r = sdf_->Query(m.vertex(v));
    EXPECT_EQ(r.distance, 0);
    EXPECT_NEAR(r.normal.norm(), 1, 1e-12);
    EXPECT_LE((r.normal - m.vertex_pseudo_normal(v)).norm(), 1e-12) << m.vertex(v).transpose();
  }
}

TEST_P(MeshSdfShapeTest, InsideOutInputGivesTheSameField) {
  MeshData flipped = GetParam().make();
  for (Triangle& t : flipped.triangles) std::swap(t[1], t[2]);
  const auto inverted = MakeSdf(flipped);
  ASSERT_TRUE(inverted->mesh().was_inside_out());
  for (const Vec& p : UniformAround(1000, 1.3, 71)) {
    const SignedDistanceResult a = sdf_->Query(p), b = inverted->Query(p);
    // Same triangles with (b, c) swapped: equal up to the rounding of the closest-point algebra.
    ASSERT_NEAR(a.distance, b.distance, 1e-14) << p.transpose();
    EXPECT_LE((a.normal - b.normal).norm(), 1e-12);
    EXPECT_NEAR(inverted->WindingNumber(p), sdf_->WindingNumber(p), 1e-9);
    EXPECT_EQ(inverted->IsInside(p), sdf_->IsInside(p));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, MeshSdfShapeTest, ::testing::ValuesIn(ShapeCases()),
                         [](const ::testing::TestParamInfo<ShapeCase>& info) { return info.param.name; });

TEST(MeshSdfSphereTest, OneSidedSagittaBracket) {
  // |p| − r ≤ sd_mesh ≤ |p| − h_min (see the derivation above), here also near the surface.
  const auto sdf = MakeSdf(GeodesicSphere(kSphereRadius, kSphereFrequency));
  const double h_min = MinPlaneDistance(sdf->mesh());
  auto points = UniformPoints(3000, Vec::Constant(-1.5), Vec::Constant(1.5), 81);
  const auto near = NearFeaturePoints(sdf->mesh(), 3000, 1e-6, 1e-2, 82);
  points.insert(points.end(), near.begin(), near.end());
  for (const Vec& p : points) {
    const double got = sdf->Query(p).distance;
    ASSERT_GE(got, p.norm() - kSphereRadius - 1e-12) << p.transpose();
    ASSERT_LE(got, p.norm() - h_min + 1e-12) << p.transpose();
  }
  // Deep inside with a tiny reach: still the exact (negative) depth, −h_min at the centre.
  const SignedDistanceResult centre = sdf->Query(Vec::Zero(), 1e-3);
  EXPECT_NEAR(centre.distance, -h_min, 1e-14);
}

// ---------------------------------------------------------------------------------------------
// Open meshes: the sign comes from the winding number.
// ---------------------------------------------------------------------------------------------

TEST(MeshSdfOpenTest, SphereWithAHoleStillHasAnInsideAndAnOutside) {
  // Geodesic sphere (r = 1, 1280 triangles) with triangle 0 removed: not watertight. The hole
  // subtends about 4π/1280 from the centre, so the winding number inside is ≈ 1 − 1/1280.
  MeshData d = GeodesicSphere(1.0, 8);
  d.triangles.erase(d.triangles.begin());
  const auto sdf = MakeSdf(d);
  ASSERT_FALSE(sdf->mesh().is_watertight());
  // Far inside: |p| < 0.6 (the faces are at ≥ 0.99 from the centre).
  for (const Vec& p : UniformPoints(500, Vec::Constant(-0.35), Vec::Constant(0.35), 91)) {
    const double d_ref = std::sqrt(BruteForceSquaredDistance(sdf->mesh(), p));
    EXPECT_NEAR(sdf->Query(p).distance, -d_ref, 1e-14) << p.transpose();
    EXPECT_NEAR(sdf->Query(p, 1e-3).distance, -d_ref, 1e-14) << "bounded, " << p.transpose();
    EXPECT_TRUE(sdf->IsInside(p));
    EXPECT_NEAR(sdf->WindingNumber(p), BruteForceWindingNumber(sdf->mesh(), p), kWindingTolerance);
    EXPECT_GT(sdf->WindingNumber(p), 0.5 + kWindingTolerance);
  }
  // Far outside: |p| ≥ 1.4.
  int outside = 0;
  for (const Vec& p : UniformPoints(1000, Vec::Constant(-2.5), Vec::Constant(2.5), 92)) {
    if (p.norm() < 1.4) continue;
    ++outside;
    const double d_ref = std::sqrt(BruteForceSquaredDistance(sdf->mesh(), p));
    EXPECT_NEAR(sdf->Query(p).distance, d_ref, 1e-14 * (1 + d_ref)) << p.transpose();
    EXPECT_EQ(sdf->Query(p, 0.1).distance, kInf) << p.transpose();
    EXPECT_FALSE(sdf->IsInside(p));
    EXPECT_LT(std::abs(sdf->WindingNumber(p)), kWindingTolerance);
  }
  EXPECT_GT(outside, 500);
}

TEST(MeshSdfOpenTest, SingleTriangleIsOutsideEverywhereOffItsPlane) {
  // One triangle encloses nothing: |w| ≤ 1/2 everywhere; the solid angle of a triangle seen from
  // a point on its normal axis is below 2π, so w < 1/2: every point reads outside (sd ≥ 0).
  const auto sdf = MakeSdf({{Vec(0, 0, 0), Vec(1, 0, 0), Vec(0, 1, 0)}, {{0, 1, 2}}});
  for (const Vec& p : UniformPoints(500, Vec::Constant(-1), Vec::Constant(2), 93)) {
    const double d_ref = std::sqrt(BruteForceSquaredDistance(sdf->mesh(), p));
    EXPECT_NEAR(sdf->Query(p).distance, d_ref, 1e-14 * (1 + d_ref));
    EXPECT_LT(sdf->WindingNumber(p), 0.5);
  }
  // Just above the face centre the solid angle approaches 2π: w -> 1/2 from below.
  EXPECT_NEAR(sdf->WindingNumber(Vec(0.25, 0.25, -1e-9)), 0.5, 1e-6);
}

TEST(MeshSdfWorkTest, CountsOfATetrahedronInOneLeaf) {
  // The unit tetrahedron's four triangles make one leaf: the 4-wide tree is one node. From
  // p = (3, 3, 3) with no bound every slab pre-test passes (the limit is +inf). The slanted face
  // x + y + z = 1 has the smallest bound, exact in its face region: p projects to (1/3, 1/3, 1/3),
  // d² = (9 − 1)²/3 = 21.33. Next comes z = 0 (and, by symmetry, x = 0 and y = 0): h = 3, and p's
  // projection (3, 3, 0) lies (3 + 3 − 1)/√2 beyond the edge x + y = 1, so the bound is
  // 9 + 12.5 = 21.5 (its exact distance, to the edge point (0.5, 0.5, 0)) > 21.33: after the
  // first exact test the other three are pruned.
  const auto sdf = MakeSdf({{Vec(0, 0, 0), Vec(1, 0, 0), Vec(0, 1, 0), Vec(0, 0, 1)},
                            {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}});
  TraversalStats stats;
  ClosestPointResult c;
  ASSERT_TRUE(sdf->ClosestPointCounted(Vec(3, 3, 3), kInf, &c, &stats));
  EXPECT_NEAR(c.squared_distance, 64.0 / 3.0, 1e-12);
  EXPECT_EQ(stats.nodes, 1);
  EXPECT_EQ(stats.pretests, 4);
  EXPECT_EQ(stats.pretest_passes, 4);
  EXPECT_EQ(stats.triangles, 1);
  // Bounded to 4 m (< √21.33 = 4.62, and the leaf's box [0, 1]³ is 2√3 = 3.46 m away): the leaf
  // is entered and its slabs reject all four; nothing is found.
  TraversalStats bounded;
  EXPECT_FALSE(sdf->ClosestPointCounted(Vec(3, 3, 3), 4.0, &c, &bounded));
  EXPECT_EQ(bounded.nodes, 1);
  EXPECT_EQ(bounded.pretests, 4);
  EXPECT_EQ(bounded.pretest_passes, 0);
  EXPECT_EQ(bounded.triangles, 0);
}

// ---------------------------------------------------------------------------------------------
// Extreme query points.
// ---------------------------------------------------------------------------------------------

TEST(MeshSdfFarTest, VeryDistantPointsAreOutside) {
  const auto sdf = MakeSdf(GeodesicSphere(1.0, 4));
  const double h_min = MinPlaneDistance(sdf->mesh());
  for (const Vec& p : {Vec(1e10, 0, 0), Vec(0, 0, -1e12), Vec(3e9, -4e9, 0), Vec(-1e30, 0, 0), Vec(1e30, 1e30, 1e30)}) {
    // Bounded: nothing within reach, outside.
    const SignedDistanceResult r = sdf->Query(p, 1.0);
    EXPECT_EQ(r.distance, kInf) << p.transpose();
    EXPECT_FALSE(sdf->IsInside(p)) << p.transpose();
    // Unbounded: |p| − r ≤ sd ≤ |p| − h_min (relative rounding at this scale).
    const double sd = sdf->Query(p).distance;
    EXPECT_GE(sd, (p.norm() - 1.0) * (1 - 1e-12)) << p.transpose();
    EXPECT_LE(sd, (p.norm() - h_min) * (1 + 1e-12)) << p.transpose();
  }
}

}  // namespace
}  // namespace taxel::geometry
