// Gradients of probe readings (ReadSpec.gradients) against central differences of full
// re-evaluations, for every shape kind, on random poses.
//
// The scene: a robot link "tip" carrying one probe Q (R = 2 mm) at p_LQ, off the link origin so
// that rotations matter, plus a filler probe (R = 0, reads 0); an object link "body" carrying the
// partner shape S at a fixed offset X_PS from its origin:
//
//        sensor link L (random pose)           partner link P (random pose)
//          origin ·──── p_LQ ───▶ ◯ Q            origin · ── X_PS ──▶ shape S
//                                   ╲  sd  (± 0.6 mm off the surface)
//                                    ●  y, a surface point in a smooth region of S, normal n
//
// Each pose is chosen by picking y and n on S (away from edges, rims and the medial axis), putting
// Q at y + sd·n and solving for the sensor link's origin. The gradient the scene reports (float32)
// is checked against
//  1. central differences (h = 1e-6 m or rad) of the depth/force recomputed in double from the
//     world poses (Shape::SignedDistance and the force law): relative error ≤ 1e-6;
//  2. central differences (h = 1e-5) of the readings of re-stepped scenes (float32 outputs):
//     relative error ≤ 2e-3, which pins the scene's plumbing (which link is which, frames).
#include <functional>
#include <random>

#include "core/contact/nonlinear_law.h"
#include "core/contact/spring_damper_law.h"
#include "core/geometry/mesh_generators.h"
#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"
#include "tests/support/test_support.h"

