// Signed distance from points to a triangle mesh, accelerated by a flat BVH.
//
// Sign rules:
//  - watertight meshes: the angle-weighted pseudo-normal of the closest feature (face, edge or
//    vertex) — Bærentzen & Aanæs, IEEE TVCG 11(3), 2005. Exact for any closed, consistently
//    oriented mesh, including points arbitrarily close to edges and vertices.
//  - other meshes (holes, non-manifold or inconsistently oriented edges): the generalised winding
//    number w(Q) ≥ 1/2 means inside — Jacobson, Kavan & Sorkine-Hornung, "Robust inside-outside
//    segmentation using generalized winding numbers", SIGGRAPH 2013; evaluated hierarchically with
//    the first-order (dipole) far-field expansion of Barill et al., "Fast winding numbers for
//    soups and clouds", SIGGRAPH 2018 (accuracy parameter beta = 2).
//
// Closest points come from a 16-wide BVH (bvh_wide.h) with leaves of up to 24 triangles, traversed
// nearest child first. Its box tests and the per-triangle pre-tests of a leaf (triangle_slab.h:
// face and edge planes, 64 bytes per triangle) run in float with margins that keep the pruning
// exact; only triangles that may be closer than the best so far get the exact double test
// (closest_point_triangle.h), so answers are those of a brute-force search over all triangles.
// The traversal is bound by memory latency, so it prefetches every child in reach as soon as it
// knows it (inner nodes whole, leaves their first slab lines), and the normal data of the
// triangle it accepts.
//
// Bounded queries (the tactile case: a probe only needs surfaces within its radius) prune every
// BVH node farther than max_distance. When no surface is within reach, the side is read from a
// coarse inside/outside voxel grid built once per watertight mesh (cells crossed by the surface
// are resolved by an exact query), so a far-outside probe costs one pruned traversal. The grid
// also decides the side of points in cells no triangle touches when a surface is within reach
// (same answer as the pseudo-normal, but immune to rounding for points far from the mesh).
#ifndef TAXEL_CORE_GEOMETRY_MESH_SIGNED_DISTANCE_H_
#define TAXEL_CORE_GEOMETRY_MESH_SIGNED_DISTANCE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "core/common/huge_page_allocator.h"
#include "core/geometry/bvh.h"
#include "core/geometry/bvh_wide.h"
#include "core/geometry/signed_distance_result.h"
#include "core/geometry/triangle_mesh.h"
#include "core/geometry/triangle_slab.h"

namespace taxel::geometry {

/// Unsigned closest-point answer (no sign), for callers that only need proximity.
struct ClosestPointResult {
  double squared_distance = std::numeric_limits<double>::infinity();
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  ///< p_MC
  int32_t triangle = -1;                            ///< original triangle index
  TriangleFeature feature = TriangleFeature::kFace;
  Eigen::Vector3d face_normal = Eigen::Vector3d::UnitZ();  ///< the closest triangle's unit face normal
};

/// Work done by one closest-point traversal (ClosestPointCounted), for benchmarks.
struct TraversalStats {
  int64_t nodes = 0;           ///< 16-wide nodes entered (each is one test of its 16 boxes)
  int64_t triangles = 0;       ///< exact point–triangle evaluations (not the float pre-tests)
  int64_t pretests = 0;        ///< float slab pre-tests: one per triangle of each leaf entered
                               ///< (none for points beyond kTriangleSlabMaxCoordinate)
  int64_t pretest_passes = 0;  ///< of those, the ones the pre-test let through
};

/// Acceleration structures of one mesh, built once and shared (thread-safe, immutable).
class MeshSignedDistance {
 public:
  /// Builds the BVH, the winding-number tree and (watertight meshes) the sign grid.
  /// Cost O(n log n) in the number of triangles.
  static std::shared_ptr<const MeshSignedDistance> Build(std::shared_ptr<const TriangleMesh> mesh);

  /// Signed distance at p_MQ (mesh frame M, metres); see SignedDistanceResult for the bounded
  /// semantics. max_distance = +inf gives the exact answer everywhere.
  SignedDistanceResult Query(const Eigen::Vector3d& p_MQ,
                             double max_distance = std::numeric_limits<double>::infinity()) const;

