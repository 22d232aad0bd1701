#include "tests/support/test_support.h"

#include <cmath>
#include <limits>

#include "core/common/check.h"
#include "core/common/rng.h"
#include "core/geometry/closest_point_triangle.h"

namespace taxel::testing {

std::vector<Eigen::Vector3d> UniformPoints(int n, const Eigen::Vector3d& lo, const Eigen::Vector3d& hi, uint64_t seed) {
  const Philox4x32 rng(seed, 0);
  std::vector<Eigen::Vector3d> points(n);
  for (int i = 0; i < n; ++i) {
    const auto b = rng(static_cast<uint32_t>(i), 0, 0, 0);
    for (int a = 0; a < 3; ++a) points[i][a] = lo[a] + (hi[a] - lo[a]) * UniformFromBits(b[a]);
  }
  return points;
}

std::vector<geometry::Aabb> RandomBoxes(int n, uint64_t seed) {
  const auto centres = UniformPoints(n, Eigen::Vector3d::Constant(-1), Eigen::Vector3d::Constant(1), seed);
  const auto halves = UniformPoints(n, Eigen::Vector3d::Constant(0.001), Eigen::Vector3d::Constant(0.05), seed + 1);
  std::vector<geometry::Aabb> boxes(n);
  for (int i = 0; i < n; ++i) boxes[i] = geometry::Aabb::FromCenterHalf(centres[i], halves[i]);
  return boxes;
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

std::vector<Eigen::Vector3d> UniformDirections(int n, uint64_t seed) {
  const Philox4x32 rng(seed, 1);
  std::vector<Eigen::Vector3d> dirs;
  dirs.reserve(n);
  for (uint32_t i = 0; static_cast<int>(dirs.size()) < n; ++i) {
    const auto a = rng(i, 0, 0, 0), b = rng(i, 1, 0, 0);
    const Eigen::Vector3d g(NormalFromBits(a[0], a[1]), NormalFromBits(a[2], a[3]), NormalFromBits(b[0], b[1]));
    const double len = g.norm();
    if (len > 1e-6) dirs.push_back(g / len);  // reject (practically never) a near-zero triple
  }
  return dirs;
}

double BruteForceWindingNumber(const geometry::TriangleMesh& mesh, const Eigen::Vector3d& p) {
  double sum = 0;
  for (int t = 0; t < mesh.num_triangles(); ++t) {
    const auto& tri = mesh.triangle(t);
    const Eigen::Vector3d a = mesh.vertex(tri[0]) - p, b = mesh.vertex(tri[1]) - p, c = mesh.vertex(tri[2]) - p;
    const double la = a.norm(), lb = b.norm(), lc = c.norm();
    // tan(Ω/2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (b·c)|a| + (c·a)|b|).
    sum += 2.0 * std::atan2(a.dot(b.cross(c)), la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb);
  }
  return sum / (4.0 * 3.14159265358979323846);
}

std::vector<Eigen::Vector3d> NearFeaturePoints(const geometry::TriangleMesh& mesh, int n, double min_offset,
                                               double max_offset, uint64_t seed) {
  const Philox4x32 rng(seed, 2);
  const std::vector<Eigen::Vector3d> dirs = UniformDirections(n, seed ^ 0x5DEECE66Dull);
  std::vector<Eigen::Vector3d> points(n);
  for (int i = 0; i < n; ++i) {
    const auto b = rng(static_cast<uint32_t>(i), 0, 0, 0);
    const int t = static_cast<int>(UniformFromBits(b[0]) * mesh.num_triangles());
    const auto& tri = mesh.triangle(t);
    const Eigen::Vector3d &A = mesh.vertex(tri[0]), &B = mesh.vertex(tri[1]), &C = mesh.vertex(tri[2]);
    const int k = static_cast<int>(UniformFromBits(b[1]) * 3);
    const double s = UniformFromBits(b[2]);
    Eigen::Vector3d base;
    switch (i % 3) {
      case 0:  // a vertex
        base = mesh.vertex(tri[k]);
        break;
      case 1: {  // a point on edge k
        const Eigen::Vector3d& u = mesh.vertex(tri[k]);
        const Eigen::Vector3d& v = mesh.vertex(tri[(k + 1) % 3]);
        base = u + s * (v - u);
        break;
      }
      default: {  // a point inside the face (uniform barycentric)
        const double r1 = std::sqrt(s), r2 = UniformFromBits(b[1]);
        base = (1 - r1) * A + r1 * (1 - r2) * B + r1 * r2 * C;
        break;
      }
    }
    const double offset = min_offset * std::pow(max_offset / min_offset, UniformFromBits(b[3]));
    points[i] = base + offset * dirs[i];
  }
  return points;
}

}  // namespace taxel::testing