namespace taxel::sensors {
namespace {

using namespace taxel::testing;  // NOLINT
using Matrix3x12 = Eigen::Matrix<double, 3, 12>;

constexpr double kR = 0.002;
const Eigen::Vector3d kProbe(0.01, -0.02, 0.015);  // p_LQ

struct ShapeCase {
  std::string name;
  scene::ShapeSpec spec;  // X_LS is set by the fixture
  // A surface point y_S with outward normal n_S in a smooth region of the shape.
  std::function<void(std::mt19937&, Eigen::Vector3d*, Eigen::Vector3d*)> pick;
};

double U(std::mt19937& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
Eigen::Vector3d UnitVector(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return testing::Draw<3>(g, rng).normalized();
}
Eigen::Matrix3d RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return testing::DrawRotation(g, rng);
}

std::vector<ShapeCase> Cases() {
  std::vector<ShapeCase> c;
  scene::ShapeSpec s;
  s.kind = geometry::ShapeKind::kSphere, s.radius = 0.05;
  c.push_back({"sphere", s,
               [](std::mt19937& g, Eigen::Vector3d* y, Eigen::Vector3d* n) { *n = UnitVector(g), *y = 0.05 * *n; }});
  s = {}, s.kind = geometry::ShapeKind::kBox, s.half_extents = {0.04, 0.03, 0.02};
  c.push_back({"box_face", s, [](std::mt19937& g, Eigen::Vector3d* y, Eigen::Vector3d* n) {
                 const Eigen::Vector3d h(0.04, 0.03, 0.02);
                 const int axis = std::uniform_int_distribution<int>(0, 2)(g);
                 const double side = U(g, -1, 1) < 0 ? -1 : 1;
                 for (int a = 0; a < 3; ++a) (*y)[a] = U(g, -0.6, 0.6) * h[a];
                 (*y)[axis] = side * h[axis];
                 *n = side * Eigen::Vector3d::Unit(axis);
               }});
  s = {}, s.kind = geometry::ShapeKind::kCapsule, s.radius = 0.02, s.half_length = 0.03;
  c.push_back({"capsule", s, [](std::mt19937& g, Eigen::Vector3d* y, Eigen::Vector3d* n) {
                 if (U(g, 0, 1) < 0.5) {  // the side
                   const double t = U(g, 0, 2 * M_PI);
                   *n = Eigen::Vector3d(std::cos(t), std::sin(t), 0);
                   *y = 0.02 * *n + Eigen::Vector3d(0, 0, U(g, -0.02, 0.02));
                 } else {  // a hemispherical end, away from its seam
                   do *n = UnitVector(g);
                   while (std::abs(n->z()) < 0.3);
                   *y = 0.02 * *n + Eigen::Vector3d(0, 0, n->z() > 0 ? 0.03 : -0.03);
                 }
               }});
  s = {}, s.kind = geometry::ShapeKind::kCylinder, s.radius = 0.03, s.half_length = 0.04;
  c.push_back({"cylinder", s, [](std::mt19937& g, Eigen::Vector3d* y, Eigen::Vector3d* n) {
                 const double t = U(g, 0, 2 * M_PI);
                 if (U(g, 0, 1) < 0.6) {  // the side
                   *n = Eigen::Vector3d(std::cos(t), std::sin(t), 0);
                   *y = 0.03 * *n + Eigen::Vector3d(0, 0, U(g, -0.025, 0.025));
                 } else {  // a cap
                   const double z = U(g, -1, 1) < 0 ? -1 : 1, rho = U(g, 0, 0.018);
                   *n = Eigen::Vector3d(0, 0, z);
                   *y = Eigen::Vector3d(rho * std::cos(t), rho * std::sin(t), 0.04 * z);
                 }
               }});
  s = {}, s.kind = geometry::ShapeKind::kHalfSpace;
  c.push_back({"half_space", s, [](std::mt19937& g, Eigen::Vector3d* y, Eigen::Vector3d* n) {
                 *y = Eigen::Vector3d(U(g, -0.1, 0.1), U(g, -0.1, 0.1), 0), *n = Eigen::Vector3d::UnitZ();
               }});
  s = {}, s.kind = geometry::ShapeKind::kHeightfield;
  s.hf_rows = 6, s.hf_cols = 7, s.hf_dx = 0.02, s.hf_dy = 0.025;
  {
    std::mt19937 g(11);
    for (int i = 0; i < 42; ++i) s.hf_heights.push_back(U(g, 0, 0.003));  // gentle: 3 mm over 2 cm
  }
  c.push_back({"heightfield", s, nullptr});  // picked through the Shape (HeightAt), below
  s = {}, s.kind = geometry::ShapeKind::kMesh;
  c.push_back({"mesh", s, nullptr});  // a geodesic sphere; a face interior, below
  return c;
}

// One sensor kind's readings in double, recomputed from the world poses.
class Reference {
 public:
  Reference(const geometry::Shape& shape, const RigidTransform& X_PS, const SensorSpec& spec)
      : shape_(shape), X_PS_(X_PS), spec_(spec) {}
  // sd of the probe centre, and the normal (world).
  double Sd(const RigidTransform& X_WL, const RigidTransform& X_WP, Eigen::Vector3d* n_W,
            geometry::SignedDistanceResult* r = nullptr) const {
    const RigidTransform X_WS = X_WP * X_PS_;
    const geometry::SignedDistanceResult q = shape_.SignedDistance(X_WS.InverseApply(X_WL * kProbe));
    if (r != nullptr) *r = q;
    *n_W = X_WS.R * q.normal;
    return q.distance;
  }
  // depth, or F_L of the KinematicTaxel (v_rel: partner relative to sensor, angular velocities 0).
  Eigen::Vector3d Reading(const RigidTransform& X_WL, const RigidTransform& X_WP, const Eigen::Vector3d& v_rel) const {
    Eigen::Vector3d n;
    const double d = kR - Sd(X_WL, X_WP, &n);
    if (spec_.kind != SensorKind::kKinematicTaxel) return Eigen::Vector3d(d, 0, 0);
    const Eigen::Vector3d f = spec_.force_law == SensorSpec::ForceLaw::kNonlinear
                                  ? contact::EvaluateNonlinearLaw(spec_.nonlinear, d, n, -v_rel).force
                                  : contact::SpringDamperForce(spec_.spring_damper, d, n, v_rel);
    return X_WL.R.transpose() * f;
  }

