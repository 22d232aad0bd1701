// Content-addressed store of uploaded meshes, shared by every scene of a server.
#ifndef TAXEL_CORE_GEOMETRY_MESH_STORE_H_
#define TAXEL_CORE_GEOMETRY_MESH_STORE_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "core/common/executor.h"
#include "core/common/memory_budget.h"
#include "core/geometry/mesh_sdf_grid.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/triangle_mesh.h"

namespace taxel::geometry {

/// Where scenes find uploaded meshes by content id: the whole store, or the part of it a tenant
/// may see (server/scene_registry.h).
class MeshLookup {
 public:
  virtual ~MeshLookup() = default;
  /// The mesh with content id `id`, scaled per axis by `scale` (NOT_FOUND, see MeshNotFound, for
  /// an unknown id; INVALID_ARGUMENT for a zero or non-finite scale component).
  virtual absl::StatusOr<std::shared_ptr<const MeshSignedDistance>> Get(
      const std::string& id, const Eigen::Vector3d& scale = Eigen::Vector3d::Ones()) const = 0;
  /// Bytes of mesh `id` and its structures (a scaled copy takes as much); 0 for an unknown id.
  virtual size_t mesh_bytes(const std::string& id) const = 0;
  /// The narrow-band grid (mesh_sdf_grid.h) of the unscaled mesh `id` whose band is at least
  /// `min_band` (m): the one built on upload or for an earlier sensor when its band suffices, else
  /// one built now — with the error asked for at upload, or kDefaultGridMaxError — and kept for
  /// later users. Its bytes are reserved from `budget` (RESOURCE_EXHAUSTED naming `field`).
  /// NOT_FOUND for an unknown id; this default (a lookup that cannot build grids) answers
  /// FAILED_PRECONDITION naming `field`.
  virtual absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> Grid(const std::string& id, double min_band,
                                                                  MemoryBudget& budget, absl::string_view field) const;

  /// The error a grid is built for when nobody asked for one (m).
  static constexpr double kDefaultGridMaxError = 1e-4;
  /// The smallest band a grid is built with (m).
  static constexpr double kMinGridBand = 1e-3;
};

/// The NOT_FOUND every lookup answers for a mesh it does not have.
absl::Status MeshNotFound(const std::string& id);

/// Thread-safe store of meshes and their acceleration structures, keyed by content id.
///
/// Add() is idempotent: uploading the same vertices and triangles again returns the same id and
/// stores nothing new. Scaled variants (non-unit mesh_scale in a scene) are built on first use
/// and shared under (id, scale) while some scene holds them: the store keeps only a weak
/// reference, so a variant is freed with the last scene that uses it (and one built for a scene
/// whose creation then failed is freed at once). Entries are held by shared_ptr, so a mesh stays
/// alive while any scene uses it even after Remove().
class MeshStore final : public MeshLookup {
 public:
  struct AddResult {
    std::string id;
    bool newly_added = false;
    std::shared_ptr<const MeshSignedDistance> mesh;
    std::shared_ptr<const MeshSdfGrid> grid;  ///< the mesh's grid: the one asked for, else any it has
  };

  /// Upper bound of the bytes a mesh of this size takes once built (measured on geodesic spheres
  /// and tori of 20 to 200k triangles: 100 kB to 310 kB of fixed cost, mostly the sign grid, plus
  /// 350 to 370 B per triangle; the bound takes 320 kB + 420 B per triangle + 64 B per vertex),
  /// plus, from about 8k triangles on, what the query arrays lose to whole huge pages
  /// (MeshSignedDistance::HugePageRoundingBound). Checked against the built size in
  /// memory_budget_test.
  static double EstimateBytes(int64_t num_vertices, int64_t num_triangles);

  /// Validates (TriangleMesh::Create) and builds the acceleration structures once. With `grid`,
  /// also builds (or keeps, by AddGrid's rule) the mesh's narrow-band grid, its bytes reserved from
  /// `budget`; errors of MeshSdfGrid::Build name "grid.max_error". Nothing is stored until all of
  /// it is built: a failed call leaves the store as it was.
  absl::StatusOr<AddResult> Add(std::vector<Eigen::Vector3d> vertices, std::vector<Triangle> triangles,
                                absl::string_view field = "mesh",
                                const std::optional<SdfGridOptions>& grid = std::nullopt,
                                MemoryBudget& budget = MemoryBudget::Unlimited());

