// The scene as a client describes it: entities, links, shapes, sensors. Plain data; Scene::Create
// validates it and builds the runtime model.
#ifndef TAXEL_CORE_SCENE_SCENE_SPEC_H_
#define TAXEL_CORE_SCENE_SCENE_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/string_view.h"
#include "core/common/pose.h"
#include "core/contact/contact_matrix.h"
#include "core/geometry/shape.h"
#include "core/sensors/sensor_spec.h"

namespace taxel::scene {

/// How an entity moves and whether it exists once per env:
///  - kRobot, kObject, kProjectile: one pose per env and link, streamed every step ("moving").
///  - kTerrain, kStatic: one pose for all envs, fixed at creation (X_WL in LinkSpec).
enum class EntityKind { kRobot, kObject, kProjectile, kTerrain, kStatic };

absl::string_view EntityKindName(EntityKind kind);
inline bool IsMoving(EntityKind kind) {
  return kind == EntityKind::kRobot || kind == EntityKind::kObject || kind == EntityKind::kProjectile;
}

/// The parameters of an implicit shape (geometry::ImplicitShape; validated by its factories when
/// the scene is built). Only the members of `kind` are read.
struct ImplicitSpec {
  geometry::ImplicitKind kind = geometry::ImplicitKind::kSphere;
  double radius = 0;                                    ///< sphere, superelliptic cylinder (m)
  double n = 1;                                         ///< superellipsoid, superelliptic cylinder: integer ≥ 1
  Eigen::Vector3d semi_axes = Eigen::Vector3d::Zero();  ///< superellipsoid (a, b, c) along x, y, z (m)
  double half_length = 0;                               ///< superelliptic cylinder, along x (m)
  std::vector<Eigen::Vector3d> normals;                 ///< smooth polytope: a_i (any length)
  std::vector<double> offsets;                          ///< smooth polytope: b_i (m, for unit a_i)
  double beta = 0;                                      ///< smooth polytope, truncated cone: sharpness
  double bottom_radius = 0, top_radius = 0;             ///< truncated cone: radii at x = −a and x = +b (m)
  double a = 0, b = 0;                                  ///< truncated cone: extent along −x and +x (m)
};

/// One collision shape on a link, at pose X_LS in the link frame L.
struct ShapeSpec {
  geometry::ShapeKind kind = geometry::ShapeKind::kSphere;
  RigidTransform X_LS;
  double radius = 0;                                       ///< sphere, capsule, cylinder (m)
  double half_length = 0;                                  ///< capsule, cylinder: half length of the axis segment (m)
  Eigen::Vector3d half_extents = Eigen::Vector3d::Zero();  ///< box (m)
  // Heightfield (see geometry::Heightfield): rows × cols samples, spacing dx, dy (m).
  int hf_rows = 0, hf_cols = 0;
  double hf_dx = 0, hf_dy = 0;
  std::vector<double> hf_heights;
  // Mesh: content id of an uploaded mesh and a per-axis scale applied to its vertices.
  std::string mesh_id;
  Eigen::Vector3d mesh_scale = Eigen::Vector3d::Ones();
  // Implicit (kind kImplicit).
  ImplicitSpec implicit;
};

struct LinkSpec {
  std::string name;  ///< unique within its entity
  std::vector<ShapeSpec> shapes;
  /// Terrain and static links only: the fixed pose of the link in world. Ignored otherwise.
  RigidTransform X_WL;
};

/// Alternative geometry for an object slot: one shape list per link of the entity.
struct AssetSpec {
  std::string name;
  std::vector<std::vector<ShapeSpec>> link_shapes;
};

struct EntitySpec {
  std::string name;  ///< unique in the scene
  EntityKind kind = EntityKind::kRobot;
  std::vector<LinkSpec> links;
  /// kObject only. Asset 0 is the links' own shapes; `assets` adds assets 1..k.
  std::vector<AssetSpec> assets;
  /// kObject only. Per env, the asset in the slot (0..k) or −1 for an empty slot (a validity
  /// mask). Empty vector: asset 0 in every env.
  std::vector<int32_t> env_assets;
};

/// Global env indices (env_offset + env) fit the 32-bit env word of the random key: [0, 2^32).
inline constexpr int64_t kMaxGlobalEnvs = int64_t{1} << 32;

struct SceneSpec {
  std::string name;
  int32_t num_envs = 1;
  uint64_t seed = 0;
  /// Env sharding: the global index of env 0. Every random draw of env e's measured branch is
  /// keyed by the global index env_offset + e, so this scene reads what envs
  /// env_offset..env_offset + num_envs − 1 of the unsharded scene read. Env ids stay local.
  /// Rule: 0 <= env_offset and env_offset + num_envs <= kMaxGlobalEnvs.
  int64_t env_offset = 0;
  std::vector<EntitySpec> entities;
  std::vector<sensors::SensorSpec> sensors;
  /// Partner-resolved contact forces; disabled while `contact_matrix.bodies` is empty.
  contact::ContactMatrixSpec contact_matrix;
};

}  // namespace taxel::scene

#endif  // TAXEL_CORE_SCENE_SCENE_SPEC_H_
