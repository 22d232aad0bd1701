// The force between two smooth implicit shapes (the implicit_pair row of pair_contact.h) and its
// derivative with respect to the two links' poses.
//
// The force on A from B is F = −2π·R_e·I(δ, v_n)·n (pair_contact.h): n the unit normal out of A,
// δ = (p_A − p_B)·n the overlap along the witness segment, v_n = v_rel·n the closing speed at the
// witness midpoint, I = ∫0^δ P(w, v_n) dw the law's pressure integrated over depth and
// R_e = 1/√det K Hertz's effective radius, det K = nᵀ·adj(K_A + K_B)·n the determinant of the
// summed curvature tensors restricted to the tangent plane. Its derivative by the chain rule:
//
//   dF = −2π·[(dR_e·I + R_e·(P(δ)·dδ + ∂I/∂v_n·dv_n))·n + R_e·I·dn]
//   dδ = nᵀ(dp_A − dp_B) + (p_A − p_B)ᵀdn,   dv_n = nᵀ·dv_rel + v_relᵀ·dn
//   dR_e = −½·det^(−3/2)·d(det),   d(det) = 2·nᵀadj(K)·dn + nᵀ·dadj(K)[dK]·n
//
// with dα, dn, dp_A, dp_B from the pair solve's PairDerivatives (the implicit function theorem on
// its KKT system), dv_rel from the moving witness midpoint and link origins (the links' twists
// held fixed), and dK from the rotation of each curvature tensor with its shape plus the change
// of the shape operator as the witness point slides over the surface. That last term needs third
// derivatives of φ, which the shapes do not provide: it is a central difference of the analytic
// shape operator along each local axis (step 1e-6·R_in, relative error ~1e-8 on the four pair
// types), contracted with the witness point's motion. A capped R_e (flat on flat) is constant.
//
// What is differentiated: the normal force only (not the friction part); poses with the links'
// velocities held fixed. Where F is not smooth — the outer balls touching, the cap of R_e, a
// separating contact whose pressure clamps at zero — the derivative is that of the branch taken.
#ifndef TAXEL_CORE_CONTACT_IMPLICIT_PAIR_FORCE_H_
#define TAXEL_CORE_CONTACT_IMPLICIT_PAIR_FORCE_H_

#include "Eigen/Core"
#include "core/contact/nonlinear_law.h"
#include "core/contact/pair_contact.h"

namespace taxel::contact::internal {

/// The force on A from B for two implicit shapes (pair_contact.h), solved in the order (A, B).
/// `jacobian`, when non-null, receives ∂F_normal/∂(ξ_A, ξ_B) (PairForceJacobian); zero when the
/// shapes do not overlap or the solve did not converge. `state` as for ComputePairForce.
PairForce ImplicitPairForce(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b,
                            ImplicitPairState* state, PairForceJacobian* jacobian);

}  // namespace taxel::contact::internal

#endif  // TAXEL_CORE_CONTACT_IMPLICIT_PAIR_FORCE_H_
