// Area-weighted surface samples of a shape for contact estimation: each sample is a point on the
// surface (shape frame) carrying the area of the surface patch it stands for, so that a sum of
// pressure × area converges to the surface integral as the spacing shrinks (second order:
// samples are the centroids of a tessellation with patches no wider than the spacing).
#ifndef TAXEL_CORE_CONTACT_SURFACE_SAMPLES_H_
#define TAXEL_CORE_CONTACT_SURFACE_SAMPLES_H_

#include <cstdint>
#include <vector>

#include "Eigen/Core"
#include "core/geometry/shape.h"

namespace taxel::contact {

struct SurfaceSamples {
  std::vector<Eigen::Vector3d> points;  ///< shape frame (m), sorted by grid cell
  std::vector<double> areas;            ///< m², summing to the surface area

  // A uniform grid over the points (shape frame) so that a query box visits only nearby points.
  Eigen::Vector3d grid_origin = Eigen::Vector3d::Zero();
  double cell = 1;
  Eigen::Vector3i dims = Eigen::Vector3i::Zero();
  std::vector<uint32_t> cell_start;  ///< points of cell c are [cell_start[c], cell_start[c + 1])

  /// Calls fn(i) for every point in the cells overlapping `box` (shape frame); a superset of the
  /// points inside it.
  template <typename Fn>
  void ForEachNear(const geometry::Aabb& box, Fn&& fn) const {
    if (points.empty()) return;
    int lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      const double l = (box.lo[a] - grid_origin[a]) / cell, u = (box.hi[a] - grid_origin[a]) / cell;
      if (!(u >= 0) || !(l < dims[a])) return;  // disjoint (or NaN)
      lo[a] = l < 0 ? 0 : static_cast<int>(l);
      hi[a] = u >= dims[a] ? dims[a] - 1 : static_cast<int>(u);
    }
    for (int k = lo[2]; k <= hi[2]; ++k) {
      for (int j = lo[1]; j <= hi[1]; ++j) {
        const size_t row = (static_cast<size_t>(k) * dims[1] + j) * dims[0];
        for (uint32_t i = cell_start[row + lo[0]], end = cell_start[row + hi[0] + 1]; i < end; ++i) fn(i);
      }
    }
  }
};

/// Samples with patches of about `spacing` metres. Empty for half-spaces and heightfields.
/// Spheres: geodesic tessellation; boxes: a grid per face; capsules and cylinders: a (θ, z) grid
/// on the side and polar grids / geodesic caps on the ends; meshes: each triangle split into k²
/// similar sub-triangles, k = ⌈longest edge / spacing⌉.
/// @pre SampleSurfaceBytes(shape, spacing) was reserved (it fits memory and the counts fit 32 bits).
SurfaceSamples SampleSurface(const geometry::Shape& shape, double spacing);

/// Number of samples SampleSurface(shape, spacing) makes (exact for spheres, boxes, capsule and
/// cylinder sides and meshes, an upper bound for the cylinder caps), as a double so that any
/// spacing can be asked about. O(triangles) for meshes, O(1) otherwise.
double CountSurfaceSamples(const geometry::Shape& shape, double spacing);

/// Peak bytes SampleSurface(shape, spacing) allocates: the samples (point and area, sorted into a
/// copy) and the cell index of its grid (cells of 4 spacings over the shape's bounds).
double SampleSurfaceBytes(const geometry::Shape& shape, double spacing);

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_SURFACE_SAMPLES_H_
