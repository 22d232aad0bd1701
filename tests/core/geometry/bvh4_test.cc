// Tests for core/geometry/bvh4.h: the collapse of a binary BVH (every primitive in exactly one
// leaf child, boxes that contain what lies below them, leaf sizes) and the 4-box distance test
// against hand values.
#include "core/geometry/bvh4.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::taxel::testing::RandomBoxes;
using Vec = Eigen::Vector3d;

bool ChildContains(const Bvh4Node& n, int c, const Aabb& b) {
  for (int a = 0; a < 3; ++a) {
    if (!(n.lo[a][c] <= b.lo[a] && b.hi[a] <= n.hi[a][c])) return false;
  }
  return true;
}

class Bvh4CollapseTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

// Walks the 4-wide tree: every primitive slot lies in exactly one leaf child, at most
// max(max_leaf_size, 4) per leaf (the binary leaves hold up to 4), and every child box contains
// the boxes of all primitives below it. Absent children have NaN bounds.
TEST_P(Bvh4CollapseTest, EveryPrimitiveInOneLeafInsideEveryBoxAbove) {
  const auto [n, max_leaf] = GetParam();
  const auto boxes = RandomBoxes(n, 77 + n);
  const Bvh bvh = Bvh::Build(boxes, 4);
  const Bvh4 bvh4 = Bvh4::FromBinary(bvh, max_leaf);
  const auto& nodes = bvh4.nodes();
  const auto& order = bvh.primitive_order();
  std::vector<int> slot_seen(n, 0), node_seen(nodes.size(), 0);
  // (node, the chain of (ancestor node, child slot) boxes that must contain what is below).
  struct Item {
    uint32_t node;
    std::vector<std::pair<uint32_t, int>> above;
  };
  std::vector<Item> stack{{0, {}}};
  uint32_t largest_leaf = 0;
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    ASSERT_LT(it.node, nodes.size());
    ASSERT_EQ(node_seen[it.node]++, 0);
    const Bvh4Node& node = nodes[it.node];
    for (int c = 0; c < 4; ++c) {
      if (node.index[c] == kBvh4Absent) {
        EXPECT_TRUE(std::isnan(node.lo[0][c]));
        EXPECT_EQ(node.count[c], 0u);
        continue;
      }
      auto above = it.above;
      above.push_back({it.node, c});
      if (node.count[c] == 0) {
        stack.push_back({node.index[c], above});
        continue;
      }
      largest_leaf = std::max(largest_leaf, node.count[c]);
      ASSERT_LE(node.index[c] + node.count[c], static_cast<uint32_t>(n));
      for (uint32_t s = node.index[c]; s < node.index[c] + node.count[c]; ++s) {
        ++slot_seen[s];
        for (const auto& [a, ac] : above) {
          EXPECT_TRUE(ChildContains(nodes[a], ac, boxes[order[s]])) << "slot " << s << " node " << a;
        }
      }
    }
  }
  for (int s = 0; s < n; ++s) EXPECT_EQ(slot_seen[s], 1) << "slot " << s;
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(node_seen[i], 1) << "node " << i;
  EXPECT_LE(largest_leaf, static_cast<uint32_t>(std::max(max_leaf, 4)));
  if (n > 16 * max_leaf) {
    EXPECT_GT(largest_leaf, static_cast<uint32_t>(max_leaf / 2));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Bvh4CollapseTest,
                         ::testing::Combine(::testing::Values(1, 3, 17, 1000), ::testing::Values(1, 4, 16)));

TEST(Bvh4CollapseTest, LargerLeavesMakeFewerNodes) {
  const auto boxes = RandomBoxes(4096, 5);
  const Bvh bvh = Bvh::Build(boxes, 4);
  // 4096 primitives in leaves of ≤ 4 need ≥ 1024 leaves, so ≥ 1023/3 4-wide nodes; with ≤ 16 the
  // tree needs a quarter as many leaves.
  const size_t small = Bvh4::FromBinary(bvh, 4).nodes().size();
  const size_t large = Bvh4::FromBinary(bvh, 16).nodes().size();
  EXPECT_GE(small, 341u);
  EXPECT_LT(large, small / 2);
}

TEST(Bvh4ChildDistancesTest, HandValues) {
  // Child 0: the box [0, 1]³; child 1: [2, 3] × [0, 1] × [0, 1]; children 2, 3 absent.
  Bvh4Node n;
  for (int c = 0; c < 4; ++c) {
    for (int a = 0; a < 3; ++a) n.lo[a][c] = n.hi[a][c] = std::numeric_limits<float>::quiet_NaN();
    n.index[c] = kBvh4Absent;
    n.count[c] = 0;
  }
  for (int a = 0; a < 3; ++a) {
    n.lo[a][0] = 0, n.hi[a][0] = 1;
    n.lo[a][1] = 0, n.hi[a][1] = 1;
  }
  n.lo[0][1] = 2, n.hi[0][1] = 3;
  float d2[4];
  // (1.5, 2, 0.5): 0.5 beyond child 0 in x and 1 in y (1.25); 0.5 short of child 1 in x (1.25).
  EXPECT_EQ(Bvh4ChildrenWithin(n, 1.5f, 2.0f, 0.5f, 1.25f, d2), 0x3u);
  EXPECT_EQ(d2[0], 1.25f);
  EXPECT_EQ(d2[1], 1.25f);
  EXPECT_EQ(Bvh4ChildrenWithin(n, 1.5f, 2.0f, 0.5f, 1.2f, d2), 0x0u);
  // Inside child 0: distance 0; child 1 is 1.5 away in x.
  EXPECT_EQ(Bvh4ChildrenWithin(n, 0.5f, 0.5f, 0.5f, 1.0f, d2), 0x1u);
  EXPECT_EQ(d2[0], 0.0f);
  EXPECT_EQ(d2[1], 2.25f);
  // Absent children are never within reach, even of an unbounded search.
  EXPECT_EQ(Bvh4ChildrenWithin(n, 0.5f, 0.5f, 0.5f, INFINITY, d2), 0x3u);
}

}  // namespace
}  // namespace taxel::geometry
