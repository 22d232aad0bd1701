#include "server/scene_registry.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"

namespace taxel::server {
namespace {

bool ValidSceneName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  }
  return true;
}

int64_t ProbeSlots(const scene::SceneSpec& spec) {
  int64_t probes = 0;
  for (const auto& s : spec.sensors) probes += static_cast<int64_t>(s.probe_local_pos.size());
  return probes * spec.num_envs;
}

// The meshes one tenant may use: those it uploaded. Any other id is NOT_FOUND with the same
// message as an id nobody uploaded, so that a tenant learns nothing of others' meshes.
class TenantMeshes final : public geometry::MeshLookup {
 public:
  TenantMeshes(const geometry::MeshStore& store, std::set<std::string> ids) : store_(store), ids_(std::move(ids)) {}
  absl::StatusOr<std::shared_ptr<const geometry::MeshSignedDistance>> Get(const std::string& id,
                                                                          const Eigen::Vector3d& scale) const override {
    if (!ids_.count(id)) return geometry::MeshNotFound(id);
    return store_.Get(id, scale);
  }
  size_t mesh_bytes(const std::string& id) const override { return ids_.count(id) ? store_.mesh_bytes(id) : 0; }
  absl::StatusOr<std::shared_ptr<const geometry::MeshSdfGrid>> Grid(const std::string& id, double min_band,
                                                                    MemoryBudget& budget,
                                                                    absl::string_view field) const override {
    if (!ids_.count(id)) return geometry::MeshNotFound(id);
    return store_.Grid(id, min_band, budget, field);
  }

 private:
  const geometry::MeshStore& store_;
  const std::set<std::string> ids_;
};

}  // namespace

// -----------------------------------------------------------------------------------------------
// Reservations

Reservation::~Reservation() {
  if (reserved_ > 0) registry_->ReleaseBytes(tenant_, reserved_);
}

absl::Status Reservation::Reserve(double bytes, absl::string_view field, absl::string_view what) {
  TAXEL_RETURN_IF_ERROR(registry_->ReserveBytes(tenant_, bytes, field, what));
  reserved_ += bytes;
  return absl::OkStatus();
}

absl::Status SceneRegistry::ReserveBytes(const std::string& tenant, double bytes, absl::string_view field,
                                         absl::string_view what) {
  if (!(bytes >= 0)) return MemoryRefusal(bytes, field, what, "that is not a size");
  std::lock_guard<std::mutex> lock(mu_);
  const double total = TotalLocked();
  if (total + bytes > static_cast<double>(limits_.max_memory_bytes)) {
    return MemoryRefusal(bytes, field, what,
                         absl::StrCat("the server's memory limit is ", FormatBytes(limits_.max_memory_bytes), " (",
                                      FormatBytes(total), " in use)"));
  }
  if (limits_.max_memory_bytes_per_tenant > 0) {
    const double used = TenantBytesLocked(tenant);
    if (used + bytes > static_cast<double>(limits_.max_memory_bytes_per_tenant)) {
      return MemoryRefusal(
          bytes, field, what,
          absl::StrCat("this tenant's memory quota is ", FormatBytes(limits_.max_memory_bytes_per_tenant), " (",
                       FormatBytes(used), " in use)"));
    }
  }
  reserved_[tenant] += bytes;
  reserved_total_ += bytes;
  return absl::OkStatus();
}

void SceneRegistry::ReleaseBytes(const std::string& tenant, double bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reserved_.find(tenant);
  if (it != reserved_.end()) {
    it->second -= bytes;
    if (it->second <= 0.5) reserved_.erase(it);
  }
  reserved_total_ = std::max(0.0, reserved_total_ - bytes);
}

double SceneRegistry::TotalLocked() const {
  double total = static_cast<double>(meshes_->memory_bytes()) + reserved_total_;
  for (const auto& [key, bytes] : scene_bytes_) total += static_cast<double>(bytes);
  return total;
}

double SceneRegistry::TenantBytesLocked(const std::string& tenant) const {
  double total = 0;
  for (auto it = scene_bytes_.lower_bound({tenant, ""}); it != scene_bytes_.end() && it->first.first == tenant; ++it) {
    total += static_cast<double>(it->second);
  }
  if (auto m = tenant_meshes_.find(tenant); m != tenant_meshes_.end()) {
    for (const auto& id : m->second) total += static_cast<double>(meshes_->mesh_bytes(id));
  }
  if (auto r = reserved_.find(tenant); r != reserved_.end()) total += r->second;
  return total;
}

