// Contact forces between two shapes for the contact matrix's ESTIMATED source. The nonlinear law
// is used as a pressure (Pa) acting on the part of each surface that lies inside the other shape:
//
//   F_on_A = ∫_{∂A ∩ B} P(δ_B(x), v_n(x))·n_B(x) dA        (δ_B = −sd_B, n_B = ∇sd_B)
//
// plus friction −μ(s)·P·ŝ per unit area. When both surfaces can be sampled, the integral is taken
// both ways (∂A in B and ∂B in A, with opposite signs) and averaged, so that the pair is
// symmetric: F(A, B) = −F(B, A) exactly.
//
// Methods and accuracy (checked row by row by tests/core/contact/pair_contact_test.cc). The method
// depends on the shapes and their orientation only, never on whether they touch, nor on the
// order of the pair (ComputePairForce(B, A) = −ComputePairForce(A, B)).
//
//   pair                            method                                  accuracy vs the integral
//   ------------------------------  --------------------------------------  -------------------------
//   sphere – half-space             closed form: ∂A zone area is 2πR·du    exact (antiderivative)
//   box – half-space, a face        closed form: face + sides               exact (antiderivative)
//     parallel to the plane
//   capsule – half-space, axis      closed form: sphere zones + 2l·r∫dθ    exact (antiderivative;
//     parallel or perpendicular                                               the lying term by
//                                                                             quadrature, 1e-11)
//   sphere – sphere                 closed form on the axis of centres      exact (quadrature, 1e-11)
//   curved primitive – half-space   sampled ∂A (one way)                    O(spacing²) once a few
//     / heightfield                                                           samples span the patch:
//                                                                             2 % at 5 mm (5 cm sphere
//                                                                             1 mm deep, patch Ø 2 cm);
//                                                                             5 % at 5 mm for a line
//                                                                             contact (2 cm capsule
//                                                                             lying 1 mm deep, strip
//                                                                             1.3 cm wide)
//   mesh – half-space / heightfield sampled ∂A (one way)                    the same, plus the mesh's
//                                                                             own faceting, O(edge²):
//                                                                             2 % for a geodesic 5 cm
//                                                                             sphere of frequency 48
//   flat faces (a tilted box) –     sampled ∂A (one way)                    side bands shallower than
//     half-space / heightfield                                                about spacing/2 are
//                                                                             missed: within
//                                                                             L·δ/((n+1)·A) (face area
//                                                                             A, perimeter L, depth δ)
//   implicit – implicit             iDCOL pair solve (implicit_pair.h):     first order in δ/R_e:
//                                   δ = witness segment on the normal,      1.1 % for spheres of 5 and
//                                   F = 2π·R_e·∫0^δ P, R_e = 1/√det K        3 cm 1 mm deep (R_e =
//                                   (K = sum of the curvature tensors)      1.875 cm), < δ/(4R_e)
//   any other pair (sphere – box,   sampled both ways, averaged             as the sampled rows above,
//     box – box, mesh – mesh, …)                                              vs the averaged integral
//
// Notes on the model. (1) The averaged two-way integral is not the one-way integral of the
// half-space rows: a sphere of radius R resting δ deep on a large box gets π(2R − δ)·∫P, on a
// half-space 2πR·∫P (relative difference δ/2R). (2) A box leaving the exact face-down orientation
// (|cos − 1| ≥ 1e-9) switches from the closed form to sampling and loses the side bands that the
// sampling misses (2.3 % for an 8 × 6 cm face 1 mm deep at 5 mm spacing, 0.3 % at 1 mm).
//
// Mesh grids (ContactMatrixSpec::sdf_backend GRID). A sampled row tests the samples of one shape
// against the other's signed distance; when that other shape is an unscaled mesh with a grid
// (PlacedShape::grid), the grid answers instead (mesh_sdf_grid.h): within its band each sample's
// depth is off by at most ε, the grid's measured max_error, so a sampled force changes by at most
//   |ΔF| ≤ ε · max P'(δ) · (area of the samples within ε of the other shape)
// plus what the interpolated normals turn (on a faceted mesh up to about the angle between
// neighbouring faces; summed over samples this mostly cancels: 0.05–0.2 % of the force for a 5 cm,
// 20k-triangle ball, contact_matrix_grid_test); samples deeper than the band get the exact depth,
// and a grid's "farther than the band" is no contact.
// Closed forms, implicit pairs and the mesh side of mesh – half-space / heightfield rows (the mesh
// is sampled, the terrain queried) do not read mesh distances, so GRID changes nothing there.
//
// Friction in the closed forms uses the slip at the deepest point; the sampled method uses the
// slip at every sample; the implicit pair method the slip at the midpoint of the witness points.
//
// Implicit pairs (both shapes ShapeKind::kImplicit). The pair solve gives the scaling α (< 1:
// overlapping), the normal n out of A and the witness points p_A, p_B, whose segment is parallel
// to the line of centres; the overlap depth is δ = (p_A − p_B)·n. Near the contact the gap between
// the surfaces is ½ρᵀKρ (K = K_A + K_B, curvature tensors P∇²φP/|∇φ| in the tangent plane), so
// the area where the overlap exceeds δ − u is 2πu/√det K and ∫P dA = 2π·R_e·∫0^δ P(w) dw with
// Hertz's effective radius R_e = 1/√det K; exact for a sphere on a flat face (Archimedes), first
// order in δ/R_e otherwise. R_e is capped at the larger outer radius of the two shapes, so that
// flat-on-flat contacts (a polytope face on a face, det K → 0) stay finite: their force is then
// underestimated (use meshes or primitives where faces rest on faces). The pair is solved in
// 3–4 µs cold, about 1 µs warm-started from the previous step's solution (ImplicitPairState, kept
// by the contact matrix per env and pair of shapes), and skipped when the outer balls are apart;
// a solve that does not converge (none in 4·10⁵ random poses) adds no force. F(B, A) = −F(A, B)
// exactly (solved from the lexicographically smaller origin).
#ifndef TAXEL_CORE_CONTACT_PAIR_CONTACT_H_
#define TAXEL_CORE_CONTACT_PAIR_CONTACT_H_

