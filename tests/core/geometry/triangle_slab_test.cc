// Tests for core/geometry/triangle_slab.h: hand values of the bound in each kind of region, the
// documented pruning rule against the exact distance (closest_point_triangle.h, itself checked
// against a dense barycentric search) on random and thin triangles near and far from the origin,
// the masks and the group layout.
#include "core/geometry/triangle_slab.h"

#include <cmath>
#include <vector>

#include "core/geometry/closest_point_triangle.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::taxel::testing::UniformPoints;
using Vec = Eigen::Vector3d;

constexpr double kU = 1.0 / (1 << 24);

double ExactSquaredDistance(const Vec& p, const Vec& a, const Vec& b, const Vec& c) {
  TriangleFeature f;
  return (p - ClosestPointOnTriangle(p, a, b, c, &f)).squaredNorm();
}

// The bound of slab s alone, evaluated in lane 2 of a group whose other lanes are unused (zero).
float Bound(const TriangleSlab& s, const Vec& p) {
  TriangleSlabGroup g{};
  SetSlabLane(&g, 2, s);
  float lb2[4];
  TriangleSlabGroupWithin(g, static_cast<float>(p.x()), static_cast<float>(p.y()), static_cast<float>(p.z()), INFINITY,
                          lb2);
  EXPECT_EQ(lb2[0], 0.0f);
  EXPECT_EQ(lb2[1], 0.0f);
  EXPECT_EQ(lb2[3], 0.0f);
  return lb2[2];
}

// The triangle a = (0,0,0), b = (2,0,0), c = (0,2,0) in the plane z = 0 (the same as in
// closest_point_triangle_test.cc):
//
//   y
//   2 c
//     | \            edge planes: y = 0 (edge 0, outward −y), x + y = 2 (edge 1, outward
//     |   \          (1,1)/√2), x = 0 (edge 2, outward −x)
//     |     \        face plane: z = 0, normal +z
//   0 a------b  x
//     0      2
TEST(TriangleSlabTest, HandValuesInEachKindOfRegion) {
  const Vec a(0, 0, 0), b(2, 0, 0), c(0, 2, 0);
  const TriangleSlab s = MakeTriangleSlab(a, b, c);
  // Face region: the height, squared (exact).
  EXPECT_FLOAT_EQ(Bound(s, Vec(0.5, 0.5, 3)), 9.0f);
  EXPECT_FLOAT_EQ(Bound(s, Vec(0.5, 0.5, -1)), 1.0f);
  // Edge region of edge 0: height 2, 1 beyond y = 0: 4 + 1 (exact).
  EXPECT_FLOAT_EQ(Bound(s, Vec(1.5, -1, 2)), 5.0f);
  // Edge region of edge 1: (2, 1.5, 0.5) is (2 + 1.5 − 2)/√2 = 1.5/√2 beyond x + y = 2: 0.25 + 1.125.
  EXPECT_FLOAT_EQ(Bound(s, Vec(2, 1.5, 0.5)), 1.375f);
  // Vertex region of a: (−1, −1, 1) is 1 beyond both y = 0 and x = 0, so the bound is 1 + 1 = 2,
  // below the exact 1 + 1 + 1 = 3.
  EXPECT_FLOAT_EQ(Bound(s, Vec(-1, -1, 1)), 2.0f);
  EXPECT_EQ(ExactSquaredDistance(Vec(-1, -1, 1), a, b, c), 3.0);
}

TEST(TriangleSlabTest, ThinTrianglesAreNeverPruned) {
  // Height 1e-7 over a base of 1: |cross| / longest² = 1e-7 < 1e-6, so all planes are zero.
  const TriangleSlab s = MakeTriangleSlab(Vec(0, 0, 0), Vec(1, 0, 0), Vec(0.5, 1e-7, 0));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s.x[i], 0.0f);
    EXPECT_EQ(s.y[i], 0.0f);
    EXPECT_EQ(s.z[i], 0.0f);
    EXPECT_EQ(s.w[i], 0.0f);
  }
  EXPECT_EQ(Bound(s, Vec(5, 5, 5)), 0.0f);
}

