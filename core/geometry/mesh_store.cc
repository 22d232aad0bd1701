#include "core/geometry/mesh_store.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"

namespace taxel::geometry {

absl::Status MeshNotFound(const std::string& id) {
  return absl::NotFoundError(absl::StrCat("mesh '", id, "' has not been uploaded"));
}

double MeshStore::EstimateBytes(int64_t num_vertices, int64_t num_triangles) {
  return 320e3 + 420.0 * static_cast<double>(num_triangles) + 64.0 * static_cast<double>(num_vertices) +
         MeshSignedDistance::HugePageRoundingBound(num_triangles);
}

absl::StatusOr<MeshStore::AddResult> MeshStore::Add(std::vector<Eigen::Vector3d> vertices,
                                                    std::vector<Triangle> triangles, absl::string_view field,
                                                    const std::optional<SdfGridOptions>& grid, MemoryBudget& budget) {
  const std::string id = TriangleMesh::ContentId(vertices, triangles);
  AddResult out{id, false, nullptr, nullptr};
  std::shared_ptr<const MeshSdfGrid> existing_grid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = meshes_.find(id); it != meshes_.end()) out.mesh = it->second;
    if (auto it = grids_.find(id); out.mesh != nullptr && it != grids_.end()) existing_grid = it->second;
  }
  if (out.mesh == nullptr) {  // outside the lock: may take a while
    TAXEL_ASSIGN_OR_RETURN(auto mesh, TriangleMesh::Create(std::move(vertices), std::move(triangles), field));
    out.mesh = MeshSignedDistance::Build(std::move(mesh));
  }
  bool built_grid = false;
  if (grid.has_value()) {
    out.grid = existing_grid;
    if (auto options = GridToBuild(existing_grid.get(), *grid); options.has_value()) {
      TAXEL_ASSIGN_OR_RETURN(out.grid, BuildGrid(out.mesh, *options, budget, "grid", ""));
      built_grid = true;
    }
  }
  // Everything is built: store it (a concurrent upload of the same mesh may have stored its own).
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = meshes_.emplace(id, out.mesh);
  out.newly_added = inserted;
  out.mesh = it->second;
  if (built_grid) {
    KeepGridLocked(id, out.grid);
  } else if (!grid.has_value()) {
    if (auto g = grids_.find(id); g != grids_.end()) out.grid = g->second;  // the grid it has, if any
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const MeshSignedDistance>> MeshStore::Get(const std::string& id,
                                                                         const Eigen::Vector3d& scale) const {
  std::shared_ptr<const MeshSignedDistance> base;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = meshes_.find(id);
    if (it == meshes_.end()) return MeshNotFound(id);
    base = it->second;
  }
  if (!scale.allFinite() || (scale.array() == 0).any()) {
    return InvalidFieldError("mesh_scale", "expected finite, non-zero components");
  }
  if (scale == Eigen::Vector3d::Ones()) return base;
  const auto key = std::make_tuple(id, scale.x(), scale.y(), scale.z());
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scaled_.find(key);
    if (it != scaled_.end()) {
      if (auto live = it->second.lock()) return live;
    }
  }
  std::vector<Eigen::Vector3d> vertices = base->mesh().vertices();
  for (auto& v : vertices) v = v.cwiseProduct(scale);
  std::vector<Triangle> triangles = base->mesh().triangles();
  // Scaling may make triangles degenerate in float terms only if a component is ~0; refused above.
  auto mesh = TriangleMesh::Create(std::move(vertices), std::move(triangles), "mesh_scale");
  if (!mesh.ok()) return mesh.status();
  auto sdf = MeshSignedDistance::Build(*std::move(mesh));
  std::lock_guard<std::mutex> lock(mu_);
  // Drop the entries of freed variants (and a concurrent build of the same one wins or loses here).
  for (auto it = scaled_.begin(); it != scaled_.end();) it = it->second.expired() ? scaled_.erase(it) : std::next(it);
  auto [it, inserted] = scaled_.emplace(key, sdf);
  if (!inserted) {
    if (auto live = it->second.lock()) return live;
    it->second = sdf;
  }
  return sdf;
}

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshLookup::Grid(const std::string& /*id*/, double /*min_band*/,
                                                                    MemoryBudget& /*budget*/,
                                                                    absl::string_view field) const {
  return FieldError(absl::StatusCode::kFailedPrecondition, field, "this mesh lookup cannot build grids");
}

