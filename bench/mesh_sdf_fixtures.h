// Inputs of the mesh signed-distance benchmarks: the three meshes and their query points.
#ifndef TAXEL_BENCH_MESH_SDF_FIXTURES_H_
#define TAXEL_BENCH_MESH_SDF_FIXTURES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "core/geometry/aabb.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/triangle_mesh.h"

namespace taxel::bench {

/// Number of query points of every sdf_* / embree_* case.
inline constexpr int kSdfPoints = 100000;
/// Half-width of the shell the near points are drawn from, and the near search radius (metres).
inline constexpr double kNearShell = 0.002;

/// One benchmark mesh, its signed-distance structure and its two point sets (mesh frame M, m).
struct SdfFixture {
  std::string name;  ///< "ico20k", "ico200k" or "torus50k"
  std::shared_ptr<const geometry::TriangleMesh> mesh;
  std::shared_ptr<const geometry::MeshSignedDistance> sdf;
  std::vector<Eigen::Vector3d> near_points;     ///< within ±kNearShell of the surface
  std::vector<Eigen::Vector3d> uniform_points;  ///< uniform in 1.2× the mesh bounds
};

/// Mesh names of the contract cases, in run order.
const std::vector<std::string>& SdfFixtureNames();

/// The fixture `name` (one of SdfFixtureNames()), built on first use and kept for the process:
///   ico20k   GeodesicSphere(0.05, 32)         20,480 triangles
///   ico200k  GeodesicSphere(0.05, 100)       200,000 triangles
///   torus50k Torus(0.05, 0.02, 250, 100)      50,000 triangles
/// Building is not timed by any case. Unknown names end the process.
const SdfFixture& GetSdfFixture(const std::string& name);

/// `n` points near the surface: a surface point (area-weighted random triangle, uniform
/// barycentric coordinates) moved along that triangle's outward normal by U(−max_offset,
/// max_offset). Deterministic: point i uses Philox4x32(seed, stream 0) at counter (i, 0, 0, 0).
std::vector<Eigen::Vector3d> NearSurfacePoints(const geometry::TriangleMesh& mesh, int n, double max_offset,
                                               uint64_t seed);

/// `n` points uniform in the box with the same centre as `bounds` and `scale` times its extent.
/// Deterministic: point i uses Philox4x32(seed, stream 1) at counter (i, 0, 0, 0).
std::vector<Eigen::Vector3d> UniformBoxPoints(const geometry::Aabb& bounds, double scale, int n, uint64_t seed);

}  // namespace taxel::bench

#endif  // TAXEL_BENCH_MESH_SDF_FIXTURES_H_