// The rule of the file comment: whenever the exact distance is at most r, the float bound squared
// is at most (r + slack)²·(1 + 4u). Checked with r = the exact distance itself, the tightest
// radius a traversal can hold, for random triangles of several sizes and shapes (including thin
// ones just above the trust threshold) placed near the origin and ~1000 units away, and points
// near them and far from them.
TEST(TriangleSlabTest, BoundNeverExceedsTheExactDistanceBeyondTheSlack) {
  int tight = 0, checked = 0;
  for (const double offset : {0.0, 1000.0}) {
    for (const double size : {1e-4, 1e-2, 1.0}) {
      const auto corners = UniformPoints(600, Vec::Constant(-size), Vec::Constant(size), 11);
      const auto queries = UniformPoints(600, Vec::Constant(-3 * size), Vec::Constant(3 * size), 12);
      for (int t = 0; t < 200; ++t) {
        const Vec origin = Vec::Constant(offset);
        const Vec a = origin + corners[3 * t];
        const Vec b = origin + corners[3 * t + 1];
        // Every fourth triangle is a sliver: c near the midpoint of ab, ~1e-5 of |ab| off it.
        const Vec c = t % 4 == 0 ? Vec(0.5 * (a + b) + 1e-5 * (b - a).norm() * corners[3 * t + 2].normalized())
                                 : Vec(origin + corners[3 * t + 2]);
        if ((b - a).cross(c - a).norm() <=
            1e-12 * std::max({(b - a).squaredNorm(), (c - a).squaredNorm(), (c - b).squaredNorm()})) {
          continue;  // a mesh would refuse it
        }
        const TriangleSlab s = MakeTriangleSlab(a, b, c);
        const double bound = std::max({a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff(), c.cwiseAbs().maxCoeff()});
        for (int q = 0; q < 3; ++q) {
          const Vec p = origin + queries[3 * t + q];
          const double exact2 = ExactSquaredDistance(p, a, b, c);
          const double r = std::sqrt(exact2) + TriangleSlabSlack(p.cwiseAbs().maxCoeff(), bound);
          const double lb2 = Bound(s, p);
          ASSERT_LE(lb2, r * r * (1 + 4 * kU)) << "triangle " << t << " offset " << offset << " size " << size;
          ++checked;
          // Away from the origin float rounding dominates small triangles; near it, the bound is
          // usually close to the exact distance (face and edge regions).
          if (offset == 0 && lb2 >= 0.999 * exact2) ++tight;
        }
      }
    }
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(tight, checked / 10);
}

TEST(TriangleSlabTest, MaskHasOneBitPerTriangleWithinTheLimit) {
  // Four unit right triangles in z = 0 translated along x by 0, 10, 20, 30; the query is 1 above
  // the first one's face, so the bounds squared are 1, 1 + 9.75², ...: only lane 0 is within 2.
  TriangleSlabGroup g{};
  for (int k = 0; k < 4; ++k) {
    const Vec o(10.0 * k, 0, 0);
    SetSlabLane(&g, k, MakeTriangleSlab(o, o + Vec(1, 0, 0), o + Vec(0, 1, 0)));
  }
  float lb2[4];
  EXPECT_EQ(TriangleSlabGroupWithin(g, 0.25f, 0.25f, 1.0f, 2.0f, lb2), 0x1u);
  EXPECT_FLOAT_EQ(lb2[0], 1.0f);
  // (0.25, 0.25, 1) is 9.75 to the left of x = 10 (edge 2 of triangle 1): 1 + 9.75².
  EXPECT_FLOAT_EQ(lb2[1], 1.0f + 9.75f * 9.75f);
  // 19.75 and 29.75 to the left of x = 20 and x = 30.
  EXPECT_FLOAT_EQ(lb2[2], 1.0f + 19.75f * 19.75f);
  EXPECT_FLOAT_EQ(lb2[3], 1.0f + 29.75f * 29.75f);
  EXPECT_EQ(TriangleSlabGroupWithin(g, 0.25f, 0.25f, 1.0f, 1e6f, lb2), 0xFu);
  // 1 + 9.75² = 96.06 and 1 + 19.75² = 391.06: a limit of 100 takes lanes 0 and 1.
  EXPECT_EQ(TriangleSlabGroupWithin(g, 0.25f, 0.25f, 1.0f, 100.0f, lb2), 0x3u);
  EXPECT_EQ(TriangleSlabGroupWithin(g, 0.25f, 0.25f, 1.0f, 0.5f, lb2), 0x0u);
}

TEST(TriangleSlabTest, GroupLanesHoldTheirSlabCoordinateMajor) {
  // Lane t of plane k sits at x[k][t]: the four values of one plane of the four triangles share a
  // 16-byte row, which is what lets one vector operation evaluate a plane for all four.
  const TriangleSlab s = MakeTriangleSlab(Vec(0, 0, 0), Vec(2, 0, 0), Vec(0, 2, 0));
  TriangleSlabGroup g{};
  SetSlabLane(&g, 3, s);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(g.x[k][3], s.x[k]);
    EXPECT_EQ(g.y[k][3], s.y[k]);
    EXPECT_EQ(g.z[k][3], s.z[k]);
    EXPECT_EQ(g.w[k][3], s.w[k]);
    for (int t = 0; t < 3; ++t) EXPECT_EQ(g.x[k][t], 0.0f);
  }
  // The face plane z = 0 with normal +z and offset 0; edge 0 (a to b) lies on y = 0, outward −y.
  EXPECT_EQ(g.z[0][3], 1.0f);
  EXPECT_EQ(g.w[0][3], 0.0f);
  EXPECT_EQ(g.y[1][3], -1.0f);
}

