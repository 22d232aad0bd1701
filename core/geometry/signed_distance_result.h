// The answer of every signed-distance query in Taxel (meshes, primitives, heightfields).
#ifndef TAXEL_CORE_GEOMETRY_SIGNED_DISTANCE_RESULT_H_
#define TAXEL_CORE_GEOMETRY_SIGNED_DISTANCE_RESULT_H_

#include <cmath>
#include <cstdint>
#include <limits>

#include "Eigen/Core"
#include "core/geometry/closest_point_triangle.h"

namespace taxel::geometry {

/// Signed distance from a query point Q to the boundary of a solid, all in the shape's frame S.
///
/// Bounded queries take a `max_distance`: a finite `distance` is always exact (it may exceed
/// max_distance); distance == +inf means "outside, and no surface within max_distance" and the
/// other fields are unset. Points inside the solid always get their exact (negative) distance.
struct SignedDistanceResult {
  /// Signed distance (metres): negative inside the solid, 0 on its surface.
  double distance = std::numeric_limits<double>::infinity();
  /// p_SC: the closest point on the surface.
  Eigen::Vector3d closest = Eigen::Vector3d::Zero();
  /// n_S: unit gradient of the signed distance at Q, pointing out of the solid. On the surface
  /// (and at the medial axis, where the gradient is undefined) the normal of the closest feature.
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  /// Mesh and heightfield queries: the closest triangle (-1 for other shapes).
  int32_t triangle = -1;
  /// Mesh and heightfield queries: the feature of that triangle the closest point lies on.
  TriangleFeature feature = TriangleFeature::kFace;

  bool found() const { return distance != std::numeric_limits<double>::infinity(); }
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_SIGNED_DISTANCE_RESULT_H_