  /// The mesh with content id `id`, scaled per axis by `scale` (NOT_FOUND for an unknown id;
  /// INVALID_ARGUMENT for a zero or non-finite scale component).
  absl::StatusOr<std::shared_ptr<const MeshSignedDistance>> Get(
      const std::string& id, const Eigen::Vector3d& scale = Eigen::Vector3d::Ones()) const override;

  /// Builds the grid of stored mesh `id` for `options`, or keeps the one it has when that was
  /// asked for an error ≤ options.max_error and a band ≥ options.band (a new grid takes the
  /// smaller error and the wider band of the two, so that it serves earlier users). Errors of
  /// MeshSdfGrid::Build naming `field` ("grid.max_error"); NOT_FOUND for an unknown id.
  absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> AddGrid(const std::string& id, const SdfGridOptions& options,
                                                             MemoryBudget& budget, absl::string_view field = "grid");
  /// MeshLookup::Grid: AddGrid's rule for the error asked at upload (or kDefaultGridMaxError) and
  /// `min_band`, a new grid's band at least kMinGridBand.
  absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> Grid(const std::string& id, double min_band, MemoryBudget& budget,
                                                          absl::string_view field) const override;
  /// The grid mesh `id` has now, or null.
  std::shared_ptr<const MeshSdfGrid> grid(const std::string& id) const;
  /// Grids are built on `executor` (not owned; default: the calling thread), each within
  /// `max_queries` exact distance queries (MeshSdfGrid::Build; default: no limit). Set before use.
  void set_grid_builds(Executor* executor, double max_queries) {
    executor_ = executor;
    max_grid_queries_ = max_queries;
  }

  bool Contains(const std::string& id) const;
  /// Drops the store's reference (scenes keep theirs). Returns false if unknown.
  bool Remove(const std::string& id);
  int size() const;
  /// Bytes held by the stored meshes and their structures, grids included. Scaled variants are not included: they
  /// belong to the scenes that use them (SceneModel::memory_bytes).
  size_t memory_bytes() const;
  size_t mesh_bytes(const std::string& id) const override;

 private:
  // The grid `wanted` needs, given the one the mesh has: its options, or nullopt when `existing`
  // serves (asked for an error ≤ wanted's and a band ≥ wanted's). The one reuse rule.
  static std::optional<SdfGridOptions> GridToBuild(const MeshSdfGrid* existing, SdfGridOptions wanted);
  // Builds a grid of `mesh` with the store's executor and query limit (no lock held).
  absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> BuildGrid(std::shared_ptr<const MeshSignedDistance> mesh,
                                                               const SdfGridOptions& options, MemoryBudget& budget,
                                                               absl::string_view field,
                                                               absl::string_view refusal_field) const;
  // GridToBuild, then BuildGrid of stored mesh `id` (a new grid's band at least `min_band`), kept.
  absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> EnsureGrid(const std::string& id, const SdfGridOptions& wanted,
                                                                double min_band, MemoryBudget& budget,
                                                                absl::string_view field,
                                                                absl::string_view refusal_field) const;
  // Stores `grid` as mesh `id`'s unless the one it has is wider. Needs mu_.
  void KeepGridLocked(const std::string& id, std::shared_ptr<const MeshSdfGrid> grid) const;
  // Bytes of mesh `id`'s grid, with its copy of the mesh when that is not the stored one (a grid
  // built by an upload that lost a race with the same upload). Needs mu_.
  size_t GridBytesLocked(const std::string& id) const;

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const MeshSignedDistance>> meshes_;
  // One grid per mesh id, the latest built (scenes keep the ones they use alive).
  mutable std::map<std::string, std::shared_ptr<const MeshSdfGrid>> grids_;
  mutable InlineExecutor inline_executor_;
  Executor* executor_ = &inline_executor_;
  double max_grid_queries_ = MeshSdfGrid::kUnlimitedQueries;
  mutable std::map<std::tuple<std::string, double, double, double>, std::weak_ptr<const MeshSignedDistance>> scaled_;
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_MESH_STORE_H_
