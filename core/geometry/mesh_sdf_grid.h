// A narrow-band signed-distance grid of a triangle mesh: the fast, approximate backend of mesh
// probes (sdf_backend GRID), with an error bound that is measured, not assumed.
//
// Layout. A cubic lattice of cell size h (metres) over the mesh bounds grown by the band, cut
// into bricks of 8×8×8 cells. A dense top-level array holds, per brick, the index of its node
// block or one of two markers for a brick that no point of the band reaches: "outside" or
// "inside". Only bricks that may hold a point with |sd| ≤ band get a block of 9×9×9 float
// node values (the nodes on a brick's faces are stored in both neighbours, so that a cell's
// eight corners are always in one block: one lookup per query, 2.9 kB per brick). Beside each
// block, two masks of its 512 cells (128 bytes): the cells whose eight corners are all finite, and
// the cells with a −inf corner; a query outside the band reads one mask word, not eight corners.
//
// Values. Every node value is the exact mesh signed distance (MeshSignedDistance::Query, signs
// included) rounded to float, or ±infinity beyond band + √3·h (a cell diagonal). A query
// interpolates the eight corners of its cell trilinearly; the normal is the normalised gradient
// of that interpolant. Since the signed distance is 1-Lipschitz, a point with |sd| ≤ band has
// all eight corners finite, and a cell with a +inf corner holds only points with sd > band.
//
// Answers (same bounded semantics as SignedDistanceResult):
//
// | where the point is                         | answer                                       |
// |--------------------------------------------|----------------------------------------------|
// | |sd| ≤ band (all corners finite)           | trilinear value, within the measured error   |
// | outside, sd > band (a +inf corner, or an    | distance = +inf: "farther than the band",    |
// |   "outside" brick, or off the lattice)      |   never a made-up number                     |
// | inside, sd < −band (a −inf corner, or an    | the exact query (MeshSignedDistance::Query): |
// |   "inside" brick)                           |   a deep penetration keeps its true depth    |
//
// Cell size from the requested error. The interpolation error of a smooth distance field shrinks
// as h² (curvature), at sharp edges and corners and on the medial axis as h. Build() searches h:
// starting at band/2, it evaluates the trilinear interpolant of exact corner values at sample
// points (random points of the band, every vertex and edge midpoint, where grids are worst) and
// shrinks h until the largest error is at most 0.7 × the requested one. It then builds the grid
// and measures the built grid against the exact signed distance on an independent set of points
// (other random points of the band, the vertices and edge midpoints); if that maximum exceeds the
// request, h shrinks and the grid is rebuilt (at most twice). stats() reports the measured max and
// p99 — the bound a user can see — with the cell size and the bytes.
//
// Work. Every node, search corner and check point costs one exact query; a small error on a large
// mesh is billions of them. Build() takes a limit on the queries of the whole build (search and
// rebuilds included) and refuses, before making them, what would pass it: first the least the
// requested error can cost, then each stage (mesh_sdf_grid_cost.h).
//
// Sides beyond the band: each connected region of bricks without a block takes the side of one
// of its brick centres (MeshSignedDistance::IsInside). For watertight meshes the side cannot
// change inside such a region; for open meshes (winding-number sign) a region is given one side.
//
// Thread-safe and immutable once built; Query allocates nothing.
#ifndef TAXEL_CORE_GEOMETRY_MESH_SDF_GRID_H_
#define TAXEL_CORE_GEOMETRY_MESH_SDF_GRID_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/common/executor.h"
#include "core/common/memory_budget.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/signed_distance_result.h"

namespace taxel::geometry {

class SdfGridQueryMeter;

/// What a grid is asked for.
struct SdfGridOptions {
  /// Requested largest |grid − exact| over the band (m), finite and > 0.
  double max_error = 1e-4;
  /// Half-width of the band (m), finite and > 0: points with |sd| ≤ band get interpolated
  /// answers. A probe of radius R can use the grid when R ≤ band.
  double band = 5e-3;
};

/// What a built grid measured about itself.
struct SdfGridStats {
  double requested_max_error = 0;  ///< m, SdfGridOptions::max_error
  double band = 0;                 ///< m
  double cell_size = 0;            ///< h (m)
  double max_error = 0;            ///< largest |grid − exact| over the check points (m)
  double p99_error = 0;            ///< 99th percentile of the same (m)
  int64_t num_check_points = 0;    ///< check points behind max_error and p99_error
  int64_t num_bricks = 0;          ///< bricks with a node block
  size_t bytes = 0;                ///< memory_bytes()
  double num_queries = 0;          ///< exact queries the build made (mesh_sdf_grid_cost.h)
};

class MeshSdfGrid {
 public:
  /// A query limit that never refuses.
  static constexpr double kUnlimitedQueries = std::numeric_limits<double>::infinity();

