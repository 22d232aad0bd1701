// Tests for core/geometry/primitive_signed_distance.h: hand-worked points in every region of each
// primitive, the medial-axis table of the header, and random points against closed forms written
// independently here (Quilez-style formulas), with the closest point re-evaluated on the surface
// and the normal compared with the finite-difference gradient.
#include "core/geometry/primitive_signed_distance.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using Vec = Eigen::Vector3d;

void ExpectVecNear(const Vec& got, const Vec& want, double tol, const std::string& what = "") {
  EXPECT_LE((got - want).norm(), tol) << what << " got " << got.transpose() << " want " << want.transpose();
}

// ---------------------------------------------------------------------------------------------
// Sphere, radius 2.
// ---------------------------------------------------------------------------------------------

TEST(SphereSignedDistanceTest, HandPoints) {
  // Outside on +x: |p| = 3 -> d = 1, closest (2, 0, 0), normal +x.
  auto r = SphereSignedDistance(2, Vec(3, 0, 0));
  EXPECT_DOUBLE_EQ(r.distance, 1);
  ExpectVecNear(r.closest, Vec(2, 0, 0), 1e-15);
  ExpectVecNear(r.normal, Vec(1, 0, 0), 1e-15);
  // (1, 2, 2): |p| = 3 -> d = 1, closest 2/3 (1, 2, 2), normal (1, 2, 2)/3.
  r = SphereSignedDistance(2, Vec(1, 2, 2));
  EXPECT_NEAR(r.distance, 1, 1e-15);
  ExpectVecNear(r.closest, Vec(2, 4, 4) / 3, 1e-15);
  ExpectVecNear(r.normal, Vec(1, 2, 2) / 3, 1e-15);
  // Inside: (0, 0.5, 0) -> d = 0.5 − 2 = −1.5, closest (0, 2, 0), normal +y.
  r = SphereSignedDistance(2, Vec(0, 0.5, 0));
  EXPECT_DOUBLE_EQ(r.distance, -1.5);
  ExpectVecNear(r.closest, Vec(0, 2, 0), 1e-15);
  ExpectVecNear(r.normal, Vec(0, 1, 0), 1e-15);
  // On the surface.
  r = SphereSignedDistance(2, Vec(0, 0, -2));
  EXPECT_DOUBLE_EQ(r.distance, 0);
  ExpectVecNear(r.normal, Vec(0, 0, -1), 1e-15);
  // Centre (medial axis): d = −r, normal +z (header table), closest (0, 0, 2).
  r = SphereSignedDistance(2, Vec::Zero());
  EXPECT_DOUBLE_EQ(r.distance, -2);
  EXPECT_EQ(r.normal, Vec(0, 0, 1));
  EXPECT_EQ(r.closest, Vec(0, 0, 2));
  EXPECT_EQ(r.triangle, -1);
}

// ---------------------------------------------------------------------------------------------
// Box, half extents (1, 2, 3).
//
//        y                      regions of the x-y cross-section (z inside the slab):
//        ^   corner | +y face | corner
//      2 +  --------+---------+--------
//        |   -x     |  inside |  +x face
//     -2 +  --------+---------+--------
//        |   corner | −y face | corner       -> x, the slab edges at x = ±1
// ---------------------------------------------------------------------------------------------

const Vec kBoxH(1, 2, 3);

TEST(BoxSignedDistanceTest, FaceRegion) {
  // (1.5, 0.5, −1): only x exceeds, by 0.5.
  auto r = BoxSignedDistance(kBoxH, Vec(1.5, 0.5, -1));
  EXPECT_DOUBLE_EQ(r.distance, 0.5);
  ExpectVecNear(r.closest, Vec(1, 0.5, -1), 1e-15);
  ExpectVecNear(r.normal, Vec(1, 0, 0), 1e-15);
}

