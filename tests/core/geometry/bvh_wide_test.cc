// Tests for core/geometry/bvh_wide.h: the collapse of a binary BVH into 4- and 16-wide trees (every
// primitive in exactly one leaf child, boxes that contain what lies below them, leaf sizes, depth),
// the child-box distance test against hand values, and its one-pass AVX-512 form against the SSE
// passes.
#include "core/geometry/bvh_wide.h"

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
using ::taxel::testing::UniformPoints;
using Vec = Eigen::Vector3d;

template <int W>
bool ChildContains(const BvhWideNode<W>& n, int c, const Aabb& b) {
  for (int a = 0; a < 3; ++a) {
    if (!(n.lo[a][c] <= b.lo[a] && b.hi[a] <= n.hi[a][c])) return false;
  }
  return true;
}

// Walks the W-wide tree: every primitive slot lies in exactly one leaf child, at most
// max(max_leaf_size, 4) per leaf (the binary leaves hold up to 4), and every child box contains
// the boxes of all primitives below it. Absent children have NaN bounds. Returns the depth (a
// lone root: 1).
template <int W>
int CheckCollapse(int n, int max_leaf) {
  const auto boxes = RandomBoxes(n, 77 + n);
  const Bvh bvh = Bvh::Build(boxes, 4);
  const BvhWide<W> tree = BvhWide<W>::FromBinary(bvh, max_leaf);
  const auto& nodes = tree.nodes();
  const auto& order = bvh.primitive_order();
  std::vector<int> slot_seen(n, 0), node_seen(nodes.size(), 0);
  // (node, the chain of (ancestor node, child slot) boxes that must contain what is below).
  struct Item {
    uint32_t node;
    std::vector<std::pair<uint32_t, int>> above;
  };
  std::vector<Item> stack{{0, {}}};
  uint32_t largest_leaf = 0;
  int depth = 0;
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    EXPECT_LT(it.node, nodes.size());
    if (it.node >= nodes.size()) return -1;
    EXPECT_EQ(node_seen[it.node]++, 0);
    depth = std::max(depth, static_cast<int>(it.above.size()) + 1);
    const BvhWideNode<W>& node = nodes[it.node];
    for (int c = 0; c < W; ++c) {
      if (node.index[c] == kBvhWideAbsent) {
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
      EXPECT_LE(node.index[c] + node.count[c], static_cast<uint32_t>(n));
      for (uint32_t s = node.index[c]; s < node.index[c] + node.count[c] && s < static_cast<uint32_t>(n); ++s) {
        ++slot_seen[s];
        for (const auto& [a, ac] : above) {
          EXPECT_TRUE(ChildContains<W>(nodes[a], ac, boxes[order[s]])) << "slot " << s << " node " << a;
        }
      }
    }
  }
  for (int s = 0; s < n; ++s) EXPECT_EQ(slot_seen[s], 1) << "slot " << s;
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(node_seen[i], 1) << "node " << i;
  EXPECT_LE(static_cast<int64_t>(nodes.size()), BvhWide<W>::MaxNodes(n, max_leaf));
  EXPECT_LE(largest_leaf, static_cast<uint32_t>(std::max(max_leaf, 4)));
  if (n > 16 * max_leaf) {
    EXPECT_GT(largest_leaf, static_cast<uint32_t>(max_leaf / 2));
  }
  return depth;
}

class BvhWideCollapseTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BvhWideCollapseTest, EveryPrimitiveInOneLeafInsideEveryBoxAbove) {
  const auto [n, max_leaf] = GetParam();
  EXPECT_GE(CheckCollapse<4>(n, max_leaf), 1);
  EXPECT_GE(CheckCollapse<16>(n, max_leaf), 1);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BvhWideCollapseTest,
                         ::testing::Combine(::testing::Values(1, 3, 17, 1000), ::testing::Values(1, 4, 16, 24)));

