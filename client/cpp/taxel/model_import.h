// Robots and scenes from MJCF and URDF files, through MuJoCo's own compiler.
//
//   taxel::ImportOptions options;
//   options.bodies = {"*_foot", "*_hand"};
//   auto imported = taxel::ImportModelFile("humanoid.xml", options);
//   // ... add sensors to imported->bundle.scene ...
//   auto info = taxel::CreateSceneFromBundle(*client, imported->bundle);  // uploads the meshes
//   // every step: poses of the moving links straight from MuJoCo (WXYZ)
//   std::vector<double> poses = taxel::MovingLinkPoses(*imported, data);
//
// Mapping (docs/reference.md, "Importing MJCF and URDF"). MuJoCo compiles the file (mj_loadXML
// reads both formats); the importer reads the COMPILED model, so every frame is the one MuJoCo
// simulates:
//   body with a joint (or a mocap body) on its path to the world → link `E/<body>` of the ROBOT
//     entity E, moved every step by data->xpos / data->xquat of that body (the body frame, not
//     the inertial one);
//   body welded to the world (neither up to it, the world body included) → its geoms go to the
//     fixed entities: planes and height fields to TERRAIN `E_terrain`, the rest to STATIC
//     `E_static`, link `<body>` with the body's fixed pose in world (X_WB at qpos0);
//   geom → Shape with pose X_BG = (geom_pos, geom_quat) (WXYZ) of the compiled model:
//     sphere (size[0] radius), capsule and cylinder (size[0] radius, size[1] half-length, axis z),
//     box (size = half extents), plane → HalfSpace (z <= 0 of the geom frame; MuJoCo's plane size
//     is for rendering only), mesh → MeshRef (mesh_vert/mesh_face, already in the geom frame after
//     MuJoCo's recentring; float32 in MuJoCo; bit-identical vertices welded, since MuJoCo's OBJ
//     reader gives each face its own corners), hfield → Heightfield (heights = hfield_data ×
//     size[2], rows along y; the solid extends below the surface to −∞, MuJoCo's base size[3] is
//     dropped), ellipsoid → the implicit superellipsoid with n = 1 and the geom's semi-axes
//     (exact: the probes measure the metric distance to the ellipsoid itself).
// Geom selection: by default the geoms that can collide (contype | conaffinity ≠ 0); MuJoCo's URDF
// reader keeps only <collision> elements by default. ImportOptions::groups selects by geom group
// instead. ImportOptions::bodies selects bodies by glob.
#ifndef TAXEL_CLIENT_CPP_TAXEL_MODEL_IMPORT_H_
#define TAXEL_CLIENT_CPP_TAXEL_MODEL_IMPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taxel/scene_bundle.h"
#include "taxel/v1/scene.pb.h"
#include <mujoco/mujoco.h>

namespace taxel {

struct ImportOptions {
  /// The ROBOT entity's name; empty = the model's name (MJCF `model`, URDF `robot name`) with
  /// characters outside [A-Za-z0-9_.-] replaced by '_'.
  std::string entity;
  /// Bodies to import, as globs (`*`, `?`) matched against the body name and against
  /// "entity/body"; empty = every body. A glob that matches no body is INVALID_ARGUMENT naming
  /// --bodies (the CLI flag).
  std::vector<std::string> bodies;
  /// Geom groups (0..5) to import; empty = every geom that can collide (contype | conaffinity ≠ 0).
  std::vector<int> groups;
  int num_envs = 1;        ///< SceneSpec.num_envs, >= 1
  std::string scene_name;  ///< SceneSpec.name; empty = the entity name
  /// No longer used (ellipsoids import as exact implicit shapes); still validated, 1..64, so that
  /// existing command lines keep working.
  int ellipsoid_frequency = 4;
};

/// What the importer produced: the spec (meshes referenced by content id), the meshes to upload,
/// and for each link of the ROBOT entity (in spec order = the scene's moving-link order when the
/// spec is created as it is) the MuJoCo body id that drives it.
struct ImportedModel {
  SceneBundle bundle;
  std::vector<int> moving_bodies;  ///< MuJoCo body id of each ROBOT link, in link order
  std::vector<std::string> notes;  ///< approximations made, one line each (none at present)
  const v1::SceneSpec& spec() const { return bundle.scene; }
};

/// Imports an already compiled model. @pre m != nullptr. INVALID_ARGUMENT for bad options (naming
/// the option), a glob that matches nothing, a model with nothing to import, or a geom type the
/// mapping above does not cover.
absl::StatusOr<ImportedModel> ImportModel(const mjModel* m, const ImportOptions& options);

/// Compiles `path` (MJCF or URDF) with mj_loadXML and imports it. INVALID_ARGUMENT with MuJoCo's
/// own error text when the file does not load.
absl::StatusOr<ImportedModel> ImportModelFile(const std::string& path, const ImportOptions& options);

/// Poses of the ROBOT links for one env: L·7 numbers (x, y, z, qw, qx, qy, qz) in world, from
/// data->xpos / data->xquat of `imported.moving_bodies` (send with quat_order WXYZ).
std::vector<double> MovingLinkPoses(const ImportedModel& imported, const mjData* data);

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_MODEL_IMPORT_H_
