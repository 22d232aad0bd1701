// Where a query of a mesh's signed distance is answered from: the exact BVH or the narrow-band
// grid (mesh_sdf_grid.h). Chosen per sensor (sensors::SensorSpec) and per contact matrix
// (contact::ContactMatrixSpec).
#ifndef TAXEL_CORE_GEOMETRY_SDF_BACKEND_H_
#define TAXEL_CORE_GEOMETRY_SDF_BACKEND_H_

namespace taxel::geometry {

/// - kExact: the mesh's BVH (MeshSignedDistance), exact.
/// - kGrid: the mesh's narrow-band grid (MeshSdfGrid), within the error its stats() report where
///   |sd| ≤ band; "farther than the band" outside, the exact depth deeper inside than the band.
///   Primitives, heightfields, implicit shapes and meshes with a non-unit scale stay exact.
enum class SdfBackend { kExact, kGrid };

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_SDF_BACKEND_H_
