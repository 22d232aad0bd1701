#include "core/geometry/surface_sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>

#include "core/common/rng.h"
#include "core/geometry/implicit_surface.h"
#include "core/geometry/point_cloud_index.h"

namespace taxel::geometry {
namespace {

constexpr double kPi = 3.141592653589793;

Eigen::Vector3d UnitVector(double u, double v) {
  const double z = 2 * u - 1, phi = 2 * kPi * v, r = std::sqrt(std::max(0.0, 1 - z * z));
  return {r * std::cos(phi), r * std::sin(phi), z};
}

/// An area-uniform point of an implicit surface: a uniform direction u, kept with probability
/// w(u)/w_max where w = r²/(n·u) is the radial area weight (implicit_surface.h) and
/// w_max = R_out³/R_in bounds it (r ≤ R_out, n·u ≥ R_in/R_out). Draws (i, attempt, 1, 0).
Eigen::Vector3d RandomImplicitPoint(const ImplicitShape& shape, const Philox4x32& rng, uint32_t i) {
  const double r_out = shape.outer_radius();
  const double w_max = r_out * r_out * r_out / shape.inner_radius();
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  for (uint32_t attempt = 0; attempt < 256; ++attempt) {
    const auto b = rng(i, attempt, 1, 0);
    if (ImplicitAreaWeight(shape, UnitVector(UniformFromBits(b[0]), UniformFromBits(b[1])), &p) >=
        UniformFromBits(b[2]) * w_max) {
      break;
    }
  }
  return p;
}

}  // namespace

double SurfaceArea(const Shape& s) {
  switch (s.kind()) {
    case ShapeKind::kSphere: return 4 * kPi * s.radius() * s.radius();
    case ShapeKind::kBox: {
      const Eigen::Vector3d e = 2 * s.half_extents();
      return 2 * (e.x() * e.y() + e.y() * e.z() + e.z() * e.x());
    }
    case ShapeKind::kCapsule: return 4 * kPi * s.radius() * s.radius() + 2 * kPi * s.radius() * 2 * s.half_length();
    case ShapeKind::kCylinder: return 2 * kPi * s.radius() * s.radius() + 2 * kPi * s.radius() * 2 * s.half_length();
    case ShapeKind::kMesh: return s.mesh()->mesh().total_area();
    case ShapeKind::kImplicit: return ImplicitSurfaceArea(*s.implicit());
    default: return 0;
  }
}

std::vector<Eigen::Vector3d> RandomSurfacePoints(const Shape& s, int n, uint64_t seed) {
  std::vector<Eigen::Vector3d> out;
  if (SurfaceArea(s) <= 0 || n <= 0) return out;
  out.reserve(n);
  const Philox4x32 rng(seed, 201);
  // Mesh: cumulative areas for area-weighted triangle choice.
  std::vector<double> cumulative;
  if (s.kind() == ShapeKind::kMesh) {
    const TriangleMesh& m = s.mesh()->mesh();
    cumulative.resize(m.num_triangles());
    double acc = 0;
    for (int t = 0; t < m.num_triangles(); ++t) cumulative[t] = acc += m.face_area(t);
  }
  for (int i = 0; i < n; ++i) {
    const auto b = rng(static_cast<uint32_t>(i), 0, 0, 0);
    const double u0 = UniformFromBits(b[0]), u1 = UniformFromBits(b[1]), u2 = UniformFromBits(b[2]),
                 u3 = UniformFromBits(b[3]);
    switch (s.kind()) {
      case ShapeKind::kSphere: out.push_back(s.radius() * UnitVector(u0, u1)); break;
      case ShapeKind::kBox: {
        const Eigen::Vector3d h = s.half_extents();
        const double areas[3] = {h.y() * h.z(), h.z() * h.x(), h.x() * h.y()};  // per face pair
        const double total = areas[0] + areas[1] + areas[2];
        int axis = u0 * total < areas[0] ? 0 : u0 * total < areas[0] + areas[1] ? 1 : 2;
        Eigen::Vector3d p;
        p[axis] = (u1 < 0.5 ? -1 : 1) * h[axis];
        p[(axis + 1) % 3] = (2 * u2 - 1) * h[(axis + 1) % 3];
        p[(axis + 2) % 3] = (2 * u3 - 1) * h[(axis + 2) % 3];
        out.push_back(p);
        break;
      }
      case ShapeKind::kCapsule:
      case ShapeKind::kCylinder: {
        const double r = s.radius(), l = s.half_length();
        const double side = 2 * kPi * r * 2 * l;
        const double ends = s.kind() == ShapeKind::kCapsule ? 4 * kPi * r * r : 2 * kPi * r * r;
        if (u0 * (side + ends) < side) {
          const double phi = 2 * kPi * u1;
          out.emplace_back(r * std::cos(phi), r * std::sin(phi), (2 * u2 - 1) * l);
        } else if (s.kind() == ShapeKind::kCapsule) {
          Eigen::Vector3d d = UnitVector(u1, u2);
          out.push_back(r * d + Eigen::Vector3d(0, 0, d.z() >= 0 ? l : -l));
        } else {
          const double rho = r * std::sqrt(u2), phi = 2 * kPi * u3;
          out.emplace_back(rho * std::cos(phi), rho * std::sin(phi), u1 < 0.5 ? -l : l);
        }
        break;
      }
      case ShapeKind::kMesh: {
        const TriangleMesh& m = s.mesh()->mesh();
        const int t = static_cast<int>(std::upper_bound(cumulative.begin(), cumulative.end(), u0 * cumulative.back()) -
                                       cumulative.begin());
        const auto& tri = m.triangle(std::min(t, m.num_triangles() - 1));
        double a = u1, c = u2;
        if (a + c > 1) a = 1 - a, c = 1 - c;
        out.push_back(m.vertex(tri[0]) + a * (m.vertex(tri[1]) - m.vertex(tri[0])) +
                      c * (m.vertex(tri[2]) - m.vertex(tri[0])));
        break;
      }
      case ShapeKind::kImplicit:
        out.push_back(RandomImplicitPoint(*s.implicit(), rng, static_cast<uint32_t>(i)));
        break;
      default: break;
    }
  }
  return out;
}

std::vector<Eigen::Vector3d> FarthestPointSample(const std::vector<Eigen::Vector3d>& candidates, int n) {
  std::vector<Eigen::Vector3d> chosen;
  if (candidates.empty() || n <= 0) return chosen;
  n = std::min<int>(n, static_cast<int>(candidates.size()));
  chosen.reserve(static_cast<size_t>(n));
  // Greedy farthest-point sampling: d2[i] is candidate i's squared distance to the nearest chosen
  // point; the next point is the candidate with the largest d2 (the lowest index among equals).
  // Choosing p only lowers the d2 of candidates nearer to p than their d2, and every d2 is at most
  // p's own, r² — so only the ball of radius r around p is visited (KD-tree), and the largest d2
  // is kept in a max-heap with stale entries skipped. Same points, in the same order, as the scan
  // of every candidate at every step; O(C log C) for well-spread candidates instead of O(n·C).
  const PointCloudIndex index(candidates);
  std::vector<double> d2(candidates.size(), std::numeric_limits<double>::infinity());
  const auto later = [](const std::pair<double, size_t>& a, const std::pair<double, size_t>& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  };
  std::priority_queue<std::pair<double, size_t>, std::vector<std::pair<double, size_t>>, decltype(later)> heap(later);
  size_t next = 0;
  for (int k = 0; k < n; ++k) {
    const Eigen::Vector3d& p = candidates[next];
    chosen.push_back(p);
    const auto update = [&](size_t i) {
      const double d = (candidates[i] - p).squaredNorm();
      if (d < d2[i]) {
        d2[i] = d;
        heap.push({d, i});
      }
    };
    if (k == 0) {
      for (size_t i = 0; i < candidates.size(); ++i) update(i);
    } else if (d2[next] > 0) {
      // A little wider than r: the tree's distances may round differently from `update`'s.
      index.ForEachWithin(p, std::sqrt(d2[next]) * (1 + 1e-9) + 1e-300, [&](size_t i, double) { update(i); });
    }
    if (k + 1 == n) break;
    while (heap.top().first != d2[heap.top().second]) heap.pop();  // stale: lowered since pushed
    next = heap.top().second;
  }
  return chosen;
}

}  // namespace taxel::geometry