TEST(BoxSignedDistanceTest, EdgeRegion) {
  // (1.3, 2.4, 0): excess (0.3, 0.4, 0) -> d = 0.5, closest (1, 2, 0), normal (0.6, 0.8, 0).
  auto r = BoxSignedDistance(kBoxH, Vec(1.3, 2.4, 0));
  EXPECT_NEAR(r.distance, 0.5, 1e-15);
  ExpectVecNear(r.closest, Vec(1, 2, 0), 1e-15);
  ExpectVecNear(r.normal, Vec(0.6, 0.8, 0), 1e-15);
  // (0.2, −2.3, −3.4): excess (0, 0.3, 0.4) -> 0.5, normal (0, −0.6, −0.8).
  r = BoxSignedDistance(kBoxH, Vec(0.2, -2.3, -3.4));
  EXPECT_NEAR(r.distance, 0.5, 1e-15);
  ExpectVecNear(r.closest, Vec(0.2, -2, -3), 1e-15);
  ExpectVecNear(r.normal, Vec(0, -0.6, -0.8), 1e-15);
}

TEST(BoxSignedDistanceTest, CornerRegionIsNormOfPerAxisExcess) {
  // (−2, −4, 5): excess (1, 2, 2) -> d = 3, closest (−1, −2, 3), normal (−1, −2, 2)/3.
  auto r = BoxSignedDistance(kBoxH, Vec(-2, -4, 5));
  EXPECT_NEAR(r.distance, 3, 1e-15);
  ExpectVecNear(r.closest, Vec(-1, -2, 3), 1e-15);
  ExpectVecNear(r.normal, Vec(-1, -2, 2) / 3, 1e-15);
}

TEST(BoxSignedDistanceTest, InsideNearestFace) {
  // (0.5, 0.5, 0.5): q = |p| − h = (−0.5, −1.5, −2.5); nearest face +x at depth 0.5.
  auto r = BoxSignedDistance(kBoxH, Vec(0.5, 0.5, 0.5));
  EXPECT_DOUBLE_EQ(r.distance, -0.5);
  ExpectVecNear(r.closest, Vec(1, 0.5, 0.5), 1e-15);
  ExpectVecNear(r.normal, Vec(1, 0, 0), 1e-15);
  // (0, −1.8, 0): q = (−1, −0.2, −3); nearest face −y at depth 0.2.
  r = BoxSignedDistance(kBoxH, Vec(0, -1.8, 0));
  EXPECT_NEAR(r.distance, -0.2, 1e-15);
  ExpectVecNear(r.closest, Vec(0, -2, 0), 1e-15);
  ExpectVecNear(r.normal, Vec(0, -1, 0), 1e-15);
  // (0.1, 0.2, −2.9): nearest face −z at depth 0.1.
  r = BoxSignedDistance(kBoxH, Vec(0.1, 0.2, -2.9));
  EXPECT_NEAR(r.distance, -0.1, 1e-15);
  ExpectVecNear(r.closest, Vec(0.1, 0.2, -3), 1e-15);
  ExpectVecNear(r.normal, Vec(0, 0, -1), 1e-15);
}

TEST(BoxSignedDistanceTest, TieRulesFromTheHeaderTable) {
  const Vec cube(1, 1, 1);
  // x and y faces equidistant (q = (−0.5, −0.5, −1)): the lowest axis, x, wins.
  auto r = BoxSignedDistance(cube, Vec(0.5, 0.5, 0));
  EXPECT_DOUBLE_EQ(r.distance, -0.5);
  EXPECT_EQ(r.normal, Vec(1, 0, 0));
  EXPECT_EQ(r.closest, Vec(1, 0.5, 0));
  // y and z tie on the negative sides: y wins, normal −y.
  r = BoxSignedDistance(cube, Vec(0, -0.5, -0.5));
  EXPECT_DOUBLE_EQ(r.distance, -0.5);
  EXPECT_EQ(r.normal, Vec(0, -1, 0));
  EXPECT_EQ(r.closest, Vec(0, -1, -0.5));
  // Centre: all three tie -> x; p_x = 0 -> the + face.
  r = BoxSignedDistance(cube, Vec::Zero());
  EXPECT_DOUBLE_EQ(r.distance, -1);
  EXPECT_EQ(r.normal, Vec(1, 0, 0));
  EXPECT_EQ(r.closest, Vec(1, 0, 0));
  // x and z tie, x wins; p_x = −0.5 -> the − face.
  r = BoxSignedDistance(cube, Vec(-0.5, 0, 0.5));
  EXPECT_EQ(r.normal, Vec(-1, 0, 0));
  EXPECT_EQ(r.closest, Vec(-1, 0, 0.5));
  // On a surface edge (1, 2, 0) of kBoxH: q = (0, 0, −3), x wins the tie; d = 0.
  r = BoxSignedDistance(kBoxH, Vec(1, 2, 0));
  EXPECT_EQ(r.distance, 0);
  EXPECT_EQ(r.normal, Vec(1, 0, 0));
  EXPECT_EQ(r.closest, Vec(1, 2, 0));
  // On the corner (−1, 2, 3): d = 0, normal −x (x wins; p_x < 0).
  r = BoxSignedDistance(kBoxH, Vec(-1, 2, 3));
  EXPECT_EQ(r.distance, 0);
  EXPECT_EQ(r.normal, Vec(-1, 0, 0));
  // On a face interior.
  r = BoxSignedDistance(kBoxH, Vec(0.3, 0.4, 3));
  EXPECT_EQ(r.distance, 0);
  EXPECT_EQ(r.normal, Vec(0, 0, 1));
}

