#include "core/contact/surface_samples.h"

#include <algorithm>
#include <cmath>

#include "core/geometry/implicit_surface.h"
#include "core/geometry/mesh_generators.h"

namespace taxel::contact {
namespace {

constexpr double kPi = 3.141592653589793;

// Centroids and areas of triangle (a, b, c) split into k² similar sub-triangles.
void SplitTriangle(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c, int k,
                   SurfaceSamples* out) {
  const Eigen::Vector3d u = (b - a) / k, v = (c - a) / k;
  const double area = 0.5 * u.cross(v).norm();
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k - i; ++j) {
      const Eigen::Vector3d p = a + i * u + j * v;
      out->points.push_back(p + (u + v) / 3.0);  // upward sub-triangle
      out->areas.push_back(area);
      if (j < k - i - 1) {
        out->points.push_back(p + (2.0 * u + 2.0 * v) / 3.0);  // downward one: p+u, p+v, p+u+v
        out->areas.push_back(area);
      }
    }
  }
}

void AddMesh(const geometry::MeshData& m, double spacing, SurfaceSamples* out) {
  for (const auto& t : m.triangles) {
    const Eigen::Vector3d &a = m.vertices[t[0]], &b = m.vertices[t[1]], &c = m.vertices[t[2]];
    const double longest = std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()});
    SplitTriangle(a, b, c, std::max(1, static_cast<int>(std::ceil(longest / spacing))), out);
  }
}

// Sorts the samples into cells of about 4 spacings.
void BuildGrid(SurfaceSamples* s, double spacing) {
  if (s->points.empty()) return;
  geometry::Aabb b;
  for (const auto& p : s->points) b.Extend(p);
  s->cell = 4 * spacing;
  s->grid_origin = b.lo;
  for (int a = 0; a < 3; ++a) s->dims[a] = std::max(1, static_cast<int>(std::floor((b.hi[a] - b.lo[a]) / s->cell)) + 1);
  const size_t cells = static_cast<size_t>(s->dims[0]) * s->dims[1] * s->dims[2];
  auto cell_of = [&](const Eigen::Vector3d& p) {
    int c[3];
    for (int a = 0; a < 3; ++a) c[a] = std::min(s->dims[a] - 1, static_cast<int>((p[a] - s->grid_origin[a]) / s->cell));
    return (static_cast<size_t>(c[2]) * s->dims[1] + c[1]) * s->dims[0] + c[0];
  };
  std::vector<uint32_t> count(cells + 1, 0);
  for (const auto& p : s->points) ++count[cell_of(p) + 1];
  for (size_t c = 0; c < cells; ++c) count[c + 1] += count[c];
  s->cell_start = count;
  std::vector<Eigen::Vector3d> points(s->points.size());
  std::vector<double> areas(s->areas.size());
  for (size_t i = 0; i < s->points.size(); ++i) {
    const uint32_t slot = count[cell_of(s->points[i])]++;
    points[slot] = s->points[i];
    areas[slot] = s->areas[i];
  }
  s->points.swap(points);
  s->areas.swap(areas);
}

// Subdivision counts shared by SampleSurface and CountSurfaceSamples. Doubles: the caller has
// checked that they fit an int before sampling.
double Divisions(double length, double spacing, double at_least = 1) {
  return std::max(at_least, std::ceil(length / spacing));
}
double SphereFrequency(double radius, double spacing) { return Divisions(radius * 1.1, spacing); }

}  // namespace

double CountSurfaceSamples(const geometry::Shape& s, double spacing) {
  using geometry::ShapeKind;
  spacing = std::max(spacing, 1e-6);
  switch (s.kind()) {
    case ShapeKind::kSphere: {
      const double f = SphereFrequency(s.radius(), spacing);
      return 20 * f * f;  // geodesic sphere: 20·f² triangles, one sample each
    }
    case ShapeKind::kBox: {
      const Eigen::Vector3d h = s.half_extents();
      double n = 0;
      for (int axis = 0; axis < 3; ++axis) {
        n += 2 * Divisions(2 * h[(axis + 1) % 3], spacing) * Divisions(2 * h[(axis + 2) % 3], spacing);
      }
      return n;
    }
    case ShapeKind::kCapsule:
    case ShapeKind::kCylinder: {
      const double r = s.radius(), l = s.half_length();
      const double side = Divisions(2 * kPi * r, spacing, 8) * Divisions(2 * l, spacing);
      if (s.kind() == ShapeKind::kCapsule) {
        const double f = SphereFrequency(r, spacing);
        return side + 20 * f * f;
      }
      // Caps: nr rings of max(6, ⌈2π·r_c / spacing⌉) ≤ 2π·r_c / spacing + 7 samples, with the
      // ring centres r_c summing to r·nr / 2.
      const double nr = Divisions(r, spacing);
      return side + 2 * (kPi * r * nr / spacing + 7 * nr);
    }
    case ShapeKind::kMesh: {
      const geometry::TriangleMesh& m = s.mesh()->mesh();
      double n = 0;
      for (int t = 0; t < m.num_triangles(); ++t) {
        const auto& tri = m.triangle(t);
        const Eigen::Vector3d &a = m.vertex(tri[0]), &b = m.vertex(tri[1]), &c = m.vertex(tri[2]);
        const double k = Divisions(std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()}), spacing);
        n += k * k;  // k² similar sub-triangles
      }
      return n;
    }
    case ShapeKind::kImplicit: return geometry::ImplicitSampleCount(*s.implicit(), spacing);
    default: return 0;
  }
}

