#include "core/contact/pair_contact.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/contact/implicit_pair_force.h"
#include "core/geometry/implicit_pair.h"

namespace taxel::contact {
namespace {

constexpr double kPi = 3.141592653589793;
constexpr double kParallel = 1e-9;

double AdaptiveSimpson(const std::function<double(double)>& f, double a, double b, double fa, double fm, double fb,
                       double whole, double tol, int depth) {
  const double m = 0.5 * (a + b), lm = 0.5 * (a + m), rm = 0.5 * (m + b);
  const double flm = f(lm), frm = f(rm);
  const double left = (m - a) / 6 * (fa + 4 * flm + fm), right = (b - m) / 6 * (fm + 4 * frm + fb);
  if (depth <= 0 || std::abs(left + right - whole) <= 15 * tol) return left + right + (left + right - whole) / 15;
  return AdaptiveSimpson(f, a, m, fa, flm, fm, left, tol / 2, depth - 1) +
         AdaptiveSimpson(f, m, b, fm, frm, fb, right, tol / 2, depth - 1);
}

// ∫_a^b f, adaptive Simpson to an absolute tolerance derived from a first estimate.
double Integrate(const std::function<double(double)>& f, double a, double b) {
  if (!(b > a)) return 0;
  const double fa = f(a), fb = f(b), fm = f(0.5 * (a + b));
  const double whole = (b - a) / 6 * (fa + 4 * fm + fb);
  // Scale from 8 samples so that the tolerance is relative to the integral's size. A clamped
  // pressure may be non-zero on a narrow band only: when all 8 miss it, look again with 64 (a band
  // narrower than (b − a)/64 that every sample misses carries a negligible share of the force).
  double scale = std::abs(whole);
  for (int i = 1; i < 8; ++i) scale = std::max(scale, std::abs(f(a + (b - a) * i / 8.0)) * (b - a));
  for (int i = 1; scale == 0 && i < 64; i += 2) scale = std::abs(f(a + (b - a) * i / 64.0)) * (b - a);
  if (scale == 0) return 0;
  return AdaptiveSimpson(f, a, b, fa, fm, fb, whole, 1e-11 * scale, 40);
}

using internal::Friction;

bool Sampleable(const PlacedShape& s) { return s.samples != nullptr && !s.samples->points.empty(); }

// Axis k of box A whose faces are parallel to the plane of normal n, or −1.
int FaceAxis(const PlacedShape& a, const Eigen::Vector3d& n) {
  for (int ax = 0; ax < 3; ++ax) {
    if (std::abs(std::abs(a.X_WS.R.col(ax).dot(n)) - 1) < kParallel) return ax;
  }
  return -1;
}

// Whether shape A against half-space B has a closed form; a matter of shapes and orientation
// only, never of penetration (the table's method does not change when the shapes separate).
bool HasHalfSpaceClosedForm(const PlacedShape& a, const PlacedShape& b) {
  using geometry::ShapeKind;
  const Eigen::Vector3d n = b.X_WS.R.col(2);
  switch (a.shape->kind()) {
    case ShapeKind::kSphere: return true;
    case ShapeKind::kBox: return FaceAxis(a, n) >= 0;
    case ShapeKind::kCapsule: {
      const double an = std::abs(a.X_WS.R.col(2).dot(n));
      return an < kParallel || std::abs(an - 1) < kParallel;
    }
    default: return false;
  }
}

// Closed forms of a shape against a half-space B. Returns false when the configuration has none.
bool HalfSpaceClosedForm(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b, PairForce* out) {
  using geometry::ShapeKind;
  if (!HasHalfSpaceClosedForm(a, b)) return false;
  out->closed_form = true;                    // also when the shapes do not touch
  const Eigen::Vector3d n = b.X_WS.R.col(2);  // out of the half-space
  const Eigen::Vector3d& p0 = b.X_WS.p;
  const Eigen::Vector3d c = a.X_WS.p;
  const double zc = (c - p0).dot(n);
  const geometry::Shape& s = *a.shape;
  auto closing = [&](const Eigen::Vector3d& q) { return -(a.PointVelocity(q) - b.PointVelocity(q)).dot(n); };
  double F = 0;
  Eigen::Vector3d q;  // deepest point (friction, damping)
  switch (s.kind()) {
    case ShapeKind::kSphere: {
      const double R = s.radius(), depth = R - zc;
      if (depth <= 0) return true;
      q = c - R * n;
      // Archimedes: a spherical zone of height du has area 2πR·du, whatever its latitude.
      F = 2 * kPi * R * IntegratePressure(law, std::max(0.0, depth - 2 * R), depth, closing(q));
      break;
    }
    case ShapeKind::kBox: {
      const int k = FaceAxis(a, n);
      const Eigen::Vector3d h = s.half_extents();
      const double hn = h[k], h1 = h[(k + 1) % 3], h2 = h[(k + 2) % 3];
      const double depth = hn - zc;  // of the lowest face
      if (depth <= 0) return true;
      q = c - hn * n;
      const double vn = closing(q);
      const double face = 4 * h1 * h2, perimeter = 4 * (h1 + h2);
      F = face * NormalForce(law, depth, vn) +
          perimeter * IntegratePressure(law, std::max(0.0, depth - 2 * hn), depth, vn);
      if (depth - 2 * hn > 0) F += face * NormalForce(law, depth - 2 * hn, vn);  // top face submerged
      break;
    }
    case ShapeKind::kCapsule: {
      const Eigen::Vector3d axis = a.X_WS.R.col(2);
      const double r = s.radius(), l = s.half_length(), an = std::abs(axis.dot(n));
      if (an < kParallel) {
        const double depth = r - zc;
        if (depth <= 0) return true;
        q = c - r * n;
        const double vn = closing(q);
        // Two hemispheres at the same height: one sphere's zones; the side: 2l·r·∫P dθ.
        F = 2 * kPi * r * IntegratePressure(law, std::max(0.0, depth - 2 * r), depth, vn);
        F += 2 * 2 * l * r *
             Integrate([&](double th) { return NormalForce(law, depth - r + r * std::cos(th), vn); }, 0, kPi);
      } else {
        // A vertical capsule: every height band (sphere zone or cylinder band) has area 2πr·du.
        const double depth = l + r - zc;
        if (depth <= 0) return true;
        q = c - (l + r) * n;
        F = 2 * kPi * r * IntegratePressure(law, std::max(0.0, depth - 2 * (l + r)), depth, closing(q));
      }
      break;
    }
    default: return false;
  }
  out->normal = F * n;
  out->friction = Friction(law, F, n, a.PointVelocity(q) - b.PointVelocity(q));
  return true;
}

// Two spheres: both surface integrals reduce to one-dimensional integrals on the axis of centres.
PairForce SphereSphere(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b) {
  PairForce out;
  out.closed_form = true;
  const double ra = a.shape->radius(), rb = b.shape->radius();
  const Eigen::Vector3d ca = a.X_WS.p, cb = b.X_WS.p;
  const double d = (cb - ca).norm();
  if (d >= ra + rb || d == 0) return out;
  const Eigen::Vector3d e = (cb - ca) / d;  // from A towards B
  const Eigen::Vector3d q = ca + (ra - 0.5 * (ra + rb - d)) * e;
  const Eigen::Vector3d v_rel = a.PointVelocity(q) - b.PointVelocity(q);
  const double vn = v_rel.dot(e);  // A moving towards B is approaching
  // Integrate over the cap that lies inside the other sphere only: the integrands vanish
  // elsewhere, and a narrow cap falls between the quadrature's first samples (a 1 mm overlap of
  // 5 cm spheres spans θ < 0.1 of [0, π]), which then returned 0.
  auto cap = [d](double r_self, double r_other) {  // largest angle inside the other sphere
    const double c = (r_self * r_self + d * d - r_other * r_other) / (2 * r_self * d);
    return std::acos(std::clamp(c, -1.0, 1.0));
  };
  // ∂A inside B: x = ca + ra(cosθ e + …), ρ = |x − cb|, depth rb − ρ, axial push (ra cosθ − d)/ρ.
  const double fa = 2 * kPi * ra * ra *
                    Integrate(
                        [&](double th) {
                          const double rho = std::sqrt(ra * ra + d * d - 2 * ra * d * std::cos(th));
                          if (rho == 0) return 0.0;
                          return NormalForce(law, rb - rho, vn) * (ra * std::cos(th) - d) / rho * std::sin(th);
                        },
                        0, cap(ra, rb));
  // ∂B inside A: y = cb − rb(cosφ e + …), ρ = |y − ca|, depth ra − ρ; the force on B points along
  // (y − ca)/ρ, whose axial part is (d − rb cosφ)/ρ; on A it is the opposite.
  const double fb = -2 * kPi * rb * rb *
                    Integrate(
                        [&](double ph) {
                          const double rho = std::sqrt(rb * rb + d * d - 2 * rb * d * std::cos(ph));
                          if (rho == 0) return 0.0;
                          return NormalForce(law, ra - rho, vn) * (d - rb * std::cos(ph)) / rho * std::sin(ph);
                        },
                        0, cap(rb, ra));
  const double F = 0.5 * (fa + fb);  // along e; negative pushes A away from B
  out.normal = F * e;
  out.friction = Friction(law, std::abs(F), -e, v_rel);
  return out;
}

// ∫ over the samples of A that lie inside B of the pressure (and friction), force on A.
void SampledOneWay(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b, double weight,
                   double sign, PairForce* out) {
  const geometry::Aabb bounds_B = b.shape->local_bounds().Transformed(b.X_WS);
  const RigidTransform X_BW = b.X_WS.Inverse();
  const SurfaceSamples& s = *a.samples;
  // Only the samples of A near B's bounds (B's box expressed in A's frame).
  const geometry::Aabb near_A = b.shape->local_bounds().Transformed(a.X_WS.Inverse() * b.X_WS);
  s.ForEachNear(near_A, [&](uint32_t i) {
    const Eigen::Vector3d x = a.X_WS * s.points[i];
    if (!bounds_B.Contains(x)) return;
    const geometry::SignedDistanceResult sd = b.SignedDistance(X_BW * x, 0.0);
    if (!(sd.distance < 0)) return;
    const Eigen::Vector3d n = b.X_WS.R * sd.normal;  // pushes A's point out of B
    const ContactScratch c = EvaluateNonlinearLaw(law, -sd.distance, n, a.PointVelocity(x) - b.PointVelocity(x));
    out->normal += (sign * weight * s.areas[i] * c.normal_force) * n;
    out->friction += (sign * weight * s.areas[i]) * c.friction;
  });
}

}  // namespace

namespace {

// ∫_{x0}^{x1} max(0, g) of IntegratePressure, and k_c·∫ S(x/d) over the same positive intervals
// (*d_speed: the integral's derivative with respect to the closing speed).
double IntegratePressureImpl(const NonlinearLawParams& law, double x0, double x1, double closing_speed,
                             double* d_speed) {
  *d_speed = 0;
  x0 = std::max(0.0, x0);
  if (!(x1 > x0)) return 0;
  // g(x) = k_p x^n + k_c S(x/d) v integrates in closed form: A(x) = k_p x^(n+1)/(n+1) + k_c v G(x)
  // with G(x) = ∫ S(x/d) = d(a³ − a⁴/2) (a = x/d ≤ 1), d/2 + x − d beyond.
  const double d = law.damping_depth, n = law.exponent, v = closing_speed;
  auto G = [&](double x) {
    const double a = x / d;
    return a <= 1 ? d * (a * a * a - 0.5 * a * a * a * a) : 0.5 * d + (x - d);
  };
  auto A = [&](double x) { return law.stiffness * std::pow(x, n + 1) / (n + 1) + law.damping * v * G(x); };
  if (v >= 0 || law.damping == 0) {  // g ≥ 0: no clamping
    *d_speed = law.damping * (G(x1) - G(x0));
    return A(x1) - A(x0);
  }
  // Separating: max(0, g) is g where q(x) = S(x/d)/x^n < c = k_p/(k_c|v|), 0 elsewhere. q is
  // decreasing for n ≥ 2; for n < 2 it rises to its peak at x* = 3(2 − n)d/(2(3 − n)) (≤ d) and
  // falls after. So g > 0 on (0, r1) ∪ (r2, ∞), each root found by bisection on a monotone piece.
  const double c = law.stiffness / (law.damping * -v);
  auto q = [&](double x) {
    const double a = std::min(x / d, 1.0);
    return a * a * (3 - 2 * a) / std::pow(x, n);
  };
  // The x in [lo, hi] where q crosses c, q monotone on [lo, hi] (rising or falling).
  auto root = [&](double lo, double hi) {
    const bool rising = q(hi) > q(lo);
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      ((q(mid) < c) == rising ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  };
  // Positive intervals of g within (0, ∞), as [start, end) pairs.
  double intervals[2][2];
  int count = 0;
  // Beyond `far` nothing of [x0, x1] is left; below `tiny` a band contributes < 1e-24 of x1^(n+1).
  const double far = 2 * std::max(x1, d), tiny = 1e-12 * far;
  const double top = n < 2 ? 3 * (2 - n) * d / (2 * (3 - n)) : tiny;  // where q peaks (n ≥ 2: at 0+)
  if (q(top) < c) {
    intervals[count][0] = 0, intervals[count++][1] = INFINITY;  // g ≥ 0 everywhere
  } else {
    if (n < 2) intervals[count][0] = 0, intervals[count++][1] = q(tiny) < c ? root(tiny, top) : tiny;
    intervals[count][0] = q(far) < c ? root(top, far) : far, intervals[count++][1] = INFINITY;
  }
  double total = 0, speed = 0;
  for (int i = 0; i < count; ++i) {
    const double lo = std::max(x0, intervals[i][0]), hi = std::min(x1, intervals[i][1]);
    if (hi > lo) total += A(hi) - A(lo), speed += law.damping * (G(hi) - G(lo));
  }
  if (!(total > 0)) return 0;
  *d_speed = speed;
  return total;
}

}  // namespace

double IntegratePressure(const NonlinearLawParams& law, double x0, double x1, double closing_speed) {
  double unused;
  return IntegratePressureImpl(law, x0, x1, closing_speed, &unused);
}

namespace internal {

PressureIntegral IntegratePressureAndSpeedDerivative(const NonlinearLawParams& law, double depth,
                                                     double closing_speed) {
  PressureIntegral out;
  out.value = IntegratePressureImpl(law, 0, depth, closing_speed, &out.d_speed);
  return out;
}

Eigen::Vector3d Friction(const NonlinearLawParams& law, double normal_force, const Eigen::Vector3d& n,
                         const Eigen::Vector3d& v_rel) {
  const Eigen::Vector3d slip = v_rel - v_rel.dot(n) * n;
  const double s = slip.norm();
  if (s == 0 || normal_force <= 0) return Eigen::Vector3d::Zero();
  return -(FrictionCoefficient(law, s) * normal_force / s) * slip;
}

}  // namespace internal

bool HasPairForceJacobian(const PlacedShape& a, const PlacedShape& b) {
  return a.shape->kind() == geometry::ShapeKind::kImplicit && b.shape->kind() == geometry::ShapeKind::kImplicit;
}

const char* PairMethod(const PlacedShape& a, const PlacedShape& b) {
  using geometry::ShapeKind;
  if (a.shape->kind() == ShapeKind::kImplicit && b.shape->kind() == ShapeKind::kImplicit) return "implicit_pair";
  if (a.shape->kind() == ShapeKind::kSphere && b.shape->kind() == ShapeKind::kSphere) return "closed_form";
  if (b.shape->kind() == ShapeKind::kHalfSpace && HasHalfSpaceClosedForm(a, b)) return "closed_form";
  if (a.shape->kind() == ShapeKind::kHalfSpace && HasHalfSpaceClosedForm(b, a)) return "closed_form";
  return "sampled";
}

PairForce ComputePairForce(const NonlinearLawParams& law, const PlacedShape& a, const PlacedShape& b,
                           ImplicitPairState* state, PairForceJacobian* jacobian) {
  using geometry::ShapeKind;
  if (a.shape->kind() == ShapeKind::kSphere && b.shape->kind() == ShapeKind::kSphere) return SphereSphere(law, a, b);
  if (a.shape->kind() == ShapeKind::kImplicit && b.shape->kind() == ShapeKind::kImplicit) {
    // Solved from the lexicographically smaller origin, so that F(B, A) = −F(A, B) exactly. A warm
    // start of the other order does not apply (its variables are those of frame B).
    const Eigen::Vector3d &pa = a.X_WS.p, &pb = b.X_WS.p;
    const bool reversed = std::lexicographical_compare(pb.data(), pb.data() + 3, pa.data(), pa.data() + 3);
    if (state != nullptr && state->reversed != reversed) {
      state->warm.valid = false;
      state->reversed = reversed;
    }
    if (reversed) {
      PairForce f = internal::ImplicitPairForce(law, b, a, state, jacobian);
      f.normal = -f.normal;
      f.friction = -f.friction;
      // The force on A is minus that on B; B's columns came first.
      if (jacobian != nullptr) {
        const Eigen::Matrix<double, 3, 6> on_b_by_b = jacobian->leftCols<6>();
        jacobian->leftCols<6>() = -jacobian->rightCols<6>();
        jacobian->rightCols<6>() = -on_b_by_b;
      }
      return f;
    }
    return internal::ImplicitPairForce(law, a, b, state, jacobian);
  }
  PairForce out;
  if (b.shape->kind() == ShapeKind::kHalfSpace && HalfSpaceClosedForm(law, a, b, &out)) return out;
  if (a.shape->kind() == ShapeKind::kHalfSpace && HalfSpaceClosedForm(law, b, a, &out)) {
    out.normal = -out.normal;
    out.friction = -out.friction;
    return out;
  }
  // Bounding spheres of finite shapes: no overlap, no contact.
  const geometry::Aabb& la = a.shape->local_bounds();
  const geometry::Aabb& lb = b.shape->local_bounds();
  if (la.is_finite() && lb.is_finite()) {
    const Eigen::Vector3d ca = a.X_WS * la.center(), cb = b.X_WS * lb.center();
    const double ra = la.half_extents().norm(), rb = lb.half_extents().norm();
    if ((ca - cb).squaredNorm() > (ra + rb) * (ra + rb)) return out;
  }
  const bool sa = Sampleable(a), sb = Sampleable(b);
  const double w = sa && sb ? 0.5 : 1.0;
  if (sa) SampledOneWay(law, a, b, w, 1.0, &out);
  if (sb) SampledOneWay(law, b, a, w, -1.0, &out);
  return out;
}

}  // namespace taxel::contact
