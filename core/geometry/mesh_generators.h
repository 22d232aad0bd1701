// Procedural closed meshes: geodesic spheres, tori and subdivided boxes. Used by tests, the
// benchmark, the demo, and by users who want a quick test object.
#ifndef TAXEL_CORE_GEOMETRY_MESH_GENERATORS_H_
#define TAXEL_CORE_GEOMETRY_MESH_GENERATORS_H_

#include <vector>

#include "Eigen/Core"
#include "core/geometry/triangle_mesh.h"

namespace taxel::geometry {

/// Raw mesh arrays, before validation.
struct MeshData {
  std::vector<Eigen::Vector3d> vertices;
  std::vector<Triangle> triangles;
};

/// Geodesic sphere of `radius` centred at the origin: each icosahedron face split into
/// frequency² triangles, vertices projected onto the sphere. 20·frequency² triangles,
/// watertight, outward (counter-clockwise seen from outside). frequency 32 → 20,480 triangles,
/// 100 → 200,000. @pre radius > 0, frequency ≥ 1.
MeshData GeodesicSphere(double radius, int frequency);

/// Torus around +z: ring radius R (centre to tube centre), tube radius r < R, `segments` around
/// the ring and `sides` around the tube; 2·segments·sides triangles, watertight, outward.
MeshData Torus(double ring_radius, double tube_radius, int segments, int sides);

/// Box with the given half extents, each face an n×n grid of squares split in two:
/// 12·n² triangles, watertight, outward.
MeshData SubdividedBox(const Eigen::Vector3d& half_extents, int n);

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_MESH_GENERATORS_H_
