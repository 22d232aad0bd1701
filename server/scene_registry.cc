#include "server/scene_registry.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/contact/contact_matrix.h"

namespace taxel::server {
namespace {

bool ValidSceneName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  }
  return true;
}

// Upper bound of the contact matrix bytes, E × B × P × 3 × 4 (twice with friction), from the
// spec alone: exact names count once each; "all" and globs count every candidate (B: robot links;
// P: terrain, robot links, object and projectile slots, static entities).
int64_t ContactMatrixBytesBound(const scene::SceneSpec& spec) {
  const contact::ContactMatrixSpec& cm = spec.contact_matrix;
  if (!cm.enabled()) return 0;
  int64_t robot_links = 0, other_entities = 0;
  for (const auto& e : spec.entities) {
    if (e.kind == scene::EntityKind::kRobot) {
      robot_links += static_cast<int64_t>(e.links.size());
    } else if (e.kind != scene::EntityKind::kTerrain) {
      ++other_entities;
    }
  }
  auto bound = [](const std::vector<std::string>& selectors, int64_t candidates) {
    for (const auto& s : selectors) {
      if (s == "all" || contact::IsGlob(s)) return candidates;
    }
    return std::min<int64_t>(static_cast<int64_t>(selectors.size()), candidates);
  };
  const int64_t rows = bound(cm.bodies, robot_links);
  const int64_t cols = bound(cm.partners, 1 + robot_links + other_entities);
  return static_cast<int64_t>(spec.num_envs) * rows * cols * 12 * (cm.friction ? 2 : 1);
}

// Bytes a scene with this spec will allocate for state, sensor buffers and the contact matrix.
int64_t EstimateSceneBytes(const scene::SceneSpec& spec) {
  int64_t moving_links = 0;
  for (const auto& e : spec.entities) {
    if (scene::IsMoving(e.kind)) moving_links += static_cast<int64_t>(e.links.size());
  }
  int64_t bytes = static_cast<int64_t>(spec.num_envs) * moving_links * static_cast<int64_t>(sizeof(sensors::LinkKinematics));
  for (const auto& s : spec.sensors) bytes += static_cast<int64_t>(sensors::Sensor::EstimateBytes(s, spec.num_envs));
  return bytes + ContactMatrixBytesBound(spec);
}

int64_t ProbeSlots(const scene::SceneSpec& spec) {
  int64_t probes = 0;
  for (const auto& s : spec.sensors) probes += static_cast<int64_t>(s.probe_local_pos.size());
  return probes * spec.num_envs;
}

}  // namespace

absl::Status SceneRegistry::CheckRoomLocked(const Key& key) const {
  if (scenes_.count(key)) {
    return absl::AlreadyExistsError(absl::StrCat("name: a scene named '", key.second, "' already exists"));
  }
  if (static_cast<int>(scenes_.size()) >= limits_.max_scenes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the server already holds the maximum of ", limits_.max_scenes, " scenes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<SceneEntry>> SceneRegistry::Create(const std::string& tenant, scene::SceneSpec spec) {
  if (!ValidSceneName(spec.name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name: expected 1 to 128 letters, digits, '_', '-' or '.', got '", spec.name, "'"));
  }
  if (spec.num_envs > limits_.max_envs_per_scene) {
    return absl::ResourceExhaustedError(absl::StrCat("num_envs: ", spec.num_envs, " exceeds the server limit of ",
                                                     limits_.max_envs_per_scene, " envs per scene"));
  }
  const int64_t probes = ProbeSlots(spec);
  if (probes > limits_.max_probes_per_scene) {
    return absl::ResourceExhaustedError(absl::StrCat("sensors: num_envs x probes = ", probes,
                                                     " exceeds the server limit of ", limits_.max_probes_per_scene));
  }
  const int64_t estimate = EstimateSceneBytes(spec);
  const auto key = std::make_pair(tenant, spec.name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    TAXEL_RETURN_IF_ERROR(CheckRoomLocked(key));
  }
  if (limits_.max_memory_bytes > 0 && memory_bytes() + estimate > limits_.max_memory_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the scene needs about ", estimate,
                                                     " bytes; the server's memory limit of ",
                                                     limits_.max_memory_bytes, " bytes would be exceeded"));
  }
  TAXEL_ASSIGN_OR_RETURN(auto scene, scene::Scene::Create(spec, *meshes_));
  auto entry = std::make_shared<SceneEntry>();
  entry->tenant = tenant;
  entry->name = spec.name;
  const int64_t bytes = static_cast<int64_t>(scene->memory_bytes());
  entry->scene = std::move(scene);
  std::lock_guard<std::mutex> lock(mu_);
  // Re-check under the lock: a concurrent Create of the same name may have won.
  TAXEL_RETURN_IF_ERROR(CheckRoomLocked(key));
  scenes_[key] = entry;
  scene_bytes_[key] = bytes;
  return entry;
}

absl::StatusOr<std::shared_ptr<SceneEntry>> SceneRegistry::Get(const std::string& tenant,
                                                              const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scenes_.find({tenant, name});
  if (it == scenes_.end()) return absl::NotFoundError(absl::StrCat("scene: no scene named '", name, "'"));
  return it->second;
}

absl::Status SceneRegistry::Delete(const std::string& tenant, const std::string& name) {
  std::shared_ptr<SceneEntry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scenes_.find({tenant, name});
    if (it == scenes_.end()) return absl::NotFoundError(absl::StrCat("scene: no scene named '", name, "'"));
    entry = it->second;
    scenes_.erase(it);
    scene_bytes_.erase({tenant, name});
  }
  std::lock_guard<std::mutex> lock(entry->mu);  // wait for an operation in flight
  entry->deleted = true;
  entry->scene.reset();
  return absl::OkStatus();
}

std::vector<std::shared_ptr<SceneEntry>> SceneRegistry::List(const std::string& tenant) const {
  std::vector<std::shared_ptr<SceneEntry>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, entry] : scenes_) {
    if (key.first == tenant) out.push_back(entry);
  }
  return out;
}

int SceneRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(scenes_.size());
}

absl::Status SceneRegistry::CheckAddSensor(const scene::Scene& scene, const sensors::SensorSpec& spec) const {
  const int64_t probes =
      (static_cast<int64_t>(scene.num_probes()) + static_cast<int64_t>(spec.probe_local_pos.size())) * scene.num_envs();
  if (probes > limits_.max_probes_per_scene) {
    return absl::ResourceExhaustedError(absl::StrCat("sensor: num_envs x probes would be ", probes,
                                                     ", over the server limit of ", limits_.max_probes_per_scene));
  }
  const int64_t estimate = static_cast<int64_t>(sensors::Sensor::EstimateBytes(spec, scene.num_envs()));
  if (limits_.max_memory_bytes > 0 && memory_bytes() + estimate > limits_.max_memory_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("sensor: needs about ", estimate,
                                                     " bytes; the server's memory limit would be exceeded"));
  }
  return absl::OkStatus();
}

void SceneRegistry::UpdateSceneBytes(const SceneEntry& entry) {
  if (!entry.scene) return;
  const int64_t bytes = static_cast<int64_t>(entry.scene->memory_bytes());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scene_bytes_.find({entry.tenant, entry.name});
  if (it != scene_bytes_.end()) it->second = bytes;
}

int64_t SceneRegistry::memory_bytes() const {
  int64_t total = static_cast<int64_t>(meshes_->memory_bytes());
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, bytes] : scene_bytes_) total += bytes;
  return total;
}

}  // namespace taxel::server
