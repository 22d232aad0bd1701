// Area-weighted surface samples of a shape for contact estimation: each sample is a point on the
// surface (shape frame) carrying the area of the surface patch it stands for, so that a sum of
// pressure × area converges to the surface integral as the spacing shrinks (second order:
// samples are the centroids of a tessellation with patches no wider than the spacing).
#ifndef TAXEL_CORE_CONTACT_SURFACE_SAMPLES_H_
#define TAXEL_CORE_CONTACT_SURFACE_SAMPLES_H_

#include <vector>

#include "Eigen/Core"
#include "core/geometry/shape.h"

namespace taxel::contact {

struct SurfaceSamples {
  std::vector<Eigen::Vector3d> points;  ///< shape frame (m)
  std::vector<double> areas;            ///< m², summing to the surface area
};

/// Samples with patches of about `spacing` metres. Empty for half-spaces and heightfields.
/// Spheres: geodesic tessellation; boxes: a grid per face; capsules and cylinders: a (θ, z) grid
/// on the side and polar grids / geodesic caps on the ends; meshes: each triangle split into k²
/// similar sub-triangles, k = ⌈longest edge / spacing⌉.
SurfaceSamples SampleSurface(const geometry::Shape& shape, double spacing);

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_SURFACE_SAMPLES_H_
