// Shared test fixtures: seeded random points and brute-force references.
#ifndef TAXEL_TESTS_SUPPORT_TEST_SUPPORT_H_
#define TAXEL_TESTS_SUPPORT_TEST_SUPPORT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/triangle_mesh.h"

namespace taxel::testing {

/// Deterministic uniform points in the box [lo, hi] (seeded; no wall clock).
std::vector<Eigen::Vector3d> UniformPoints(int n, const Eigen::Vector3d& lo, const Eigen::Vector3d& hi,
                                           uint64_t seed);

/// Validates `data` into a mesh; aborts the test binary if the generator produced bad data.
std::shared_ptr<const geometry::TriangleMesh> MakeMesh(geometry::MeshData data);
std::shared_ptr<const geometry::MeshSignedDistance> MakeSdf(geometry::MeshData data);

/// Brute-force closest squared distance from p to the mesh surface (every triangle).
double BruteForceSquaredDistance(const geometry::TriangleMesh& mesh, const Eigen::Vector3d& p);

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_SUPPORT_TEST_SUPPORT_H_
