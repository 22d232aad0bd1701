// Pair contact forces against hand formulas: a parameterised test that checks exactly the table of
// methods and accuracy in core/contact/pair_contact.h, then convergence of the sampled method.
#include "core/contact/pair_contact.h"

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "Eigen/Geometry"
#include "core/geometry/heightfield.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/triangle_mesh.h"
#include "gtest/gtest.h"

namespace taxel::contact {
namespace {

constexpr double kPi = 3.141592653589793;

// A pressure law (Pa) without damping unless a test adds it: P(u) = k·u^n.
NonlinearLawParams PressureLaw(double exponent = 1.5) {
  NonlinearLawParams law;
  law.stiffness = 1e8;
  law.exponent = exponent;
  law.damping = 0;
  law.damping_depth = 2e-3;
  law.dynamic_friction = 0.5;
  return law;
}

// Hand formulas of the undamped law: P(u) = k u^n, Q(u) = ∫0^u P = k u^{n+1}/(n+1),
// R(u) = ∫0^u Q = k u^{n+2}/((n+1)(n+2)).
double P(const NonlinearLawParams& l, double u) { return u > 0 ? l.stiffness * std::pow(u, l.exponent) : 0.0; }
double Q(const NonlinearLawParams& l, double u) {
  return u > 0 ? l.stiffness * std::pow(u, l.exponent + 1) / (l.exponent + 1) : 0.0;
}
double R(const NonlinearLawParams& l, double u) {
  return u > 0 ? l.stiffness * std::pow(u, l.exponent + 2) / ((l.exponent + 1) * (l.exponent + 2)) : 0.0;
}

// A shape placed in world with its samples and twist, owning everything PlacedShape points to.
struct Body {
  std::shared_ptr<const geometry::Shape> shape;
  SurfaceSamples samples;
  RigidTransform X_WS;
  Eigen::Vector3d v_W = Eigen::Vector3d::Zero();
  Eigen::Vector3d w_W = Eigen::Vector3d::Zero();
  PlacedShape Placed() const { return {shape.get(), X_WS, &samples, v_W, w_W, X_WS.p}; }
};

RigidTransform Pose(const Eigen::Matrix3d& R_WS, const Eigen::Vector3d& p_WS) { return {R_WS, p_WS}; }
Eigen::Matrix3d Rot(double angle, const Eigen::Vector3d& axis) {
  return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

Body MakeBody(const absl::StatusOr<geometry::Shape>& shape, const RigidTransform& X_WS, double spacing = 0.005) {
  EXPECT_TRUE(shape.ok()) << shape.status();
  Body b;
  b.shape = std::make_shared<const geometry::Shape>(*shape);
  b.samples = SampleSurface(*b.shape, spacing);
  b.X_WS = X_WS;
  return b;
}

Body HalfSpace(const RigidTransform& X_WS) { return MakeBody(geometry::Shape::HalfSpace(), X_WS); }

// A flat heightfield (all heights 0) 0.4 m × 0.4 m, frame at the origin.
Body FlatHeightfield() {
  auto hf = geometry::Heightfield::Create(21, 21, 0.02, 0.02, std::vector<double>(21 * 21, 0.0));
  EXPECT_TRUE(hf.ok());
  return MakeBody(geometry::Shape::FromHeightfield(*hf), RigidTransform::Identity());
}

// A geodesic mesh sphere (vertices on the sphere, facets inside it by at most their sagitta).
Body MeshSphere(double radius, int frequency, const RigidTransform& X_WS, double spacing) {
  const geometry::MeshData data = geometry::GeodesicSphere(radius, frequency);
  auto mesh = geometry::TriangleMesh::Create(data.vertices, data.triangles);
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return MakeBody(geometry::Shape::FromMesh(geometry::MeshSignedDistance::Build(*mesh)), X_WS, spacing);
}

// Sphere of radius R with its lowest point δ below the plane z = 0 of an identity half-space:
// Archimedes — the zone between depths u and u + du has area 2πR·du — gives
//   F = 2πR ∫0^δ P(u) du = 2πR·Q(δ).
constexpr double kR = 0.05;
constexpr double kDepth = 1e-3;

// Tilted box (tilt θ about the box's y axis) on the plane z = 0, lowest bottom edge at depth δ+ and
// highest at δ− = δ+ − 2·h_x·sinθ (all four bottom corners submerged, top dry). Pressure acts
// along +z on every submerged face element (F = ∫ P(δ(x))·n_B dA):
//   bottom face, depth δ0 + x·sinθ over x ∈ [−h_x, h_x]:   2h_y·[Q(δ+) − Q(δ−)]/sinθ
//   faces x = ±h_x, depth δ± − t·cosθ over t ≥ 0, width 2h_y: 2h_y·[Q(δ+) + Q(δ−)]/cosθ
//   faces y = ±h_y, region below the waterline:               2·[R(δ+) − R(δ−)]/(sinθ·cosθ)
double TiltedBoxForce(const NonlinearLawParams& l, const Eigen::Vector3d& h, double theta, double d_plus) {
  const double s = std::sin(theta), c = std::cos(theta);
  const double d_minus = d_plus - 2 * h.x() * s;
  return 2 * h.y() * (Q(l, d_plus) - Q(l, d_minus)) / s + 2 * h.y() * (Q(l, d_plus) + Q(l, d_minus)) / c +
         2 * (R(l, d_plus) - R(l, d_minus)) / (s * c);
}

// ---------------------------------------------------------------------------------------------
// The table of pair_contact.h, one row per case.

struct PairCase {
  Body a, b;
  Eigen::Vector3d expected;  // force on A from B (world, N), the hand formula
};

struct TableRow {
  std::string name;
  std::string method;  // what the table says PairMethod reports
  double rel_tol;      // the accuracy the table claims for that method
  NonlinearLawParams law;
  std::function<PairCase(const NonlinearLawParams&)> make;
};

std::vector<TableRow> Table() {
  std::vector<TableRow> rows;
  const NonlinearLawParams law = PressureLaw();
  // sphere – half-space, with damping (δ < d_max, v_n ≥ 0) on a tilted, offset plane:
  //   F = 2πR·[k_p·δ^{n+1}/(n+1) + k_c·v_n·d_max·(a³ − a⁴/2)], a = δ/d_max
  // (∫0^δ S(u/d_max) du = d_max ∫0^a (3s² − 2s³) ds = d_max (a³ − a⁴/2)).
  NonlinearLawParams damped = law;
  damped.damping = 2e5;
  rows.push_back({"sphere_halfspace", "closed_form", 1e-9, damped, [](const NonlinearLawParams& l) {
                    const Eigen::Matrix3d R_WB = Rot(0.4, {1, 2, 0});
                    const Eigen::Vector3d n = R_WB.col(2), p0(0.3, -0.2, 0.1);
                    PairCase c{MakeBody(geometry::Shape::Sphere(kR), Pose(Rot(1.0, {0, 1, 1}), p0 + (kR - kDepth) * n)),
                               HalfSpace(Pose(R_WB, p0)),
                               {}};
                    const double vn = 0.05, a = kDepth / l.damping_depth;
                    c.a.v_W = -vn * n;
                    c.expected = 2 * kPi * kR *
                                 (Q(l, kDepth) + l.damping * vn * l.damping_depth * (a * a * a - a * a * a * a / 2)) *
                                 n;
                    return c;
                  }});
  // Separating slowly (v_n = −0.01 m/s): the quadrature branch of the law. The damping never
  // outweighs the spring (at u = δ: 2e5·0.01·S(0.5) = 1000 Pa < k·δ^1.5 = 3162 Pa, and the ratio
  // grows with u), so no clamping and the same formula holds with v_n < 0.
  rows.push_back(
      {"sphere_halfspace_separating", "closed_form", 1e-9, damped, [](const NonlinearLawParams& l) {
         PairCase c{MakeBody(geometry::Shape::Sphere(kR), Pose(Eigen::Matrix3d::Identity(), {0, 0, kR - kDepth})),
                    HalfSpace(RigidTransform::Identity()),
                    {}};
         const double vn = -0.01, a = kDepth / l.damping_depth;
         c.a.v_W = Eigen::Vector3d(0, 0, -vn);
         c.expected = Eigen::Vector3d(
             0, 0, 2 * kPi * kR * (Q(l, kDepth) + l.damping * vn * l.damping_depth * (a * a * a - a * a * a * a / 2)));
         return c;
       }});
  // Deeper than d_max (δ = 3 mm, d_max = 2 mm, v_n = 0.05 m/s): the ramp is saturated beyond
  // d_max, ∫0^δ S(u/d_max) du = d_max/2 + (δ − d_max), so F = 2πR·[Q(δ) + k_c·v_n·(δ − d_max/2)].
  rows.push_back(
      {"sphere_halfspace_beyond_dmax", "closed_form", 1e-9, damped, [](const NonlinearLawParams& l) {
         const double delta = 3e-3, vn = 0.05;
         PairCase c{MakeBody(geometry::Shape::Sphere(kR), Pose(Eigen::Matrix3d::Identity(), {0, 0, kR - delta})),
                    HalfSpace(RigidTransform::Identity()),
                    {}};
         c.a.v_W = Eigen::Vector3d(0, 0, -vn);
         c.expected =
             Eigen::Vector3d(0, 0, 2 * kPi * kR * (Q(l, delta) + l.damping * vn * (delta - l.damping_depth / 2)));
         return c;
       }});
  // The same pair with the half-space first: the force on the half-space is the opposite.
  rows.push_back({"halfspace_sphere", "closed_form", 1e-9, law, [](const NonlinearLawParams& l) {
                    return PairCase{
                        HalfSpace(RigidTransform::Identity()),
                        MakeBody(geometry::Shape::Sphere(kR), Pose(Eigen::Matrix3d::Identity(), {0, 0, kR - kDepth})),
                        Eigen::Vector3d(0, 0, -2 * kPi * kR * Q(l, kDepth))};
                  }});
  // The method does not depend on whether the shapes touch.
  rows.push_back({"sphere_halfspace_apart", "closed_form", 1e-9, law, [](const NonlinearLawParams&) {
                    return PairCase{
                        MakeBody(geometry::Shape::Sphere(kR), Pose(Eigen::Matrix3d::Identity(), {0, 0, 0.2})),
                        HalfSpace(RigidTransform::Identity()), Eigen::Vector3d::Zero()};
                  }});
  // box – half-space, face parallel: box h = (0.04, 0.03, 0.02) turned 90° about x (its y face
  // down) and yawed 0.7 rad about the world z. F = A·P(δ) + L·Q(δ), A = 4·h_x·h_z, L = 4(h_x + h_z).
  rows.push_back({"box_halfspace_face_down", "closed_form", 1e-9, law, [](const NonlinearLawParams& l) {
                    const Eigen::Vector3d h(0.04, 0.03, 0.02);
                    const Eigen::Matrix3d R = Rot(0.7, {0, 0, 1}) * Rot(kPi / 2, {1, 0, 0});
                    const double A = 4 * h.x() * h.z(), L = 4 * (h.x() + h.z());
                    return PairCase{MakeBody(geometry::Shape::Box(h), Pose(R, {0.1, 0.2, h.y() - kDepth})),
                                    HalfSpace(RigidTransform::Identity()),
                                    Eigen::Vector3d(0, 0, A * P(l, kDepth) + L * Q(l, kDepth))};
                  }});
  // capsule – half-space, axis parallel to the plane (lying), linear law n = 1 so that the side
  // has a closed form. r = 0.02, l = 0.05, δ = 1 mm. Hemispheres = one sphere: 2πr·k·δ²/2. Side:
  // depth δ − r + r·cosθ > 0 for |θ| < θ0 = acos(1 − δ/r), area r·dθ × 2l:
  //   4·l·r·k·∫0^θ0 (δ − r + r cosθ) dθ = 4·l·r·k·[(δ − r)·θ0 + r·sinθ0].
  rows.push_back({"capsule_halfspace_lying", "closed_form", 1e-9, PressureLaw(1.0), [](const NonlinearLawParams& l) {
                    const double r = 0.02, hl = 0.05, k = l.stiffness, th0 = std::acos(1 - kDepth / r);
                    const double F = 2 * kPi * r * k * kDepth * kDepth / 2 +
                                     4 * hl * r * k * ((kDepth - r) * th0 + r * std::sin(th0));
                    return PairCase{MakeBody(geometry::Shape::Capsule(r, hl),
                                             Pose(Rot(0.3, {0, 0, 1}) * Rot(kPi / 2, {0, 1, 0}), {0, 0, r - kDepth})),
                                    HalfSpace(RigidTransform::Identity()), Eigen::Vector3d(0, 0, F)};
                  }});
  // capsule – half-space, axis perpendicular (standing, here upside down): every height band has
  // area 2πr·du, so F = 2πr·Q(δ).
  rows.push_back({"capsule_halfspace_standing", "closed_form", 1e-9, law, [](const NonlinearLawParams& l) {
                    const double r = 0.02, hl = 0.05;
                    return PairCase{
                        MakeBody(geometry::Shape::Capsule(r, hl), Pose(Rot(kPi, {1, 0, 0}), {0, 0, hl + r - kDepth})),
                        HalfSpace(RigidTransform::Identity()), Eigen::Vector3d(0, 0, 2 * kPi * r * Q(l, kDepth))};
                  }});
  // sphere – sphere: r_a = 0.05, r_b = 0.03, centre distance d = r_a + r_b − δ along e. With
  // ρ = |x − c_b| as the variable (ρ dρ = r_a·d·sinθ dθ) and u = r_b − ρ, the part of ∂A inside B
  // pushes A along e with
  //   f_a = (π r_a/d²) ∫0^δ P(u)·(r_a² − d² − (r_b − u)²) du
  // and symmetrically (∂B inside A, u = r_a − ρ) the force on A is
  //   f_b = −(π r_b/d²) ∫0^δ P(u)·(d² − r_b² + (r_a − u)²) du.
  // With P = k u^n: ∫0^δ u^n (C + 2βu − u²) du = C·I1 + 2β·I2 − I3, I_j = δ^{n+j}/(n+j).
  // F = (f_a + f_b)/2 along e (negative: pushes A away from B).
  rows.push_back({"sphere_sphere", "closed_form", 1e-9, law, [](const NonlinearLawParams& l) {
                    const double ra = 0.05, rb = 0.03, d = ra + rb - kDepth, n = l.exponent, k = l.stiffness;
                    auto I = [&](int j) { return std::pow(kDepth, n + j) / (n + j); };
                    const double fa =
                        kPi * ra / (d * d) * k * ((ra * ra - d * d - rb * rb) * I(1) + 2 * rb * I(2) - I(3));
                    const double fb =
                        -kPi * rb / (d * d) * k * ((d * d - rb * rb + ra * ra) * I(1) - 2 * ra * I(2) + I(3));
                    const Eigen::Vector3d e = Eigen::Vector3d(1, -2, 2) / 3.0, ca(0.1, 0.2, 0.3);
                    return PairCase{MakeBody(geometry::Shape::Sphere(ra), Pose(Eigen::Matrix3d::Identity(), ca)),
                                    MakeBody(geometry::Shape::Sphere(rb), Pose(Rot(0.5, {1, 1, 0}), ca + d * e)),
                                    0.5 * (fa + fb) * e};
                  }});
  // implicit – implicit by the pair solve: the same two spheres as sphere_sphere, as implicit
  // shapes. The method's F = 2π·R_e·Q(δ), R_e = r_a r_b/(r_a + r_b) = 1.875 cm, is the small-overlap
  // limit of the closed form above: its error is first order in δ/R_e, 1.1 % here (δ/R_e = 5.3 %).
  rows.push_back(
      {"implicit_sphere_sphere", "implicit_pair", 1.2e-2, law, [](const NonlinearLawParams& l) {
         const double ra = 0.05, rb = 0.03, d = ra + rb - kDepth, n = l.exponent, k = l.stiffness;
         auto I = [&](int j) { return std::pow(kDepth, n + j) / (n + j); };
         const double fa = kPi * ra / (d * d) * k * ((ra * ra - d * d - rb * rb) * I(1) + 2 * rb * I(2) - I(3));
         const double fb = -kPi * rb / (d * d) * k * ((d * d - rb * rb + ra * ra) * I(1) - 2 * ra * I(2) + I(3));
         const Eigen::Vector3d e = Eigen::Vector3d(1, -2, 2) / 3.0, ca(0.1, 0.2, 0.3);
         auto implicit_sphere = [](double r) {
           return geometry::Shape::FromImplicit(
               std::make_shared<const geometry::ImplicitShape>(*geometry::ImplicitShape::Sphere(r)));
         };
         return PairCase{MakeBody(implicit_sphere(ra), Pose(Rot(0.2, {0, 0, 1}), ca)),
                         MakeBody(implicit_sphere(rb), Pose(Rot(0.5, {1, 1, 0}), ca + d * e)), 0.5 * (fa + fb) * e};
       }});
  // curved primitive – half-space / heightfield, sampled one way: 2 % at 5 mm for a 5 cm sphere
  // 1 mm deep. The analytic sphere against a flat heightfield (no closed form): the sphere's
  // closed form 2πR·Q(δ).
  rows.push_back({"sphere_heightfield", "sampled", 0.02, law, [](const NonlinearLawParams& l) {
                    return PairCase{
                        MakeBody(geometry::Shape::Sphere(kR), Pose(Rot(0.3, {1, 0, 0}), {0.011, -0.007, kR - kDepth})),
                        FlatHeightfield(), Eigen::Vector3d(0, 0, 2 * kPi * kR * Q(l, kDepth))};
                  }});
  // A line contact is resolved by fewer samples: a capsule (r = 2 cm, l = 5 cm) lying 1 mm deep
  // on the heightfield, rolled 0.1 rad about its axis (the sample grid's phase), linear law: the
  // closed form of the capsule_halfspace_lying row; the strip 2·√(2rδ) = 1.3 cm wide is spanned by
  // about 3 samples: 5 % at 5 mm.
  rows.push_back({"capsule_heightfield_lying", "sampled", 0.05, PressureLaw(1.0), [](const NonlinearLawParams& l) {
                    const double r = 0.02, hl = 0.05, k = l.stiffness, th0 = std::acos(1 - kDepth / r);
                    const double F = 2 * kPi * r * k * kDepth * kDepth / 2 +
                                     4 * hl * r * k * ((kDepth - r) * th0 + r * std::sin(th0));
                    return PairCase{MakeBody(geometry::Shape::Capsule(r, hl),
                                             Pose(Rot(kPi / 2, {0, 1, 0}) * Rot(0.1, {0, 0, 1}), {0, 0, r - kDepth})),
                                    FlatHeightfield(), Eigen::Vector3d(0, 0, F)};
                  }});
  // mesh – half-space: a geodesic mesh sphere of frequency 48 (edges ≈ 1.1 mm, facets up to
  // ≈ 4 µm inside the sphere) on a plane: 2 % of the analytic sphere's closed form.
  rows.push_back({"mesh_sphere_halfspace", "sampled", 0.02, law, [](const NonlinearLawParams& l) {
                    return PairCase{MeshSphere(kR, 48, Pose(Eigen::Matrix3d::Identity(), {0, 0, kR - kDepth}), 0.005),
                                    HalfSpace(RigidTransform::Identity()),
                                    Eigen::Vector3d(0, 0, 2 * kPi * kR * Q(l, kDepth))};
                  }});
  // flat faces – half-space: a box h = (0.04, 0.03, 0.02) tilted by 0.01 rad, lowest bottom edge
  // 1.5 mm deep (highest 0.7 mm): TiltedBoxForce. Bound L·δ/((n+1)·A) with L = 4(h_x + h_y) = 0.28,
  // A = 4·h_x·h_y = 0.0048, δ = 1.5e-3, n = 1.5: 0.035.
  rows.push_back({"box_halfspace_tilted", "sampled", 0.035, law, [](const NonlinearLawParams& l) {
                    const Eigen::Vector3d h(0.04, 0.03, 0.02);
                    const double th = 0.01, d_plus = 1.5e-3;
                    // Lowest bottom edge at x = −h_x: centre height h_z·cosθ + h_x·sinθ − δ+.
                    const double zc = h.z() * std::cos(th) + h.x() * std::sin(th) - d_plus;
                    return PairCase{MakeBody(geometry::Shape::Box(h), Pose(Rot(-th, {0, 1, 0}), {0, 0, zc})),
                                    HalfSpace(RigidTransform::Identity()),
                                    Eigen::Vector3d(0, 0, TiltedBoxForce(l, h, th, d_plus))};
                  }});
  // flat faces – half-space: a cylinder (r = 5 cm, l = 2 cm) standing 1 mm deep (cylinders have no
  // closed form): F = πr²·P(δ) + 2πr·Q(δ). Bound L·δ/((n+1)·A) = 2πr·δ/(2.5·πr²) = 0.016.
  rows.push_back({"cylinder_halfspace_standing", "sampled", 0.016, law, [](const NonlinearLawParams& l) {
                    const double r = 0.05, hl = 0.02;
                    return PairCase{
                        MakeBody(geometry::Shape::Cylinder(r, hl), Pose(Rot(0.4, {0, 0, 1}), {0, 0, hl - kDepth})),
                        HalfSpace(RigidTransform::Identity()),
                        Eigen::Vector3d(0, 0, kPi * r * r * P(l, kDepth) + 2 * kPi * r * Q(l, kDepth))};
                  }});
  // any other pair, sampled both ways and averaged. A sphere on a large box's top face (z = 0):
  // ∂A inside B gives 2πR·Q(δ) upward (as on a plane); ∂B inside A is the disc of the top face in
  // the sphere, depth R − ρ along the radial normal, whose vertical part (R − δ)/ρ with
  // ρ dρ = r dr gives 2π(R − δ)·Q(δ). Average: F = π(2R − δ)·Q(δ). Curved: 2 % at 5 mm.
  rows.push_back(
      {"sphere_box", "sampled", 0.02, law, [](const NonlinearLawParams& l) {
         return PairCase{
             MakeBody(geometry::Shape::Sphere(kR), Pose(Eigen::Matrix3d::Identity(), {0.003, 0.001, kR - kDepth})),
             MakeBody(geometry::Shape::Box({0.2, 0.2, 0.05}), Pose(Eigen::Matrix3d::Identity(), {0, 0, -0.05})),
             Eigen::Vector3d(0, 0, kPi * (2 * kR - kDepth) * Q(l, kDepth))};
       }});
  // A box h = (0.04, 0.03, 0.02) face down 1 mm deep into a large box, yawed and off-centre. ∂A in
  // B: A·P(δ) + L·Q(δ) (as on a plane). ∂B in A: the footprint of B's top face, δ above A's bottom
  // face; within δ of A's side walls the wall is nearer (horizontal pushes that cancel), so the
  // vertical part is P(δ)·(2h_x − 2δ)(2h_y − 2δ). F = average of the two. Flat faces: bound
  // L·δ/((n+1)·A) = 0.28·1e-3/(2.5·0.0048) = 0.023.
  rows.push_back(
      {"box_box", "sampled", 0.023, law, [](const NonlinearLawParams& l) {
         const Eigen::Vector3d h(0.04, 0.03, 0.02);
         const double A = 4 * h.x() * h.y(), L = 4 * (h.x() + h.y());
         const double inner = (2 * h.x() - 2 * kDepth) * (2 * h.y() - 2 * kDepth);
         return PairCase{
             MakeBody(geometry::Shape::Box(h), Pose(Rot(0.3, {0, 0, 1}), {0.0123, 0.0071, h.z() - kDepth})),
             MakeBody(geometry::Shape::Box({0.2, 0.2, 0.05}), Pose(Eigen::Matrix3d::Identity(), {0, 0, -0.05})),
             Eigen::Vector3d(0, 0, 0.5 * (A * P(l, kDepth) + L * Q(l, kDepth) + inner * P(l, kDepth)))};
       }});
  return rows;
}

// gtest prints the row's name instead of its bytes.
void PrintTo(const TableRow& row, std::ostream* os) { *os << row.name << " (" << row.method << ")"; }

class PairContactTableTest : public ::testing::TestWithParam<TableRow> {};

TEST_P(PairContactTableTest, MethodAndAccuracyAsTabulated) {
  const TableRow& row = GetParam();
  const PairCase c = row.make(row.law);
  const PlacedShape a = c.a.Placed(), b = c.b.Placed();
  EXPECT_EQ(std::string(PairMethod(a, b)), row.method);
  EXPECT_EQ(std::string(PairMethod(b, a)), row.method) << "the method must not depend on the order";
  const PairForce f = ComputePairForce(row.law, a, b);
  EXPECT_EQ(f.closed_form, row.method == "closed_form");
  const double err = (f.normal - c.expected).norm(), scale = c.expected.norm();
  EXPECT_LE(err, row.rel_tol * scale + 1e-12)
      << "F = " << f.normal.transpose() << ", expected " << c.expected.transpose();
  // Newton's third law: F(B, A) = −F(A, B).
  const PairForce g = ComputePairForce(row.law, b, a);
  EXPECT_LE((g.normal + f.normal).norm(), 1e-12 * (scale + 1)) << g.normal.transpose();
}

INSTANTIATE_TEST_SUITE_P(Table, PairContactTableTest, ::testing::ValuesIn(Table()),
                         [](const ::testing::TestParamInfo<TableRow>& info) { return info.param.name; });

}  // namespace
}  // namespace taxel::contact

namespace taxel::contact {
namespace {

double SphereOnHeightfieldError(double spacing) {
  const NonlinearLawParams l = PressureLaw();
  const Body s =
      MakeBody(geometry::Shape::Sphere(kR), Pose(Rot(0.3, {1, 0, 0}), {0.011, -0.007, kR - kDepth}), spacing);
  const Body h = FlatHeightfield();
  const double exact = 2 * kPi * kR * Q(l, kDepth);
  return std::abs(ComputePairForce(l, s.Placed(), h.Placed()).normal.z() / exact - 1);
}

// The analytic sphere's samples on a flat heightfield: the error falls at least as fast as
// spacing² (a factor 4 per halving; 3 allowed) down to 2.5 mm, and is within the table's 2 % at 5 mm.
// IntegratePressure against a brute-force midpoint sum of max(0, F_n(x, v)) over 2e6 cells, for
// laws whose clamped region is a narrow band (the separating case): stiff spring, strong damping.
TEST(PairContactTest, IntegratePressureMatchesABruteForceSumWhenSeparating) {
  struct Case {
    double exponent, damping, speed, depth;
  };
  for (const Case& k : {Case{1.5, 1e6, -0.1, 5e-4}, Case{1.5, 1e6, -0.1, 2e-3}, Case{1.5, 1e6, -1.0, 2e-3},
                        Case{1.0, 1e6, -0.5, 1.5e-3}, Case{2.0, 1e6, -1e-3, 8e-4}, Case{3.0, 1e3, -1e-4, 3e-3},
                        Case{1.5, 1e6, 0.3, 1e-3}}) {
    NonlinearLawParams law;
    law.stiffness = 2e9;
    law.exponent = k.exponent;
    law.damping = k.damping;
    law.damping_depth = 1e-3;
    constexpr int kCells = 2000000;
    const double h = k.depth / kCells;
    double sum = 0;
    for (int i = 0; i < kCells; ++i) sum += NormalForce(law, (i + 0.5) * h, k.speed) * h;
    const double got = IntegratePressure(law, 0, k.depth, k.speed);
    // Midpoint error ~ h²·max|p''|·depth/24 (and the kinks of the clamp: ~ h·|p'| per kink).
    EXPECT_NEAR(got, sum, 1e-6 * sum + 1e-18) << "n " << k.exponent << " v " << k.speed << " depth " << k.depth;
    EXPECT_GT(got, 0.0) << "n " << k.exponent << " v " << k.speed;
  }
}

TEST(PairContactTest, SampledSphereConvergesWithSpacing) {
  double previous = SphereOnHeightfieldError(0.02);
  for (double spacing : {0.01, 0.005, 0.0025}) {
    const double e = SphereOnHeightfieldError(spacing);
    EXPECT_LT(e, previous / 3) << "spacing " << spacing;
    if (spacing == 0.005) {
      EXPECT_LT(e, 0.02);
    }
    previous = e;
  }
}

// "A mesh sphere on a plane converges to the analytic sphere as sampling densifies": geodesic
// meshes of frequency 12, 24, 48 (edges ≈ 4.4, 2.2, 1.1 mm; at 5 mm spacing their facets are the
// samples) against the analytic sphere's closed form 2πR·Q(δ). The facets lie inside the sphere
// by up to (edge/√3)²/2R, so the error is second order in the edge: a factor ≈ 4 per doubling.
TEST(PairContactTest, MeshSphereConvergesToAnalyticSphere) {
  const NonlinearLawParams l = PressureLaw();
  const double exact = 2 * kPi * kR * Q(l, kDepth);
  const Body plane = HalfSpace(RigidTransform::Identity());
  double previous = 1;
  for (int frequency : {12, 24, 48}) {
    const Body m = MeshSphere(kR, frequency, Pose(Eigen::Matrix3d::Identity(), {0, 0, kR - kDepth}), 0.005);
    const double f = ComputePairForce(l, m.Placed(), plane.Placed()).normal.z();
    const double e = std::abs(f / exact - 1);
    EXPECT_LT(f, exact) << "facets lie inside the sphere: less depth, less force";
    EXPECT_LT(e, previous / 3) << "frequency " << frequency;
    previous = e;
  }
  EXPECT_LT(previous, 0.02);  // the table's row for meshes
}

// A mesh whose facets are the exact shape (a box of 12 triangles), tilted 0.01 rad on a plane:
// the sampling alone converges to TiltedBoxForce, second order once the spacing is below the
// 1.5 mm depth, and within the flat-face bound L·δ/((n+1)·A) = 0.035 at 5 mm.
TEST(PairContactTest, MeshBoxConvergesWithSpacing) {
  const NonlinearLawParams l = PressureLaw();
  const Eigen::Vector3d h(0.04, 0.03, 0.02);
  const double th = 0.01, d_plus = 1.5e-3;
  const double zc = h.z() * std::cos(th) + h.x() * std::sin(th) - d_plus;
  const double exact = TiltedBoxForce(l, h, th, d_plus);
  const geometry::MeshData data = geometry::SubdividedBox(h, 1);
  auto mesh = geometry::TriangleMesh::Create(data.vertices, data.triangles);
  ASSERT_TRUE(mesh.ok());
  const auto sd = geometry::MeshSignedDistance::Build(*mesh);
  const Body plane = HalfSpace(RigidTransform::Identity());
  std::vector<double> errors;
  for (double spacing : {0.01, 0.005, 0.0025, 0.00125, 0.000625}) {
    const Body m = MakeBody(geometry::Shape::FromMesh(sd), Pose(Rot(-th, {0, 1, 0}), {0, 0, zc}), spacing);
    errors.push_back(std::abs(ComputePairForce(l, m.Placed(), plane.Placed()).normal.z() / exact - 1));
  }
  for (size_t i = 1; i < errors.size(); ++i) EXPECT_LT(errors[i], errors[i - 1]) << i;
  EXPECT_LT(errors[3], errors[2] / 3);
  EXPECT_LT(errors[4], errors[3] / 3);
  EXPECT_LT(errors[1], 0.035);
  EXPECT_LT(errors[4], 5e-4);
}

// A box tilted by θ → 0 about its y axis, bottom face centre 1 mm deep: the sampled force tends to
// the face-down closed form A·P(δ) + L·Q(δ). At 1 mm spacing within 0.5 %; at 5 mm the sampling
// misses the 1 mm side bands, within the bound L·Q(δ)/(A·P(δ)) = L·δ/((n+1)·A) = 0.0233. At
// |cos θ − 1| < 1e-9 the closed form takes over, exactly.
TEST(PairContactTest, TiltedBoxApproachesFaceDownClosedForm) {
  const NonlinearLawParams l = PressureLaw();
  const Eigen::Vector3d h(0.04, 0.03, 0.02);
  const double A = 4 * h.x() * h.y(), L = 4 * (h.x() + h.y());
  const double closed = A * P(l, kDepth) + L * Q(l, kDepth);
  const Body plane = HalfSpace(RigidTransform::Identity());
  for (double spacing : {0.001, 0.005}) {
    const double tol = spacing == 0.001 ? 0.005 : L * kDepth / (2.5 * A);
    for (double th : {3e-3, 1e-3, 1e-4}) {
      const Body box = MakeBody(geometry::Shape::Box(h), Pose(Rot(-th, {0, 1, 0}), {0, 0, h.z() - kDepth}), spacing);
      EXPECT_STREQ(PairMethod(box.Placed(), plane.Placed()), "sampled");
      const double f = ComputePairForce(l, box.Placed(), plane.Placed()).normal.z();
      EXPECT_NEAR(f / closed, 1.0, tol) << "spacing " << spacing << ", tilt " << th;
    }
  }
  const Body flat = MakeBody(geometry::Shape::Box(h), Pose(Rot(-1e-6, {0, 1, 0}), {0, 0, h.z() - kDepth}));
  EXPECT_STREQ(PairMethod(flat.Placed(), plane.Placed()), "closed_form");
  EXPECT_NEAR(ComputePairForce(l, flat.Placed(), plane.Placed()).normal.z() / closed, 1.0, 1e-9);
}

TEST(PairContactTest, MethodDependsOnShapesAndOrientationOnly) {
  const Body plane = HalfSpace(RigidTransform::Identity());
  const Body hf = FlatHeightfield();
  auto method = [](const Body& a, const Body& b) { return std::string(PairMethod(a.Placed(), b.Placed())); };
  // Capsules: closed only with the axis parallel or perpendicular to the plane.
  const Body oblique = MakeBody(geometry::Shape::Capsule(0.02, 0.05), Pose(Rot(0.7, {1, 0, 0}), {0, 0, 0.03}));
  const Body nearly = MakeBody(geometry::Shape::Capsule(0.02, 0.05), Pose(Rot(1e-3, {1, 0, 0}), {0, 0, 0.06}));
  EXPECT_EQ(method(oblique, plane), "sampled");
  EXPECT_EQ(method(nearly, plane), "sampled");
  // Heightfields never have a closed form, whatever the shape.
  const Body ball = MakeBody(geometry::Shape::Sphere(kR), Pose(Eigen::Matrix3d::Identity(), {0, 0, kR - kDepth}));
  EXPECT_EQ(method(ball, hf), "sampled");
  EXPECT_EQ(method(hf, ball), "sampled");
  // Two half-spaces: nothing to sample, no force.
  EXPECT_EQ(method(plane, plane), "sampled");
  EXPECT_EQ(ComputePairForce(PressureLaw(), plane.Placed(), plane.Placed()).normal, Eigen::Vector3d::Zero());
  // Far apart, sampled pairs give exactly 0.
  const Body far = MakeBody(geometry::Shape::Box({0.1, 0.1, 0.1}), Pose(Eigen::Matrix3d::Identity(), {1, 0, 0}));
  EXPECT_EQ(method(ball, far), "sampled");
  EXPECT_EQ(ComputePairForce(PressureLaw(), ball.Placed(), far.Placed()).normal, Eigen::Vector3d::Zero());
}

// Friction opposes the slip of A relative to B with magnitude μ(s)·F_n; here s = 0.2236 m/s > v_d,
// so μ = μ_d = 0.5, in the closed form (slip at the deepest point), the sampled method (the same
// slip at every sample: the ratio is exact) and between two spheres (slip ⟂ the axis).
TEST(PairContactTest, FrictionOpposesSlip) {
  const NonlinearLawParams l = PressureLaw();
  const Eigen::Vector3d v(0.2, -0.1, 0);
  const Eigen::Vector3d expected_dir = -v.normalized();
  Body ball = MakeBody(geometry::Shape::Sphere(kR), Pose(Eigen::Matrix3d::Identity(), {0, 0, kR - kDepth}));
  ball.v_W = v;
  const Body plane = HalfSpace(RigidTransform::Identity());
  const Body hf = FlatHeightfield();
  for (const Body* partner : {&plane, &hf}) {
    const PairForce f = ComputePairForce(l, ball.Placed(), partner->Placed());
    EXPECT_GT(f.normal.z(), 0);
    EXPECT_TRUE(f.friction.isApprox(0.5 * f.normal.norm() * expected_dir, 1e-9)) << f.friction.transpose();
    // Seen from the partner: the opposite force.
    const PairForce g = ComputePairForce(l, partner->Placed(), ball.Placed());
    EXPECT_TRUE(g.friction.isApprox(-f.friction, 1e-9));
  }
  // Two spheres along e = +z, A sliding along +x relative to B: friction along −x on A.
  Body a = MakeBody(geometry::Shape::Sphere(0.05), Pose(Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero()));
  Body b = MakeBody(geometry::Shape::Sphere(0.03), Pose(Eigen::Matrix3d::Identity(), {0, 0, 0.079}));
  a.v_W = Eigen::Vector3d(0.3, 0, 0);
  const PairForce f = ComputePairForce(l, a.Placed(), b.Placed());
  EXPECT_LT(f.normal.z(), 0);  // pushed away from B
  EXPECT_TRUE(f.friction.isApprox(Eigen::Vector3d(-0.5 * f.normal.norm(), 0, 0), 1e-12)) << f.friction.transpose();
  const PairForce g = ComputePairForce(l, b.Placed(), a.Placed());
  EXPECT_TRUE(g.friction.isApprox(-f.friction, 1e-12));
}

}  // namespace
}  // namespace taxel::contact

namespace taxel::contact {
namespace {

// The implicit pair method against the sphere–sphere closed form (the primitive spheres' method,
// exact to 1e-9 by the table) at shrinking overlaps: the error is first order in δ/R_e, below
// δ/(4R_e) (R_e = r_a r_b/(r_a + r_b) = 1.875 cm), and the forces are equal and opposite.
TEST(PairContactTest, ImplicitPairApproachesTheSphereSphereClosedFormAsOverlapShrinks) {
  const NonlinearLawParams law = PressureLaw();
  const double ra = 0.05, rb = 0.03, r_eff = ra * rb / (ra + rb);
  const Eigen::Vector3d e = Eigen::Vector3d(2, 1, -2) / 3.0, ca(-0.1, 0.05, 0.2);
  auto implicit_sphere = [](double r) {
    return geometry::Shape::FromImplicit(
        std::make_shared<const geometry::ImplicitShape>(*geometry::ImplicitShape::Sphere(r)));
  };
  for (double depth : {1e-5, 1e-4, 3e-4, 1e-3, 3e-3}) {
    const RigidTransform X_WA = Pose(Rot(0.7, {1, 0, 1}), ca),
                         X_WB = Pose(Rot(-0.3, {0, 1, 1}), ca + (ra + rb - depth) * e);
    const Body pa = MakeBody(geometry::Shape::Sphere(ra), X_WA), pb = MakeBody(geometry::Shape::Sphere(rb), X_WB);
    const Body ia = MakeBody(implicit_sphere(ra), X_WA), ib = MakeBody(implicit_sphere(rb), X_WB);
    const Eigen::Vector3d exact = ComputePairForce(law, pa.Placed(), pb.Placed()).normal;
    const Eigen::Vector3d f = ComputePairForce(law, ia.Placed(), ib.Placed()).normal;
    EXPECT_LE((f - exact).norm(), 0.25 * depth / r_eff * exact.norm()) << depth;
    EXPECT_GT(f.dot(-e), 0) << "pushes A away from B";
    EXPECT_EQ(ComputePairForce(law, ib.Placed(), ia.Placed()).normal, -f);
  }
}

}  // namespace
}  // namespace taxel::contact