// ---------------------------------------------------------------------------------------------
// Capsule, radius 0.5, half-length 1: the segment z ∈ [−1, 1] on the z axis, inflated by 0.5.
// ---------------------------------------------------------------------------------------------

TEST(CapsuleSignedDistanceTest, HandPoints) {
  // Beside the cylinder part: (2, 0, 0.3) -> 2 − 0.5 = 1.5, normal +x, closest (0.5, 0, 0.3).
  auto r = CapsuleSignedDistance(0.5, 1, Vec(2, 0, 0.3));
  EXPECT_DOUBLE_EQ(r.distance, 1.5);
  ExpectVecNear(r.closest, Vec(0.5, 0, 0.3), 1e-15);
  ExpectVecNear(r.normal, Vec(1, 0, 0), 1e-15);
  // Above the top cap on the axis: (0, 0, 3) -> 3 − 1 − 0.5 = 1.5, closest (0, 0, 1.5).
  r = CapsuleSignedDistance(0.5, 1, Vec(0, 0, 3));
  EXPECT_DOUBLE_EQ(r.distance, 1.5);
  ExpectVecNear(r.closest, Vec(0, 0, 1.5), 1e-15);
  ExpectVecNear(r.normal, Vec(0, 0, 1), 1e-15);
  // Off-axis over the top cap: (0.3, 0.4, 2.2): from (0, 0, 1) the offset (0.3, 0.4, 1.2) has
  // length sqrt(0.09 + 0.16 + 1.44) = 1.3 -> d = 0.8, normal (0.3, 0.4, 1.2)/1.3.
  r = CapsuleSignedDistance(0.5, 1, Vec(0.3, 0.4, 2.2));
  EXPECT_NEAR(r.distance, 0.8, 1e-15);
  ExpectVecNear(r.normal, Vec(0.3, 0.4, 1.2) / 1.3, 1e-15);
  ExpectVecNear(r.closest, Vec(0, 0, 1) + 0.5 * Vec(0.3, 0.4, 1.2) / 1.3, 1e-15);
  // Below the bottom cap, inside: (0, 0.1, −1.2): offset from (0,0,−1) is (0, 0.1, −0.2),
  // length sqrt(0.05) -> d = sqrt(0.05) − 0.5.
  r = CapsuleSignedDistance(0.5, 1, Vec(0, 0.1, -1.2));
  EXPECT_NEAR(r.distance, std::sqrt(0.05) - 0.5, 1e-15);
  ExpectVecNear(r.normal, Vec(0, 0.1, -0.2) / std::sqrt(0.05), 1e-15);
  // Inside beside the axis: (0.1, 0, 0) -> −0.4, normal +x.
  r = CapsuleSignedDistance(0.5, 1, Vec(0.1, 0, 0));
  EXPECT_NEAR(r.distance, -0.4, 1e-15);
  ExpectVecNear(r.normal, Vec(1, 0, 0), 1e-15);
  // On the segment (medial axis): d = −r, normal +x (header table), closest (0.5, 0, 0.5).
  r = CapsuleSignedDistance(0.5, 1, Vec(0, 0, 0.5));
  EXPECT_DOUBLE_EQ(r.distance, -0.5);
  EXPECT_EQ(r.normal, Vec(1, 0, 0));
  ExpectVecNear(r.closest, Vec(0.5, 0, 0.5), 1e-15);
}

