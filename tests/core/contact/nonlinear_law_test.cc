// The nonlinear contact law (docs/reference.md#contact-laws) against hand-computed tables, its validation, and the
// KinematicTaxel that uses it as a force law.
#include "core/contact/nonlinear_law.h"

#include <cmath>
#include <limits>

#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::contact {
namespace {

using ::testing::HasSubstr;

// k_p 1e5, n 1.5, k_c 100, d_max 1 mm; μ_s 0.5, μ_d 0.3, v_s 1 cm/s, v_d 5 cm/s.
NonlinearLawParams TableParams() {
  NonlinearLawParams p;
  p.stiffness = 1e5;
  p.exponent = 1.5;
  p.damping = 100;
  p.damping_depth = 1e-3;
  p.static_friction = 0.5;
  p.dynamic_friction = 0.3;
  p.stiction_speed = 0.01;
  p.transition_speed = 0.05;
  return p;
}

TEST(NonlinearLawTest, NormalForceHandTable) {
  const NonlinearLawParams p = TableParams();
  // δ = 2.5e-4, v_n = 1:
  //   spring  k_p·δ^1.5 = 1e5 · 3.952847075e-6 = 0.3952847075
  //   a = δ/d_max = 0.25, S = a²(3 − 2a) = 0.0625 · 2.5 = 0.15625
  //   damping k_c·S·v_n = 100 · 0.15625 · 1 = 15.625          F_n = 16.0202847075 N
  EXPECT_NEAR(NormalForce(p, 2.5e-4, 1.0), 16.0202847075, 1e-9);
  // δ = 5e-4, v_n = −0.2 (separating): spring 1e5 · 1.118034e-5 = 1.118034; a = 0.5, S = 0.5;
  // damping 100 · 0.5 · (−0.2) = −10 → the sum is negative and clamps to 0 (no adhesion).
  EXPECT_EQ(NormalForce(p, 5e-4, -0.2), 0.0);
  // Same depth, at rest: the spring alone, 1.118033989.
  EXPECT_NEAR(NormalForce(p, 5e-4, 0.0), 1.1180339887, 1e-9);
  // Beyond d_max the ramp is saturated: δ = 2 mm, v_n = 0.5 → 1e5·(2e-3)^1.5 + 100·0.5
  //   = 8.94427191 + 50 = 58.94427191.
  EXPECT_NEAR(NormalForce(p, 2e-3, 0.5), 58.94427191, 1e-7);
  // No contact: 0 whatever the speed.
  EXPECT_EQ(NormalForce(p, 0.0, 5.0), 0.0);
  EXPECT_EQ(NormalForce(p, -1e-3, 5.0), 0.0);
  // n = 1: the linear spring, k_p·δ = 1e5 · 2.5e-4 = 25.
  NonlinearLawParams linear = p;
  linear.exponent = 1.0;
  EXPECT_NEAR(NormalForce(linear, 2.5e-4, 0.0), 25.0, 1e-12);
  // S itself: S(0) = 0, S(0.5) = 0.5, S(1) = 1, clipped outside [0, 1].
  EXPECT_EQ(SmoothStep(-1), 0.0);
  EXPECT_EQ(SmoothStep(0.5), 0.5);
  EXPECT_EQ(SmoothStep(3), 1.0);
}

TEST(NonlinearLawTest, FrictionCoefficientHandTable) {
  const NonlinearLawParams p = TableParams();
  // s = 0.005 ≤ v_s: u = 0.5, μ = 0.5·(1.5 − 0.125)/2 = 0.34375.
  EXPECT_NEAR(FrictionCoefficient(p, 0.005), 0.34375, 1e-15);
  // s = 0.02: w = (0.02 − 0.01)/0.04 = 0.25, w²(3 − 2w) = 0.15625, μ = 0.5 − 0.2·0.15625 = 0.46875.
  EXPECT_NEAR(FrictionCoefficient(p, 0.02), 0.46875, 1e-15);
  // s ≥ v_d: μ_d.
  EXPECT_EQ(FrictionCoefficient(p, 0.1), 0.3);
  EXPECT_EQ(FrictionCoefficient(p, 0.0), 0.0);
  // Continuous at v_s (μ_s on both sides) and at v_d (μ_d on both sides).
  const double eps = 1e-9;
  EXPECT_NEAR(FrictionCoefficient(p, 0.01 - eps), 0.5, 1e-8);
  EXPECT_NEAR(FrictionCoefficient(p, 0.01 + eps), 0.5, 1e-8);
  EXPECT_NEAR(FrictionCoefficient(p, 0.05 - eps), 0.3, 1e-8);
  EXPECT_NEAR(FrictionCoefficient(p, 0.05 + eps), 0.3, 1e-8);
  // μ_s defaults to μ_d: at v_s the curve reaches μ_d and stays there.
  NonlinearLawParams d = p;
  d.static_friction.reset();
  EXPECT_NEAR(FrictionCoefficient(d, 0.01), 0.3, 1e-15);
  EXPECT_NEAR(FrictionCoefficient(d, 0.03), 0.3, 1e-15);
  // And below v_s it is μ_d·(3u − u³)/2: u = 0.5 → 0.3 · 0.6875 = 0.20625.
  EXPECT_NEAR(FrictionCoefficient(d, 0.005), 0.20625, 1e-15);
}

TEST(NonlinearLawTest, EvaluateFrictionOpposesSlip) {
  const NonlinearLawParams p = TableParams();
  // Body moving at v = (0.012, −0.016, −1) relative to the partner, normal +z (pushes the body
  // up, out of the partner): v_n = −v·n = 1, slip (0.012, −0.016, 0) with |s| = 0.02 → μ = 0.46875.
  // δ = 2.5e-4 → F_n = 16.0202847075 (table above); friction = −μ·F_n·ŝ, ŝ = (0.6, −0.8, 0).
  const Eigen::Vector3d n(0, 0, 1), v(0.012, -0.016, -1);
  const ContactScratch c = EvaluateNonlinearLaw(p, 2.5e-4, n, v);
  const double fn = NormalForce(p, 2.5e-4, 1.0), mu = 0.46875;  // 16.0202847075 (table above)
  EXPECT_NEAR(c.penetration, 2.5e-4, 0);
  EXPECT_NEAR(c.closing_speed, 1.0, 1e-15);
  EXPECT_TRUE(c.slip.isApprox(Eigen::Vector3d(0.012, -0.016, 0), 1e-14));
  EXPECT_NEAR(c.friction_coefficient, mu, 1e-14);
  EXPECT_NEAR(c.normal_force, 16.0202847075, 1e-9);
  EXPECT_TRUE(c.friction.isApprox(Eigen::Vector3d(-0.6, 0.8, 0) * mu * fn, 1e-12)) << c.friction.transpose();
  EXPECT_NEAR(c.friction.norm(), mu * c.normal_force, 1e-12);
  EXPECT_LT(c.friction.dot(c.slip), 0);  // against the slip
  EXPECT_TRUE(c.force.isApprox(fn * n + c.friction, 1e-14));
  // Any normal direction: the same contact rotated so that n = (0, 1, 0) gives the rotated force.
  const Eigen::Vector3d n2(0, 1, 0), v2(0.016, -1, 0.012);  // slip (0.016, 0, 0.012), |s| = 0.02
  const ContactScratch c2 = EvaluateNonlinearLaw(p, 2.5e-4, n2, v2);
  EXPECT_TRUE(c2.force.isApprox(Eigen::Vector3d(-0.8 * mu * fn, fn, -0.6 * mu * fn), 1e-12)) << c2.force.transpose();
  // No normal force (separating), no friction.
  const ContactScratch sep = EvaluateNonlinearLaw(p, 5e-4, n, Eigen::Vector3d(0.1, 0, 0.2));
  EXPECT_EQ(sep.normal_force, 0.0);
  EXPECT_EQ(sep.friction, Eigen::Vector3d::Zero());
  // No slip, no friction (and no NaN from normalising a zero vector).
  const ContactScratch still = EvaluateNonlinearLaw(p, 2.5e-4, n, Eigen::Vector3d(0, 0, -1));
  EXPECT_EQ(still.friction, Eigen::Vector3d::Zero());
  EXPECT_NEAR(still.force.z(), fn, 1e-9);
}

TEST(NonlinearLawTest, ValidationNamesTheField) {
  EXPECT_TRUE(ValidateNonlinearLaw(TableParams(), "law").ok());
  EXPECT_TRUE(ValidateNonlinearLaw(NonlinearLawParams(), "law").ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* what;
    void (*edit)(NonlinearLawParams*, double nan, double inf);
    const char* message;
  };
  const Case cases[] = {
      {"k_p < 0", [](NonlinearLawParams* p, double, double) { p->stiffness = -1; }, "law.stiffness"},
      {"k_p NaN", [](NonlinearLawParams* p, double nan, double) { p->stiffness = nan; }, "law.stiffness"},
      {"k_p inf", [](NonlinearLawParams* p, double, double inf) { p->stiffness = inf; }, "law.stiffness"},
      {"n = 0", [](NonlinearLawParams* p, double, double) { p->exponent = 0; }, "law.exponent"},
      {"n < 0", [](NonlinearLawParams* p, double, double) { p->exponent = -1.5; }, "law.exponent"},
      {"n NaN", [](NonlinearLawParams* p, double nan, double) { p->exponent = nan; }, "law.exponent"},
      {"k_c < 0", [](NonlinearLawParams* p, double, double) { p->damping = -0.1; }, "law.damping"},
      {"k_c NaN", [](NonlinearLawParams* p, double nan, double) { p->damping = nan; }, "law.damping"},
      {"d_max = 0", [](NonlinearLawParams* p, double, double) { p->damping_depth = 0; }, "law.damping_depth"},
      {"d_max < 0", [](NonlinearLawParams* p, double, double) { p->damping_depth = -1e-3; }, "law.damping_depth"},
      {"μ_s < 0", [](NonlinearLawParams* p, double, double) { p->static_friction = -0.1; }, "law.static_friction"},
      {"μ_s NaN", [](NonlinearLawParams* p, double nan, double) { p->static_friction = nan; }, "law.static_friction"},
      {"μ_d < 0", [](NonlinearLawParams* p, double, double) { p->dynamic_friction = -0.1; }, "law.dynamic_friction"},
      {"μ_d NaN", [](NonlinearLawParams* p, double nan, double) { p->dynamic_friction = nan; }, "law.dynamic_friction"},
      {"v_s = 0", [](NonlinearLawParams* p, double, double) { p->stiction_speed = 0; }, "law.stiction_speed"},
      {"v_s < 0", [](NonlinearLawParams* p, double, double) { p->stiction_speed = -0.01; }, "law.stiction_speed"},
      {"v_s NaN", [](NonlinearLawParams* p, double nan, double) { p->stiction_speed = nan; }, "law.stiction_speed"},
      {"v_s = v_d", [](NonlinearLawParams* p, double, double) { p->transition_speed = p->stiction_speed; },
       "law.transition_speed"},
      {"v_s > v_d", [](NonlinearLawParams* p, double, double) { p->transition_speed = 0.005; }, "law.transition_speed"},
      {"v_d NaN", [](NonlinearLawParams* p, double nan, double) { p->transition_speed = nan; }, "law.transition_speed"},
      {"v_d inf", [](NonlinearLawParams* p, double, double inf) { p->transition_speed = inf; }, "law.transition_speed"},
  };
  for (const Case& c : cases) {
    NonlinearLawParams p = TableParams();
    c.edit(&p, nan, inf);
    const absl::Status s = ValidateNonlinearLaw(p, "law");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.what;
  }
  // The message states the rule and the value.
  NonlinearLawParams p = TableParams();
  p.exponent = -2;
  EXPECT_THAT(ValidateNonlinearLaw(p, "x").message(), HasSubstr("x.exponent: expected a finite value > 0, got -2"));
  // Zero stiffness, damping and friction are allowed (k_p ≥ 0, k_c ≥ 0, μ ≥ 0).
  p = TableParams();
  p.stiffness = 0, p.damping = 0, p.dynamic_friction = 0, p.static_friction = 0;
  EXPECT_TRUE(ValidateNonlinearLaw(p, "law").ok());
}

// KinematicTaxel with force_law kNonlinear, through a Scene.
//
//        probe o = (0.01, 0, 0.00175), R = 2 mm, pad moving at v = (0.03, 0, −1)
//           ( o )
//   ~~~~~~~~~~~~~~~~~~~~~~~ z = 0, terrain half-space z ≤ 0 (still)
//
// sd = 1.75 mm → δ = R − sd = 2.5e-4 m. Sensor relative to the terrain: v = (0.03, 0, −1),
// n = +z → v_n = 1, slip (0.03, 0, 0), s = 0.03: w = (0.03 − 0.01)/0.04 = 0.5,
// w²(3 − 2w) = 0.5, μ = 0.5 − 0.2·0.5 = 0.4. F_n = 16.0202847075 (table above).
// F = (−0.4·F_n, 0, F_n) = (−6.408113883, 0, 16.0202847075) (friction against the sensor's slip,
// −x). Link frame = world (identity pose). T = p_L × F = (0.01, 0, 0) × F = (0, −0.01·F_n, 0),
// no spin so no twist term.
TEST(NonlinearLawTest, KinematicTaxelUsesTheLaw) {
  using namespace taxel::testing;  // NOLINT
  scene::SceneSpec spec;
  spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot, {Link("pad", {})}));
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  sensors::SensorSpec s;
  s.name = "kin";
  s.kind = sensors::SensorKind::kKinematicTaxel;
  s.link = "pad";
  s.probe_local_pos = {Eigen::Vector3d(0.01, 0, 0)};
  s.probe_radius = {0.002};
  s.force_law = sensors::SensorSpec::ForceLaw::kNonlinear;
  s.nonlinear = TableParams();
  spec.sensors.push_back(s);
  geometry::MeshStore meshes;
  auto scene = scene::Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok()) << scene.status();
  const std::vector<double> poses = {0, 0, 0.00175, 0, 0, 0, 1};
  const std::vector<double> twists = {0.03, 0, -1, 0, 0, 0};
  scene::StepInput in;
  in.poses = poses;
  in.twists = twists;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  InlineExecutor ex;
  ASSERT_TRUE((*scene)->Step(in, ex).ok());
  const auto& out = (*scene)->sensors()[0]->outputs(sensors::Branch::kGroundTruth);
  const double fn = 16.0202847075;
  EXPECT_NEAR(out.force[0], -0.4 * fn, 1e-5);
  EXPECT_NEAR(out.force[1], 0.0, 1e-7);
  EXPECT_NEAR(out.force[2], fn, 1e-5);
  EXPECT_NEAR(out.torque[0], 0.0, 1e-7);
  EXPECT_NEAR(out.torque[1], -0.01 * fn, 1e-6);
  EXPECT_NEAR(out.torque[2], 0.0, 1e-7);

  // Moving the other way flips the friction: v = (−0.03, 0, −1) → F_x = +0.4·F_n.
  const std::vector<double> back = {-0.03, 0, -1, 0, 0, 0};
  in.twists = back;
  ASSERT_TRUE((*scene)->Step(in, ex).ok());
  EXPECT_NEAR(out.force[0], 0.4 * fn, 1e-5);
  EXPECT_NEAR(out.force[2], fn, 1e-5);

  // An invalid law is refused at scene creation, naming the sensor's field.
  spec.sensors[0].nonlinear.exponent = 0;
  auto bad = scene::Scene::Create(spec, meshes);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("sensors[0].kinematic_taxel.nonlinear_law.exponent"));
}

}  // namespace
}  // namespace taxel::contact
