#include "tests/support/test_support.h"

#include <limits>

#include "core/common/check.h"
#include "core/common/rng.h"
#include "core/geometry/closest_point_triangle.h"

namespace taxel::testing {

std::vector<Eigen::Vector3d> UniformPoints(int n, const Eigen::Vector3d& lo, const Eigen::Vector3d& hi,
                                           uint64_t seed) {
  const Philox4x32 rng(seed, 0);
  std::vector<Eigen::Vector3d> points(n);
  for (int i = 0; i < n; ++i) {
    const auto b = rng(static_cast<uint32_t>(i), 0, 0, 0);
    for (int a = 0; a < 3; ++a) points[i][a] = lo[a] + (hi[a] - lo[a]) * UniformFromBits(b[a]);
  }
  return points;
}

std::shared_ptr<const geometry::TriangleMesh> MakeMesh(geometry::MeshData data) {
  auto mesh = geometry::TriangleMesh::Create(std::move(data.vertices), std::move(data.triangles));
  TAXEL_CHECK(mesh.ok());
  return *mesh;
}

std::shared_ptr<const geometry::MeshSignedDistance> MakeSdf(geometry::MeshData data) {
  return geometry::MeshSignedDistance::Build(MakeMesh(std::move(data)));
}

double BruteForceSquaredDistance(const geometry::TriangleMesh& mesh, const Eigen::Vector3d& p) {
  double best = std::numeric_limits<double>::infinity();
  for (int t = 0; t < mesh.num_triangles(); ++t) {
    const auto& tri = mesh.triangle(t);
    geometry::TriangleFeature f;
    const Eigen::Vector3d c =
        geometry::ClosestPointOnTriangle(p, mesh.vertex(tri[0]), mesh.vertex(tri[1]), mesh.vertex(tri[2]), &f);
    best = std::min(best, (p - c).squaredNorm());
  }
  return best;
}

}  // namespace taxel::testing
