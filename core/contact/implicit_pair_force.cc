#include "core/contact/implicit_pair_force.h"

#include <algorithm>
#include <cmath>

#include "core/common/pose.h"
#include "core/geometry/implicit_pair.h"

namespace taxel::contact::internal {
namespace {

constexpr double kPi = 3.141592653589793;
using Mat3x12 = Eigen::Matrix<double, 3, 12>;
using Row12 = Eigen::Matrix<double, 1, 12>;

// Adjugate of a 3×3 matrix (transposed cofactors); nᵀ·adj(K)·n is the determinant of K restricted
// to the plane orthogonal to the unit vector n, for symmetric K.
Eigen::Matrix3d Adjugate(const Eigen::Matrix3d& K) {
  Eigen::Matrix3d C;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      C(j, i) = K(i1, j1) * K(i2, j2) - K(i1, j2) * K(i2, j1);
    }
  }
  return C;
}

// The contact of an overlapping implicit pair, world frame.
struct Contact {
  double depth = 0;  // δ, m
  Eigen::Vector3d n_W, p1_W, p2_W, q_W, v_rel;
  Eigen::Matrix3d K_W;  // K_A + K_B, 1/m
  double det = 0;       // nᵀ·adj(K)·n, 1/m²
  double r_eff = 0;     // m
  bool capped = false;  // R_e at its cap (constant)
};

// Columns of a frame-A vector's PairDerivatives (twists of each shape about its own origin,
// frame-A axes; its outputs are world quantities with world = frame A at this instant) as world
// twists of each link about PlacedShape::origin_W: the vector and the twists rotated to world,
// then each twist moved from the shape's origin to the link's (a twist (δt, δθ) about o_L is
// (δt + δθ × (o_S − o_L), δθ) about o_S).
Mat3x12 ToLinkTwists(const Mat3x12& J_A, const Eigen::Matrix3d& R_WA, const PlacedShape& a, const PlacedShape& b) {
  Mat3x12 J;
  for (int blk = 0; blk < 4; ++blk) J.middleCols<3>(3 * blk) = R_WA * J_A.middleCols<3>(3 * blk) * R_WA.transpose();
  J.middleCols<3>(3) -= J.middleCols<3>(0) * Skew(a.X_WS.p - a.origin_W);
  J.middleCols<3>(9) -= J.middleCols<3>(6) * Skew(b.X_WS.p - b.origin_W);
  return J;
}

// ∂S/∂p_k (k = x, y, z) of the shape operator at p_SY: central differences of the analytic
// operator (third derivatives of φ are not coded), step 1e-6 of the inner radius.
void ShapeOperatorPartials(const geometry::ImplicitShape& shape, const Eigen::Vector3d& p_SY, Eigen::Matrix3d out[3]) {
  const double h = 1e-6 * shape.inner_radius();
  for (int k = 0; k < 3; ++k) {
    const Eigen::Vector3d e = h * Eigen::Vector3d::Unit(k);
    out[k] = (shape.ShapeOperator(p_SY + e) - shape.ShapeOperator(p_SY - e)) / (2 * h);
  }
}

