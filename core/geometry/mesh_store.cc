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
  return 320e3 + 420.0 * static_cast<double>(num_triangles) + 64.0 * static_cast<double>(num_vertices);
}

absl::StatusOr<MeshStore::AddResult> MeshStore::Add(std::vector<Eigen::Vector3d> vertices,
                                                    std::vector<Triangle> triangles, absl::string_view field) {
  const std::string id = TriangleMesh::ContentId(vertices, triangles);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = meshes_.find(id);
    if (it != meshes_.end()) return AddResult{id, false, it->second};
  }
  auto mesh = TriangleMesh::Create(std::move(vertices), std::move(triangles), field);
  if (!mesh.ok()) return mesh.status();
  auto sdf = MeshSignedDistance::Build(*std::move(mesh));  // outside the lock: may take a while
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = meshes_.emplace(id, std::move(sdf));
  return AddResult{id, inserted, it->second};
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

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshStore::BuildGrid(const std::string& id,
                                                                        const SdfGridOptions& options,
                                                                        MemoryBudget& budget, absl::string_view field,
                                                                        absl::string_view memory_field) const {
  std::shared_ptr<const MeshSignedDistance> mesh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = meshes_.find(id);
    if (it == meshes_.end()) return MeshNotFound(id);
    mesh = it->second;
  }
  // Outside the lock (seconds for large meshes). Two concurrent builds of one mesh both succeed;
  // the one stored last is kept, and each caller uses its own.
  TAXEL_ASSIGN_OR_RETURN(auto grid, MeshSdfGrid::Build(mesh, options, *executor_, budget, field, memory_field));
  std::lock_guard<std::mutex> lock(mu_);
  if (meshes_.count(id) == 0) return MeshNotFound(id);  // removed meanwhile
  auto& slot = grids_[id];
  if (slot == nullptr || slot->band() <= grid->band()) slot = grid;
  return grid;
}

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshStore::AddGrid(const std::string& id,
                                                                      const SdfGridOptions& options,
                                                                      MemoryBudget& budget, absl::string_view field) {
  SdfGridOptions wanted = options;
  if (auto g = grid(id); g != nullptr) {
    if (g->stats().requested_max_error <= options.max_error && g->band() >= options.band) return g;
    // The new grid serves every earlier user too: the smaller error, the wider band.
    wanted.max_error = std::min(wanted.max_error, g->stats().requested_max_error);
    wanted.band = std::max(wanted.band, g->band());
  }
  return BuildGrid(id, wanted, budget, field, "");
}

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshStore::Grid(const std::string& id, double min_band,
                                                                   MemoryBudget& budget,
                                                                   absl::string_view field) const {
  SdfGridOptions options{kDefaultGridMaxError, std::max(min_band, kMinGridBand)};
  if (auto g = grid(id); g != nullptr) {
    if (g->band() >= min_band) return g;
    options.max_error = g->stats().requested_max_error;  // the error asked for at upload
  }
  return BuildGrid(id, options, budget, "grid", field);
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
  for (const auto& [id, m] : meshes_) total += m->memory_bytes() + m->mesh().memory_bytes();
  for (const auto& [id, g] : grids_) total += g->memory_bytes();
  return total;
}

size_t MeshStore::mesh_bytes(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = meshes_.find(id);
  if (it == meshes_.end()) return 0;
  auto g = grids_.find(id);
  return it->second->memory_bytes() + it->second->mesh().memory_bytes() +
         (g == grids_.end() ? 0 : g->second->memory_bytes());
}

}  // namespace taxel::geometry
