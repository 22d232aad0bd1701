// Exact signed distance, closest point and normal for the primitive shapes.
//
// Every function takes the query point p_SQ in the shape's own frame S (metres) and returns a
// SignedDistanceResult in S. Shapes are centred at the origin of S; the axis of capsules and
// cylinders is +z. Points on the medial axis (where the gradient is undefined) get a
// deterministic normal, tabulated below; the distance there is still exact.
//
//   shape      solid                                   medial-axis / degenerate rule
//   ---------  --------------------------------------  ------------------------------------------
//   sphere     |p| ≤ r                                 centre: normal +z
//   box        |p_i| ≤ h_i                             equidistant faces: lowest axis wins (x,y,z);
//                                                      p_i = 0 on that axis: the + face
//   capsule    dist(p, segment z∈[−l, l]) ≤ r         on the segment itself: normal +x
//   cylinder   |p_xy| ≤ r and |p_z| ≤ l               side/cap tie inside: the side; on the
//                                                      axis: radial direction +x
//   half-space p_z ≤ 0 (boundary plane z = 0)          none: normal is +z everywhere
//
// @pre radius, half-length and half extents > 0 (validated when the shape is created).
#ifndef TAXEL_CORE_GEOMETRY_PRIMITIVE_SIGNED_DISTANCE_H_
#define TAXEL_CORE_GEOMETRY_PRIMITIVE_SIGNED_DISTANCE_H_

#include "Eigen/Core"
#include "core/geometry/signed_distance_result.h"

namespace taxel::geometry {

SignedDistanceResult SphereSignedDistance(double radius, const Eigen::Vector3d& p_SQ);
SignedDistanceResult BoxSignedDistance(const Eigen::Vector3d& half_extents, const Eigen::Vector3d& p_SQ);
SignedDistanceResult CapsuleSignedDistance(double radius, double half_length, const Eigen::Vector3d& p_SQ);
SignedDistanceResult CylinderSignedDistance(double radius, double half_length, const Eigen::Vector3d& p_SQ);
SignedDistanceResult HalfSpaceSignedDistance(const Eigen::Vector3d& p_SQ);

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_PRIMITIVE_SIGNED_DISTANCE_H_
