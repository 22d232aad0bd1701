// A conservative lower bound on the distance from a point to a triangle, from four planes stored
// in float, evaluated for four triangles at once. Closest-point traversals use it to skip
// the exact (double) closest-point test of triangles that cannot beat the best distance so far.
//
// The bound. Let n be the unit normal of triangle T = (a, b, c) and, for edge k (vertex k to
// vertex k + 1), m_k = (v_{k+1} − v_k) × n / |·| the unit normal of the plane through the edge
// perpendicular to T, pointing away from T (so m_k·q ≤ m_k·v_k for every q in T). For any point p
// and any q in T, split p − q into its part along n and its part in the plane of T:
//
//   |p − q|² = (n·(p − q))² + |P(p − q)|²,   n·(p − q) = n·p − n·a = h   (the same for every q),
//   |P(p − q)| ≥ m_k·(p − q) ≥ m_k·p − m_k·v_k = e_k                        (m_k lies in the plane),
//
// hence  dist(p, T)² ≥ h² + max(0, e_0, e_1, e_2)².  The bound is the exact distance when the
// closest point lies on the face or on an edge (inside that edge's span), and smaller near a
// vertex. It is the point–triangle analogue of the slab test of Kay & Kajiya (SIGGRAPH 1986).
//
// Rounding. The planes are computed in double from the vertices and stored as float, and the
// bound is evaluated in float from p rounded to float. Each plane value then differs from the
// exact one by at most δ ≈ 12·u·(|p|∞ + R) (u = 2⁻²⁴, R = the largest |coordinate| of the
// triangle's vertices), so the float bound never exceeds the exact distance by more than
// √2·δ < kTriangleSlabSlackPerUnit·u·(|p|∞ + R), and its square by more than a relative 3u more.
// A caller prunes a triangle only when the float bound squared exceeds
// (r + slack)²·(1 + 4u) for the radius r it searches (see TriangleSlabSlack()). The normals of
// triangles so thin that double rounding tilts them visibly (|(b − a) × (c − a)| < 1e-6 of the
// squared longest edge) are not trusted: such a triangle gets all-zero planes, whose bound is 0,
// so it is always tested exactly.
#ifndef TAXEL_CORE_GEOMETRY_TRIANGLE_SLAB_H_
#define TAXEL_CORE_GEOMETRY_TRIANGLE_SLAB_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "Eigen/Core"
#include "Eigen/Geometry"  // cross()

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace taxel::geometry {

/// The four planes of one triangle, one per lane: lane 0 the supporting plane (normal n, offset
/// n·a), lane 1 + k the plane of edge k (normal m_k, offset m_k·v_k). A plane's value at p is
/// x·p_x + y·p_y + z·p_z − w. One cache line.
struct alignas(64) TriangleSlab {
  float x[4], y[4], z[4], w[4];
};
static_assert(sizeof(TriangleSlab) == 64, "TriangleSlab is one cache line");

/// Slack factor of the float bound (see the file comment): prune with TriangleSlabSlack().
inline constexpr double kTriangleSlabSlackPerUnit = 32.0;
/// Beyond this |coordinate| of the query point (metres) the float evaluation is not used (its
/// squares could overflow); callers test every triangle exactly instead.
inline constexpr double kTriangleSlabMaxCoordinate = 1e15;

/// The planes of triangle (a, b, c) (any frame; metres). Triangles with
/// |(b − a) × (c − a)| < 1e-6·(longest edge)² get all-zero planes (bound 0: never pruned).
inline TriangleSlab MakeTriangleSlab(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c) {
  TriangleSlab s{};
  const Eigen::Vector3d v[3] = {a, b, c};
  const Eigen::Vector3d cross = (b - a).cross(c - a);
  const double longest2 = std::max({(b - a).squaredNorm(), (c - b).squaredNorm(), (a - c).squaredNorm()});
  if (!(cross.norm() >= 1e-6 * longest2)) return s;
  const Eigen::Vector3d n = cross.normalized();
  auto set = [&](int lane, const Eigen::Vector3d& normal, const Eigen::Vector3d& on_plane) {
    s.x[lane] = static_cast<float>(normal.x());
    s.y[lane] = static_cast<float>(normal.y());
    s.z[lane] = static_cast<float>(normal.z());
    s.w[lane] = static_cast<float>(normal.dot(on_plane));
  };
  set(0, n, a);
  for (int k = 0; k < 3; ++k) set(1 + k, (v[(k + 1) % 3] - v[k]).cross(n).normalized(), v[k]);
  return s;
}

/// Absolute slack (metres) to add to a search radius before comparing it with float bounds from
/// slabs of a mesh whose vertex coordinates are all within ±coordinate_bound, for a query point
/// whose largest |coordinate| is p_max.
inline double TriangleSlabSlack(double p_max, double coordinate_bound) {
  return kTriangleSlabSlackPerUnit * (1.0 / (1 << 24)) * (p_max + coordinate_bound);
}

/// The planes of four consecutive leaf slots, coordinate-major: x[k][t] is the x component of
/// plane k (as in TriangleSlab) of triangle t. One coordinate of every plane of the four triangles
/// per cache line, so that the bounds of four triangles come out lane by lane without a transpose.
struct alignas(64) TriangleSlabGroup {
  float x[4][4], y[4][4], z[4][4], w[4][4];
};
static_assert(sizeof(TriangleSlabGroup) == 256, "TriangleSlabGroup is four cache lines");

/// The number of groups, from group first / 4 on, that hold slots [first, first + count).
constexpr uint32_t SlabGroupsSpanning(uint32_t first, uint32_t count) { return (first % 4 + count + 3) / 4; }

/// Puts slab `s` into lane t of group `g`.
inline void SetSlabLane(TriangleSlabGroup* g, int t, const TriangleSlab& s) {
  for (int k = 0; k < 4; ++k) {
    g->x[k][t] = s.x[k];
    g->y[k][t] = s.y[k];
    g->z[k][t] = s.z[k];
    g->w[k][t] = s.w[k];
  }
}

/// Float lower bounds on the squared distance from (px, py, pz) to the four triangles of `g`, into
/// lb2[0, 4); returns the mask of those with lb2 ≤ limit (bit t for lane t). A lane with all-zero
/// planes (an unused lane, or a triangle too thin to trust) gives 0. SSE on x86-64, scalar
/// elsewhere: the same operations in the same order, hence the same values.
inline unsigned TriangleSlabGroupWithin(const TriangleSlabGroup& g, float px, float py, float pz, float limit,
                                        float lb2[4]) {
#if defined(__SSE2__)
  const __m128 x = _mm_set1_ps(px), y = _mm_set1_ps(py), z = _mm_set1_ps(pz);
  auto plane = [&](int k) {
    const __m128 xy = _mm_add_ps(_mm_mul_ps(_mm_load_ps(g.x[k]), x), _mm_mul_ps(_mm_load_ps(g.y[k]), y));
    return _mm_sub_ps(_mm_add_ps(xy, _mm_mul_ps(_mm_load_ps(g.z[k]), z)), _mm_load_ps(g.w[k]));
  };
  const __m128 h = plane(0), e0 = plane(1), e1 = plane(2), e2 = plane(3);
  const __m128 e = _mm_max_ps(_mm_max_ps(e0, e1), _mm_max_ps(e2, _mm_setzero_ps()));
  const __m128 d2 = _mm_add_ps(_mm_mul_ps(h, h), _mm_mul_ps(e, e));
  _mm_storeu_ps(lb2, d2);
  return static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(d2, _mm_set1_ps(limit))));
