#include "core/geometry/bvh_wide.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace taxel::geometry {
namespace {

float HalfArea(const BvhNode& n) {
  const float dx = n.hi[0] - n.lo[0], dy = n.hi[1] - n.lo[1], dz = n.hi[2] - n.lo[2];
  return dx * dy + dy * dz + dz * dx;
}

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
          if (!is_leaf(kids[k]) && HalfArea(bin[kids[k]]) > best_area) {
            best_area = HalfArea(bin[kids[k]]);
            best = static_cast<int>(k);
          }
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

}  // namespace taxel::geometry
