#include "core/geometry/mesh_generators.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

namespace taxel::geometry {
namespace {

// Deduplicates vertices by exact coordinates; generators compute shared points identically.
class VertexPool {
 public:
  explicit VertexPool(MeshData* data) : data_(data) {}
  int32_t Add(const Eigen::Vector3d& v) {
    const auto key = std::make_tuple(v.x(), v.y(), v.z());
    auto [it, inserted] = index_.emplace(key, static_cast<int32_t>(data_->vertices.size()));
    if (inserted) data_->vertices.push_back(v);
    return it->second;
  }

 private:
  MeshData* data_;
  std::map<std::tuple<double, double, double>, int32_t> index_;
};

}  // namespace

MeshData GeodesicSphere(double radius, int n) {
  const double t = (1.0 + std::sqrt(5.0)) / 2.0;
  const std::array<Eigen::Vector3d, 12> ico = {{{-1, t, 0},
                                                {1, t, 0},
                                                {-1, -t, 0},
                                                {1, -t, 0},
                                                {0, -1, t},
                                                {0, 1, t},
                                                {0, -1, -t},
                                                {0, 1, -t},
                                                {t, 0, -1},
                                                {t, 0, 1},
                                                {-t, 0, -1},
                                                {-t, 0, 1}}};
  const int faces[20][3] = {{0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                            {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
                            {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  MeshData data;
  VertexPool pool(&data);
  // Point with integer barycentric weights (w0, w1, w2), w0 + w1 + w2 = n, over corners (c0, c1,
  // c2). Summation in ascending corner index makes points on shared edges bit-identical.
  auto point = [&](const int c[3], int w0, int w1, int w2) {
    std::array<std::pair<int, int>, 3> terms = {{{c[0], w0}, {c[1], w1}, {c[2], w2}}};
    std::sort(terms.begin(), terms.end());
    Eigen::Vector3d p = Eigen::Vector3d::Zero();
    for (const auto& [corner, w] : terms) {
      if (w != 0) p += (static_cast<double>(w) / n) * ico[corner];
    }
    return pool.Add(radius * p.normalized());
  };
  for (const auto& f : faces) {
    // Row i from corner 0 towards the opposite edge; j along the row.
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j <= i; ++j) {
        const int a = point(f, n - i, i - j, j);
        const int b = point(f, n - i - 1, i + 1 - j, j);
        const int c = point(f, n - i - 1, i - j, j + 1);
        data.triangles.push_back({a, b, c});
        if (j < i) {
          const int d = point(f, n - i, i - j - 1, j + 1);
          data.triangles.push_back({a, c, d});
        }
      }
    }
  }
  return data;
}

MeshData Torus(double R, double r, int segments, int sides) {
  MeshData data;
  const double two_pi = 6.283185307179586;
  for (int i = 0; i < segments; ++i) {
    const double u = two_pi * i / segments;
    for (int j = 0; j < sides; ++j) {
      const double v = two_pi * j / sides;
      data.vertices.emplace_back((R + r * std::cos(v)) * std::cos(u), (R + r * std::cos(v)) * std::sin(u),
                                 r * std::sin(v));
    }
  }
  auto id = [&](int i, int j) { return static_cast<int32_t>((i % segments) * sides + (j % sides)); };
  for (int i = 0; i < segments; ++i) {
    for (int j = 0; j < sides; ++j) {
      data.triangles.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
      data.triangles.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
    }
  }
  return data;
}

MeshData SubdividedBox(const Eigen::Vector3d& h, int n) {
  MeshData data;
  VertexPool pool(&data);
  auto coord = [&](int axis, int k) { return -h[axis] + 2.0 * h[axis] * k / n; };
  // For each face: normal axis a, side s; (u, v) axes ordered so that u × v = s·e_a.
  for (int a = 0; a < 3; ++a) {
    for (int s : {-1, 1}) {
      int u = (a + 1) % 3, v = (a + 2) % 3;
      if (s < 0) std::swap(u, v);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          auto vert = [&](int di, int dj) {
            Eigen::Vector3d p;
            p[a] = s * h[a];
            p[u] = coord(u, i + di);
            p[v] = coord(v, j + dj);
            return pool.Add(p);
          };
          const int p00 = vert(0, 0), p10 = vert(1, 0), p11 = vert(1, 1), p01 = vert(0, 1);
          data.triangles.push_back({p00, p10, p11});
          data.triangles.push_back({p00, p11, p01});
        }
      }
    }
  }
  return data;
}

}  // namespace taxel::geometry