// ---------------------------------------------------------------------------------------------
// Cylinder, radius 1, half-length 2 (z ∈ [−2, 2]).
//
//      z ^  rim | cap (dz>0)    side/cap decided by max(dr, dz) inside,
//      2 +------+               rim region where dr > 0 and dz > 0
//        | in   |  side (dr>0)
//     -2 +------+
//        0      1 -> rho
// ---------------------------------------------------------------------------------------------

TEST(CylinderSignedDistanceTest, HandPoints) {
  // Beside: (3, 0, 1): dr = 2, dz = −1 -> 2, normal +x, closest (1, 0, 1).
  auto r = CylinderSignedDistance(1, 2, Vec(3, 0, 1));
  EXPECT_DOUBLE_EQ(r.distance, 2);
  ExpectVecNear(r.closest, Vec(1, 0, 1), 1e-15);
  ExpectVecNear(r.normal, Vec(1, 0, 0), 1e-15);
  // Above the cap: (0.5, 0, 5) -> 3, normal +z, closest (0.5, 0, 2).
  r = CylinderSignedDistance(1, 2, Vec(0.5, 0, 5));
  EXPECT_DOUBLE_EQ(r.distance, 3);
  ExpectVecNear(r.closest, Vec(0.5, 0, 2), 1e-15);
  ExpectVecNear(r.normal, Vec(0, 0, 1), 1e-15);
  // Rim region below: rho = 1.3 at angle a, z = −2.4: offset (0.3 radial, −0.4) -> d = 0.5,
  // closest (cos a, sin a, −2), normal (0.6 cos a, 0.6 sin a, −0.8).
  const double a = 0.7;
  r = CylinderSignedDistance(1, 2, Vec(1.3 * std::cos(a), 1.3 * std::sin(a), -2.4));
  EXPECT_NEAR(r.distance, 0.5, 1e-15);
  ExpectVecNear(r.closest, Vec(std::cos(a), std::sin(a), -2), 1e-15);
  ExpectVecNear(r.normal, Vec(0.6 * std::cos(a), 0.6 * std::sin(a), -0.8), 1e-15);
  // Inside, side nearest: (0, 0.8, 0): dr = −0.2, dz = −2 -> −0.2, normal +y.
  r = CylinderSignedDistance(1, 2, Vec(0, 0.8, 0));
  EXPECT_NEAR(r.distance, -0.2, 1e-15);
  ExpectVecNear(r.normal, Vec(0, 1, 0), 1e-15);
  ExpectVecNear(r.closest, Vec(0, 1, 0), 1e-15);
  // Inside, cap nearest: (0, 0.1, −1.9): dr = −0.9, dz = −0.1 -> −0.1, normal −z.
  r = CylinderSignedDistance(1, 2, Vec(0, 0.1, -1.9));
  EXPECT_NEAR(r.distance, -0.1, 1e-15);
  ExpectVecNear(r.closest, Vec(0, 0.1, -2), 1e-15);
  ExpectVecNear(r.normal, Vec(0, 0, -1), 1e-15);
}

TEST(CylinderSignedDistanceTest, MedialAxisRules) {
  // Side/cap tie inside: (0.5, 0, 1.5): dr = dz = −0.5 -> the side: normal +x.
  auto r = CylinderSignedDistance(1, 2, Vec(0.5, 0, 1.5));
  EXPECT_DOUBLE_EQ(r.distance, -0.5);
  EXPECT_EQ(r.normal, Vec(1, 0, 0));
  EXPECT_EQ(r.closest, Vec(1, 0, 1.5));
  // On the axis, side nearer than the caps: radial direction +x.
  r = CylinderSignedDistance(1, 2, Vec(0, 0, 0.3));
  EXPECT_DOUBLE_EQ(r.distance, -1);
  EXPECT_EQ(r.normal, Vec(1, 0, 0));
  EXPECT_EQ(r.closest, Vec(1, 0, 0.3));
  // On the axis beyond the cap: the cap.
  r = CylinderSignedDistance(1, 2, Vec(0, 0, -3));
  EXPECT_DOUBLE_EQ(r.distance, 1);
  EXPECT_EQ(r.normal, Vec(0, 0, -1));
  EXPECT_EQ(r.closest, Vec(0, 0, -2));
  // On the rim circle: d = 0.
  r = CylinderSignedDistance(1, 2, Vec(0, -1, 2));
  EXPECT_EQ(r.distance, 0);
}

