// A 4-wide BVH collapsed from the binary one, for closest-point queries with SIMD box tests.
//
// Each node holds the boxes of up to four children in structure-of-arrays form, so one pass of
// 4-lane float arithmetic gives the squared distance from a query point to all four (Wald et
// al., "Getting rid of packets", 2008, and Embree's BVH4 use the same layout). The leaves are the
// binary BVH's leaves: their primitive ranges index the same primitive_order().
#ifndef TAXEL_CORE_GEOMETRY_BVH4_H_
#define TAXEL_CORE_GEOMETRY_BVH4_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/common/huge_page_allocator.h"
#include "core/geometry/bvh.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace taxel::geometry {

/// index[] of a child slot that holds nothing.
inline constexpr uint32_t kBvh4Absent = 0xFFFFFFFFu;

struct alignas(64) Bvh4Node {  // cache-line aligned: a node is exactly two lines
  float lo[3][4];  ///< lo[axis][child]; an absent child has NaN bounds (never within reach)
  float hi[3][4];
  uint32_t index[4];  ///< inner child: node index; leaf child: first primitive slot; kBvh4Absent
  uint32_t count[4];  ///< leaf child: number of primitives (> 0); inner or absent child: 0
};
static_assert(sizeof(Bvh4Node) == 128, "Bvh4Node is two cache lines");

/// Maximum depth of a Bvh4 built from a Bvh of depth ≤ kBvhMaxDepth, and a stack size bound:
/// a traversal pushes at most 3 entries per level.
inline constexpr int kBvh4StackSize = 3 * kBvhMaxDepth + 4;

class Bvh4 {
 public:
  Bvh4() = default;
  /// Collapses `bvh`: each node takes the up to four descendants reached by repeatedly opening
  /// its largest-area inner child. Binary leaves, and whole binary subtrees holding at most
  /// `max_leaf_size` primitives, become leaf children (a subtree's primitives are one contiguous
  /// range of primitive_order()); a leaf child may hold more than max_leaf_size primitives only
  /// where a binary leaf does. A binary BVH that is a single leaf becomes one node with one leaf
  /// child. Larger leaves make a shallower tree: worth it when a leaf's primitives can be
  /// pre-tested cheaply (MeshSignedDistance uses 24 with triangle_slab.h).
  static Bvh4 FromBinary(const Bvh& bvh, int max_leaf_size = 4);
  using NodeArray = HugePageVector<Bvh4Node>;
  const NodeArray& nodes() const { return nodes_; }
  size_t memory_bytes() const { return HugePageVectorBytes(nodes_); }

 private:
  NodeArray nodes_;  // on huge pages when large (huge_page_allocator.h): queries walk it at random
};

/// Squared distances from (px, py, pz) to the four child boxes of `n`, in float, into d2[4]
/// (+inf for absent children). SSE on x86-64, scalar elsewhere.
inline void Bvh4ChildDistances(const Bvh4Node& n, float px, float py, float pz, float d2[4]) {
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps();
  const __m128 x = _mm_set1_ps(px), y = _mm_set1_ps(py), z = _mm_set1_ps(pz);
  // Per axis: max(0, lo − p, p − hi). _mm_max_ps returns its second operand when either is NaN,
  // so the NaN bounds of an absent child give a NaN distance, which no comparison accepts.
  const __m128 dx =
      _mm_max_ps(zero, _mm_max_ps(_mm_sub_ps(_mm_load_ps(n.lo[0]), x), _mm_sub_ps(x, _mm_load_ps(n.hi[0]))));
  const __m128 dy =
      _mm_max_ps(zero, _mm_max_ps(_mm_sub_ps(_mm_load_ps(n.lo[1]), y), _mm_sub_ps(y, _mm_load_ps(n.hi[1]))));
  const __m128 dz =
      _mm_max_ps(zero, _mm_max_ps(_mm_sub_ps(_mm_load_ps(n.lo[2]), z), _mm_sub_ps(z, _mm_load_ps(n.hi[2]))));
  _mm_storeu_ps(d2, _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)), _mm_mul_ps(dz, dz)));
#else
  const float p[3] = {px, py, pz};
  for (int c = 0; c < 4; ++c) {
    float s = 0;
    for (int a = 0; a < 3; ++a) {
      const float lo = n.lo[a][c], hi = n.hi[a][c];
      const float d = std::isnan(lo) ? lo : std::max(std::max(lo - p[a], p[a] - hi), 0.0f);
      s += d * d;
    }
    d2[c] = s;
  }
#endif
}

/// Bit c set when child c of `n` is at squared distance ≤ limit (absent children never are).
inline unsigned Bvh4ChildrenWithin(const Bvh4Node& n, float px, float py, float pz, float limit, float d2[4]) {
  Bvh4ChildDistances(n, px, py, pz, d2);
#if defined(__SSE2__)
  return static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(d2), _mm_set1_ps(limit))));
#else
  unsigned mask = 0;
  for (int c = 0; c < 4; ++c) mask |= d2[c] <= limit ? (1u << c) : 0u;
  return mask;
#endif
}

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_BVH4_H_