TEST(BvhWideCollapseTest, LargerLeavesMakeFewerNodes) {
  const auto boxes = RandomBoxes(4096, 5);
  const Bvh bvh = Bvh::Build(boxes, 4);
  // 4096 primitives in leaves of ≤ 4 need ≥ 1024 leaves, so ≥ 1023/3 4-wide nodes; with ≤ 16 the
  // tree needs a quarter as many leaves.
  const size_t small = BvhWide<4>::FromBinary(bvh, 4).nodes().size();
  const size_t large = BvhWide<4>::FromBinary(bvh, 16).nodes().size();
  EXPECT_GE(small, 341u);
  EXPECT_LT(large, small / 2);
  // ≥ 1024 leaves under nodes of at most 16 children: ≥ 1023/15 = 69 16-wide nodes, and fewer
  // than the 4-wide tree has.
  const size_t wide = BvhWide<16>::FromBinary(bvh, 4).nodes().size();
  EXPECT_GE(wide, 69u);
  EXPECT_LT(wide, small / 2);
}

TEST(BvhWideCollapseTest, SixteenWideIsShallower) {
  // 4096 boxes in leaves of ≤ 4: at least 1024 leaves, so a 4-wide tree is at least
  // ⌈log4 1024⌉ = 5 levels deep; a 16-wide one needs only ⌈log16 1024⌉ = 3 and, opening the
  // binary tree 15 times per node instead of 3, comes out shallower.
  const int depth4 = CheckCollapse<4>(4096, 4), depth16 = CheckCollapse<16>(4096, 4);
  EXPECT_GE(depth4, 5);
  EXPECT_LT(depth16, depth4);
  EXPECT_GE(depth16, 3);
}

// Child a: the box [0, 1]³; child b: [2, 3] × [0, 1] × [0, 1]; the others absent.
template <int W>
BvhWideNode<W> TwoBoxNode(int a, int b) {
  BvhWideNode<W> n;
  for (int c = 0; c < W; ++c) {
    for (int k = 0; k < 3; ++k) n.lo[k][c] = n.hi[k][c] = std::numeric_limits<float>::quiet_NaN();
    n.index[c] = kBvhWideAbsent;
    n.count[c] = 0;
  }
  for (int k = 0; k < 3; ++k) {
    n.lo[k][a] = 0, n.hi[k][a] = 1;
    n.lo[k][b] = 0, n.hi[k][b] = 1;
  }
  n.lo[0][b] = 2, n.hi[0][b] = 3;
  return n;
}

// `within` is BvhChildrenWithin<W> or one of the 16-wide entry points.
template <int W, typename Within>
void CheckHandValues(int a, int b, Within within) {
  const BvhWideNode<W> n = TwoBoxNode<W>(a, b);
  const unsigned both = (1u << a) | (1u << b);
  float d2[W];
  // (1.5, 2, 0.5): 0.5 beyond child a in x and 1 in y (1.25); 0.5 short of child b in x (1.25).
  EXPECT_EQ(within(n, 1.5f, 2.0f, 0.5f, 1.25f, d2), both);
  EXPECT_EQ(d2[a], 1.25f);
  EXPECT_EQ(d2[b], 1.25f);
  EXPECT_EQ(within(n, 1.5f, 2.0f, 0.5f, 1.2f, d2), 0x0u);
  // Inside child a: distance 0; child b is 1.5 away in x.
  EXPECT_EQ(within(n, 0.5f, 0.5f, 0.5f, 1.0f, d2), 1u << a);
  EXPECT_EQ(d2[a], 0.0f);
  EXPECT_EQ(d2[b], 2.25f);
  // Absent children are never within reach, even of an unbounded search.
  EXPECT_EQ(within(n, 0.5f, 0.5f, 0.5f, INFINITY, d2), both);
}

template <int W>
void CheckHandValues(int a, int b) {
  CheckHandValues<W>(a, b, [](const BvhWideNode<W>& n, float x, float y, float z, float limit, float* d2) {
    return BvhChildrenWithin(n, x, y, z, limit, d2);
  });
}