// -----------------------------------------------------------------------------------------------
// Scenes

namespace {

// Every mesh a scene uses, by id, with the path of its first use ("entities[1].links[0].shapes[2]
// .mesh.mesh_id", or "entities[1].assets[0].link_shapes[0][1].mesh.mesh_id").
std::map<std::string, std::string> MeshesOf(const scene::SceneSpec& spec) {
  std::map<std::string, std::string> out;
  const auto add = [&](const std::vector<scene::ShapeSpec>& shapes, const std::string& field) {
    for (size_t k = 0; k < shapes.size(); ++k) {
      if (shapes[k].kind == geometry::ShapeKind::kMesh)
        out.emplace(shapes[k].mesh_id, absl::StrCat(field, "[", k, "].mesh.mesh_id"));
    }
  };
  for (size_t e = 0; e < spec.entities.size(); ++e) {
    const scene::EntitySpec& entity = spec.entities[e];
    for (size_t l = 0; l < entity.links.size(); ++l)
      add(entity.links[l].shapes, absl::StrCat("entities[", e, "].links[", l, "].shapes"));
    for (size_t a = 0; a < entity.assets.size(); ++a) {
      for (size_t l = 0; l < entity.assets[a].link_shapes.size(); ++l)
        add(entity.assets[a].link_shapes[l], absl::StrCat("entities[", e, "].assets[", a, "].link_shapes[", l, "]"));
    }
  }
  return out;
}

}  // namespace

absl::Status SceneRegistry::CheckRoomLocked(const Key& key) const {
  if (scenes_.count(key)) {
    return FieldError(absl::StatusCode::kAlreadyExists, "name",
                      absl::StrCat("a scene named '", key.second, "' already exists"));
  }
  if (static_cast<int>(scenes_.size()) >= limits_.max_scenes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the server already holds the maximum of ", limits_.max_scenes, " scenes"));
  }
  if (limits_.max_scenes_per_tenant > 0) {
    int mine = 0;
    for (auto it = scenes_.lower_bound({key.first, ""}); it != scenes_.end() && it->first.first == key.first; ++it) {
      ++mine;
    }
    if (mine >= limits_.max_scenes_per_tenant) {
      return absl::ResourceExhaustedError(
          absl::StrCat("this tenant already holds its quota of ", limits_.max_scenes_per_tenant, " scenes"));
    }
  }
  return absl::OkStatus();
}

absl::Status SceneRegistry::Create(const std::string& tenant, scene::SceneSpec spec) {
  return Create(tenant, std::move(spec), [](SceneEntry&) {});
}

absl::Status SceneRegistry::Create(const std::string& tenant, scene::SceneSpec spec,
                                   absl::FunctionRef<void(SceneEntry&)> created) {
  if (!ValidSceneName(spec.name)) {
    return InvalidFieldError("name",
                             absl::StrCat("expected 1 to 128 letters, digits, '_', '-' or '.', got '", spec.name, "'"));
  }
  if (spec.num_envs > limits_.max_envs_per_scene) {
    return FieldError(
        absl::StatusCode::kResourceExhausted, "num_envs",
        absl::StrCat(spec.num_envs, " exceeds the server limit of ", limits_.max_envs_per_scene, " envs per scene"));
  }
  const int64_t probes = ProbeSlots(spec);
  if (probes > limits_.max_probes_per_scene) {
    return FieldError(
        absl::StatusCode::kResourceExhausted, "sensors",
        absl::StrCat("num_envs x probes = ", probes, " exceeds the server limit of ", limits_.max_probes_per_scene));
  }
  const auto key = std::make_pair(tenant, spec.name);
  const std::map<std::string, std::string> uses = MeshesOf(spec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    TAXEL_RETURN_IF_ERROR(CheckRoomLocked(key));
  }
  const std::unique_ptr<geometry::MeshLookup> meshes = TenantMeshLookup(tenant);
  Reservation budget(this, tenant);
  TAXEL_ASSIGN_OR_RETURN(auto scene, scene::Scene::Create(spec, *meshes, budget));
  const int64_t bytes = static_cast<int64_t>(scene->memory_bytes());
  auto entry = std::make_shared<SceneEntry>(tenant, spec.name, std::move(scene));
  // Locked before it is published (lock order: an entry's mu_, then the registry's), so that
  // `created` is the first operation on the scene.
  std::lock_guard<std::mutex> entry_lock(entry->mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Re-check under the lock: a concurrent Create of the same name may have won, a concurrent
    // DeleteMesh may have taken a mesh this scene uses.
    TAXEL_RETURN_IF_ERROR(CheckRoomLocked(key));
    const auto held = tenant_meshes_.find(tenant);
    std::set<std::string> ids;
    for (const auto& [id, field] : uses) {
      if (held == tenant_meshes_.end() || !held->second.count(id)) {
        return FieldError(absl::StatusCode::kNotFound, field,
                          absl::StrCat("mesh '", id, "' was deleted while the scene was being created"));
      }
      ids.insert(id);
    }
    scenes_[key] = entry;
    scene_bytes_[key] = bytes;
    scene_meshes_[key] = std::move(ids);
  }
  created(*entry);
  return absl::OkStatus();  // the reservation is released after the real bytes are recorded
}

