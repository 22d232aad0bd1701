// Live scenes by (tenant, name), with per-scene serialisation and limit checks before allocation.
#ifndef TAXEL_SERVER_SCENE_REGISTRY_H_
#define TAXEL_SERVER_SCENE_REGISTRY_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene.h"
#include "server/options.h"

namespace taxel::server {

/// One live scene. Every operation on `scene` holds `mu` (a scene's steps are serialised;
/// different scenes run in parallel). `deleted` is set under `mu` by Delete.
struct SceneEntry {
  std::string tenant, name;
  std::mutex mu;
  std::unique_ptr<scene::Scene> scene;
  bool deleted = false;
};

class SceneRegistry {
 public:
  SceneRegistry(const Limits& limits, geometry::MeshStore* meshes) : limits_(limits), meshes_(meshes) {}

  /// Checks the limits on the spec (scenes, envs, probes, memory estimate: RESOURCE_EXHAUSTED),
  /// then builds the scene. ALREADY_EXISTS when the tenant has a scene of that name.
  absl::StatusOr<std::shared_ptr<SceneEntry>> Create(const std::string& tenant, scene::SceneSpec spec);
  /// NOT_FOUND naming the scene.
  absl::StatusOr<std::shared_ptr<SceneEntry>> Get(const std::string& tenant, const std::string& name) const;
  /// Removes the scene (waiting for an operation in flight on it). NOT_FOUND if absent.
  absl::Status Delete(const std::string& tenant, const std::string& name);
  std::vector<std::shared_ptr<SceneEntry>> List(const std::string& tenant) const;
  int size() const;

  /// Limits check for adding a sensor to `entry`'s scene (call with entry->mu held).
  absl::Status CheckAddSensor(const scene::Scene& scene, const sensors::SensorSpec& spec) const;
  /// Records the current size of a scene after its sensors changed (call with entry.mu held).
  void UpdateSceneBytes(const SceneEntry& entry);
  /// Bytes held by scenes (sampled, approximate) plus the mesh store.
  int64_t memory_bytes() const;

 private:
  const Limits limits_;
  geometry::MeshStore* meshes_;
  using Key = std::pair<std::string, std::string>;  // (tenant, scene name)
  // ALREADY_EXISTS for a taken name, RESOURCE_EXHAUSTED at the scene limit. Needs mu_.
  absl::Status CheckRoomLocked(const Key& key) const;

  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<SceneEntry>> scenes_;
  std::map<Key, int64_t> scene_bytes_;  // at creation / sensor changes
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_SCENE_REGISTRY_H_
