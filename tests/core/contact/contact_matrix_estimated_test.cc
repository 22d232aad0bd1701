// The ESTIMATED contact matrix through scene::Scene: closed forms in the right cells in world
// axes, robot/robot antisymmetry, self-pairs, friction, a standing humanoid, object slots.
#include <cmath>
#include <string>
#include <vector>

#include "Eigen/Geometry"
#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/core/contact/contact_matrix_test_util.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using ::testing::ElementsAre;
using namespace taxel::testing;              // NOLINT
using namespace taxel::scene::contact_test;  // NOLINT

// ---------------------------------------------------------------------------------------------
// ESTIMATED.

// A robot with a ball (R = 5 cm) and a box foot (h = (0.05, 0.04, 0.02)) on a half-space terrain
// whose frame is R_T, p_T (its normal n = R_T·z), and a crate far away:
//
//        ball            foot (yawed 0.6 rad about n)
//        .--.          ________
//   ~~~~~\__/~~~~~~~~~~|________|~~~~~~ terrain plane, both δ deep
//
// Closed forms: ball 2πR·Q(δ)·n (Archimedes' zones); foot face down A·P(δ) + L·Q(δ) along n with
// A = 4·h_x·h_y = 0.008 m², L = 4(h_x + h_y) = 0.36 m. Env 0: δ = 1 mm; env 1: δ = 2 mm.
void RestingOnTerrain(const Eigen::Matrix3d& R_T, const Eigen::Vector3d& p_T) {
  SCOPED_TRACE(::testing::Message() << "terrain normal " << R_T.col(2).transpose());
  const double R = 0.05;
  const Eigen::Vector3d h(0.05, 0.04, 0.02);
  SceneSpec spec;
  spec.num_envs = 2;
  spec.entities.push_back(
      Entity("bot", EntityKind::kRobot, {Link("ball", {SphereShape(R)}), Link("foot", {BoxShape(h)})}));
  spec.entities.push_back(Entity("crate", EntityKind::kObject, {Link("body", {BoxShape({0.1, 0.1, 0.1})})}));
  LinkSpec plane = Link("plane", {HalfSpaceShape()});
  plane.X_WL = {R_T, p_T};
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {plane}));
  auto scene = WithMatrix(spec, {"all"}, {"object/*", "terrain"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  ASSERT_THAT(M.row_names(), ElementsAre("ball", "foot"));
  ASSERT_THAT(M.column_names(), ElementsAre("terrain", "object/crate"));
  const Eigen::Vector3d n = R_T.col(2), t1 = R_T.col(0);
  const Eigen::Matrix3d R_foot = R_T * Eigen::AngleAxisd(0.6, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  const double depths[2] = {1e-3, 2e-3};
  std::vector<double> poses;
  for (double d : depths) {
    AppendPose(Eigen::Matrix3d::Identity(), p_T + (R - d) * n, &poses);
    AppendPose(R_foot, p_T + 0.3 * t1 + (h.z() - d) * n, &poses);
    AppendPose(Eigen::Matrix3d::Identity(), p_T + 3 * n, &poses);
  }
  server::ThreadPool pool(2);
  StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  ASSERT_TRUE((*scene)->Step(in, pool).ok());
  const double A = 4 * h.x() * h.y(), L = 4 * (h.x() + h.y());
  for (int e = 0; e < 2; ++e) {
    const double d = depths[e];
    ExpectCell(M, e, 0, 0, 2 * kPi * R * Q(d) * n);
    ExpectCell(M, e, 1, 0, (A * P(d) + L * Q(d)) * n);
    ExpectCell(M, e, 0, 1, Eigen::Vector3d::Zero());
    ExpectCell(M, e, 1, 1, Eigen::Vector3d::Zero());
  }
  // Hand numbers for the flat case, env 0: ball 2π·0.05·1e8·(1e-3)^2.5/2.5 = 0.3973835 N;
  // foot 0.008·1e8·(1e-3)^1.5 + 0.36·1e8·(1e-3)^2.5/2.5 = 25.29822 + 0.4553680 = 25.75359 N.
  if (n.isApprox(Eigen::Vector3d::UnitZ())) {
    EXPECT_NEAR(M.Normal(0, 0, 0).z(), 0.3973835, 1e-6);
    EXPECT_NEAR(M.Normal(0, 1, 0).z(), 25.75359, 1e-4);
  }
  // Lifting everything clears the cells on the next step.
  for (size_t i = 0; i < poses.size(); i += 7) poses[i + 2] += 1.0;
  if (n.isApprox(Eigen::Vector3d::UnitZ())) {
    ASSERT_TRUE((*scene)->Step(in, pool).ok());
    for (int e = 0; e < 2; ++e) ExpectCell(M, e, 1, 0, Eigen::Vector3d::Zero());
  }
}

TEST(ContactMatrixEstimatedTest, RestingBodiesGiveClosedFormsInWorldAxes) {
  RestingOnTerrain(Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
  RestingOnTerrain(Eigen::AngleAxisd(0.5, Eigen::Vector3d(1, 1, 0).normalized()).toRotationMatrix(),
                   Eigen::Vector3d(0.2, -0.1, 0.3));
}

// Two robot spheres overlapping, a third far away, everything selected both ways:
//
//   a (r_a = 5 cm) at c_a,  b (r_b = 3 cm) at c_a + d·e,  d = r_a + r_b − δ, δ = 1 mm, e = (1, −2, 2)/3
//
// On the axis of centres (ρ = distance to the other centre as variable, u its depth, P = k·u^n):
//   f_a = (π r_a/d²)·k·[(r_a² − d² − r_b²)·I1 + 2 r_b·I2 − I3]     (∂a inside b)
//   f_b = −(π r_b/d²)·k·[(d² − r_b² + r_a²)·I1 − 2 r_a·I2 + I3]    (∂b inside a)
//   I_j = δ^{n+j}/(n+j);  force on a = (f_a + f_b)/2·e (negative: pushed away from b).
Eigen::Vector3d SphereSphereForceOnA(double ra, double rb, double delta, const Eigen::Vector3d& e) {
  const double d = ra + rb - delta, n = 1.5, k = 1e8;
  auto I = [&](int j) { return std::pow(delta, n + j) / (n + j); };
  const double fa = kPi * ra / (d * d) * k * ((ra * ra - d * d - rb * rb) * I(1) + 2 * rb * I(2) - I(3));
  const double fb = -kPi * rb / (d * d) * k * ((d * d - rb * rb + ra * ra) * I(1) - 2 * ra * I(2) + I(3));
  return 0.5 * (fa + fb) * e;
}

TEST(ContactMatrixEstimatedTest, RobotRobotEntriesAreAntisymmetric) {
  SceneSpec spec;
  spec.entities.push_back(
      Entity("bot", EntityKind::kRobot,
             {Link("a", {SphereShape(0.05)}), Link("b", {SphereShape(0.03)}), Link("c", {SphereShape(0.02)})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  auto scene = WithMatrix(spec, {"all"}, {"robot/*", "terrain"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  ASSERT_THAT(M.column_names(), ElementsAre("terrain", "robot/a", "robot/b", "robot/c"));
  const Eigen::Vector3d e = Eigen::Vector3d(1, -2, 2) / 3.0, ca(0.1, 0.2, 0.3);
  const double delta = 1e-3;
  std::vector<double> poses;
  AppendPose(Eigen::Matrix3d::Identity(), ca, &poses);
  AppendPose(Eigen::AngleAxisd(0.5, Eigen::Vector3d::UnitX()).toRotationMatrix(), ca + (0.08 - delta) * e, &poses);
  AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d(2, 0, 1), &poses);
  Stepper stepper(scene->get());
  ASSERT_TRUE(stepper.Step(poses).ok());
  const Eigen::Vector3d F = SphereSphereForceOnA(0.05, 0.03, delta, e);
  EXPECT_LT(F.dot(e), 0);      // a is pushed away from b
  ExpectCell(M, 0, 0, 2, F);   // M[a, robot/b]
  ExpectCell(M, 0, 1, 1, -F);  // M[b, robot/a] = −M[a, robot/b]
  EXPECT_EQ(M.Normal(0, 0, 2), -M.Normal(0, 1, 1));
  // Self-pairs stay zero; c touches nothing; nothing touches the terrain.
  for (int r = 0; r < 3; ++r) ExpectCell(M, 0, r, r + 1, Eigen::Vector3d::Zero());
  for (int c = 0; c < 4; ++c) ExpectCell(M, 0, 2, c, Eigen::Vector3d::Zero());
  for (int r = 0; r < 3; ++r) ExpectCell(M, 0, r, 0, Eigen::Vector3d::Zero());

  // Selected one way only (a as a row, b as a column): the same cell.
  auto one_way = WithMatrix(spec, {"a"}, {"robot/b"});
  ASSERT_TRUE(one_way.ok());
  Stepper s2(one_way->get());
  ASSERT_TRUE(s2.Step(poses).ok());
  ExpectCell((*one_way)->contact_matrix()->matrix(), 0, 0, 0, F);
}

// A sphere sliding on the terrain at v = (0.2, 0.1, 0) m/s (twist given): normal 2πR·Q(δ) up,
// friction −μ·F_n·v̂ with μ = μ_d = 0.5 (s = 0.2236 m/s > v_d).
TEST(ContactMatrixEstimatedTest, FrictionMatrixOpposesSliding) {
  SceneSpec spec;
  spec.entities.push_back(Entity("bot", EntityKind::kRobot, {Link("ball", {SphereShape(0.05)})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  spec.contact_matrix.friction = true;
  auto scene = WithMatrix(spec, {"ball"}, {"terrain"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  ASSERT_TRUE(M.has_friction());
  std::vector<double> poses;
  AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, 0.05 - 1e-3), &poses);
  Stepper stepper(scene->get());
  ASSERT_TRUE(stepper.Step(poses, {0.2, 0.1, 0, 0, 0, 0}).ok());
  const double fn = 2 * kPi * 0.05 * Q(1e-3);  // 0.3973835 N
  ExpectCell(M, 0, 0, 0, {0, 0, fn});
  const Eigen::Vector3d expected = -0.5 * fn * Eigen::Vector3d(0.2, 0.1, 0).normalized();
  EXPECT_TRUE(FrictionCell(M, 0, 0, 0).isApprox(expected, 1e-5)) << FrictionCell(M, 0, 0, 0).transpose();
  // Reset zeroes the friction matrix too.
  ASSERT_TRUE((*scene)->Reset({}).ok());
  EXPECT_EQ(FrictionCell(M, 0, 0, 0), Eigen::Vector3d::Zero());
}

// A humanoid-like robot standing on the terrain, only its box feet touching (δ = 1.5 mm):
//
//          ( )         head: sphere r 0.1 at z 1.55
//      |  [   ]  |     torso: box h (0.15, 0.1, 0.25) at z 1.15; arms: vertical capsules
//      o  [   ]  o     hands: spheres r 0.05 at z 0.72
//          | |         thighs, shins: vertical capsules (r 0.06, 0.05)
//         _| |_        feet: boxes h (0.1, 0.05, 0.025), bottoms 1.5 mm below z = 0
//   ~~~~~~~~~~~~~~~~~  terrain
//
// Feet rows: (A·P(δ) + L·Q(δ)) up, A = 4·0.1·0.05 = 0.02, L = 4·0.15 = 0.6; every other row 0.
TEST(ContactMatrixEstimatedTest, HumanoidStandingLoadsOnlyItsFeet) {
  const double delta = 1.5e-3;
  const Eigen::Vector3d foot_h(0.1, 0.05, 0.025);
  struct Part {
    const char* name;
    ShapeSpec shape;
    Eigen::Vector3d p;
  };
  const std::vector<Part> parts = {
      {"torso", BoxShape({0.15, 0.1, 0.25}), {0, 0, 1.15}},
      {"head", SphereShape(0.1), {0, 0, 1.55}},
      {"arm_l", CapsuleShape(0.04, 0.15), {0, 0.22, 1.1}},
      {"hand_l", SphereShape(0.05), {0, 0.22, 0.72}},
      {"arm_r", CapsuleShape(0.04, 0.15), {0, -0.22, 1.1}},
      {"hand_r", CapsuleShape(0.03, 0.03), {0, -0.22, 0.72}},
      {"thigh_l", CapsuleShape(0.06, 0.17), {0, 0.1, 0.66}},
      {"shin_l", CapsuleShape(0.05, 0.15), {0, 0.1, 0.26}},
      {"foot_l", BoxShape(foot_h), {0.04, 0.1, foot_h.z() - delta}},
      {"thigh_r", CapsuleShape(0.06, 0.17), {0, -0.1, 0.66}},
      {"shin_r", CapsuleShape(0.05, 0.15), {0, -0.1, 0.26}},
      {"foot_r", BoxShape(foot_h), {0.04, -0.1, foot_h.z() - delta}},
  };
  std::vector<LinkSpec> links;
  std::vector<double> poses;
  for (const Part& part : parts) {
    links.push_back(Link(part.name, {part.shape}));
    AppendPose(Eigen::Matrix3d::Identity(), part.p, &poses);
  }
  SceneSpec spec;
  spec.entities.push_back(Entity("humanoid", EntityKind::kRobot, links));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  auto scene = WithMatrix(spec, {"all"}, {"terrain"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  ASSERT_EQ(M.rows(), 12);
  ASSERT_EQ(M.cols(), 1);
  Stepper stepper(scene->get());
  ASSERT_TRUE(stepper.Step(poses).ok());
  const double foot = 0.02 * P(delta) + 0.6 * Q(delta);  // 116.18950 + 2.09141 = 118.28091 N
  for (int r = 0; r < M.rows(); ++r) {
    const bool is_foot = M.row_names()[r] == "foot_l" || M.row_names()[r] == "foot_r";
    ExpectCell(M, 0, r, 0, is_foot ? Eigen::Vector3d(0, 0, foot) : Eigen::Vector3d::Zero());
  }
  EXPECT_NEAR(M.Normal(0, 8, 0).z(), 118.28091, 1e-3);
}

// Velocities from finite differences feed the damping: the ball goes from 0.5 mm to 1 mm deep in
// one 10 ms step, v_n = 0.05 m/s. With k_c = 2e5, d_max = 2 mm (a = δ/d_max = 0.5 < 1):
//   F = 2πR·[Q(δ) + k_c·v_n·d_max·(a³ − a⁴/2)]
//     = 2π·0.05·[1e8·(1e-3)^2.5/2.5 + 2e5·0.05·2e-3·(0.125 − 0.03125)]
//     = 0.3141593·[1.2649111 + 1.875] = 0.9864321 N.
// A link whose sphere sits 10 cm off its origin, spinning at ω = 2 rad/s about z: the contact
// point moves at ω × (q − origin) = (0, 0.2, 0), so friction is −μ_d·F_n·y.
TEST(ContactMatrixEstimatedTest, LinkVelocitiesAtTheContactPoint) {
  SceneSpec spec;
  spec.entities.push_back(Entity("bot", EntityKind::kRobot,
                                 {Link("ball", {SphereShape(0.05)}), Link("arm", {SphereShape(0.05, {0.1, 0, 0})})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  spec.contact_matrix.bodies = {"all"};
  spec.contact_matrix.friction = true;
  spec.contact_matrix.law = Law();
  spec.contact_matrix.law.damping = 2e5;
  spec.contact_matrix.law.damping_depth = 2e-3;
  geometry::MeshStore meshes;
  auto scene = Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  Stepper stepper(scene->get());
  auto poses = [](double ball_depth) {
    std::vector<double> p;
    AppendPose(Eigen::Matrix3d::Identity(), {0, 0, 0.05 - ball_depth}, &p);
    AppendPose(Eigen::Matrix3d::Identity(), {0.9, 0, 0.05 - 1e-3}, &p);  // arm sphere centre at x = 1.0
    return p;
  };
  ASSERT_TRUE(stepper.Step(poses(0.5e-3)).ok());
  ExpectCell(M, 0, 0, 0, {0, 0, 2 * kPi * 0.05 * Q(0.5e-3)});  // first step: no velocity yet
  ASSERT_TRUE(stepper.Step(poses(1e-3)).ok());
  ExpectCell(M, 0, 0, 0, {0, 0, 0.9864321});
  // Now with twists: the ball still, the arm spinning about its own origin.
  ASSERT_TRUE(stepper.Step(poses(1e-3), {0, 0, 0, 0, 0, 0, /*arm*/ 0, 0, 0, 0, 0, 2}).ok());
  const double fn = 2 * kPi * 0.05 * Q(1e-3);
  ExpectCell(M, 0, 0, 0, {0, 0, fn});
  ExpectCell(M, 0, 1, 0, {0, 0, fn});
  EXPECT_TRUE(FrictionCell(M, 0, 1, 0).isApprox(Eigen::Vector3d(0, -0.5 * fn, 0), 1e-5))
      << FrictionCell(M, 0, 1, 0).transpose();
  EXPECT_EQ(FrictionCell(M, 0, 0, 0), Eigen::Vector3d::Zero());
}

// Object slots as partners, through the sampled path (sphere – box, both ways, 2.5 mm): a robot
// table (box, top face z = 0) under an object slot holding the default ball (R = 5 cm) in env 0,
// nothing in env 1, and a smaller ball asset (R = 3 cm) in env 2, each δ = 1 mm deep. The force on
// the ball is π(2R − δ)·Q(δ) up (pair_contact.h: the averaged two-way integral); on the table
// the opposite. Within the table's 2 %.
TEST(ContactMatrixEstimatedTest, ObjectSlotsPerEnvAssetsAndEmptySlots) {
  SceneSpec spec;
  spec.num_envs = 3;
  spec.entities.push_back(Entity("bot", EntityKind::kRobot, {Link("table", {BoxShape({0.2, 0.2, 0.05})})}));
  EntitySpec ball = Entity("ball", EntityKind::kObject, {Link("body", {SphereShape(0.05)})});
  AssetSpec small;
  small.name = "small";
  small.link_shapes = {{SphereShape(0.03)}};
  ball.assets = {small};
  ball.env_assets = {0, -1, 1};
  spec.entities.push_back(ball);
  spec.contact_matrix.sample_spacing = 0.0025;
  auto scene = WithMatrix(spec, {"table"}, {"object/ball"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  const double radius[3] = {0.05, 0.05, 0.03}, delta = 1e-3;
  std::vector<double> poses;
  for (int e = 0; e < 3; ++e) {
    AppendPose(Eigen::Matrix3d::Identity(), {0, 0, -0.05}, &poses);
    AppendPose(Eigen::Matrix3d::Identity(), {0.003, 0.001, radius[e] - delta}, &poses);
  }
  Stepper stepper(scene->get());
  ASSERT_TRUE(stepper.Step(poses).ok());
  for (int e : {0, 2}) {
    const double expected = -kPi * (2 * radius[e] - delta) * Q(delta);
    EXPECT_NEAR(M.Normal(e, 0, 0).z(), expected, 0.02 * std::abs(expected)) << "env " << e;
    EXPECT_NEAR(M.Normal(e, 0, 0).head<2>().norm(), 0.0, 0.02 * std::abs(expected)) << "env " << e;
  }
  EXPECT_EQ(M.Normal(1, 0, 0), Eigen::Vector3f::Zero());
}

// A heightfield terrain (flat, sampled one way at the default 5 mm): a 5 cm ball 1 mm deep gets
// 2πR·Q(δ) up within the table's 2 %.
TEST(ContactMatrixEstimatedTest, HeightfieldTerrain) {
  ShapeSpec hf;
  hf.kind = geometry::ShapeKind::kHeightfield;
  hf.hf_rows = hf.hf_cols = 11;
  hf.hf_dx = hf.hf_dy = 0.05;
  hf.hf_heights.assign(121, 0.2);
  SceneSpec spec;
  spec.entities.push_back(Entity("bot", EntityKind::kRobot, {Link("ball", {SphereShape(0.05)})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("hills", {hf})}));
  auto scene = WithMatrix(spec, {"ball"}, {"terrain"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  std::vector<double> poses;
  AppendPose(Eigen::Matrix3d::Identity(), {0.01, -0.02, 0.2 + 0.05 - 1e-3}, &poses);
  Stepper stepper(scene->get());
  ASSERT_TRUE(stepper.Step(poses).ok());
  const double expected = 2 * kPi * 0.05 * Q(1e-3);
  const Eigen::Vector3f f = (*scene)->contact_matrix()->matrix().Normal(0, 0, 0);
  EXPECT_NEAR(f.z(), expected, 0.02 * expected);
  EXPECT_NEAR(f.head<2>().norm(), 0.0, 0.02 * expected);
}

}  // namespace
}  // namespace taxel::scene
