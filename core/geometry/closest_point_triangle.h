// Closest point on a triangle to a point, with the feature (face, edge, vertex) it lies on.
//
// Algorithm: Voronoi-region classification of Ericson, "Real-Time Collision Detection" (2005),
// §5.1.5. Every point is assigned exactly one feature. @pre the triangle is not degenerate
// (TriangleMesh refuses zero-area triangles at validation).
#ifndef TAXEL_CORE_GEOMETRY_CLOSEST_POINT_TRIANGLE_H_
#define TAXEL_CORE_GEOMETRY_CLOSEST_POINT_TRIANGLE_H_

#include <cstdint>

#include "Eigen/Core"

namespace taxel::geometry {

/// Which feature of a triangle (a, b, c) a closest point lies on.
/// Vertices 0, 1, 2 are a, b, c; edge k joins vertex k and vertex (k + 1) % 3.
enum class TriangleFeature : uint8_t {
  kFace = 0,
  kVertex0,
  kVertex1,
  kVertex2,
  kEdge01,
  kEdge12,
  kEdge20,
};

inline bool IsVertex(TriangleFeature f) {
  return f == TriangleFeature::kVertex0 || f == TriangleFeature::kVertex1 || f == TriangleFeature::kVertex2;
}
inline bool IsEdge(TriangleFeature f) {
  return f == TriangleFeature::kEdge01 || f == TriangleFeature::kEdge12 || f == TriangleFeature::kEdge20;
}
/// Local index (0..2) of the vertex or edge feature.
inline int FeatureLocalIndex(TriangleFeature f) {
  if (IsVertex(f)) return static_cast<int>(f) - static_cast<int>(TriangleFeature::kVertex0);
  return static_cast<int>(f) - static_cast<int>(TriangleFeature::kEdge01);
}

/// Returns the point of triangle (a, b, c) closest to p and sets *feature. All in one frame.
__attribute__((always_inline)) inline Eigen::Vector3d ClosestPointOnTriangle(const Eigen::Vector3d& p,
                                                                             const Eigen::Vector3d& a,
                                                                             const Eigen::Vector3d& b,
                                                                             const Eigen::Vector3d& c,
                                                                             TriangleFeature* feature) {
  const Eigen::Vector3d ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) {  // vertex region a
    *feature = TriangleFeature::kVertex0;
    return a;
  }
  const Eigen::Vector3d bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) {  // vertex region b
    *feature = TriangleFeature::kVertex1;
    return b;
  }
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {  // edge region ab
    const double v = d1 / (d1 - d3);
    *feature = TriangleFeature::kEdge01;
    return a + v * ab;
  }
  const Eigen::Vector3d cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) {  // vertex region c
    *feature = TriangleFeature::kVertex2;
    return c;
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {  // edge region ac
    const double w = d2 / (d2 - d6);
    *feature = TriangleFeature::kEdge20;
    return a + w * ac;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {  // edge region bc
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    *feature = TriangleFeature::kEdge12;
    return b + w * (c - b);
  }
  // Face region: barycentric coordinates from the signed sub-areas.
  const double denom = 1.0 / (va + vb + vc);
  const double v = vb * denom, w = vc * denom;
  *feature = TriangleFeature::kFace;
  return a + ab * v + ac * w;
}

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_CLOSEST_POINT_TRIANGLE_H_