  /// Builds the grid of `mesh` on `executor` (bricks in parallel; the result does not depend on
  /// the number of workers). `field` names the options ("grid" → "grid.max_error"); refusals name
  /// `refusal_field`, by default "<field>.max_error". Cost: the exact queries of
  /// mesh_sdf_grid_cost.h, O(log n) each; nodes ≈ 1.4 × (band shell volume) / h³.
  /// @pre options.max_error and options.band finite and > 0 (validated at the edge: the server's
  ///      codec, DecodeMeshUpload).
  /// Errors, each before the work or allocation it refuses (the memory is reserved from `budget`,
  /// each rebuild reserving again), RESOURCE_EXHAUSTED naming `refusal_field`:
  /// - the least any build for `options` costs (SdfGridLeastQueries) exceeds `max_queries`
  ///   (checked before any query);
  /// - a stage (a search step, a build at the cell found) would, with what must follow it, take the
  ///   build past `max_queries`;
  /// - the grid's bytes do not fit `budget`.
  static absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> Build(std::shared_ptr<const MeshSignedDistance> mesh,
                                                                  const SdfGridOptions& options, Executor& executor,
                                                                  MemoryBudget& budget,
                                                                  double max_queries = kUnlimitedQueries,
                                                                  absl::string_view field = "grid",
                                                                  absl::string_view refusal_field = "");

  /// Signed distance at p_MQ (mesh frame M, m), per the table above. `max_distance` is only
  /// passed on to the exact query of deep inside points (the grid's reach is its band). No
  /// allocation; O(1) except deep inside.
  SignedDistanceResult Query(const Eigen::Vector3d& p_MQ,
                             double max_distance = std::numeric_limits<double>::infinity()) const;

  double band() const { return stats_.band; }
  double cell_size() const { return h_; }
  const SdfGridStats& stats() const { return stats_; }
  const MeshSignedDistance& mesh() const { return *mesh_; }
  size_t memory_bytes() const;

  static constexpr int kBrickCells = 8;
  static constexpr int kBrickNodes = kBrickCells + 1;
  static constexpr int kBrickValues = kBrickNodes * kBrickNodes * kBrickNodes;

 private:
  MeshSdfGrid() = default;
  static constexpr int32_t kOutsideBrick = -1, kInsideBrick = -2;

  /// Lattice of cell size h for `mesh` and `band`: origin and bricks per axis.
  void SetLattice(double h);
  /// Fills top_ and values_ (after SetLattice), charging its queries to `meter` before
  /// making them. RESOURCE_EXHAUSTED from `budget` or `meter`.
  absl::Status Fill(Executor& executor, MemoryBudget& budget, SdfGridQueryMeter& meter, absl::string_view field);
  /// Labels the bricks without a block: each connected region takes one side.
  void LabelEmptyBricks(std::vector<int32_t>* top) const;
  /// The cell masks of block `blk` from its node values (after Fill wrote them).
  void MaskCells(int64_t blk);

  // Per block, kMaskWords words: word z (z = 0..7) has bit 8y + x set when cell (x, y, z) of the
  // brick has eight finite corners (the band); word 8 + z when it has a −inf corner (deep inside).
  static constexpr int kMaskWords = 2 * kBrickCells;

  std::shared_ptr<const MeshSignedDistance> mesh_;
  Eigen::Vector3d origin_ = Eigen::Vector3d::Zero();  // node (0, 0, 0), mesh frame (m)
  double h_ = 0, inv_h_ = 0;
  Eigen::Vector3i bricks_ = Eigen::Vector3i::Zero();  // bricks per axis
  Eigen::Vector3d cells_ = Eigen::Vector3d::Zero();   // cells per axis (8 × bricks_), as doubles
  std::vector<int32_t> top_;                          // per brick: block index or a marker
  std::vector<float> values_;                         // kBrickValues per block, x fastest
  std::vector<uint64_t> masks_;                       // kMaskWords per block
  SdfGridStats stats_;
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_MESH_SDF_GRID_H_
