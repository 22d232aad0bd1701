// Tests for core/geometry/bvh.h (structure, bounds, safe pruning) and for the BVH-accelerated
// MeshSignedDistance::ClosestPoint against the brute-force reference of tests/support.
#include "core/geometry/bvh.h"

#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "core/geometry/closest_point_triangle.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_signed_distance.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::taxel::testing::BruteForceSquaredDistance;
using ::taxel::testing::RandomBoxes;
using ::taxel::testing::UniformPoints;
using Vec = Eigen::Vector3d;

Aabb NodeBox(const BvhNode& n) { return {Vec(n.lo[0], n.lo[1], n.lo[2]), Vec(n.hi[0], n.hi[1], n.hi[2])}; }

bool ContainsBox(const Aabb& outer, const Aabb& inner) {
  return (outer.lo.array() <= inner.lo.array()).all() && (inner.hi.array() <= outer.hi.array()).all();
}

// Walks the tree from the root and checks every structural invariant of the header.
void CheckStructure(const Bvh& bvh, const std::vector<Aabb>& boxes, int max_leaf_size) {
  const auto& nodes = bvh.nodes();
  const auto& order = bvh.primitive_order();
  const size_t n = boxes.size();
  ASSERT_EQ(order.size(), n);
  ASSERT_FALSE(nodes.empty());
  ASSERT_LT(nodes.size(), 2 * n);  // a binary tree with L ≤ n leaves has 2L − 1 nodes

  Aabb all;
  for (const Aabb& b : boxes) all.Extend(b);
  const double inflate = 1e-6 * (all.hi - all.lo).maxCoeff();

  std::vector<int> node_seen(nodes.size(), 0), slot_seen(n, 0), prim_seen(n, 0);
  struct Item {
    uint32_t node;
    int depth;
  };
  std::vector<Item> stack{{0, 1}};
  int max_depth = 0, leaves = 0;
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    ASSERT_LT(it.node, nodes.size());
    ASSERT_EQ(node_seen[it.node]++, 0) << "node " << it.node << " reached twice";
    max_depth = std::max(max_depth, it.depth);
    const BvhNode& node = nodes[it.node];
    const Aabb box = NodeBox(node);
    if (node.is_leaf()) {
      ++leaves;
      EXPECT_LE(node.count, static_cast<uint32_t>(max_leaf_size));
      ASSERT_LE(node.index + node.count, n);
      Aabb content;
      for (uint32_t s = node.index; s < node.index + node.count; ++s) {
        ++slot_seen[s];
        ASSERT_LT(order[s], n);
        ++prim_seen[order[s]];
        EXPECT_TRUE(ContainsBox(box, boxes[order[s]])) << "leaf " << it.node << " slot " << s;
        content.Extend(boxes[order[s]]);
      }
      // Rounded outwards and inflated by 1e-6 of the extent (float arithmetic: allow half of it).
      for (int a = 0; a < 3; ++a) {
        EXPECT_LE(box.lo[a], content.lo[a] - 0.5 * inflate);
        EXPECT_GE(box.hi[a], content.hi[a] + 0.5 * inflate);
      }
    } else {
      // Children follow their parent; both exist.
      ASSERT_GT(node.index, it.node);
      ASSERT_LT(node.index + 1, nodes.size());
      EXPECT_TRUE(ContainsBox(box, NodeBox(nodes[node.index])));
      EXPECT_TRUE(ContainsBox(box, NodeBox(nodes[node.index + 1])));
      stack.push_back({node.index, it.depth + 1});
      stack.push_back({node.index + 1, it.depth + 1});
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(node_seen[i], 1) << "node " << i << " unreachable";
  for (size_t s = 0; s < n; ++s) EXPECT_EQ(slot_seen[s], 1) << "slot " << s;
  // Every primitive appears exactly once in primitive_order (and so in exactly one leaf).
  for (size_t p = 0; p < n; ++p) EXPECT_EQ(prim_seen[p], 1) << "primitive " << p;
  EXPECT_EQ(static_cast<size_t>(2 * leaves - 1), nodes.size());
  EXPECT_EQ(bvh.depth(), max_depth);
  EXPECT_LE(bvh.depth(), kBvhMaxDepth);
  EXPECT_GT(bvh.memory_bytes(), 0u);
}

class BvhBuildTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BvhBuildTest, StructureAndBounds) {
  const auto [n, leaf] = GetParam();
  const auto boxes = RandomBoxes(n, 1234 + n);
  const Bvh bvh = Bvh::Build(boxes, leaf);
  CheckStructure(bvh, boxes, leaf);
  if (n <= leaf) {
    EXPECT_EQ(bvh.nodes().size(), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, BvhBuildTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 5, 17, 1000, 4096), ::testing::Values(1, 4, 8)));

