// A flat bounding-volume hierarchy over primitive bounding boxes.
//
// Layout (in the style of Coal's BV_node and MuJoCo's flat BVH): nodes live in one contiguous
// array; an inner node stores the index of its first child and the second child follows it;
// a leaf stores a range [first, first + count) into primitive_order(). Bounds are float, rounded
// outwards and inflated by 1e-6 of the scene extent, so that distance lower bounds computed from
// them (in double, from the unrounded query point) never exceed the exact ones (safe pruning).
//
// Built top-down with a binned surface-area heuristic (16 bins, Wald 2007) down to leaves of at
// most `max_leaf_size` primitives. Build is O(n log n); the tree has fewer than 2n nodes.
#ifndef TAXEL_CORE_GEOMETRY_BVH_H_
#define TAXEL_CORE_GEOMETRY_BVH_H_

#include <cstdint>
#include <vector>

#include "core/geometry/aabb.h"

namespace taxel::geometry {

struct BvhNode {
  float lo[3];
  uint32_t index;  ///< inner: first child (second is index + 1); leaf: first primitive slot
  float hi[3];
  uint32_t count;  ///< number of primitives in a leaf; 0 for inner nodes

  bool is_leaf() const { return count != 0; }
};
static_assert(sizeof(BvhNode) == 32, "BvhNode must stay one half cache line");

/// Maximum depth of any Bvh; traversal stacks of this size never overflow.
inline constexpr int kBvhMaxDepth = 64;

class Bvh {
 public:
  Bvh() = default;
  /// Builds over `bounds` (one box per primitive, all finite and non-empty).
  /// @pre !bounds.empty().
  static Bvh Build(const std::vector<Aabb>& bounds, int max_leaf_size = 4);

  const std::vector<BvhNode>& nodes() const { return nodes_; }
  /// Primitive index for each leaf slot.
  const std::vector<uint32_t>& primitive_order() const { return order_; }
  int depth() const { return depth_; }
  size_t memory_bytes() const { return nodes_.capacity() * sizeof(BvhNode) + order_.capacity() * sizeof(uint32_t); }

 private:
  std::vector<BvhNode> nodes_;
  std::vector<uint32_t> order_;
  int depth_ = 0;
};

/// Squared distance from point (px, py, pz) to a node's box, in float (0 inside). Rounding the
/// query point to float moves it by up to 2^-24·|p|, and the float products lose ~1e-7 relative:
/// a safe lower bound only while |p| and the distance stay within a few extents of the bounds.
inline float NodeSquaredDistance(const BvhNode& n, float px, float py, float pz) {
  const float dx = std::max(std::max(n.lo[0] - px, px - n.hi[0]), 0.0f);
  const float dy = std::max(std::max(n.lo[1] - py, py - n.hi[1]), 0.0f);
  const float dz = std::max(std::max(n.lo[2] - pz, pz - n.hi[2]), 0.0f);
  return dx * dx + dy * dy + dz * dz;
}

/// Squared distance from p to a node's box, in double (0 inside). Never exceeds the exact squared
/// distance to anything inside the node, wherever p is (the float bounds are rounded outwards).
/// This is the bound the traversals use.
inline double NodeSquaredDistance(const BvhNode& n, const Eigen::Vector3d& p) {
  const double dx = std::max(std::max(double{n.lo[0]} - p.x(), p.x() - double{n.hi[0]}), 0.0);
  const double dy = std::max(std::max(double{n.lo[1]} - p.y(), p.y() - double{n.hi[1]}), 0.0);
  const double dz = std::max(std::max(double{n.lo[2]} - p.z(), p.z() - double{n.hi[2]}), 0.0);
  return dx * dx + dy * dy + dz * dz;
}

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_BVH_H_