// d(det) of nᵀ·adj(K)·n for each of the 12 link twists (see the header).
Row12 DeterminantDerivative(const PlacedShape& a, const PlacedShape& b, const geometry::PairSolution& s,
                            const Contact& c, const Mat3x12& dn, const Mat3x12& dp1, const Mat3x12& dp2) {
  const geometry::ImplicitShape& sa = *a.shape->implicit();
  const geometry::ImplicitShape& sb = *b.shape->implicit();
  const Eigen::Matrix3d &R_WA = a.X_WS.R, &R_WB = b.X_WS.R;
  const Eigen::Vector3d p2_B = b.X_WS.InverseApply(c.p2_W);
  Eigen::Matrix3d dSa[3], dSb[3];
  ShapeOperatorPartials(sa, s.p1_1, dSa);
  ShapeOperatorPartials(sb, p2_B, dSb);
  const Eigen::Matrix3d Ka = R_WA * sa.ShapeOperator(s.p1_1) * R_WA.transpose();
  const Eigen::Matrix3d Kb = R_WB * sb.ShapeOperator(p2_B) * R_WB.transpose();
  const Eigen::Matrix3d adj = Adjugate(c.K_W);
  Row12 out;
  for (int k = 0; k < 12; ++k) {
    // The twist of column k: which link moves, and by how much.
    const bool moves_a = k < 6;
    Eigen::Vector3d dt = Eigen::Vector3d::Zero(), dth = Eigen::Vector3d::Zero();
    (k % 6 < 3 ? dt : dth)[k % 3] = 1;
    // The witness points relative to their own shapes (local frames): their world motion minus
    // the motion of the material point they sit on.
    const Eigen::Vector3d rigid1 = moves_a ? Eigen::Vector3d(dt + dth.cross(c.p1_W - a.origin_W)) : Eigen::Vector3d::Zero();
    const Eigen::Vector3d rigid2 = moves_a ? Eigen::Vector3d::Zero() : Eigen::Vector3d(dt + dth.cross(c.p2_W - b.origin_W));
    const Eigen::Vector3d dl1 = R_WA.transpose() * (dp1.col(k) - rigid1);
    const Eigen::Vector3d dl2 = R_WB.transpose() * (dp2.col(k) - rigid2);
    Eigen::Matrix3d dK = R_WA * (dl1.x() * dSa[0] + dl1.y() * dSa[1] + dl1.z() * dSa[2]) * R_WA.transpose() +
                         R_WB * (dl2.x() * dSb[0] + dl2.y() * dSb[1] + dl2.z() * dSb[2]) * R_WB.transpose();
    // A rotation δθ of a shape turns its tensor: d(R S Rᵀ) = [δθ]×·K − K·[δθ]×.
    const Eigen::Matrix3d W = Skew(dth);
    const Eigen::Matrix3d& K_turned = moves_a ? Ka : Kb;
    dK += W * K_turned - K_turned * W;
    // adj is quadratic in K, so its directional derivative is exactly (adj(K + E) − adj(K − E))/2.
    const Eigen::Matrix3d dadj = 0.5 * (Adjugate(c.K_W + dK) - Adjugate(c.K_W - dK));
    out[k] = 2 * c.n_W.dot(adj * dn.col(k)) + c.n_W.dot(dadj * c.n_W);
  }
  return out;
}

// ∂F/∂ξ (header): the chain rule through δ, v_n, R_e and n.
PairForceJacobian ForceJacobian(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b,
                                const geometry::PairSolution& s, const geometry::PairDerivatives& D,
                                const Contact& c) {
  const Eigen::Matrix3d& R_WA = a.X_WS.R;
  const Mat3x12 dn = ToLinkTwists(D.normal, R_WA, a, b);
  const Mat3x12 dp1 = ToLinkTwists(D.p1, R_WA, a, b);
  const Mat3x12 dp2 = ToLinkTwists(D.p2, R_WA, a, b);
  const Row12 ddepth = c.n_W.transpose() * (dp1 - dp2) + (c.p1_W - c.p2_W).transpose() * dn;
  // v_rel = v_a + w_a × (q − o_a) − v_b − w_b × (q − o_b); o_a moves with A's translation.
  const Mat3x12 dq = 0.5 * (dp1 + dp2);
  Mat3x12 dv = Skew(a.w_W) * dq - Skew(b.w_W) * dq;
  dv.middleCols<3>(0) -= Skew(a.w_W);
  dv.middleCols<3>(6) += Skew(b.w_W);
  const Row12 dvn = c.n_W.transpose() * dv + c.v_rel.transpose() * dn;
  const double vn = c.v_rel.dot(c.n_W);
  const PressureIntegral I = IntegratePressureAndSpeedDerivative(law, c.depth, vn);
  const double depth_pressure = NormalForce(law, c.depth, vn);  // ∂I/∂δ: the pressure at depth δ
  Row12 dr = Row12::Zero();
  if (!c.capped) dr = -0.5 * std::pow(c.det, -1.5) * DeterminantDerivative(a, b, s, c, dn, dp1, dp2);
  const Row12 dmag = dr * I.value + c.r_eff * (depth_pressure * ddepth + I.d_speed * dvn);
  return -2 * kPi * (c.n_W * dmag + c.r_eff * I.value * dn);
}

}  // namespace

