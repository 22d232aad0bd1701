// Content-addressed store of uploaded meshes, shared by every scene of a server.
#ifndef TAXEL_CORE_GEOMETRY_MESH_STORE_H_
#define TAXEL_CORE_GEOMETRY_MESH_STORE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/triangle_mesh.h"

namespace taxel::geometry {

/// Thread-safe store of meshes and their acceleration structures, keyed by content id.
///
/// Add() is idempotent: uploading the same vertices and triangles again returns the same id and
/// stores nothing new. Scaled variants (non-unit mesh_scale in a scene) are built on first use
/// and cached under (id, scale). Entries are held by shared_ptr, so a mesh stays alive while any
/// scene uses it even after Remove().
class MeshStore {
 public:
  struct AddResult {
    std::string id;
    bool newly_added = false;
    std::shared_ptr<const MeshSignedDistance> mesh;
  };

  /// Validates (TriangleMesh::Create) and builds the acceleration structures once.
  absl::StatusOr<AddResult> Add(std::vector<Eigen::Vector3d> vertices, std::vector<Triangle> triangles,
                                absl::string_view field = "mesh");

  /// The mesh with content id `id`, scaled per axis by `scale` (NOT_FOUND for an unknown id;
  /// INVALID_ARGUMENT for a zero or non-finite scale component).
  absl::StatusOr<std::shared_ptr<const MeshSignedDistance>> Get(
      const std::string& id, const Eigen::Vector3d& scale = Eigen::Vector3d::Ones()) const;

  bool Contains(const std::string& id) const;
  /// Drops the store's reference (scenes keep theirs). Returns false if unknown.
  bool Remove(const std::string& id);
  int size() const;
  /// Bytes held by the stored meshes and their structures (scaled variants included).
  size_t memory_bytes() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const MeshSignedDistance>> meshes_;
  mutable std::map<std::tuple<std::string, double, double, double>, std::shared_ptr<const MeshSignedDistance>>
      scaled_;
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_MESH_STORE_H_