#include "Eigen/Core"
#include "core/common/pose.h"
#include "core/contact/nonlinear_law.h"
#include "core/contact/surface_samples.h"
#include "core/geometry/implicit_pair.h"
#include "core/geometry/mesh_sdf_grid.h"
#include "core/geometry/shape.h"

namespace taxel::contact {

/// A shape placed in world with the kinematics of its link.
struct PlacedShape {
  const geometry::Shape* shape = nullptr;
  RigidTransform X_WS;
  const SurfaceSamples* samples = nullptr;             ///< shape frame; nullptr or empty: not sampleable
  Eigen::Vector3d v_W = Eigen::Vector3d::Zero();       ///< linear velocity of the link origin
  Eigen::Vector3d w_W = Eigen::Vector3d::Zero();       ///< angular velocity
  Eigen::Vector3d origin_W = Eigen::Vector3d::Zero();  ///< link origin
  /// A mesh's narrow-band grid (sdf_backend GRID): what the samples of the other shape are tested
  /// against instead of the mesh (mesh frame = S). nullptr: the shape's own signed distance.
  const geometry::MeshSdfGrid* grid = nullptr;
  Eigen::Vector3d PointVelocity(const Eigen::Vector3d& p_W) const { return v_W + w_W.cross(p_W - origin_W); }
  /// Signed distance at p_SQ (shape frame S, m), from the grid when there is one.
  geometry::SignedDistanceResult SignedDistance(const Eigen::Vector3d& p_SQ, double max_distance) const {
    return grid != nullptr ? grid->Query(p_SQ, max_distance) : shape->SignedDistance(p_SQ, max_distance);
  }
};

/// Force on A from B (world, N): the normal part and the friction part.
struct PairForce {
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();
  Eigen::Vector3d friction = Eigen::Vector3d::Zero();
  bool closed_form = false;  ///< which method was used (for tests and the table)
};

/// What an implicit–implicit pair keeps from one step to the next (per env and pair of shapes):
/// the last solution as a warm start. A warm start only changes the number of Newton steps, not
/// the answer (the same α to the solver's tolerance, 1e-10 relative).
struct ImplicitPairState {
  geometry::PairWarmStart warm;  ///< of the pair in the order solved (smaller origin first)
  bool reversed = false;         ///< that order was (B, A)
  int iterations = 0;            ///< Newton steps of the last call; 0 when it did not solve
  double alpha = 0;              ///< α of the last call's solve; 0 when it did not solve
};

/// ∂F/∂(ξ_A, ξ_B) of the normal force on A (world, N): columns 0–2 a translation of A's link
/// (N/m), 3–5 its rotation (N/rad), both world axes, about PlacedShape::origin_W of A (a twist
/// (δt, δθ) moves a point p of the link by δt + δθ × (p − origin_W)); columns 6–11 the same for B.
/// The links' velocities are held fixed. Implicit–implicit pairs only (implicit_pair_force.h).
using PairForceJacobian = Eigen::Matrix<double, 3, 12>;

/// Whether ComputePairForce can return the PairForceJacobian of a pair (both shapes implicit).
bool HasPairForceJacobian(const PlacedShape& a, const PlacedShape& b);

/// The method the pair would use, as a string of the table above ("closed_form", "implicit_pair" or
/// "sampled").
const char* PairMethod(const PlacedShape& a, const PlacedShape& b);

/// The force on A from B. `state` (may be null: cold solves) is read and updated by
/// implicit–implicit pairs only; other pairs ignore it. `jacobian`, when non-null, receives the
/// derivative of the normal force (PairForceJacobian) of an implicit–implicit pair, zero when they
/// do not touch. @pre jacobian is null unless HasPairForceJacobian(a, b).
PairForce ComputePairForce(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b,
                           ImplicitPairState* state = nullptr, PairForceJacobian* jacobian = nullptr);

/// ∫_{x0}^{x1} max(0, k_p x^n + k_c S(x/d_max) v_n) dx, exactly: the antiderivative of the
/// unclamped law over the intervals where it is positive (their ends by bisection when the bodies
/// separate). The pressure integrated over depth, the building block of the closed forms.
double IntegratePressure(const NonlinearLawParams& law, double x0, double x1, double closing_speed);

namespace internal {

/// IntegratePressure over [0, depth] and its derivative with respect to the closing speed,
/// k_c·∫ S(x/d_max) dx over the depths where the pressure is positive (the clamped ends add
/// nothing: the pressure is zero there). Its derivative with respect to the depth is the pressure
/// at the depth, max(0, k_p δ^n + k_c S v_n).
struct PressureIntegral {
  double value = 0;    ///< N/m (Pa·m)
  double d_speed = 0;  ///< ∂value/∂closing_speed, N·s/m²
};
PressureIntegral IntegratePressureAndSpeedDerivative(const NonlinearLawParams& law, double depth,
                                                     double closing_speed);

/// The friction force for a normal force F (N) at slip velocity v_rel (world) about normal n.
Eigen::Vector3d Friction(const NonlinearLawParams& law, double normal_force, const Eigen::Vector3d& n,
                         const Eigen::Vector3d& v_rel);

}  // namespace internal

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_PAIR_CONTACT_H_