#else
  unsigned mask = 0;
  for (int t = 0; t < 4; ++t) {
    float v[4];
    for (int k = 0; k < 4; ++k) v[k] = ((g.x[k][t] * px + g.y[k][t] * py) + g.z[k][t] * pz) - g.w[k][t];
    const float e = std::max(std::max(v[1], v[2]), std::max(v[3], 0.0f));
    lb2[t] = v[0] * v[0] + e * e;
    mask |= lb2[t] <= limit ? (1u << t) : 0u;
  }
  return mask;
#endif
}

/// TriangleSlabGroupWithin for `groups` (1..8) consecutive groups: lb2[4g + t] and bit 4g + t of
/// the mask for lane t of groups[g]. The same values as group by group; AVX-512 (four groups per
/// pass, the same operations in the same order, without contraction into fused multiply-adds)
/// when the CPU has it.
uint32_t TriangleSlabGroupsWithin(const TriangleSlabGroup* groups, uint32_t count, float px, float py, float pz,
                                  float limit, float* lb2);

namespace internal {
/// TriangleSlabGroupsWithin by TriangleSlabGroupWithin group by group (`portable`) or by the
/// fastest path this CPU has (what TriangleSlabGroupsWithin uses). For tests: the two agree.
uint32_t TriangleSlabGroupsWithinWith(bool portable, const TriangleSlabGroup* groups, uint32_t count, float px,
                                      float py, float pz, float limit, float* lb2);
}  // namespace internal

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_TRIANGLE_SLAB_H_
