// Live scenes and uploaded meshes by tenant, with the memory they hold: every request-sized
// allocation is reserved against the server's limit and the tenant's quota before it is made.
#ifndef TAXEL_SERVER_SCENE_REGISTRY_H_
#define TAXEL_SERVER_SCENE_REGISTRY_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/common/memory_budget.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene.h"
#include "server/options.h"

namespace taxel::server {

/// One live scene, owned by the registry. Its scene is reached only through SceneRegistry (Create,
/// WithScene, ForEachScene), which holds the entry's lock while the caller's function runs: a
/// scene's operations are serialised, different scenes run in parallel.
class SceneEntry {
 public:
  SceneEntry(std::string tenant, std::string name, std::unique_ptr<scene::Scene> scene)
      : tenant_(std::move(tenant)), name_(std::move(name)), scene_(std::move(scene)) {}
  SceneEntry(const SceneEntry&) = delete;
  SceneEntry& operator=(const SceneEntry&) = delete;

  const std::string& tenant() const { return tenant_; }
  const std::string& name() const { return name_; }
  scene::Scene& scene() { return *scene_; }
  const scene::Scene& scene() const { return *scene_; }

 private:
  friend class SceneRegistry;
  const std::string tenant_, name_;
  std::mutex mu_;
  std::unique_ptr<scene::Scene> scene_;  // under mu_; null once deleted
  bool deleted_ = false;                 // under mu_; set by Delete
};

/// What one tenant holds (GetServerInfo reports the caller's).
struct TenantUsage {
  int num_scenes = 0;
  int num_meshes = 0;
  int64_t memory_bytes = 0;  ///< its scenes, its uploaded meshes, reservations in flight
};

class SceneRegistry;

/// The budget of one request of one tenant: each Reserve is checked against the server's limit
/// and the tenant's quota (counting what is in use and every reservation in flight) and held
/// until the reservation is destroyed, by which time the registry records the real bytes.
class Reservation final : public MemoryBudget {
 public:
  Reservation(SceneRegistry* registry, std::string tenant) : registry_(registry), tenant_(std::move(tenant)) {}
  ~Reservation() override;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  absl::Status Reserve(double bytes, absl::string_view field, absl::string_view what) override;
  double reserved() const { return reserved_; }

 private:
  SceneRegistry* registry_;
  const std::string tenant_;
  double reserved_ = 0;
};

class SceneRegistry {
 public:
  /// `limits.max_memory_bytes` must be resolved (> 0; see ResolveMemoryLimit).
  SceneRegistry(const Limits& limits, geometry::MeshStore* meshes) : limits_(limits), meshes_(meshes) {}

  /// Checks the name and the counted limits (scenes per server and tenant, envs, probes), then
  /// builds the scene with a Reservation as its budget and runs `created(entry)` under the new
  /// scene's lock, before any other call can reach it. ALREADY_EXISTS when the tenant has a scene
  /// of that name; NOT_FOUND for a mesh this tenant has not uploaded.
  absl::Status Create(const std::string& tenant, scene::SceneSpec spec, absl::FunctionRef<void(SceneEntry&)> created);
  absl::Status Create(const std::string& tenant, scene::SceneSpec spec);
  /// Runs `fn(entry)` on the tenant's scene `name` under the scene's lock and returns its status:
  /// NOT_FOUND naming the scene when there is none, or SceneGone(name) when it was deleted while
  /// this call waited for the lock (then `fn` does not run). `fn` may reserve memory and call
  /// CheckAddSensor and UpdateSceneBytes (lock order: a scene's lock, then the registry's), but not
  /// reach the same scene again through WithScene, ForEachScene or Delete (the lock is not
  /// recursive).
  absl::Status WithScene(const std::string& tenant, const std::string& name,
                         absl::FunctionRef<absl::Status(SceneEntry&)> fn);
  /// Runs `fn(entry)` under each scene's lock, for every live scene of `tenant` in name order
  /// (those deleted meanwhile are skipped).
  void ForEachScene(const std::string& tenant, absl::FunctionRef<void(const SceneEntry&)> fn);
  /// Removes the scene (waiting for an operation in flight on it). NOT_FOUND if absent.
  absl::Status Delete(const std::string& tenant, const std::string& name);
  /// The NOT_FOUND of a call that waited for a scene deleted meanwhile (also the status that ends
  /// the scene's open streams).
  static absl::Status SceneGone(const std::string& name);
  /// Live scenes, of every tenant.
  int size() const;