TEST(HalfSpaceSignedDistanceTest, HandPoints) {
  auto r = HalfSpaceSignedDistance(Vec(1, 2, -3));
  EXPECT_EQ(r.distance, -3);
  EXPECT_EQ(r.closest, Vec(1, 2, 0));
  EXPECT_EQ(r.normal, Vec(0, 0, 1));
  r = HalfSpaceSignedDistance(Vec(-4, 5, 0.25));
  EXPECT_EQ(r.distance, 0.25);
  EXPECT_EQ(r.closest, Vec(-4, 5, 0));
  EXPECT_EQ(r.normal, Vec(0, 0, 1));
}

// ---------------------------------------------------------------------------------------------
// Random points against independent closed forms.
// ---------------------------------------------------------------------------------------------

struct PrimitiveCase {
  std::string name;
  std::function<SignedDistanceResult(const Vec&)> query;
  std::function<double(const Vec&)> reference;  // independent closed form
  // True where the gradient is undefined or too curved for a central difference with step 1e-6:
  // within 1e-3 of a flat medial sheet (box, cylinder side/cap tie) or 1e-2 of a curved one
  // (sphere centre, capsule segment, cylinder axis: level-set curvature 1/dist, so the central
  // difference error h²·f'''/6 ~ h²/dist² stays below 1e-8).
  std::function<bool(const Vec&)> near_kink;
  Vec sample_half;  // points sampled in [−sample_half, sample_half]
  friend void PrintTo(const PrimitiveCase& c, std::ostream* os) { *os << c.name; }
};