absl::StatusOr<std::shared_ptr<SceneEntry>> SceneRegistry::Find(const std::string& tenant,
                                                                const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scenes_.find({tenant, name});
  if (it == scenes_.end())
    return FieldError(absl::StatusCode::kNotFound, "scene", absl::StrCat("no scene named '", name, "'"));
  return it->second;
}

absl::Status SceneRegistry::SceneGone(const std::string& name) {
  return FieldError(absl::StatusCode::kNotFound, "scene", absl::StrCat("scene '", name, "' was deleted"));
}

absl::Status SceneRegistry::WithScene(const std::string& tenant, const std::string& name,
                                      absl::FunctionRef<absl::Status(SceneEntry&)> fn) {
  TAXEL_ASSIGN_OR_RETURN(std::shared_ptr<SceneEntry> entry, Find(tenant, name));
  std::lock_guard<std::mutex> lock(entry->mu_);
  if (entry->deleted_) return SceneGone(name);
  return fn(*entry);
}

void SceneRegistry::ForEachScene(const std::string& tenant, absl::FunctionRef<void(const SceneEntry&)> fn) {
  std::vector<std::shared_ptr<SceneEntry>> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = scenes_.lower_bound({tenant, ""}); it != scenes_.end() && it->first.first == tenant; ++it) {
      entries.push_back(it->second);
    }
  }
  for (const auto& entry : entries) {  // not under mu_: each waits for its scene's operation in flight
    std::lock_guard<std::mutex> lock(entry->mu_);
    if (!entry->deleted_) fn(*entry);
  }
}

absl::Status SceneRegistry::Delete(const std::string& tenant, const std::string& name) {
  std::shared_ptr<SceneEntry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scenes_.find({tenant, name});
    if (it == scenes_.end())
      return FieldError(absl::StatusCode::kNotFound, "scene", absl::StrCat("no scene named '", name, "'"));
    entry = it->second;
    scenes_.erase(it);
    scene_bytes_.erase({tenant, name});
    scene_meshes_.erase({tenant, name});
  }
  std::lock_guard<std::mutex> lock(entry->mu_);  // wait for an operation in flight
  entry->deleted_ = true;
  entry->scene_.reset();
  return absl::OkStatus();
}

int SceneRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(scenes_.size());
}

absl::Status SceneRegistry::CheckAddSensor(const scene::Scene& scene, const sensors::SensorSpec& spec) const {
  const int64_t probes =
      (static_cast<int64_t>(scene.num_probes()) + static_cast<int64_t>(spec.probe_local_pos.size())) * scene.num_envs();
  if (probes > limits_.max_probes_per_scene) {
    return FieldError(absl::StatusCode::kResourceExhausted, "sensor",
                      absl::StrCat("num_envs x probes would be ", probes, ", over the server limit of ",
                                   limits_.max_probes_per_scene));
  }
  return absl::OkStatus();
}