  struct MeshAdded {
    geometry::MeshStore::AddResult result;
    bool newly_added = false;  ///< new for this tenant (whether another tenant has it is not told)
  };
  /// Reserves the mesh's estimated bytes, builds it (once per content, shared by tenants) and
  /// records that `tenant` holds it; its bytes count against each tenant that uploaded it. With
  /// `grid`, also builds (or reuses, MeshStore::AddGrid) its narrow-band grid, reserved the same
  /// way: RESOURCE_EXHAUSTED naming "grid.max_error" when it does not fit or needs more queries than
  /// the store allows a grid build (MeshStore::set_grid_builds), and then the upload leaves
  /// nothing behind (the store publishes the mesh only with its grid).
  absl::StatusOr<MeshAdded> AddMesh(const std::string& tenant, std::vector<Eigen::Vector3d> vertices,
                                    std::vector<geometry::Triangle> triangles,
                                    const std::optional<geometry::SdfGridOptions>& grid = std::nullopt);
  /// The meshes `tenant` may use (those it uploaded), for Scene::AddSensor's grids.
  std::unique_ptr<geometry::MeshLookup> TenantMeshLookup(const std::string& tenant) const;

  /// Forgets mesh `id` for `tenant`: NOT_FOUND (field "mesh_id") when the tenant has not uploaded
  /// it, FAILED_PRECONDITION naming the scene while one of the tenant's scenes uses it. The mesh's
  /// bytes stop counting against the tenant at once, and the store frees it when no tenant holds
  /// it any more (no scene can then use it: a scene uses only its own tenant's meshes).
  absl::Status DeleteMesh(const std::string& tenant, const std::string& id);

  /// Limits check for adding a sensor to a scene (call inside WithScene).
  absl::Status CheckAddSensor(const scene::Scene& scene, const sensors::SensorSpec& spec) const;
  /// Records the current size of a scene after it changed (call inside WithScene).
  void UpdateSceneBytes(const SceneEntry& entry);

  /// Bytes held by all scenes and meshes, with the reservations in flight.
  int64_t memory_bytes() const;
  TenantUsage usage(const std::string& tenant) const;
  const Limits& limits() const { return limits_; }

 private:
  friend class Reservation;
  using Key = std::pair<std::string, std::string>;  // (tenant, scene name)
  // ALREADY_EXISTS for a taken name, RESOURCE_EXHAUSTED at the scene limits. Needs mu_.
  absl::Status CheckRoomLocked(const Key& key) const;
  // The entry of a scene, NOT_FOUND naming it. Needs no lock held.
  absl::StatusOr<std::shared_ptr<SceneEntry>> Find(const std::string& tenant, const std::string& name) const;
  double TotalLocked() const;
  double TenantBytesLocked(const std::string& tenant) const;
  absl::Status ReserveBytes(const std::string& tenant, double bytes, absl::string_view field, absl::string_view what);
  void ReleaseBytes(const std::string& tenant, double bytes);

  const Limits limits_;
  geometry::MeshStore* meshes_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<SceneEntry>> scenes_;
  std::map<Key, int64_t> scene_bytes_;                          // at creation and after every change
  std::map<std::string, std::set<std::string>> tenant_meshes_;  // mesh ids each tenant uploaded
  std::map<Key, std::set<std::string>> scene_meshes_;           // mesh ids each scene uses
  std::map<std::string, double> reserved_;                      // per tenant, in flight
  double reserved_total_ = 0;
};

/// The memory limit a server runs with: `requested` when > 0; else three quarters of the memory
/// this process may use (the cgroup's memory.max when set, else the machine's MemTotal).
int64_t ResolveMemoryLimit(int64_t requested);

}  // namespace taxel::server

#endif  // TAXEL_SERVER_SCENE_REGISTRY_H_
