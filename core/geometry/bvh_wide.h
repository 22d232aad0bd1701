// Wide BVHs collapsed from the binary one, for closest-point queries with SIMD box tests.
//
// Each node holds the boxes of up to W children (W a multiple of 4) in structure-of-arrays form,
// so passes of 4-lane float arithmetic (one 16-lane pass for W = 16 on CPUs with AVX-512) give the
// squared distance from a query point to all of them (Wald et al., "Getting rid of packets", 2008,
// and Embree's BVH4/BVH8 use the same layout). The leaves are the binary BVH's leaves, or its
// subtrees small enough: their primitive ranges index the same primitive_order().
// MeshSignedDistance uses W = 16: a query enters about half as many nodes as in the 4-wide tree
// (torus50k: 3.7 against 7.9), so fewer dependent node loads.
#ifndef TAXEL_CORE_GEOMETRY_BVH_WIDE_H_
#define TAXEL_CORE_GEOMETRY_BVH_WIDE_H_

#include <algorithm>
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
inline constexpr uint32_t kBvhWideAbsent = 0xFFFFFFFFu;

template <int W>
struct alignas(64) BvhWideNode {  // cache-line aligned: whole lines (W = 4: two, W = 16: eight)
  static_assert(W % 4 == 0 && W >= 4 && W <= 32, "W is a multiple of 4, at most 32");
  float lo[3][W];  ///< lo[axis][child]; an absent child has NaN bounds (never within reach)
  float hi[3][W];
  uint32_t index[W];  ///< inner child: node index; leaf child: first primitive slot; kBvhWideAbsent
  uint32_t count[W];  ///< leaf child: number of primitives (> 0); inner or absent child: 0
};
static_assert(sizeof(BvhWideNode<4>) == 128, "a 4-wide node is two cache lines");
static_assert(sizeof(BvhWideNode<16>) == 512, "a 16-wide node is eight cache lines");

template <int W>
class BvhWide {
 public:
  using Node = BvhWideNode<W>;
  /// A bound on the entries a traversal's stack holds: at most W − 1 pushed per level, and a
  /// collapsed tree is no deeper than the binary one (≤ kBvhMaxDepth).
  static constexpr int kStackSize = (W - 1) * kBvhMaxDepth + 4;

  BvhWide() = default;
  /// Collapses `bvh`: each node takes the up to W descendants reached by repeatedly opening its
  /// largest-area inner child. Binary leaves, and whole binary subtrees holding at most
  /// `max_leaf_size` primitives, become leaf children (a subtree's primitives are one contiguous
  /// range of primitive_order()); a leaf child may hold more than max_leaf_size primitives only
  /// where a binary leaf does. A binary BVH that is a single leaf becomes one node with one leaf
  /// child. Larger leaves make a shallower tree: worth it when a leaf's primitives can be
  /// pre-tested cheaply (MeshSignedDistance uses 24 with triangle_slab.h).
  static BvhWide FromBinary(const Bvh& bvh, int max_leaf_size = 4);
  /// An upper bound on the nodes FromBinary makes of `primitives` primitives: every node but the
  /// root stands for a binary subtree of more than max_leaf_size primitives; the nodes with fewer
  /// than W children have only leaf children (nothing left to open), so their subtrees are
  /// disjoint: at most primitives / (max_leaf_size + 1) of them besides the root. The others have
  /// W children each; counting children, (W − 1)·full + (the rest) + 1 ≤ leaves ≤ primitives.
  static constexpr int64_t MaxNodes(int64_t primitives, int max_leaf_size) {
    return primitives / (W - 1) + primitives / (static_cast<int64_t>(max_leaf_size) + 1) + 2;
  }
  using NodeArray = HugePageVector<Node>;
  const NodeArray& nodes() const { return nodes_; }
  size_t memory_bytes() const { return HugePageVectorBytes(nodes_); }

 private:
  NodeArray nodes_;  // on huge pages when large (huge_page_allocator.h): queries walk it at random
};

/// Squared distances from (px, py, pz) to the W child boxes of `n`, in float, into d2[W], and the
/// mask of those at squared distance ≤ limit (bit c for child c; absent children never are).
/// SSE on x86-64, four children per pass, scalar elsewhere: the same operations per child, so the
/// same values on every CPU.
template <int W>
inline unsigned BvhChildrenWithin(const BvhWideNode<W>& n, float px, float py, float pz, float limit, float d2[W]) {
  unsigned mask = 0;
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps(), lim = _mm_set1_ps(limit);
  const __m128 x = _mm_set1_ps(px), y = _mm_set1_ps(py), z = _mm_set1_ps(pz);
  for (int o = 0; o < W; o += 4) {
    // Per axis: max(0, lo − p, p − hi). _mm_max_ps returns its second operand when either is NaN,
    // so the NaN bounds of an absent child give a NaN distance, which no comparison accepts.
    const __m128 dx = _mm_max_ps(
        zero, _mm_max_ps(_mm_sub_ps(_mm_load_ps(n.lo[0] + o), x), _mm_sub_ps(x, _mm_load_ps(n.hi[0] + o))));
    const __m128 dy = _mm_max_ps(
        zero, _mm_max_ps(_mm_sub_ps(_mm_load_ps(n.lo[1] + o), y), _mm_sub_ps(y, _mm_load_ps(n.hi[1] + o))));
    const __m128 dz = _mm_max_ps(
        zero, _mm_max_ps(_mm_sub_ps(_mm_load_ps(n.lo[2] + o), z), _mm_sub_ps(z, _mm_load_ps(n.hi[2] + o))));
    const __m128 d = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)), _mm_mul_ps(dz, dz));
    _mm_storeu_ps(d2 + o, d);
    mask |= static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(d, lim))) << o;
  }
#else
  const float p[3] = {px, py, pz};
  for (int c = 0; c < W; ++c) {
    float s = 0;
    for (int a = 0; a < 3; ++a) {
      const float lo = n.lo[a][c], hi = n.hi[a][c];
      const float d = std::isnan(lo) ? lo : std::max(std::max(lo - p[a], p[a] - hi), 0.0f);
      s += d * d;
    }
    d2[c] = s;
    mask |= d2[c] <= limit ? (1u << c) : 0u;
  }
#endif
  return mask;
}

/// BvhChildrenWithin for a 16-wide node: one AVX-512 pass where the CPU has it (CpuHasAvx512()),
/// the four SSE passes above otherwise. The same operations per child, each rounded as the SSE
/// pass rounds it (never fused): the same d2 and mask on every CPU.
unsigned BvhChildrenWithin16(const BvhWideNode<16>& n, float px, float py, float pz, float limit, float d2[16]);

namespace internal {
/// BvhChildrenWithin16 on the SSE/portable path (`portable`) or the fastest this CPU has. For tests.
unsigned BvhChildrenWithin16With(bool portable, const BvhWideNode<16>& n, float px, float py, float pz, float limit,
                                 float d2[16]);
}  // namespace internal

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_BVH_WIDE_H_