std::vector<PrimitiveCase> Cases() {
  std::vector<PrimitiveCase> cases;
  {
    const double radius = 0.7;
    cases.push_back({"sphere", [=](const Vec& p) { return SphereSignedDistance(radius, p); },
                     [=](const Vec& p) { return std::sqrt(p.x() * p.x() + p.y() * p.y() + p.z() * p.z()) - radius; },
                     [](const Vec& p) { return p.norm() < 1e-2; }, Vec::Constant(1.5)});
  }
  {
    const Vec h(0.5, 1.0, 1.5);
    cases.push_back({"box", [=](const Vec& p) { return BoxSignedDistance(h, p); },
                     [=](const Vec& p) {
                       // sd = |max(q, 0)| + min(max_i q_i, 0), q = |p| − h.
                       const Vec q = p.cwiseAbs() - h;
                       return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
                     },
                     [=](const Vec& p) {
                       Vec q = p.cwiseAbs() - h;
                       if (q.maxCoeff() > 0) return false;  // outside a convex set: smooth
                       std::sort(q.data(), q.data() + 3);
                       return q[2] - q[1] < 1e-3;  // two faces (nearly) equidistant
                     },
                     Vec(1.5, 2, 2.5)});
  }
  {
    const double radius = 0.4, half_length = 0.8;
    cases.push_back({"capsule", [=](const Vec& p) { return CapsuleSignedDistance(radius, half_length, p); },
                     [=](const Vec& p) {
                       // Distance to the segment a b, a = (0,0,−l), b = (0,0,l), minus the radius.
                       const Vec a(0, 0, -half_length), b(0, 0, half_length);
                       const double t = std::clamp((p - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
                       return (p - (a + t * (b - a))).norm() - radius;
                     },
                     [=](const Vec& p) {
                       const double z = std::clamp(p.z(), -half_length, half_length);
                       return (p - Vec(0, 0, z)).norm() < 1e-2;
                     },
                     Vec(1, 1, 1.5)});
  }
  {
    const double radius = 0.6, half_length = 0.9;
    cases.push_back({"cylinder", [=](const Vec& p) { return CylinderSignedDistance(radius, half_length, p); },
                     [=](const Vec& p) {
                       // d = (rho − r, |z| − l); sd = min(max(d), 0) + |max(d, 0)|.
                       const double dr = std::sqrt(p.x() * p.x() + p.y() * p.y()) - radius;
                       const double dz = std::abs(p.z()) - half_length;
                       return std::min(std::max(dr, dz), 0.0) + std::hypot(std::max(dr, 0.0), std::max(dz, 0.0));
                     },
                     [=](const Vec& p) {
                       const double rho = std::hypot(p.x(), p.y());
                       const double dr = rho - radius, dz = std::abs(p.z()) - half_length;
                       if (dr > 0 || dz > 0) return false;
                       return std::abs(dr - dz) < 1e-3 || rho < 1e-2;
                     },
                     Vec(1.2, 1.2, 1.5)});
  }
  cases.push_back({"half_space", [](const Vec& p) { return HalfSpaceSignedDistance(p); },
                   [](const Vec& p) { return p.z(); }, [](const Vec&) { return false; }, Vec::Constant(2)});
  return cases;
}

class PrimitiveRandomTest : public ::testing::TestWithParam<PrimitiveCase> {};

TEST_P(PrimitiveRandomTest, MatchesClosedFormAndClosestPointIsOnSurface) {
  const PrimitiveCase& c = GetParam();
  const auto points = taxel::testing::UniformPoints(5000, -c.sample_half, c.sample_half, 1001);
  int inside = 0, outside = 0;
  for (const Vec& p : points) {
    const SignedDistanceResult r = c.query(p);
    const double want = c.reference(p);
    ASSERT_NEAR(r.distance, want, 1e-12) << c.name << " at " << p.transpose();
    (want < 0 ? inside : outside)++;
    // |Q − C| = |sd|, C on the surface (sd(C) = 0), normal unit.
    EXPECT_NEAR((p - r.closest).norm(), std::abs(r.distance), 1e-12) << p.transpose();
    EXPECT_NEAR(c.reference(r.closest), 0, 1e-12) << "closest " << r.closest.transpose();
    EXPECT_NEAR(r.normal.norm(), 1, 1e-12);
    // Q = C + sd·n: the normal points out of the solid along Q − C.
    if (std::abs(r.distance) > 1e-9) {
      EXPECT_LE((r.closest + r.distance * r.normal - p).norm(), 1e-12) << p.transpose();
    }
  }
  // The sample covers both sides.
  EXPECT_GT(inside, 100);
  EXPECT_GT(outside, 100);
}

TEST_P(PrimitiveRandomTest, NormalIsTheFiniteDifferenceGradient) {
  const PrimitiveCase& c = GetParam();
  const auto points = taxel::testing::UniformPoints(3000, -c.sample_half, c.sample_half, 2002);
  const double h = 1e-6;
  int checked = 0;
  for (const Vec& p : points) {
    if (c.near_kink(p) || std::abs(c.reference(p)) < 1e-2) continue;
    Vec grad;
    for (int a = 0; a < 3; ++a) {
      Vec e = Vec::Zero();
      e[a] = h;
      grad[a] = (c.query(p + e).distance - c.query(p - e).distance) / (2 * h);
    }
    // Central difference with |sd| > 1e-2 (so f''' ≲ 1e4 off the kinks): truncation h²·f'''/6 ≈
    // 2e-9, rounding ~1e-16/h = 1e-10; a point within h of a C1 region seam (probability ~1e-6)
    // would see h·f'' ≈ 1e-4, so the tolerance is 1e-6.
    ASSERT_LE((grad - c.query(p).normal).norm(), 1e-6) << c.name << " at " << p.transpose();
    ++checked;
  }
  EXPECT_GT(checked, 1500);
}

INSTANTIATE_TEST_SUITE_P(Primitives, PrimitiveRandomTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<PrimitiveCase>& info) { return info.param.name; });

}  // namespace
}  // namespace taxel::geometry
