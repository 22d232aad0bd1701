// Shared test fixtures: seeded random points and brute-force references.
#ifndef TAXEL_TESTS_SUPPORT_TEST_SUPPORT_H_
#define TAXEL_TESTS_SUPPORT_TEST_SUPPORT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "Eigen/Geometry"
#include "core/geometry/aabb.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/triangle_mesh.h"

namespace taxel::testing {

/// N draws of `dist` from `rng`, first coordinate first. Write Draw<3>(dist, rng) rather than
/// Eigen::Vector3d(dist(rng), dist(rng), dist(rng)): a call's arguments are evaluated in an
/// unspecified order (gcc right to left, clang left to right), so the latter draws different
/// points on different compilers.
template <int N, class Dist, class Rng>
Eigen::Matrix<double, N, 1> Draw(Dist& dist, Rng& rng) {
  Eigen::Matrix<double, N, 1> v;
  for (int i = 0; i < N; ++i) v[i] = dist(rng);
  return v;
}

/// A rotation from a quaternion with coordinates drawn as Draw<4> (w first), normalised.
template <class Dist, class Rng>
Eigen::Matrix3d DrawRotation(Dist& dist, Rng& rng) {
  const Eigen::Vector4d c = Draw<4>(dist, rng);
  return Eigen::Quaterniond(c[0], c[1], c[2], c[3]).normalized().toRotationMatrix();
}

/// Deterministic uniform points in the box [lo, hi] (seeded; no wall clock).
std::vector<Eigen::Vector3d> UniformPoints(int n, const Eigen::Vector3d& lo, const Eigen::Vector3d& hi, uint64_t seed);

/// Deterministic random boxes: centres uniform in [−1, 1]³, half sizes uniform in [0.001, 0.05]³.
std::vector<geometry::Aabb> RandomBoxes(int n, uint64_t seed);

/// Validates `data` into a mesh; aborts the test binary if the generator produced bad data.
std::shared_ptr<const geometry::TriangleMesh> MakeMesh(geometry::MeshData data);
std::shared_ptr<const geometry::MeshSignedDistance> MakeSdf(geometry::MeshData data);

/// Brute-force closest squared distance from p to the mesh surface (every triangle).
double BruteForceSquaredDistance(const geometry::TriangleMesh& mesh, const Eigen::Vector3d& p);

/// Deterministic unit vectors, uniform on the sphere (normalised Gaussian triples, seeded).
std::vector<Eigen::Vector3d> UniformDirections(int n, uint64_t seed);

/// Brute-force generalised winding number: the sum over every triangle of its signed solid angle
/// seen from p (Van Oosterom & Strackee 1983), over 4π, in the triangles' own orientation. For a
/// closed, consistently oriented mesh it is the exact integer (1 inside, 0 outside for an outward
/// mesh) up to rounding, wherever p is not on the surface. Independent of the library's
/// hierarchical evaluation.
double BruteForceWindingNumber(const geometry::TriangleMesh& mesh, const Eigen::Vector3d& p);

/// Points near the features of a mesh: one third each near a vertex, a point on an edge and a
/// point inside the face of a triangle picked uniformly at random, displaced along a random
/// direction by a distance log-uniform in [min_offset, max_offset]. Seeded.
std::vector<Eigen::Vector3d> NearFeaturePoints(const geometry::TriangleMesh& mesh, int n, double min_offset,
                                               double max_offset, uint64_t seed);

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_SUPPORT_TEST_SUPPORT_H_
