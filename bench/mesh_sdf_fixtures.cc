#include "bench/mesh_sdf_fixtures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "core/common/check.h"
#include "core/common/rng.h"
#include "core/geometry/bvh.h"
#include "core/geometry/closest_point_triangle.h"
#include "core/geometry/mesh_generators.h"

namespace taxel::bench {
namespace {

using geometry::MeshData;

constexpr uint64_t kPointSeed = 20240601;
constexpr uint32_t kNearStream = 0, kUniformStream = 1;
constexpr double kUniformScale = 1.2;

// Squared distance from p to a node's box in double (0 inside): the same arithmetic as the bound
// MeshSignedDistance::ClosestPoint prunes with, so that the counts follow the same path.

MeshData MakeMeshData(const std::string& name) {
  if (name == "ico20k") return geometry::GeodesicSphere(0.05, 32);
  if (name == "ico200k") return geometry::GeodesicSphere(0.05, 100);
  if (name == "torus50k") return geometry::Torus(0.05, 0.02, 250, 100);
  std::fprintf(stderr, "taxel-bench: unknown sdf fixture \"%s\"\n", name.c_str());
  std::abort();
}

}  // namespace

const std::vector<std::string>& SdfFixtureNames() {
  static const std::vector<std::string> names = {"ico20k", "ico200k", "torus50k"};
  return names;
}

const SdfFixture& GetSdfFixture(const std::string& name) {
  static std::map<std::string, SdfFixture>* cache = new std::map<std::string, SdfFixture>();
  auto it = cache->find(name);
  if (it != cache->end()) return it->second;
  MeshData data = MakeMeshData(name);
  auto mesh = geometry::TriangleMesh::Create(std::move(data.vertices), std::move(data.triangles), name);
  TAXEL_CHECK(mesh.ok());
  SdfFixture f;
  f.name = name;
  f.mesh = *std::move(mesh);
  f.sdf = geometry::MeshSignedDistance::Build(f.mesh);
  f.near_points = NearSurfacePoints(*f.mesh, kSdfPoints, kNearShell, kPointSeed);
  f.uniform_points = UniformBoxPoints(f.mesh->bounds(), kUniformScale, kSdfPoints, kPointSeed);
  return cache->emplace(name, std::move(f)).first->second;
}

std::vector<Eigen::Vector3d> NearSurfacePoints(const geometry::TriangleMesh& mesh, int n, double max_offset,
                                               uint64_t seed) {
  // Cumulative areas for an area-weighted choice of triangle.
  std::vector<double> cdf(mesh.num_triangles());
  double acc = 0;
  for (int t = 0; t < mesh.num_triangles(); ++t) cdf[t] = acc += mesh.face_area(t);
  const Philox4x32 rng(seed, kNearStream);
  std::vector<Eigen::Vector3d> points(n);
  for (int i = 0; i < n; ++i) {
    const Philox4x32::Block w = rng(static_cast<uint32_t>(i), 0, 0, 0);
    const double pick = UniformFromBits(w[0]) * acc;
    const int t = std::min<int>(static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), pick) - cdf.begin()),
                                mesh.num_triangles() - 1);
    // Uniform on the triangle: (1 − √u, √u(1 − v), √u·v) (Osada et al. 2002).
    const double su = std::sqrt(UniformFromBits(w[1])), v = UniformFromBits(w[2]);
    const geometry::Triangle& tri = mesh.triangle(t);
    const Eigen::Vector3d on_surface =
        (1 - su) * mesh.vertex(tri[0]) + su * (1 - v) * mesh.vertex(tri[1]) + su * v * mesh.vertex(tri[2]);
    const double offset = (2 * UniformFromBits(w[3]) - 1) * max_offset;
    points[i] = on_surface + offset * mesh.face_normal(t);
  }
  return points;
}

std::vector<Eigen::Vector3d> UniformBoxPoints(const geometry::Aabb& bounds, double scale, int n, uint64_t seed) {
  const Eigen::Vector3d c = bounds.center(), h = scale * bounds.half_extents();
  const Philox4x32 rng(seed, kUniformStream);
  std::vector<Eigen::Vector3d> points(n);
  for (int i = 0; i < n; ++i) {
    const Philox4x32::Block w = rng(static_cast<uint32_t>(i), 0, 0, 0);
    const Eigen::Vector3d u(UniformFromBits(w[0]), UniformFromBits(w[1]), UniformFromBits(w[2]));
    points[i] = c + (2 * u.array() - 1).matrix().cwiseProduct(h);
  }
  return points;
}

}  // namespace taxel::bench