void SceneRegistry::UpdateSceneBytes(const SceneEntry& entry) {
  if (!entry.scene_) return;
  const int64_t bytes = static_cast<int64_t>(entry.scene_->memory_bytes());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scene_bytes_.find({entry.tenant_, entry.name_});
  if (it != scene_bytes_.end()) it->second = bytes;
}

// -----------------------------------------------------------------------------------------------
// Meshes

std::unique_ptr<geometry::MeshLookup> SceneRegistry::TenantMeshLookup(const std::string& tenant) const {
  std::set<std::string> visible;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto m = tenant_meshes_.find(tenant); m != tenant_meshes_.end()) visible = m->second;
  }
  return std::make_unique<TenantMeshes>(*meshes_, std::move(visible));
}

absl::StatusOr<SceneRegistry::MeshAdded> SceneRegistry::AddMesh(const std::string& tenant,
                                                                std::vector<Eigen::Vector3d> vertices,
                                                                std::vector<geometry::Triangle> triangles,
                                                                const std::optional<geometry::SdfGridOptions>& grid) {
  Reservation budget(this, tenant);
  TAXEL_RETURN_IF_ERROR(budget.Reserve(
      geometry::MeshStore::EstimateBytes(static_cast<int64_t>(vertices.size()), static_cast<int64_t>(triangles.size())),
      "triangles", absl::StrCat("a mesh of ", vertices.size(), " vertices and ", triangles.size(), " triangles")));
  MeshAdded out;
  // "" as the field: the core's paths are then the request's own ("vertices[3]", "triangles[0]").
  // The store keeps nothing of a call that fails (a grid refused, say).
  TAXEL_ASSIGN_OR_RETURN(out.result, meshes_->Add(std::move(vertices), std::move(triangles), "", grid, budget));
  std::lock_guard<std::mutex> lock(mu_);
  out.newly_added = tenant_meshes_[tenant].insert(out.result.id).second;
  return out;
}

absl::Status SceneRegistry::DeleteMesh(const std::string& tenant, const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto held = tenant_meshes_.find(tenant);
  if (held == tenant_meshes_.end() || !held->second.count(id)) {
    return FieldError(absl::StatusCode::kNotFound, "mesh_id", absl::StrCat("mesh '", id, "' has not been uploaded"));
  }
  for (auto it = scene_meshes_.lower_bound({tenant, ""}); it != scene_meshes_.end() && it->first.first == tenant;
       ++it) {
    if (it->second.count(id)) {
      return FieldError(
          absl::StatusCode::kFailedPrecondition, "mesh_id",
          absl::StrCat("mesh '", id, "' is used by scene '", it->first.second, "'; delete the scene first"));
    }
  }
  held->second.erase(id);
  if (held->second.empty()) tenant_meshes_.erase(held);
  for (const auto& [other, ids] : tenant_meshes_) {
    if (ids.count(id)) return absl::OkStatus();  // another tenant still holds it
  }
  meshes_->Remove(id);
  return absl::OkStatus();
}

// -----------------------------------------------------------------------------------------------
// Accounting

int64_t SceneRegistry::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(TotalLocked());
}

TenantUsage SceneRegistry::usage(const std::string& tenant) const {
  TenantUsage u;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = scenes_.lower_bound({tenant, ""}); it != scenes_.end() && it->first.first == tenant; ++it) {
    ++u.num_scenes;
  }
  if (auto m = tenant_meshes_.find(tenant); m != tenant_meshes_.end())
    u.num_meshes = static_cast<int>(m->second.size());
  u.memory_bytes = static_cast<int64_t>(TenantBytesLocked(tenant));
  return u;
}

int64_t ResolveMemoryLimit(int64_t requested) {
  if (requested > 0) return requested;
  double available = 0;
  // cgroup v2 (a container's limit), then v1.
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    std::string text;
    if (in >> text) {
      double v = 0;
      if (absl::SimpleAtod(text, &v) && v > 0 && v < 1e18) {
        available = v;
        break;
      }
    }
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string name, unit;
  double kb = 0;
  while (meminfo >> name >> kb >> unit) {
    if (name == "MemTotal:") {
      available = available > 0 ? std::min(available, kb * 1024) : kb * 1024;
      break;
    }
  }
  if (!(available > 0)) available = 4e9;  // unknown: assume a small machine
  return static_cast<int64_t>(0.75 * available);
}

}  // namespace taxel::server
