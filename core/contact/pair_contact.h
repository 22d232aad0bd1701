// Contact forces between two shapes for the contact matrix's ESTIMATED source. The nonlinear law
// is used as a pressure (Pa) acting on the part of each surface that lies inside the other shape:
//
//   F_on_A = ∫_{∂A ∩ B} P(δ_B(x), v_n(x))·n_B(x) dA        (δ_B = −sd_B, n_B = ∇sd_B)
//
// plus friction −μ(s)·P·ŝ per unit area. When both surfaces can be sampled, the integral is taken
// both ways (∂A in B and ∂B in A, with opposite signs) and averaged, so that the pair is
// symmetric: F(A, B) = −F(B, A) exactly.
//
// Methods and accuracy (checked by tests/core/contact/pair_contact_test.cc):
//
//   pair                         method                                   accuracy vs the integral
//   ---------------------------  ---------------------------------------  -------------------------
//   sphere – half-space          closed form: ∂A zone area is 2πR·du     exact (1e-9 quadrature)
//   box – half-space, a face     closed form: face + sides                exact (1e-9 quadrature)
//     parallel to the plane
//   capsule – half-space, axis   closed form: sphere zones + 2l·r∫dθ     exact (1e-9 quadrature)
//     parallel or perpendicular
//   sphere – sphere              closed form on the axis of centres       exact (1e-9 quadrature)
//   anything – half-space /      sampled ∂A (one way)                     O(spacing²) (2 % at 5 mm
//     heightfield                                                          on a 5 cm sphere)
//   any other pair               sampled both ways, averaged              O(spacing²)
//
// Friction in the closed forms uses the slip at the deepest point; the sampled method uses the
// slip at every sample.
#ifndef TAXEL_CORE_CONTACT_PAIR_CONTACT_H_
#define TAXEL_CORE_CONTACT_PAIR_CONTACT_H_

#include "Eigen/Core"
#include "core/common/pose.h"
#include "core/contact/nonlinear_law.h"
#include "core/contact/surface_samples.h"
#include "core/geometry/shape.h"

namespace taxel::contact {

/// A shape placed in world with the kinematics of its link.
struct PlacedShape {
  const geometry::Shape* shape = nullptr;
  RigidTransform X_WS;
  const SurfaceSamples* samples = nullptr;  ///< shape frame; nullptr or empty: not sampleable
  Eigen::Vector3d v_W = Eigen::Vector3d::Zero();       ///< linear velocity of the link origin
  Eigen::Vector3d w_W = Eigen::Vector3d::Zero();       ///< angular velocity
  Eigen::Vector3d origin_W = Eigen::Vector3d::Zero();  ///< link origin
  Eigen::Vector3d PointVelocity(const Eigen::Vector3d& p_W) const { return v_W + w_W.cross(p_W - origin_W); }
};

/// Force on A from B (world, N): the normal part and the friction part.
struct PairForce {
  Eigen::Vector3d normal = Eigen::Vector3d::Zero();
  Eigen::Vector3d friction = Eigen::Vector3d::Zero();
  bool closed_form = false;  ///< which method was used (for tests and the table)
};

/// The method the pair would use, as a string of the table above ("closed_form" or "sampled").
const char* PairMethod(const PlacedShape& a, const PlacedShape& b);

PairForce ComputePairForce(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b);

/// ∫_{x0}^{x1} max(0, k_p x^n + k_c S(x/d_max) v_n) dx by adaptive Simpson quadrature (relative
/// tolerance 1e-10): the pressure integrated over depth, the building block of the closed forms.
double IntegratePressure(const NonlinearLawParams& law, double x0, double x1, double closing_speed);

}  // namespace taxel::contact

#endif  // TAXEL_CORE_CONTACT_PAIR_CONTACT_H_
