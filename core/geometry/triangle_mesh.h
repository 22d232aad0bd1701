// Validated triangle meshes with the per-feature normals needed for signed distance.
#ifndef TAXEL_CORE_GEOMETRY_TRIANGLE_MESH_H_
#define TAXEL_CORE_GEOMETRY_TRIANGLE_MESH_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/geometry/aabb.h"

namespace taxel::geometry {

using Triangle = std::array<int32_t, 3>;

/// An immutable, validated triangle mesh in its own frame M (metres).
///
/// Created only through Create(), which refuses (INVALID_ARGUMENT, naming the index):
///  - no vertices or no triangles;
///  - a non-finite coordinate ("vertices[12]: ...");
///  - an index outside [0, num_vertices) or a repeated index in one triangle ("triangles[7]: ...");
///  - a degenerate triangle: |(b − a) × (c − a)| ≤ 1e-12 · (longest edge)² ("triangles[7]: ...").
///
/// A mesh that is not closed (an edge used by one triangle, or by more than two) or not
/// consistently oriented (an edge traversed twice in the same direction) is accepted, with
/// is_watertight() false; signed distance then takes its sign from the generalised winding number
/// instead of the pseudo-normals. A closed mesh whose triangles face inwards (negative enclosed
/// volume) is accepted and its normals are flipped so that they point out of the solid.
///
/// The content id is the SHA-256 (hex) of the canonical bytes: the ASCII tag "taxel-mesh-v1", the
/// vertex count (uint64 LE), the coordinates as float64 LE (x, y, z per vertex), the triangle
/// count (uint64 LE) and the indices as int32 LE. Equal inputs give equal ids on every platform.
class TriangleMesh {
 public:
  static absl::StatusOr<std::shared_ptr<const TriangleMesh>> Create(std::vector<Eigen::Vector3d> vertices,
                                                                    std::vector<Triangle> triangles,
                                                                    absl::string_view field = "mesh");

  /// Content id of raw data, without validation (used to short-circuit re-uploads).
  static std::string ContentId(const std::vector<Eigen::Vector3d>& vertices, const std::vector<Triangle>& triangles);

  const std::string& id() const { return id_; }
  int num_vertices() const { return static_cast<int>(vertices_.size()); }
  int num_triangles() const { return static_cast<int>(triangles_.size()); }
  const std::vector<Eigen::Vector3d>& vertices() const { return vertices_; }
  const std::vector<Triangle>& triangles() const { return triangles_; }
  const Eigen::Vector3d& vertex(int v) const { return vertices_[v]; }
  const Triangle& triangle(int t) const { return triangles_[t]; }

  /// Unit outward face normal of triangle t (flipped if the closed mesh faced inwards).
  const Eigen::Vector3d& face_normal(int t) const { return face_normals_[t]; }
  /// Area of triangle t (m²).
  double face_area(int t) const { return face_areas_[t]; }
  double total_area() const { return total_area_; }
  /// Angle-weighted pseudo-normal of vertex v (Bærentzen & Aanæs, "Signed distance computation
  /// using the angle weighted pseudonormal", IEEE TVCG 11(3), 2005). Unit length.
  const Eigen::Vector3d& vertex_pseudo_normal(int v) const { return vertex_normals_[v]; }
  /// Pseudo-normal of edge k (vertex k to vertex (k+1)%3) of triangle t: the normalised sum of
  /// the normals of the two triangles sharing it (the face normal on a boundary edge).
  const Eigen::Vector3d& edge_pseudo_normal(int t, int k) const { return edge_normals_[3 * t + k]; }

  /// Every edge shared by exactly two triangles traversing it in opposite directions.
  bool is_watertight() const { return watertight_; }
  /// True when a closed mesh was given with inward-facing triangles (normals were flipped).
  bool was_inside_out() const { return inside_out_; }
  /// Enclosed volume (m³); meaningful only when watertight.
  double volume() const { return volume_; }
  const Aabb& bounds() const { return bounds_; }
  /// Bytes held by this object (vertices, indices, normals).
  size_t memory_bytes() const;

 private:
  TriangleMesh() = default;
  void ComputeTopologyAndNormals();

  std::string id_;
  std::vector<Eigen::Vector3d> vertices_;
  std::vector<Triangle> triangles_;
  std::vector<Eigen::Vector3d> face_normals_;
  std::vector<double> face_areas_;
  std::vector<Eigen::Vector3d> vertex_normals_;
  std::vector<Eigen::Vector3d> edge_normals_;
  double total_area_ = 0;
  double volume_ = 0;
  bool watertight_ = false;
  bool inside_out_ = false;
  Aabb bounds_;
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_TRIANGLE_MESH_H_
