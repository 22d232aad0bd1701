// A scene bundle: a SceneSpec whose meshes travel with it, in one JSON file.
//
//   {"scene": <taxel.v1.SceneSpec in protobuf's JSON mapping>,
//    "meshes": [{"mesh_id": "<content id>", "vertices": [x, y, z, ...], "triangles": [a, b, c, ...]}],
//    "geom_names": {"<entity>/<link>": ["<name of shape 0>", ...]}}   (optional)
//
// `taxel-cli import` writes one; `taxel-cli create-scene` reads it (or a plain SceneSpec), uploads
// every mesh, checks that the server's content id equals "mesh_id" (the spec's MeshRef.mesh_id
// refers to it) and creates the scene. Vertices in metres in the mesh frame, triangles zero-based
// and counter-clockwise seen from outside (as UploadMesh). "geom_names" is informational: the
// source file's name of each shape of a link ("" when unnamed), for tools that address shapes by
// name (the Python client's SceneSpec.grid_on_box_face); create-scene ignores it.
#ifndef TAXEL_CLIENT_CPP_TAXEL_SCENE_BUNDLE_H_
#define TAXEL_CLIENT_CPP_TAXEL_SCENE_BUNDLE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taxel/client.h"
#include "taxel/mesh_io.h"
#include "taxel/v1/scene.pb.h"

namespace taxel {

struct BundleMesh {
  std::string mesh_id;  ///< content id (SHA-256 of the canonical bytes, as UploadMesh returns it)
  MeshArrays arrays;
};

struct SceneBundle {
  v1::SceneSpec scene;
  std::vector<BundleMesh> meshes;
  /// "entity/link" → the source's name of each of the link's shapes, in order (may be empty).
  std::map<std::string, std::vector<std::string>> geom_names;
};

/// The bundle as indented JSON. Numbers are written so that they read back bit for bit.
std::string SceneBundleToJson(const SceneBundle& bundle);

/// Parses a bundle, or a plain SceneSpec (no "scene" key: the whole text is the spec, no meshes).
/// INVALID_ARGUMENT naming `source` and the field ("meshes[2].triangles[7]: ...") otherwise.
absl::StatusOr<SceneBundle> ParseSceneBundleJson(const std::string& json, const std::string& source);

/// Uploads every mesh of the bundle (FAILED_PRECONDITION when the server's id differs from the
/// bundle's mesh_id: the file was edited or written by another version) and creates the scene.
absl::StatusOr<v1::SceneInfo> CreateSceneFromBundle(Client& client, const SceneBundle& bundle);

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_SCENE_BUNDLE_H_
