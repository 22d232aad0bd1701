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
double BoxSquaredDistance(const geometry::BvhNode& n, const Eigen::Vector3d& p) {
  const double dx = std::max(std::max(double{n.lo[0]} - p.x(), p.x() - double{n.hi[0]}), 0.0);
  const double dy = std::max(std::max(double{n.lo[1]} - p.y(), p.y() - double{n.hi[1]}), 0.0);
  const double dz = std::max(std::max(double{n.lo[2]} - p.z(), p.z() - double{n.hi[2]}), 0.0);
  return dx * dx + dy * dy + dz * dz;
}

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

std::vector<Eigen::Vector3d> NearSurfacePoints(const geometry::TriangleMesh& mesh, int n,
                                               double max_offset, uint64_t seed) {
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
    const Eigen::Vector3d on_surface = (1 - su) * mesh.vertex(tri[0]) + su * (1 - v) * mesh.vertex(tri[1]) +
                                       su * v * mesh.vertex(tri[2]);
    const double offset = (2 * UniformFromBits(w[3]) - 1) * max_offset;
    points[i] = on_surface + offset * mesh.face_normal(t);
  }
  return points;
}

std::vector<Eigen::Vector3d> UniformBoxPoints(const geometry::Aabb& bounds, double scale, int n,
                                              uint64_t seed) {
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

double CountingClosestPoint(const geometry::MeshSignedDistance& sdf, const Eigen::Vector3d& p,
                            double max_distance, TraversalCounts* counts) {
  using geometry::BvhNode;
  const std::vector<BvhNode>& nodes = sdf.bvh().nodes();
  const std::vector<uint32_t>& order = sdf.bvh().primitive_order();
  const geometry::TriangleMesh& mesh = sdf.mesh();
  double best = max_distance * max_distance;
  struct Entry {
    uint32_t node;
    double d2;
  };
  Entry stack[geometry::kBvhMaxDepth];
  int sp = 0;
  uint32_t node = 0;
  ++counts->box_tests;
  if (BoxSquaredDistance(nodes[0], p) > best) return std::numeric_limits<double>::infinity();
  bool found = false;
  while (true) {
    ++counts->nodes_visited;
    const BvhNode& n = nodes[node];
    if (n.is_leaf()) {
      for (uint32_t s = n.index, end = n.index + n.count; s < end; ++s) {
        const geometry::Triangle& tri = mesh.triangle(static_cast<int>(order[s]));
        geometry::TriangleFeature f;
        const Eigen::Vector3d c =
            geometry::ClosestPointOnTriangle(p, mesh.vertex(tri[0]), mesh.vertex(tri[1]), mesh.vertex(tri[2]), &f);
        ++counts->triangles_tested;
        const double d2 = (p - c).squaredNorm();
        if (d2 < best || (!found && d2 <= best)) {
          best = d2;
          found = true;
        }
      }
    } else {
      uint32_t near = n.index, far = n.index + 1;
      double d_near = BoxSquaredDistance(nodes[near], p);
      double d_far = BoxSquaredDistance(nodes[far], p);
      counts->box_tests += 2;
      if (d_far < d_near) std::swap(near, far), std::swap(d_near, d_far);
      if (d_near <= best) {
        if (d_far <= best) stack[sp++] = {far, d_far};
        node = near;
        continue;
      }
    }
    do {
      if (sp == 0) return found ? best : std::numeric_limits<double>::infinity();
      --sp;
    } while (stack[sp].d2 > best);
    node = stack[sp].node;
  }
}

}  // namespace taxel::bench