TEST(BvhDegenerateBuildTest, CoincidentCentroidsSplitByCount) {
  // 100 identical boxes: no centroid spread, so every split is by count. Depth of a count split
  // of 100 down to leaves of ≤ 4: 100 -> 50 -> 25 -> 12/13 -> 6/7 -> 3/4: 6 levels.
  const std::vector<Aabb> boxes(100, Aabb::FromCenterHalf(Vec(0.5, -0.5, 2), Vec(0.1, 0.2, 0.3)));
  const Bvh bvh = Bvh::Build(boxes, 4);
  CheckStructure(bvh, boxes, 4);
  EXPECT_EQ(bvh.depth(), 6);
}

TEST(BvhDegenerateBuildTest, PointLikeAndFlatBoxes) {
  // Zero-volume boxes (points on a plane) are legal primitives.
  auto pts = UniformPoints(300, Vec(-1, -1, 0), Vec(1, 1, 0), 5);
  std::vector<Aabb> boxes;
  for (const Vec& p : pts) boxes.push_back({p, p});
  const Bvh bvh = Bvh::Build(boxes, 2);
  CheckStructure(bvh, boxes, 2);
}

TEST(NodeSquaredDistanceTest, HandValues) {
  // Box [0,1]×[0,2]×[0,3]; (2, −1, 1): excess (1, 1, 0) -> 2. Inside -> 0. (−3, 5, 7): (3, 3, 4) -> 34.
  const BvhNode node{{0, 0, 0}, 0, {1, 2, 3}, 1};
  EXPECT_EQ(NodeSquaredDistance(node, 2, -1, 1), 2.0f);
  EXPECT_EQ(NodeSquaredDistance(node, 0.5f, 1, 2), 0.0f);
  EXPECT_EQ(NodeSquaredDistance(node, -3, 5, 7), 34.0f);
}