  /// Closest point on the surface within max_distance (inclusive); false when there is none.
  /// Where several triangles are closest (a shared edge or vertex), any one of them may be
  /// reported. No allocation; O(log n) typical for near points.
  bool ClosestPoint(const Eigen::Vector3d& p_MQ, double max_distance, ClosestPointResult* out) const;
  /// ClosestPoint that also adds the work it did to *stats (same answers, slightly slower).
  bool ClosestPointCounted(const Eigen::Vector3d& p_MQ, double max_distance, ClosestPointResult* out,
                           TraversalStats* stats) const;

  /// Generalised winding number at p_MQ: ≈1 inside, ≈0 outside, 1/2 on the surface of a closed
  /// mesh; fractional near holes.
  double WindingNumber(const Eigen::Vector3d& p_MQ) const;

  /// Inside test with the mesh's sign rule.
  bool IsInside(const Eigen::Vector3d& p_MQ) const;

  const TriangleMesh& mesh() const { return *mesh_; }
  const std::shared_ptr<const TriangleMesh>& mesh_ptr() const { return mesh_; }
  const Bvh& bvh() const { return bvh_; }
  size_t memory_bytes() const;
  /// An upper bound, before building, of what the arrays on huge pages of a mesh of
  /// `num_triangles` triangles lose to rounding up to whole pages (0 below about 8k triangles):
  /// the part of memory_bytes() that grows by steps rather than per triangle.
  static double HugePageRoundingBound(int64_t num_triangles);

 private:
  MeshSignedDistance() = default;
  template <bool kCount>
  bool ClosestPointImpl(const Eigen::Vector3d& p, double max_distance, ClosestPointResult* out,
                        TraversalStats* stats) const;
  void BuildWindingTree();
  void BuildSignGrid();
  /// Sign of p from the closest feature (watertight meshes): true when inside.
  bool InsideByPseudoNormal(const Eigen::Vector3d& p, const ClosestPointResult& c) const;
  Eigen::Vector3d FeatureNormal(const ClosestPointResult& c) const;
  /// Starts loading what FeatureNormal will read for an edge or vertex feature f of the triangle in
  /// leaf `slot` (a face's normal comes with the slot): the first triangle a traversal accepts is
  /// usually its answer.
  void PrefetchFeatureNormal(uint32_t slot, TriangleFeature f) const;
  /// Sign-grid lookup: 0 outside, 1 inside, 2 undecided (surface cell).
  int GridSide(const Eigen::Vector3d& p) const;

  std::shared_ptr<const TriangleMesh> mesh_;
  Bvh bvh_;                                     // binary: build and the winding-number tree
  // Closest-point queries: 16 children per node (half the nodes per query of a 4-wide tree: fewer
  // dependent node loads per query; torus50k 2.3 → 2.7 M queries/s, docs/performance.md).
  static constexpr int kClosestPointWidth = 16;
  using ClosestPointTree = BvhWide<kClosestPointWidth>;
  ClosestPointTree closest_tree_;
  // Per triangle in BVH leaf order, kLeafStride entries: its three vertices, then its face normal
  // (read for the sign and the normal of a face region, on the cache lines of the vertices).
  static constexpr size_t kLeafStride = 4;
  // These arrays and the 16-wide BVH are read at random by every query: on huge pages when large
  // (huge_page_allocator.h), which spares most TLB misses.
  HugePageVector<Eigen::Vector3d> leaf_vertices_;
  HugePageVector<int32_t> leaf_triangle_;    // original triangle index per leaf slot
  HugePageVector<TriangleSlabGroup> leaf_slabs_;  // slots 4g..4g+3 in group g: planes of the float pre-test
  double coordinate_bound_ = 0;                 // largest |coordinate| of any vertex (m)
  double tiny_distance_ = 0;                    // 1e-10 of the bounds' diagonal (m): "on the surface"

  // Winding-number tree: per BVH node, the area-weighted normal sum (½ Σ (b−a)×(c−a)), its
  // area-weighted centroid and the radius of a ball around that centroid holding the node.
  struct WindingNode {
    Eigen::Vector3d normal_sum;
    Eigen::Vector3d centroid;
    double area;
    double radius;
  };
  std::vector<WindingNode> winding_;

  // Sign grid (watertight meshes only).
  Eigen::Vector3d grid_origin_ = Eigen::Vector3d::Zero();
  double grid_cell_ = 0;
  Eigen::Vector3i grid_dims_ = Eigen::Vector3i::Zero();
  std::vector<uint8_t> grid_;  // 0 outside, 1 inside, 2 surface
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_MESH_SIGNED_DISTANCE_H_