std::optional<SdfGridOptions> MeshStore::GridToBuild(const MeshSdfGrid* existing, SdfGridOptions wanted) {
  if (existing == nullptr) return wanted;
  const double error = existing->stats().requested_max_error;
  if (error <= wanted.max_error && existing->band() >= wanted.band) return std::nullopt;
  // The new grid serves every earlier user too: the smaller error, the wider band.
  wanted.max_error = std::min(wanted.max_error, error);
  wanted.band = std::max(wanted.band, existing->band());
  return wanted;
}

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshStore::BuildGrid(std::shared_ptr<const MeshSignedDistance> mesh,
                                                                        const SdfGridOptions& options,
                                                                        MemoryBudget& budget, absl::string_view field,
                                                                        absl::string_view refusal_field) const {
  return MeshSdfGrid::Build(std::move(mesh), options, *executor_, budget, max_grid_queries_, field, refusal_field);
}

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshStore::EnsureGrid(const std::string& id,
                                                                         const SdfGridOptions& wanted, double min_band,
                                                                         MemoryBudget& budget, absl::string_view field,
                                                                         absl::string_view refusal_field) const {
  std::shared_ptr<const MeshSignedDistance> mesh;
  std::shared_ptr<const MeshSdfGrid> existing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = meshes_.find(id);
    if (it == meshes_.end()) return MeshNotFound(id);
    mesh = it->second;
    if (auto g = grids_.find(id); g != grids_.end()) existing = g->second;
  }
  std::optional<SdfGridOptions> options = GridToBuild(existing.get(), wanted);
  if (!options.has_value()) return existing;
  options->band = std::max(options->band, min_band);
  // Outside the lock (seconds for large meshes). Two concurrent builds of one mesh both succeed;
  // the wider is kept, and each caller uses its own.
  TAXEL_ASSIGN_OR_RETURN(auto grid, BuildGrid(std::move(mesh), *options, budget, field, refusal_field));
  std::lock_guard<std::mutex> lock(mu_);
  if (meshes_.count(id) == 0) return MeshNotFound(id);  // removed meanwhile
  KeepGridLocked(id, grid);
  return grid;
}

void MeshStore::KeepGridLocked(const std::string& id, std::shared_ptr<const MeshSdfGrid> grid) const {
  auto& slot = grids_[id];
  if (slot == nullptr || slot->band() <= grid->band()) slot = std::move(grid);
}

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshStore::AddGrid(const std::string& id,
                                                                      const SdfGridOptions& options,
                                                                      MemoryBudget& budget, absl::string_view field) {
  return EnsureGrid(id, options, 0, budget, field, "");
}

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshStore::Grid(const std::string& id, double min_band,
                                                                   MemoryBudget& budget,
                                                                   absl::string_view field) const {
  const std::shared_ptr<const MeshSdfGrid> existing = grid(id);
  // The error asked for at upload, if any.
  const double error = existing != nullptr ? existing->stats().requested_max_error : kDefaultGridMaxError;
  return EnsureGrid(id, SdfGridOptions{error, min_band}, kMinGridBand, budget, "grid", field);
}

std::shared_ptr<const MeshSdfGrid> MeshStore::grid(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = grids_.find(id);
  return it == grids_.end() ? nullptr : it->second;
}

bool MeshStore::Contains(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return meshes_.count(id) > 0;
}

bool MeshStore::Remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = scaled_.begin(); it != scaled_.end();) {
    it = std::get<0>(it->first) == id ? scaled_.erase(it) : std::next(it);
  }
  grids_.erase(id);
  return meshes_.erase(id) > 0;
}

int MeshStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(meshes_.size());
}

size_t MeshStore::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t total = 0;
  for (const auto& [id, m] : meshes_) total += m->memory_bytes() + m->mesh().memory_bytes() + GridBytesLocked(id);
  return total;
}

size_t MeshStore::mesh_bytes(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = meshes_.find(id);
  if (it == meshes_.end()) return 0;
  return it->second->memory_bytes() + it->second->mesh().memory_bytes() + GridBytesLocked(id);
}

size_t MeshStore::GridBytesLocked(const std::string& id) const {
  auto g = grids_.find(id);
  if (g == grids_.end()) return 0;
  const MeshSdfGrid& grid = *g->second;
  auto m = meshes_.find(id);
  const bool own_copy = m == meshes_.end() || &grid.mesh() != m->second.get();
  return grid.memory_bytes() + (own_copy ? grid.mesh().memory_bytes() + grid.mesh().mesh().memory_bytes() : 0);
}

}  // namespace taxel::geometry
