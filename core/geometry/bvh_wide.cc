#include "core/geometry/bvh_wide.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common/avx512.h"
#include "core/common/cpu_features.h"

namespace taxel::geometry {
namespace {

float HalfArea(const BvhNode& n) {
  const float dx = n.hi[0] - n.lo[0], dy = n.hi[1] - n.lo[1], dz = n.hi[2] - n.lo[2];
  return dx * dy + dy * dz + dz * dx;
}

#if defined(__x86_64__)
TAXEL_AVX512_BEGIN
// The 16 children in one pass. Per axis max(0, max(lo − p, p − hi)) as on the SSE path (maxps
// returns its second operand when either is NaN, so an absent child's NaN bounds give NaN), then
// (dx² + dy²) + dz² in explicitly rounded operations, never contracted into fused multiply-adds:
// every lane rounds as the SSE pass does.
constexpr int kRound = kAvx512RoundNearest;

// The squared distance along one axis from p to the 16 slabs [lo, hi].
TAXEL_AVX512 inline __m512 AxisSquared16(const float* lo, const float* hi, float p) {
  const __m512 v = _mm512_set1_ps(p);
  const __m512 below = _mm512_sub_round_ps(_mm512_load_ps(lo), v, kRound);
  const __m512 above = _mm512_sub_round_ps(v, _mm512_load_ps(hi), kRound);
  const __m512 d = _mm512_max_ps(_mm512_setzero_ps(), _mm512_max_ps(below, above));
  return _mm512_mul_round_ps(d, d, kRound);
}

TAXEL_AVX512 unsigned ChildrenWithin16Avx512(const BvhWideNode<16>& n, float px, float py, float pz, float limit,
                                             float* d2) {
  const __m512 xy = _mm512_add_round_ps(AxisSquared16(n.lo[0], n.hi[0], px), AxisSquared16(n.lo[1], n.hi[1], py),
                                        kRound);
  const __m512 d = _mm512_add_round_ps(xy, AxisSquared16(n.lo[2], n.hi[2], pz), kRound);
  _mm512_storeu_ps(d2, d);
  return _mm512_cmp_ps_mask(d, _mm512_set1_ps(limit), _CMP_LE_OQ);
}
TAXEL_AVX512_END
#endif

}  // namespace

template <int W>
BvhWide<W> BvhWide<W>::FromBinary(const Bvh& bvh, int max_leaf_size) {
  BvhWide out;
  const auto& bin = bvh.nodes();
  if (bin.empty()) return out;
  // Primitive range [first, end) of every binary subtree (children follow their parent, so a
  // reverse sweep is bottom-up). A subtree's slots are contiguous in primitive_order().
  std::vector<std::pair<uint32_t, uint32_t>> range(bin.size());
  for (size_t i = bin.size(); i-- > 0;) {
    if (bin[i].is_leaf()) {
      range[i] = {bin[i].index, bin[i].index + bin[i].count};
    } else {
      range[i] = {range[bin[i].index].first, range[bin[i].index + 1].second};
    }
  }
  // A binary leaf, or a subtree small enough, becomes one leaf child.
  auto is_leaf = [&](uint32_t b) {
    return bin[b].is_leaf() || range[b].second - range[b].first <= static_cast<uint32_t>(max_leaf_size);
  };
  // Work list of (binary node, wide node to fill).
  std::vector<std::pair<uint32_t, uint32_t>> work;
  out.nodes_.push_back({});
  work.push_back({0, 0});
  while (!work.empty()) {
    const auto [b, q] = work.back();
    work.pop_back();
    // Gather up to W children.
    std::vector<uint32_t> kids;
    if (is_leaf(b)) {
      kids.push_back(b);
    } else {
      kids = {bin[b].index, bin[b].index + 1};
      while (kids.size() < static_cast<size_t>(W)) {
        int best = -1;
        float best_area = -1;
        for (size_t k = 0; k < kids.size(); ++k) {
          if (is_leaf(kids[k])) continue;
          const float area = HalfArea(bin[kids[k]]);
          if (area > best_area) best_area = area, best = static_cast<int>(k);
        }
        if (best < 0) break;
        const uint32_t open = kids[best];
        kids[best] = bin[open].index;
        kids.insert(kids.begin() + best + 1, bin[open].index + 1);
      }
    }
    Node node;
    for (int c = 0; c < W; ++c) {
      for (int a = 0; a < 3; ++a) {
        node.lo[a][c] = std::numeric_limits<float>::quiet_NaN();
        node.hi[a][c] = std::numeric_limits<float>::quiet_NaN();
      }
      node.index[c] = kBvhWideAbsent;
      node.count[c] = 0;
    }
    for (size_t c = 0; c < kids.size(); ++c) {
      const BvhNode& k = bin[kids[c]];
      for (int a = 0; a < 3; ++a) {
        node.lo[a][c] = k.lo[a];
        node.hi[a][c] = k.hi[a];
      }
      if (is_leaf(kids[c])) {
        node.index[c] = range[kids[c]].first;
        node.count[c] = range[kids[c]].second - range[kids[c]].first;
      } else {
        node.index[c] = static_cast<uint32_t>(out.nodes_.size());
        out.nodes_.push_back({});
        work.push_back({kids[c], node.index[c]});
      }
    }
    out.nodes_[q] = node;
  }
  out.nodes_.shrink_to_fit();
  return out;
}

template class BvhWide<4>;
template class BvhWide<16>;

namespace internal {
unsigned BvhChildrenWithin16With(bool portable, const BvhWideNode<16>& n, float px, float py, float pz, float limit,
                                 float d2[16]) {
#if defined(__x86_64__)
  if (!portable && CpuHasAvx512()) return ChildrenWithin16Avx512(n, px, py, pz, limit, d2);
#endif
  return BvhChildrenWithin(n, px, py, pz, limit, d2);
}
}  // namespace internal

unsigned BvhChildrenWithin16(const BvhWideNode<16>& n, float px, float py, float pz, float limit, float d2[16]) {
  return internal::BvhChildrenWithin16With(false, n, px, py, pz, limit, d2);
}

}  // namespace taxel::geometry