 private:
  const geometry::Shape& shape_;
  RigidTransform X_PS_;
  const SensorSpec& spec_;
};

// X ← (exp(h·ê_k)·R, p) for k = 3..5 (rotation about the link origin) or (R, p + h·e_k).
RigidTransform Perturbed(RigidTransform X, int k, double h) {
  if (k < 3) {
    X.p[k] += h;
  } else {
    X.R = Eigen::AngleAxisd(h, Eigen::Vector3d::Unit(k - 3)).toRotationMatrix() * X.R;
  }
  return X;
}

// Central differences of `reading` over the 12 twist components (sensor 0–5, partner 6–11).
Matrix3x12 Differences(const std::function<Eigen::Vector3d(const RigidTransform&, const RigidTransform&)>& reading,
                       const RigidTransform& X_WL, const RigidTransform& X_WP, double h) {
  Matrix3x12 J;
  for (int j = 0; j < 12; ++j) {
    const bool sensor = j < 6;
    const RigidTransform Lp = sensor ? Perturbed(X_WL, j, h) : X_WL, Lm = sensor ? Perturbed(X_WL, j, -h) : X_WL;
    const RigidTransform Pp = sensor ? X_WP : Perturbed(X_WP, j - 6, h),
                         Pm = sensor ? X_WP : Perturbed(X_WP, j - 6, -h);
    J.col(j) = (reading(Lp, Pp) - reading(Lm, Pm)) / (2 * h);
  }
  return J;
}

double RelativeError(const Matrix3x12& got, const Matrix3x12& want) {
  return (got - want).cwiseAbs().maxCoeff() / std::max(want.cwiseAbs().maxCoeff(), 1e-12);
}

struct GradientParam {
  ShapeCase shape;
  SensorSpec::ForceLaw law;
  SensorKind kind;
};

class ProbeGradientTest : public ::testing::TestWithParam<GradientParam> {};

geometry::Shape ShapeOf(const scene::ShapeSpec& s, const geometry::MeshStore& meshes) {
  switch (s.kind) {
    case geometry::ShapeKind::kSphere: return *geometry::Shape::Sphere(s.radius);
    case geometry::ShapeKind::kBox: return *geometry::Shape::Box(s.half_extents);
    case geometry::ShapeKind::kCapsule: return *geometry::Shape::Capsule(s.radius, s.half_length);
    case geometry::ShapeKind::kCylinder: return *geometry::Shape::Cylinder(s.radius, s.half_length);
    case geometry::ShapeKind::kHeightfield:
      return geometry::Shape::FromHeightfield(
          *geometry::Heightfield::Create(s.hf_rows, s.hf_cols, s.hf_dx, s.hf_dy, s.hf_heights));
    case geometry::ShapeKind::kMesh: return geometry::Shape::FromMesh(*meshes.Get(s.mesh_id));
    default: return geometry::Shape::HalfSpace();
  }
}

SensorSpec SensorFor(const GradientParam& p) {
  SensorSpec s;
  s.name = "probe";
  s.kind = p.kind;
  s.link = "tip";
  s.probe_local_pos = {kProbe, Eigen::Vector3d(-0.01, 0, 0)};
  s.probe_radius = {kR, 0.0};  // probe 1 is a filler
  s.force_law = p.law;
  s.spring_damper.exponent = 1.5;  // Hertz: d² F/dd² ≠ 0
  s.spring_damper.normal_damping = 20;
  s.spring_damper.shear_damping = 3;
  // Damping 10 N·s/m: |k_c·v_n| ≤ 4 N (|v_rel| < 0.4 m/s) stays below k_p·δ^1.5 ≥ 6.4 N (δ ≥ 1.6 mm),
  // so F_n is never clamped at 0 (a kink) near the poses below.
  s.nonlinear.damping = 10;
  s.nonlinear.static_friction = 0.9;
  s.nonlinear.stiction_speed = 0.5;  // the slips below (≤ 0.3 m/s) stay in the stiction ramp
  s.nonlinear.transition_speed = 1.0;
  return s;
}

// A surface point for the shapes picked through their geometry.
void PickOn(const ShapeCase& c, const geometry::Shape& shape, std::mt19937& g, Eigen::Vector3d* y, Eigen::Vector3d* n) {
  if (c.pick) return c.pick(g, y, n);
  if (shape.kind() == geometry::ShapeKind::kHeightfield) {
    // A cell of the inner 4 × 3 and a point of one of its triangles away from its edges.
    const double fu = U(g, 0.1, 0.9), fv = U(g, 0.1, 0.9);
    if (std::abs(fu - fv) < 0.2) return PickOn(c, shape, g, y, n);
    const double x = (std::uniform_int_distribution<int>(1, 4)(g) - 3 + fu) * 0.02;
    const double yy = (std::uniform_int_distribution<int>(1, 3)(g) - 2.5 + fv) * 0.025;
    *y = Eigen::Vector3d(x, yy, shape.heightfield()->HeightAt(x, yy));
    *n = shape.SignedDistance(*y + Eigen::Vector3d(0, 0, 1e-4)).normal;
    return;
  }
  const geometry::TriangleMesh& m = shape.mesh()->mesh();
  const int t = std::uniform_int_distribution<int>(0, m.num_triangles() - 1)(g);
  Eigen::Vector3d w(U(g, 1, 2), U(g, 1, 2), U(g, 1, 2));
  w /= w.sum();
  const geometry::Triangle& tri = m.triangle(t);
  *y = w[0] * m.vertex(tri[0]) + w[1] * m.vertex(tri[1]) + w[2] * m.vertex(tri[2]);
  *n = m.face_normal(t);
}

TEST_P(ProbeGradientTest, MatchesCentralDifferencesOfFullReevaluations) {
  const GradientParam& param = GetParam();
  geometry::MeshStore meshes;
  scene::ShapeSpec partner = param.shape.spec;
  if (partner.kind == geometry::ShapeKind::kMesh) {
    geometry::MeshData ball = geometry::GeodesicSphere(0.05, 4);
    partner.mesh_id = meshes.Add(ball.vertices, ball.triangles)->id;
  }
  partner.X_LS = {Eigen::AngleAxisd(0.5, Eigen::Vector3d(1, 1, 0).normalized()).toRotationMatrix(),
                  Eigen::Vector3d(0.01, 0.02, -0.03)};
  scene::SceneSpec spec;
  spec.num_envs = 1;
  spec.entities.push_back(Entity("finger", scene::EntityKind::kRobot, {Link("tip", {SphereShape(0.001)})}));
  spec.entities.push_back(Entity("thing", scene::EntityKind::kObject, {Link("body", {partner})}));
  const SensorSpec sensor_spec = SensorFor(param);
  spec.sensors.push_back(sensor_spec);
  auto created = scene::Scene::Create(spec, meshes);
  ASSERT_TRUE(created.ok()) << created.status();
  scene::Scene& scene = **created;
  const geometry::Shape shape = ShapeOf(partner, meshes);
  const Reference ref(shape, partner.X_LS, sensor_spec);
  const bool force = param.kind == SensorKind::kKinematicTaxel;
  InlineExecutor ex;

  std::mt19937 g(1234);
  const Eigen::Vector3d v_L(0.1, -0.2, 0.05), v_P(-0.05, 0.1, 0.3);  // linear only (ω = 0)
  auto step = [&](const RigidTransform& X_WL, const RigidTransform& X_WP, bool gradients) {
    std::vector<double> poses(14);
    PoseToArray(X_WL, QuatOrder::kXyzw, &poses[0]);
    PoseToArray(X_WP, QuatOrder::kXyzw, &poses[7]);
    const std::vector<double> twists = {v_L.x(), v_L.y(), v_L.z(), 0, 0, 0, v_P.x(), v_P.y(), v_P.z(), 0, 0, 0};
    scene::StepInput in;
    in.poses = poses, in.twists = twists, in.quat_order = QuatOrder::kXyzw, in.dt = 0.01, in.gradients = gradients;
    EXPECT_TRUE(scene.Step(in, ex).ok());
    const SensorOutputs& o = scene.sensors()[0]->outputs(Branch::kGroundTruth);
    return force ? Eigen::Vector3d(o.force[0], o.force[1], o.force[2]) : Eigen::Vector3d(o.depth[0], 0, 0);
  };
  int accepted = 0;
  for (int attempt = 0; accepted < 8 && attempt < 200; ++attempt) {
    Eigen::Vector3d y, n;
    PickOn(param.shape, shape, g, &y, &n);
    const double sd = (U(g, -1, 1) < 0 ? -1 : 1) * 0.4e-3;
    const RigidTransform X_WP{RandomRotation(g), Eigen::Vector3d(U(g, -0.2, 0.2), U(g, -0.2, 0.2), U(g, -0.2, 0.2))};
    const Eigen::Vector3d o_W = (X_WP * partner.X_LS) * (y + sd * n);
    RigidTransform X_WL{RandomRotation(g), Eigen::Vector3d::Zero()};
    X_WL.p = o_W - X_WL.R * kProbe;
    // The pose is usable when y is the probe centre's closest point and the feature is a face
    // (meshes, heightfields): then the depth is smooth within the stencils.
    geometry::SignedDistanceResult r;
    Eigen::Vector3d n_W;
    ref.Sd(X_WL, X_WP, &n_W, &r);
    if ((r.closest - y).norm() > 1e-9 || std::abs(r.distance - sd) > 1e-9) continue;
    if (r.triangle >= 0 && r.feature != geometry::TriangleFeature::kFace) continue;
    // The nonlinear law's friction turns with the slip direction, fast when the slip is small
    // (curvature ~ 1/|slip|): keep |slip| ≥ 0.05 m/s so the 1e-5 stencil stays in its smooth range.
    const Eigen::Vector3d v_rel = v_P - v_L;
    if ((v_rel - v_rel.dot(n_W) * n_W).norm() < 0.05) continue;
    ++accepted;

    step(X_WL, X_WP, true);
    const SensorOutputs& o = scene.sensors()[0]->outputs(Branch::kGroundTruth);
    const int rows = force ? 3 : 1;
    const std::vector<float>& stored = force ? o.force_gradient : o.depth_gradient;
    ASSERT_EQ(stored.size(), static_cast<size_t>(2 * 12 * rows));
    Matrix3x12 got = Matrix3x12::Zero();
    for (int a = 0; a < rows; ++a) {
      for (int j = 0; j < 12; ++j) got(a, j) = stored[12 * a + j];
    }
    for (int j = 12 * rows; j < 24 * rows; ++j) EXPECT_EQ(stored[j], 0.f) << "filler probe, value " << j;

    const auto reading = [&](const RigidTransform& L, const RigidTransform& P) { return ref.Reading(L, P, v_P - v_L); };
    Matrix3x12 want = Differences(reading, X_WL, X_WP, 1e-6);
    if (!force) want.bottomRows<2>().setZero();
    EXPECT_LE(RelativeError(got, want), 1e-6) << param.shape.name << " attempt " << attempt << "\ngot\n"
                                              << got << "\nwant\n"
                                              << want;
    const auto restep = [&](const RigidTransform& L, const RigidTransform& P) { return step(L, P, false); };
    Matrix3x12 stepped = Differences(restep, X_WL, X_WP, 1e-5);
    if (!force) stepped.bottomRows<2>().setZero();
    EXPECT_LE(RelativeError(got, stepped), 2e-3) << param.shape.name << "\ngot\n" << got << "\nstepped\n" << stepped;
  }
  EXPECT_EQ(accepted, 8) << "too few poses in a smooth region of " << param.shape.name;
}

std::vector<GradientParam> Params() {
  std::vector<GradientParam> out;
  for (const ShapeCase& c : Cases()) {
    out.push_back({c, SensorSpec::ForceLaw::kSpringDamper, SensorKind::kContactDepthProbe});
    if (c.name == "sphere") out.push_back({c, SensorSpec::ForceLaw::kSpringDamper, SensorKind::kContactProbe});
    out.push_back({c, SensorSpec::ForceLaw::kSpringDamper, SensorKind::kKinematicTaxel});
    out.push_back({c, SensorSpec::ForceLaw::kNonlinear, SensorKind::kKinematicTaxel});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllShapes, ProbeGradientTest, ::testing::ValuesIn(Params()),
                         [](const ::testing::TestParamInfo<GradientParam>& info) {
                           const GradientParam& p = info.param;
                           if (p.kind == SensorKind::kContactDepthProbe) return p.shape.name + "_depth";
                           if (p.kind == SensorKind::kContactProbe) return p.shape.name + "_contact_probe";
                           return p.shape.name + (p.law == SensorSpec::ForceLaw::kNonlinear ? "_force_nonlinear"
                                                                                            : "_force_spring_damper");
                         });

// The gradient buffer: allocated by the first step that asks (reserved from the budget, refused
// when it does not fit, changing nothing), written only by steps that ask, zeroed by Reset.
TEST(ProbeGradientBufferTest, AllocatedOnDemandReservedAndReset) {
  scene::SceneSpec spec = PadAndBallSpec("s", 2, 3);  // "kin": 3 × 3 KinematicTaxels on z = 5 mm
  geometry::MeshStore meshes;
  auto created = scene::Scene::Create(spec, meshes);
  ASSERT_TRUE(created.ok()) << created.status();
  scene::Scene& scene = **created;
  InlineExecutor ex;
  // Both envs: the ball (r = 5 cm) centred at z = 5.4 cm, 1 mm into the pad's top face.
  const std::vector<double> poses = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0.054, 0, 0, 0, 1,
                                     0, 0, 0, 0, 0, 0, 1, 0, 0, 0.054, 0, 0, 0, 1};
  scene::StepInput in;
  in.poses = poses, in.quat_order = QuatOrder::kXyzw, in.dt = 0.01;
  ASSERT_TRUE(scene.Step(in, ex).ok());
  const SensorOutputs& o = scene.sensors()[0]->outputs(Branch::kGroundTruth);
  EXPECT_TRUE(o.force_gradient.empty());  // never asked: nothing allocated
  // 2 envs × 9 probes × 36 floats = 2592 B: a budget of 2000 B refuses, naming the field.
  in.gradients = true;
  FixedMemoryBudget small(2000);
  const absl::Status refused = scene.Step(in, ex, nullptr, small);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.message()), ::testing::HasSubstr("read.gradients"));
  EXPECT_TRUE(o.force_gradient.empty());
  EXPECT_EQ(scene.step_count(), 1);
  FixedMemoryBudget enough(2592);
  ASSERT_TRUE(scene.Step(in, ex, nullptr, enough).ok());
  ASSERT_EQ(o.force_gradient.size(), 2u * 9 * 36);
  // Centre probe (4): n = −z (out of the ball, down), velocities 0 (same poses), so F = k_n·d·n
  // and ∂F/∂t_ball = k_n·n·nᵀ + k_n·d·∂n/∂t_ball with ∂n/∂t_ball = −H = −(I − nnᵀ)/|o − c|, whose
  // zz entry is 0: ∂F_z/∂t_ball,z = k_n = 1000 N/m. Index: probe 4, component z, partner, t_z.
  const size_t dFz_dtz = 36 * 4 + 12 * 2 + 6 + 2;
  EXPECT_NEAR(o.force_gradient[dFz_dtz], 1000.0, 1e-3);
  ASSERT_TRUE(scene.Reset(std::vector<int32_t>{1}).ok());
  for (int j = 0; j < 9 * 36; ++j) ASSERT_EQ(o.force_gradient[9 * 36 + j], 0.f) << j;
  EXPECT_NEAR(o.force_gradient[dFz_dtz], 1000.0, 1e-3);  // env 0 kept
}

}  // namespace
}  // namespace taxel::sensors