TEST(BvhChildrenWithinTest, HandValues) {
  CheckHandValues<4>(0, 1);
  CheckHandValues<4>(3, 2);
  // In a 16-wide node the children come in four passes of four: one in the second, one in the
  // last.
  CheckHandValues<16>(5, 14);
  CheckHandValues<16>(0, 15);
}

// The 16-wide entry point (one AVX-512 pass on CPUs that have it) and its portable path on the
// same hand values.
TEST(BvhChildrenWithinTest, SixteenWideEntryPointsHandValues) {
  for (const bool portable : {false, true}) {
    const auto within = [portable](const BvhWideNode<16>& n, float x, float y, float z, float limit, float* d2) {
      return internal::BvhChildrenWithin16With(portable, n, x, y, z, limit, d2);
    };
    CheckHandValues<16>(5, 14, within);
    CheckHandValues<16>(0, 15, within);
    CheckHandValues<16>(7, 8, within);
  }
}

// The 16-wide entry point against the SSE passes bit for bit: random boxes (some absent, some
// flat), points inside, near and far, and limits set to a child's own distance and the floats on
// either side of it, so that the masks split exactly at the boundary. On a CPU without AVX-512
// both calls take the same path and the test checks nothing more than the hand values above.
TEST(BvhChildrenWithinTest, SixteenWideOnePassMatchesFourPasses) {
  const auto boxes = RandomBoxes(400 * 16, 31);  // centres in [−1, 1]³
  const auto queries = UniformPoints(400, Vec::Constant(-1.1), Vec::Constant(1.1), 32);
  int split_masks = 0;
  for (size_t q = 0; q < queries.size(); ++q) {
    BvhWideNode<16> n;
    unsigned present = 0;
    for (int c = 0; c < 16; ++c) {
      const Aabb& b = boxes[16 * q + c];
      const bool absent = (q + c) % 9 == 4;
      for (int a = 0; a < 3; ++a) {
        n.lo[a][c] = absent ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(b.lo[a]);
        n.hi[a][c] = absent ? std::numeric_limits<float>::quiet_NaN()
                            : static_cast<float>(c % 5 == 2 ? b.lo[a] : b.hi[a]);  // every 5th flat
      }
      n.index[c] = absent ? kBvhWideAbsent : static_cast<uint32_t>(c);
      n.count[c] = absent ? 0 : 1;
      if (!absent) present |= 1u << c;
    }
    const Vec& p = queries[q];
    const float px = static_cast<float>(p.x()), py = static_cast<float>(p.y()), pz = static_cast<float>(p.z());
    float probe[16];
    BvhChildrenWithin(n, px, py, pz, INFINITY, probe);
    const float at = probe[q % 16] == probe[q % 16] ? probe[q % 16] : 0.1f;  // a child's own distance
    for (const float limit : {0.0f, std::nextafter(at, 0.0f), at, std::nextafter(at, INFINITY), INFINITY}) {
      float fast[16], sse[16];
      const unsigned m_fast = internal::BvhChildrenWithin16With(false, n, px, py, pz, limit, fast);
      const unsigned m_sse = internal::BvhChildrenWithin16With(true, n, px, py, pz, limit, sse);
      ASSERT_EQ(m_fast, m_sse) << "query " << q << ", limit " << limit;
      unsigned expected = 0;
      for (int c = 0; c < 16; ++c) {
        if (std::isnan(sse[c])) {
          ASSERT_TRUE(std::isnan(fast[c])) << "child " << c;
          ASSERT_EQ(n.index[c], kBvhWideAbsent);
        } else {
          ASSERT_EQ(fast[c], sse[c]) << "child " << c << " of query " << q;
        }
        if (sse[c] <= limit) expected |= 1u << c;
      }
      EXPECT_EQ(m_sse, expected);
      if (m_sse != 0 && m_sse != present) ++split_masks;
    }
  }
  EXPECT_GT(split_masks, 100);  // the limits do split the children
}

}  // namespace
}  // namespace taxel::geometry
