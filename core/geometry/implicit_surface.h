// Surface points of an ImplicitShape, for what samples a surface: the contact matrix's ESTIMATED
// method (contact/surface_samples.h) and the tracked point clouds of proximity sensors
// (geometry/surface_sampling.h).
//
// Every point is found along a ray from the shape's origin (every shape is star-shaped about it):
// p(u) = t·u with φ(t·u) = 0, started from t = 1/γ(u) and polished by Newton along the ray to
// 1e-12 relative. Directions come from a spherical Fibonacci lattice (González, "Measurement of areas
// on a sphere using Fibonacci and latitude–longitude lattices", 2010): N directions u_i, each
// carrying the solid angle 4π/N, so that a sample's area is the radial area element
//   dA = r²·dΩ / (n·u),    r = |p|, n the outward unit normal at p,
// (n·u ≥ R_in/R_out > 0 for a convex shape containing the ball of radius R_in). The spacing is
// about sqrt(4π·R_out²/N) on the outer sphere and finer wherever the surface is nearer the origin.
#ifndef TAXEL_CORE_GEOMETRY_IMPLICIT_SURFACE_H_
#define TAXEL_CORE_GEOMETRY_IMPLICIT_SURFACE_H_

#include <vector>

#include "Eigen/Core"
#include "core/geometry/implicit_shape.h"

namespace taxel::geometry {

/// The surface point p_SY on the ray from the origin along the unit direction `u` (metres, in S).
Eigen::Vector3d ImplicitSurfacePoint(const ImplicitShape& shape, const Eigen::Vector3d& u);

/// Directions of the spherical Fibonacci lattice: u_i for i in [0, count), z = 1 − (2i + 1)/count.
Eigen::Vector3d FibonacciDirection(int i, int count);

/// Number of lattice directions that gives a spacing of about `spacing` (metres) on the outer
/// sphere: ⌈4π·R_out²/spacing²⌉, at least 32.
double ImplicitSampleCount(const ImplicitShape& shape, double spacing);

/// `count` surface points on the Fibonacci lattice and their areas (m²; they sum to the surface
/// area up to the lattice's quadrature error, 0.1 % at 4096 points on the test shapes).
void SampleImplicitSurface(const ImplicitShape& shape, int count, std::vector<Eigen::Vector3d>* points,
                           std::vector<double>* areas);

/// Surface area (m²) by the lattice quadrature with 4096 directions (O(4096) evaluations).
double ImplicitSurfaceArea(const ImplicitShape& shape);

/// The radial area weight r²/(n·u) of the surface point along u (m²/sr): dA = weight·dΩ.
double ImplicitAreaWeight(const ImplicitShape& shape, const Eigen::Vector3d& u, Eigen::Vector3d* point);

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_IMPLICIT_SURFACE_H_
