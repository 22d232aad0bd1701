// The Hessian of the signed distance (the derivative of its unit normal) for every shape kind.
#ifndef TAXEL_CORE_GEOMETRY_SIGNED_DISTANCE_HESSIAN_H_
#define TAXEL_CORE_GEOMETRY_SIGNED_DISTANCE_HESSIAN_H_

#include "Eigen/Core"
#include "core/geometry/shape.h"
#include "core/geometry/signed_distance_result.h"

namespace taxel::geometry {

/// ∇²sd at p_SQ (1/m, shape frame S): the derivative ∂n_S/∂p_SQ of the unit normal of `result`,
/// the answer of shape.SignedDistance(p_SQ). Symmetric, with n in its null space.
///
/// Off the surface the normal is n = (q − y)/sd with y the closest point, so
/// ∇²sd = (I − nnᵀ − ∂y/∂q)/sd, and ∂y/∂q depends on the feature y lies on:
///
///   closest feature                               ∂y/∂q                    ∇²sd
///   -------------------------------------------  -----------------------  ------------------------
///   a plane (box face, half-space, mesh or        I − nnᵀ                  0
///     heightfield face, cylinder cap, inside a
///     box)
///   a straight edge of direction e (box and       eeᵀ                      (I − nnᵀ − eeᵀ)/sd
///     mesh edges, capsule and cylinder side
///     lines)
///   a vertex (box corner, mesh vertex)            0                        (I − nnᵀ)/sd
///   a circle of radius r about z at distance ρ    (r/ρ)(P_xy − ρ̂ρ̂ᵀ)      (I − nnᵀ − ∂y/∂q)/sd
///     from the axis (cylinder rim)
///   the sphere                                                             (I − nnᵀ)/|q|
///   the capsule's core segment at distance ρ                               (I − nnᵀ − [eeᵀ])/ρ
///   an implicit shape (shape operator W at the                             W·(I + sd·W)⁻¹
///     foot: P·∇²φ·P/|∇φ|, P = I − nnᵀ)
///
/// Degenerate input: on the surface (sd = 0) of an edge or vertex, on the medial axis, or for a
/// kind without a case here, the Hessian returned is 0 (the normal is not differentiable there).
/// @pre result.found() and result came from shape.SignedDistance(p_SQ).
Eigen::Matrix3d SignedDistanceHessian(const Shape& shape, const Eigen::Vector3d& p_SQ,
                                      const SignedDistanceResult& result);

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_SIGNED_DISTANCE_HESSIAN_H_
