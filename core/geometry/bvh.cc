#include "core/geometry/bvh.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/common/check.h"

namespace taxel::geometry {
namespace {

constexpr int kBins = 16;

double HalfArea(const Aabb& b) {
  if (b.is_empty()) return 0;
  const Eigen::Vector3d d = b.hi - b.lo;
  return d.x() * d.y() + d.y() * d.z() + d.z() * d.x();
}

struct BuildItem {
  uint32_t node;
  uint32_t begin, end;
  int depth;
};

}  // namespace

Bvh Bvh::Build(const std::vector<Aabb>& bounds, int max_leaf_size) {
  TAXEL_CHECK(!bounds.empty());
  max_leaf_size = std::max(1, max_leaf_size);
  const size_t n = bounds.size();
  Bvh bvh;
  bvh.order_.resize(n);
  std::vector<Eigen::Vector3d> centroids(n);
  Aabb all;
  for (size_t i = 0; i < n; ++i) {
    bvh.order_[i] = static_cast<uint32_t>(i);
    centroids[i] = bounds[i].center();
    all.Extend(bounds[i]);
  }
  const float inflate = static_cast<float>(1e-6 * std::max(1e-9, (all.hi - all.lo).maxCoeff()));

  bvh.nodes_.reserve(2 * n);
  bvh.nodes_.push_back({});
  std::vector<BuildItem> stack{{0, 0, static_cast<uint32_t>(n), 1}};
  while (!stack.empty()) {
    const BuildItem item = stack.back();
    stack.pop_back();
    bvh.depth_ = std::max(bvh.depth_, item.depth);
    Aabb box, cbox;
    for (uint32_t i = item.begin; i < item.end; ++i) {
      box.Extend(bounds[bvh.order_[i]]);
      cbox.Extend(centroids[bvh.order_[i]]);
    }
    BvhNode& node = bvh.nodes_[item.node];
    for (int a = 0; a < 3; ++a) {
      node.lo[a] = std::nextafter(static_cast<float>(box.lo[a]), -INFINITY) - inflate;
      node.hi[a] = std::nextafter(static_cast<float>(box.hi[a]), INFINITY) + inflate;
    }
    const uint32_t count = item.end - item.begin;
    if (count <= static_cast<uint32_t>(max_leaf_size) || item.depth >= kBvhMaxDepth - 1) {
      node.index = item.begin;
      node.count = count;
      continue;
    }

    // Binned SAH along the axis of largest centroid spread.
    int axis;
    (cbox.hi - cbox.lo).maxCoeff(&axis);
    const double c_lo = cbox.lo[axis], c_ext = cbox.hi[axis] - cbox.lo[axis];
    uint32_t mid;
    if (c_ext <= 0) {
      mid = item.begin + count / 2;  // all centroids coincide: split by count
    } else {
      std::array<Aabb, kBins> bin_box;
      std::array<uint32_t, kBins> bin_count{};
      auto bin_of = [&](uint32_t prim) {
        const int b = static_cast<int>(kBins * (centroids[prim][axis] - c_lo) / c_ext);
        return std::clamp(b, 0, kBins - 1);
      };
      for (uint32_t i = item.begin; i < item.end; ++i) {
        const int b = bin_of(bvh.order_[i]);
        bin_box[b].Extend(bounds[bvh.order_[i]]);
        ++bin_count[b];
      }
      // Sweep from the right to get suffix areas, then from the left choosing the best split.
      std::array<double, kBins> right_cost{};
      Aabb acc;
      uint32_t acc_n = 0;
      for (int b = kBins - 1; b > 0; --b) {
        acc.Extend(bin_box[b]);
        acc_n += bin_count[b];
        right_cost[b] = HalfArea(acc) * acc_n;
      }
      double best = INFINITY;
      int best_split = kBins / 2;
      acc = Aabb();
      acc_n = 0;
      for (int b = 0; b < kBins - 1; ++b) {
        acc.Extend(bin_box[b]);
        acc_n += bin_count[b];
        const double cost = HalfArea(acc) * acc_n + right_cost[b + 1];
        if (acc_n > 0 && acc_n < count && cost < best) {
          best = cost;
          best_split = b + 1;
        }
      }
      auto it = std::partition(bvh.order_.begin() + item.begin, bvh.order_.begin() + item.end,
                               [&](uint32_t prim) { return bin_of(prim) < best_split; });
      mid = static_cast<uint32_t>(it - bvh.order_.begin());
      if (mid == item.begin || mid == item.end) mid = item.begin + count / 2;
    }
    const uint32_t left = static_cast<uint32_t>(bvh.nodes_.size());
    bvh.nodes_[item.node].index = left;
    bvh.nodes_[item.node].count = 0;
    bvh.nodes_.push_back({});
    bvh.nodes_.push_back({});
    stack.push_back({left + 1, mid, item.end, item.depth + 1});
    stack.push_back({left, item.begin, mid, item.depth + 1});
  }
  bvh.nodes_.shrink_to_fit();
  return bvh;
}

}  // namespace taxel::geometry
