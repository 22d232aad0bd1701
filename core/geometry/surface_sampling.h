// Sample points on the surface of shapes: area-weighted random candidates thinned by greedy
// farthest-point sampling (even coverage, deterministic for a seed). Used by the ElastomerTaxel
// (tracked points that anchor to the gel) and the ProximityTaxel (point clouds).
#ifndef TAXEL_CORE_GEOMETRY_SURFACE_SAMPLING_H_
#define TAXEL_CORE_GEOMETRY_SURFACE_SAMPLING_H_

#include <cstdint>
#include <vector>

#include "Eigen/Core"
#include "core/geometry/shape.h"

namespace taxel::geometry {

/// Surface area of a shape (m²); 0 for half-spaces and heightfields, which are not sampled.
double SurfaceArea(const Shape& shape);

/// `n` points uniformly distributed by area on the shape's surface, in its frame S. Point i uses
/// Philox4x32(seed, stream 201) at counter (i, 0, 0, 0): the same seed gives the same points.
/// Empty for unsampleable shapes (half-space, heightfield).
std::vector<Eigen::Vector3d> RandomSurfacePoints(const Shape& shape, int n, uint64_t seed);

/// Greedy farthest-point sampling: the first point of `candidates`, then repeatedly the candidate
/// farthest from those chosen (the lowest index among equals), until `n` (or all) are chosen.
/// Exactly the points of the plain O(n·C) scan, found with a KD-tree ball query around each new
/// point and a heap of the largest distances: about O(C log C) for C well-spread candidates.
std::vector<Eigen::Vector3d> FarthestPointSample(const std::vector<Eigen::Vector3d>& candidates, int n);

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_SURFACE_SAMPLING_H_