// Curvature tensor of the surface φ = 0 at y, in frame S: P∇²φP/|∇φ| (P the tangent projector).
// The iDCOL pair solve (geometry/implicit_pair.h) gives α, the normal n (out of A) and the witness
// points; the overlap depth is the witness segment on the normal, δ = (p_A − p_B)·n =
// |c_B − c_A|(1 − α)/α·(ĉ·n). Near the contact the gap between the surfaces is ½ρᵀKρ with
// K = K_A + K_B (their curvature tensors in the tangent plane), so the region where the overlap
// exceeds δ − u is an ellipse of area 2πu/√det K and
//   F = ∫ P dA = 2π·R_e·∫_0^δ P(w) dw,   R_e = 1/√det K
// (Hertz's effective radius; exact for a sphere on a half-space, Archimedes). R_e is capped at the
// larger outer radius, so that flat-on-flat contacts (det K → 0) stay finite. Friction uses the
// slip at the midpoint of the witness points.
PairForce ImplicitPairForce(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b,
                            ImplicitPairState* state, PairForceJacobian* jacobian) {
  PairForce out;
  if (jacobian != nullptr) jacobian->setZero();
  const geometry::ImplicitShape& sa = *a.shape->implicit();
  const geometry::ImplicitShape& sb = *b.shape->implicit();
  const RigidTransform X_AB = a.X_WS.Inverse() * b.X_WS;
  if (state != nullptr) state->iterations = 0, state->alpha = 0;
  // Outer balls apart: α > 1 for sure, no solve.
  if (X_AB.p.norm() >= sa.outer_radius() + sb.outer_radius()) return out;
  geometry::PairDerivatives D;
  const geometry::PairSolution s = geometry::SolveImplicitPair(
      sa, sb, X_AB, state != nullptr ? &state->warm : nullptr, jacobian != nullptr ? &D : nullptr);
  if (state != nullptr) state->iterations = s.iterations, state->alpha = s.alpha;
  if (!s.converged || !(s.alpha < 1)) return out;
  Contact c;
  c.depth = (s.p1_1 - s.p2_1).dot(s.normal_1);
  if (!(c.depth > 0)) return out;
  const Eigen::Matrix3d& R_WA = a.X_WS.R;
  c.n_W = R_WA * s.normal_1;  // out of A, towards B
  c.p1_W = a.X_WS * s.p1_1;
  c.p2_W = a.X_WS * s.p2_1;
  c.q_W = 0.5 * (c.p1_W + c.p2_W);
  c.K_W = R_WA * (sa.ShapeOperator(s.p1_1) + X_AB.R * sb.ShapeOperator(X_AB.InverseApply(s.p2_1)) * X_AB.R.transpose()) *
          R_WA.transpose();
  c.det = c.n_W.dot(Adjugate(c.K_W) * c.n_W);
  const double r_cap = std::max(sa.outer_radius(), sb.outer_radius());
  c.capped = !(c.det > 1 / (r_cap * r_cap));
  c.r_eff = c.capped ? r_cap : 1 / std::sqrt(c.det);
  c.v_rel = a.PointVelocity(c.q_W) - b.PointVelocity(c.q_W);
  const double F = 2 * kPi * c.r_eff * IntegratePressure(law, 0, c.depth, c.v_rel.dot(c.n_W));
  out.normal = -F * c.n_W;  // pushes A away from B
  out.friction = Friction(law, F, c.n_W, c.v_rel);
  if (jacobian != nullptr && D.valid) *jacobian = ForceJacobian(law, a, b, s, D, c);
  return out;
}

}  // namespace taxel::contact::internal
