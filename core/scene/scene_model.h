// The validated, immutable model of a scene: entities, links and their shapes, canonical order.
#ifndef TAXEL_CORE_SCENE_SCENE_MODEL_H_
#define TAXEL_CORE_SCENE_SCENE_MODEL_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/common/ids.h"
#include "core/common/memory_budget.h"
#include "core/common/pose.h"
#include "core/geometry/aabb.h"
#include "core/geometry/mesh_store.h"
#include "core/geometry/shape.h"
#include "core/scene/scene_spec.h"

namespace taxel::scene {

/// A shape placed on a link: X_LS is the shape frame S in the link frame L.
struct ShapeInstance {
  geometry::Shape shape;
  RigidTransform X_LS;
  /// Bounds of the shape in L (infinite for half-spaces, unbounded below for heightfields).
  geometry::Aabb bounds_L;
  /// A mesh with a non-unit scale: its copy is the scene's memory, not the mesh store's.
  bool scaled_mesh = false;
  /// Meshes: the content id the shape was built from.
  std::string mesh_id;
};

struct LinkModel {
  std::string name;        ///< qualified: "entity/link"
  std::string short_name;  ///< the link's own name
  EntityIndex entity;
  EntityKind kind = EntityKind::kRobot;
  /// Index among moving links (the second axis of the poses array); −1 for terrain/static.
  int moving_index = -1;
  /// Terrain/static links: the fixed pose in world.
  RigidTransform X_WL;
  /// Geometry per asset (index 0 the link's own shapes; object slots may have more).
  std::vector<std::vector<ShapeInstance>> assets;
  /// Union of the asset's shape bounds, in L.
  std::vector<geometry::Aabb> asset_bounds_L;
};

struct EntityModel {
  std::string name;
  EntityKind kind = EntityKind::kRobot;
  std::vector<LinkIndex> links;
  std::vector<std::string> asset_names;  ///< asset 0 is "default"
  /// Per env: asset index, or −1 for an empty object slot. Size num_envs.
  std::vector<int32_t> env_assets;
};

class SceneModel {
 public:
  /// Validates `spec` (everything but sensors) and resolves meshes from `meshes`.
  /// Errors: INVALID_ARGUMENT with the field path (e.g. "entities[1].links[0].shapes[2].radius"),
  /// NOT_FOUND for a mesh id that was never uploaded, RESOURCE_EXHAUSTED when a scaled mesh copy
  /// does not fit `budget` (reserved before it is built).
  static absl::StatusOr<std::shared_ptr<const SceneModel>> Build(const SceneSpec& spec,
                                                                 const geometry::MeshLookup& meshes,
                                                                 MemoryBudget& budget = MemoryBudget::Unlimited());

  int num_envs() const { return num_envs_; }
  uint64_t seed() const { return seed_; }
  /// Global index of env 0 (SceneSpec::env_offset): env e draws its random numbers as env_offset() + e.
  int64_t env_offset() const { return env_offset_; }
  const std::string& name() const { return name_; }
  const std::vector<EntityModel>& entities() const { return entities_; }
  const std::vector<LinkModel>& links() const { return links_; }
  const LinkModel& link(LinkIndex l) const { return links_[l.value()]; }
  int num_links() const { return static_cast<int>(links_.size()); }
  /// Moving links in canonical order (the second axis of the step's poses array).
  const std::vector<LinkIndex>& moving_links() const { return moving_links_; }
  int num_moving_links() const { return static_cast<int>(moving_links_.size()); }

  /// Resolves "entity/link", an unambiguous bare link name, or the name of an entity that has a
  /// single link. Errors naming `field`: NOT_FOUND
  /// for an unknown name, INVALID_ARGUMENT for a bare name used by several entities.
  absl::StatusOr<LinkIndex> FindLink(absl::string_view name, absl::string_view field) const;

  /// The shapes of link l in env e (empty when the link's object slot is empty in that env).
  const std::vector<ShapeInstance>& ShapesIn(LinkIndex l, int env) const {
    const int asset = AssetIn(l, env);
    return asset < 0 ? empty_ : links_[l.value()].assets[asset];
  }
  /// Asset index of link l's entity in env e (−1 empty slot).
  int AssetIn(LinkIndex l, int env) const { return entities_[links_[l.value()].entity.value()].env_assets[env]; }
  /// Bytes held by shapes and tables (meshes are shared and counted by the MeshStore).
  size_t memory_bytes() const;
  /// Whether any link (in any asset) has an implicit shape: the probe sensors then keep a warm
  /// start per (env, probe) for the implicit probe solve.
  bool has_implicit_shapes() const { return has_implicit_shapes_; }

 private:
  SceneModel() = default;
  std::string name_;
  int num_envs_ = 0;
  uint64_t seed_ = 0;
  int64_t env_offset_ = 0;
  std::vector<EntityModel> entities_;
  std::vector<LinkModel> links_;
  std::vector<LinkIndex> moving_links_;
  std::unordered_map<std::string, LinkIndex> by_qualified_name_;
  std::unordered_map<std::string, std::vector<LinkIndex>> by_short_name_;
  std::vector<ShapeInstance> empty_;
  bool has_implicit_shapes_ = false;
};

}  // namespace taxel::scene

#endif  // TAXEL_CORE_SCENE_SCENE_MODEL_H_