TEST(NodeSquaredDistanceTest, NeverExceedsTheExactDistanceToAnyPrimitiveBelow) {
  // Safe pruning: for query points up to 3 extents away, the float node bound is at most the
  // exact squared distance to every primitive box in the subtree.
  const auto boxes = RandomBoxes(2000, 99);
  const Bvh bvh = Bvh::Build(boxes, 4);
  const auto& nodes = bvh.nodes();
  // Subtree primitive ranges: collect for every node the slots below it.
  std::vector<std::pair<uint32_t, uint32_t>> range(nodes.size());
  for (size_t i = nodes.size(); i-- > 0;) {
    const BvhNode& n = nodes[i];
    if (n.is_leaf()) {
      range[i] = {n.index, n.index + n.count};
    } else {
      range[i] = {std::min(range[n.index].first, range[n.index + 1].first),
                  std::max(range[n.index].second, range[n.index + 1].second)};
    }
  }
  const auto queries = UniformPoints(200, Vec::Constant(-3), Vec::Constant(3), 7);
  for (const Vec& q : queries) {
    const float qx = static_cast<float>(q.x()), qy = static_cast<float>(q.y()), qz = static_cast<float>(q.z());
    for (size_t i = 0; i < nodes.size(); i += 3) {
      const float bound = NodeSquaredDistance(nodes[i], qx, qy, qz);
      double exact = std::numeric_limits<double>::infinity();
      for (uint32_t s = range[i].first; s < range[i].second; ++s) {
        exact = std::min(exact, boxes[bvh.primitive_order()[s]].SquaredDistance(q));
      }
      ASSERT_LE(static_cast<double>(bound), exact) << "node " << i << " query " << q.transpose();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// MeshSignedDistance::ClosestPoint against brute force.
// ---------------------------------------------------------------------------------------------

struct NamedMesh {
  std::string name;
  MeshData data;
  friend void PrintTo(const NamedMesh& m, std::ostream* os) { *os << m.name; }
};

class ClosestPointTest : public ::testing::TestWithParam<NamedMesh> {
 protected:
  void SetUp() override {
    sdf_ = taxel::testing::MakeSdf(GetParam().data);
    const Aabb& b = sdf_->mesh().bounds();
    const Vec c = b.center(), h = 1.5 * b.half_extents();
    scale_ = b.half_extents().maxCoeff();
    // Uniform in 1.5× the bounds (inside and outside) plus points within 0.3·scale of the surface.
    points_ = UniformPoints(2000, c - h, c + h, 31);
    const auto near = taxel::testing::NearFeaturePoints(sdf_->mesh(), 1500, 1e-5 * scale_, 0.3 * scale_, 32);
    points_.insert(points_.end(), near.begin(), near.end());
    for (const Vec& p : points_) brute_.push_back(BruteForceSquaredDistance(sdf_->mesh(), p));
  }

  // The reported point is on the reported triangle, with the reported feature, at the reported
  // squared distance.
  void CheckResult(const Vec& p, const ClosestPointResult& r) const {
    ASSERT_GE(r.triangle, 0);
    ASSERT_LT(r.triangle, sdf_->mesh().num_triangles());
    const Triangle& t = sdf_->mesh().triangle(r.triangle);
    TriangleFeature f;
    const Vec q =
        ClosestPointOnTriangle(p, sdf_->mesh().vertex(t[0]), sdf_->mesh().vertex(t[1]), sdf_->mesh().vertex(t[2]), &f);
    EXPECT_EQ(f, r.feature);
    EXPECT_LE((q - r.point).norm(), 1e-15 * (1 + q.norm()));
    EXPECT_NEAR((p - r.point).squaredNorm(), r.squared_distance, 1e-15 * (1 + r.squared_distance));
  }

  std::shared_ptr<const MeshSignedDistance> sdf_;
  double scale_ = 1;  // half the largest extent of the mesh
  std::vector<Vec> points_;
  std::vector<double> brute_;
};

TEST_P(ClosestPointTest, UnboundedEqualsBruteForce) {
  int inside = 0;
  for (size_t i = 0; i < points_.size(); ++i) {
    ClosestPointResult r;
    ASSERT_TRUE(sdf_->ClosestPoint(points_[i], std::numeric_limits<double>::infinity(), &r));
    ASSERT_NEAR(r.squared_distance, brute_[i], 1e-14 * (1 + brute_[i])) << points_[i].transpose();
    CheckResult(points_[i], r);
    inside += taxel::testing::BruteForceWindingNumber(sdf_->mesh(), points_[i]) > 0.5;
  }
  // Both sides of the surface are covered.
  EXPECT_GT(inside, 300);
  EXPECT_LT(inside, static_cast<int>(points_.size()) - 300);
}

TEST_P(ClosestPointTest, BoundedReturnsFalseExactlyBeyondMaxDistance) {
  for (double relative : {1e-3, 0.01, 0.05, 0.2}) {
    const double max_distance = relative * scale_;
    int found = 0, not_found = 0;
    for (size_t i = 0; i < points_.size(); ++i) {
      const double d = std::sqrt(brute_[i]);
      if (std::abs(d - max_distance) < 1e-12) continue;  // on the threshold within rounding
      ClosestPointResult r;
      const bool got = sdf_->ClosestPoint(points_[i], max_distance, &r);
      ASSERT_EQ(got, d <= max_distance) << "max " << max_distance << " d " << d << " at " << points_[i].transpose();
      if (got) {
        ++found;
        ASSERT_NEAR(r.squared_distance, brute_[i], 1e-14 * (1 + brute_[i]));
        CheckResult(points_[i], r);
      } else {
        ++not_found;
      }
    }
    EXPECT_GT(found, 50) << max_distance;
    EXPECT_GT(not_found, 50) << max_distance;
  }
}

TEST(ClosestPointFarTest, DistantQueriesStillFindTheClosestTriangle) {
  // A unit sphere mesh queried from 10 to 1e9 radii away in random directions. The exact answer
  // is the brute-force minimum; pruning must not drop the closest triangle however far the query
  // (a query point rounded to float moves by 2^-24·|p|, beyond the bounds' 1e-6 inflation once
  // |p| > ~20 extents). At these distances neighbouring triangles differ in squared distance by
  // ~2|p|·(sagitta-scale offsets), far above the 1e-13 relative tolerance.
  const auto sdf = taxel::testing::MakeSdf(GeodesicSphere(1.0, 6));
  const auto dirs = taxel::testing::UniformDirections(200, 17);
  for (double radius : {10.0, 1e2, 1e3, 1e5, 1e7, 1e9}) {
    for (const Vec& u : dirs) {
      const Vec p = radius * u;
      const double brute = BruteForceSquaredDistance(sdf->mesh(), p);
      ClosestPointResult r;
      ASSERT_TRUE(sdf->ClosestPoint(p, std::numeric_limits<double>::infinity(), &r));
      ASSERT_NEAR(r.squared_distance, brute, 1e-13 * brute) << "at " << p.transpose();
      // And the sign: far outside.
      EXPECT_GT(sdf->Query(p).distance, 0) << p.transpose();
    }
  }
}

TEST(ClosestPointBoxTest, MaxDistanceIsInclusive) {
  // Box mesh with half extents (0.5, 1, 1.5), n = 4: (0.5, 0, 0) is a mesh vertex (centre of the
  // +x face), and (0.75, 0, 0) is exactly 0.25 from it (0.25² = 0.0625 is exact in binary); the
  // vertex is returned exactly by every incident triangle's vertex region.
  const auto sdf = taxel::testing::MakeSdf(SubdividedBox(Vec(0.5, 1.0, 1.5), 4));
  const Vec p(0.75, 0, 0);
  ClosestPointResult r;
  ASSERT_TRUE(sdf->ClosestPoint(p, 0.25, &r));
  EXPECT_EQ(r.squared_distance, 0.0625);
  EXPECT_EQ(r.point, Vec(0.5, 0, 0));
  EXPECT_FALSE(sdf->ClosestPoint(p, std::nextafter(0.25, 0.0), &r));
  EXPECT_FALSE(sdf->ClosestPoint(p, 0.0, &r));
  // Zero reach still finds a point exactly on the surface.
  ASSERT_TRUE(sdf->ClosestPoint(Vec(0.5, 0, 0), 0.0, &r));
  EXPECT_EQ(r.squared_distance, 0.0);
}

// A closed bicone ("needle") of `n` sides: apexes at z = ±half_length, a ring of radius r at
// z = 0. Its 2n triangles are slivers when r ≪ half_length (|cross| / longest² ≈ r·sin(π/n) /
// half_length):
//
//        * (0, 0, +L)
//       /|\ .
//      / | \ .      side view: every triangle joins an apex to one side of the ring
//     *--+--*  ring, radius r
//      \ | /
//       \|/
//        * (0, 0, −L)
MeshData Bicone(double r, double half_length, int n) {
  MeshData m;
  m.vertices = {Vec(0, 0, half_length), Vec(0, 0, -half_length)};
  for (int i = 0; i < n; ++i) {
    const double phi = 2 * M_PI * i / n;
    m.vertices.push_back(Vec(r * std::cos(phi), r * std::sin(phi), 0));
  }
  for (int i = 0; i < n; ++i) {
    const int32_t a = 2 + i, b = 2 + (i + 1) % n;
    m.triangles.push_back({0, a, b});
    m.triangles.push_back({1, b, a});
  }
  return m;
}

TEST(ClosestPointSliverTest, NeedlesEqualBruteForce) {
  // r / L = 1e-4 (slivers whose float pre-test planes are trusted) and 1e-8 (planes too tilted by
  // rounding to trust: such triangles are always tested exactly).
  for (const double r : {1e-4, 1e-8}) {
    const auto sdf = taxel::testing::MakeSdf(Bicone(r, 1.0, 12));
    auto points = UniformPoints(500, Vec(-10 * r, -10 * r, -1.2), Vec(10 * r, 10 * r, 1.2), 41);
    const auto near = taxel::testing::NearFeaturePoints(sdf->mesh(), 500, 1e-3 * r, 3 * r, 42);
    points.insert(points.end(), near.begin(), near.end());
    for (const Vec& p : points) {
      const double brute = BruteForceSquaredDistance(sdf->mesh(), p);
      ClosestPointResult c;
      ASSERT_TRUE(sdf->ClosestPoint(p, std::numeric_limits<double>::infinity(), &c));
      ASSERT_NEAR(c.squared_distance, brute, 1e-14 * (1 + brute)) << "r " << r << " at " << p.transpose();
      // Bounded at 2× the distance: still found, still the same.
      ASSERT_TRUE(sdf->ClosestPoint(p, 2 * std::sqrt(brute), &c));
      ASSERT_NEAR(c.squared_distance, brute, 1e-14 * (1 + brute)) << "r " << r << " at " << p.transpose();
    }
  }
}

std::vector<NamedMesh> Meshes() {
  // A 1 cm sphere whose vertices sit ~100 m from the origin of its frame: the query point and the
  // float node bounds are then coarse (ulp(100 f) = 7.6e-6) compared with the features.
  MeshData offset = GeodesicSphere(0.01, 8);
  for (Vec& v : offset.vertices) v += Vec(100.0, -50.0, 30.0);
  return {{"geodesic_sphere", GeodesicSphere(1.0, 8)},
          {"offset_small_sphere", offset},
          {"torus", Torus(1.0, 0.3, 48, 24)},
          {"subdivided_box", SubdividedBox(Vec(0.5, 1.0, 1.5), 6)}};
}

INSTANTIATE_TEST_SUITE_P(Meshes, ClosestPointTest, ::testing::ValuesIn(Meshes()),
                         [](const ::testing::TestParamInfo<NamedMesh>& info) { return info.param.name; });

}  // namespace
}  // namespace taxel::geometry