double SampleSurfaceBytes(const geometry::Shape& s, double spacing) {
  const double samples = CountSurfaceSamples(s, spacing);
  if (samples == 0) return 0;
  spacing = std::max(spacing, 1e-6);
  const geometry::Aabb& b = s.local_bounds();
  double cells = 1;
  for (int a = 0; a < 3; ++a) cells *= std::floor((b.hi[a] - b.lo[a]) / (4 * spacing)) + 1;
  // Points and areas twice (BuildGrid sorts into copies), the cell counts twice.
  return samples * 2 * (sizeof(Eigen::Vector3d) + sizeof(double)) + (cells + 1) * 2 * sizeof(uint32_t);
}

SurfaceSamples SampleSurface(const geometry::Shape& s, double spacing) {
  using geometry::ShapeKind;
  SurfaceSamples out;
  spacing = std::max(spacing, 1e-6);
  switch (s.kind()) {
    case ShapeKind::kSphere: {
      // Geodesic tessellation, projected onto the sphere: centroids pushed to the surface and
      // areas scaled so that they sum to 4πr².
      const int f = static_cast<int>(SphereFrequency(s.radius(), spacing));
      SurfaceSamples flat;
      AddMesh(geometry::GeodesicSphere(s.radius(), f), 1e30, &flat);
      double total = 0;
      for (double a : flat.areas) total += a;
      const double scale = 4 * kPi * s.radius() * s.radius() / total;
      for (size_t i = 0; i < flat.points.size(); ++i) {
        out.points.push_back(s.radius() * flat.points[i].normalized());
        out.areas.push_back(flat.areas[i] * scale);
      }
      break;
    }
    case ShapeKind::kBox: {
      const Eigen::Vector3d h = s.half_extents();
      for (int axis = 0; axis < 3; ++axis) {
        const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
        const int n1 = static_cast<int>(Divisions(2 * h[a1], spacing));
        const int n2 = static_cast<int>(Divisions(2 * h[a2], spacing));
        const double area = (2 * h[a1] / n1) * (2 * h[a2] / n2);
        for (int side : {-1, 1}) {
          for (int i = 0; i < n1; ++i) {
            for (int j = 0; j < n2; ++j) {
              Eigen::Vector3d p;
              p[axis] = side * h[axis];
              p[a1] = -h[a1] + (i + 0.5) * 2 * h[a1] / n1;
              p[a2] = -h[a2] + (j + 0.5) * 2 * h[a2] / n2;
              out.points.push_back(p);
              out.areas.push_back(area);
            }
          }
        }
      }
      break;
    }
    case ShapeKind::kCapsule:
    case ShapeKind::kCylinder: {
      const double r = s.radius(), l = s.half_length();
      const int nt = static_cast<int>(Divisions(2 * kPi * r, spacing, 8));
      const int nz = static_cast<int>(Divisions(2 * l, spacing));
      const double side_area = (2 * kPi * r / nt) * (2 * l / nz);
      for (int i = 0; i < nt; ++i) {
        const double th = 2 * kPi * (i + 0.5) / nt;
        for (int j = 0; j < nz; ++j) {
          out.points.emplace_back(r * std::cos(th), r * std::sin(th), -l + (j + 0.5) * 2 * l / nz);
          out.areas.push_back(side_area);
        }
      }
      if (s.kind() == ShapeKind::kCapsule) {
        // The two hemispheres form one sphere; split its samples by the side of the equator.
        auto sphere = geometry::Shape::Sphere(r);
        const SurfaceSamples ball = SampleSurface(*sphere, spacing);
        for (size_t i = 0; i < ball.points.size(); ++i) {
          const Eigen::Vector3d& p = ball.points[i];
          out.points.push_back(p + Eigen::Vector3d(0, 0, p.z() >= 0 ? l : -l));
          out.areas.push_back(ball.areas[i]);
        }
      } else {
        const int nr = static_cast<int>(Divisions(r, spacing));
        for (int side : {-1, 1}) {
          for (int a = 0; a < nr; ++a) {
            const double r0 = r * a / nr, r1 = r * (a + 1) / nr, rc = 0.5 * (r0 + r1);
            const int ns = static_cast<int>(Divisions(2 * kPi * rc, spacing, 6));
            const double ring = kPi * (r1 * r1 - r0 * r0) / ns;
            for (int b = 0; b < ns; ++b) {
              const double th = 2 * kPi * (b + 0.5) / ns;
              out.points.emplace_back(rc * std::cos(th), rc * std::sin(th), side * l);
              out.areas.push_back(ring);
            }
          }
        }
      }
      break;
    }
    case ShapeKind::kMesh: {
      const geometry::TriangleMesh& m = s.mesh()->mesh();
      for (int t = 0; t < m.num_triangles(); ++t) {
        const auto& tri = m.triangle(t);
        const Eigen::Vector3d &a = m.vertex(tri[0]), &b = m.vertex(tri[1]), &c = m.vertex(tri[2]);
        const double longest = std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()});
        SplitTriangle(a, b, c, static_cast<int>(Divisions(longest, spacing)), &out);
      }
      break;
    }
    case ShapeKind::kImplicit: {
      // Fibonacci lattice of directions, each point's area the radial area element.
      const int count = static_cast<int>(geometry::ImplicitSampleCount(*s.implicit(), spacing));
      geometry::SampleImplicitSurface(*s.implicit(), count, &out.points, &out.areas);
      break;
    }
    default: break;
  }
  BuildGrid(&out, spacing);
  return out;
}

}  // namespace taxel::contact