TEST(TriangleSlabTest, GroupsSpanningCountsTheGroupsASlotRangeTouches) {
  EXPECT_EQ(SlabGroupsSpanning(0, 4), 1u);   // slots 0–3: group 0
  EXPECT_EQ(SlabGroupsSpanning(3, 1), 1u);   // slot 3: group 0
  EXPECT_EQ(SlabGroupsSpanning(3, 2), 2u);   // slots 3–4: groups 0, 1
  EXPECT_EQ(SlabGroupsSpanning(2, 3), 2u);   // slots 2–4: groups 0, 1
  EXPECT_EQ(SlabGroupsSpanning(8, 24), 6u);  // slots 8–31: groups 2–7
  EXPECT_EQ(SlabGroupsSpanning(5, 24), 7u);  // slots 5–28: groups 1–7
}

// The multi-group entry point (AVX-512 on CPUs that have it, four groups per pass) against group
// by group: the same bounds bit for bit and the same mask, for 1 to 8 groups, random triangles
// (some thin, hence all-zero planes), points near and far, and limits that split the lanes. On a
// CPU without AVX-512 both calls take the portable path and the test checks only the masks'
// layout.
TEST(TriangleSlabTest, GroupsAtOnceMatchGroupByGroup) {
  const auto corners = UniformPoints(8 * 4 * 3, Vec::Constant(-0.01), Vec::Constant(0.01), 21);
  const auto queries = UniformPoints(50, Vec::Constant(-0.03), Vec::Constant(0.03), 22);
  std::vector<TriangleSlabGroup> groups(8);
  for (int s = 0; s < 32; ++s) {
    const Vec a = corners[3 * s], b = corners[3 * s + 1];
    const Vec c = s % 7 == 3 ? Vec(0.5 * (a + b)) : corners[3 * s + 2];  // every 7th degenerate
    SetSlabLane(&groups[s / 4], s % 4, MakeTriangleSlab(a, b, c));
  }
  int differing_masks = 0;
  for (uint32_t count = 1; count <= 8; ++count) {
    for (const Vec& q : queries) {
      const float px = static_cast<float>(q.x()), py = static_cast<float>(q.y()), pz = static_cast<float>(q.z());
      for (const float limit : {0.0f, 1e-4f, 4e-4f, INFINITY}) {
        float fast[32], portable[32];
        const uint32_t m_fast =
            internal::TriangleSlabGroupsWithinWith(false, groups.data(), count, px, py, pz, limit, fast);
        const uint32_t m_portable =
            internal::TriangleSlabGroupsWithinWith(true, groups.data(), count, px, py, pz, limit, portable);
        ASSERT_EQ(m_fast, m_portable) << count << " groups, limit " << limit;
        uint32_t expected = 0;
        for (uint32_t k = 0; k < 4 * count; ++k) {
          ASSERT_EQ(fast[k], portable[k]) << "lane " << k << " of " << count << " groups";
          if (portable[k] <= limit) expected |= 1u << k;
        }
        EXPECT_EQ(m_portable, expected);
        if (m_portable != 0 && m_portable != (count == 8 ? ~0u : (1u << (4 * count)) - 1)) ++differing_masks;
      }
    }
  }
  EXPECT_GT(differing_masks, 100);  // the limits do split the lanes
}

}  // namespace
}  // namespace taxel::geometry
