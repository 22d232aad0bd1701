// Scene and probe-sensor behaviour against closed forms.
#include "core/scene/scene.h"

#include <cmath>
#include <cstring>
#include <thread>

#include "core/geometry/mesh_generators.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using sensors::Branch;
using sensors::SensorKind;
using sensors::SensorSpec;
using ::testing::HasSubstr;
using namespace taxel::testing;  // NOLINT

constexpr double kPadHalfZ = 0.005;
constexpr double kProbeR = 0.002;
constexpr double kBallR = 0.05;

// A 5×5 grid of probes (pitch 1 cm, R = 2 mm) on the top face of a box pad, and a ball.
//
//        ball (r = 5 cm), centre c = (0, 0, 0.005 + 0.05 − p)
//             .---.
//    ________/_____\________  z = 0.005  top face of the pad, probes here
//   |        pad             |
//   |________________________| z = −0.005
SceneSpec PadAndBall(int num_envs) {
  SceneSpec spec;
  spec.num_envs = num_envs;
  spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, kPadHalfZ})})}));
  spec.entities.push_back(Entity("ball", EntityKind::kObject, {Link("body", {SphereShape(kBallR)})}));
  return spec;
}

SensorSpec GridSensor(const std::string& name, SensorKind kind) {
  SensorSpec s;
  s.name = name;
  s.kind = kind;
  s.link = "pad";
  s.probe_local_pos = PlanarGrid(5, 5, 0.01, kPadHalfZ);
  s.grid_rows = 5;
  s.grid_cols = 5;
  s.probe_radius = {kProbeR};
  return s;
}

// Closed form of the probe depth against a sphere: max(0, R − (|o − c| − r)).
double SphereDepth(const Eigen::Vector3d& o, const Eigen::Vector3d& c) {
  return std::max(0.0, kProbeR - ((o - c).norm() - kBallR));
}

struct Env {
  Eigen::Vector3d pad = Eigen::Vector3d::Zero();
  Eigen::Vector3d ball = Eigen::Vector3d(0, 0, 1);
};

std::vector<double> Poses(const std::vector<Env>& envs) {
  std::vector<double> out;
  for (const auto& e : envs) {
    auto p = PosesXyzw({e.pad, e.ball});
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

class PadAndBallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto scene = Scene::Create(PadAndBall(2), meshes_);
    ASSERT_TRUE(scene.ok()) << scene.status();
    scene_ = *std::move(scene);
  }
  absl::Status Step(const std::vector<Env>& envs, double dt = 0.01) {
    poses_ = Poses(envs);
    StepInput in;
    in.poses = poses_;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = dt;
    return scene_->Step(in, pool_);
  }
  geometry::MeshStore meshes_;
  std::unique_ptr<Scene> scene_;
  std::vector<double> poses_;
  InlineExecutor pool_;
};

TEST_F(PadAndBallTest, DepthGridMatchesSphereClosedForm) {
  auto id = scene_->AddSensor(GridSensor("depth", SensorKind::kContactDepthProbe));
  ASSERT_TRUE(id.ok()) << id.status();
  const double p = 0.001;  // penetration of the ball into the pad's top face
  const Eigen::Vector3d c(0, 0, kPadHalfZ + kBallR - p);
  // Env 1: ball 1 m away; must not see env 0's ball.
  ASSERT_TRUE(Step({{Eigen::Vector3d::Zero(), c}, {Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)}}).ok());
  const sensors::Sensor* s = scene_->FindSensor(*id);
  const auto& out = s->outputs(Branch::kGroundTruth);
  const auto grid = PlanarGrid(5, 5, 0.01, kPadHalfZ);
  // The touching centre probe reads R + p.
  EXPECT_NEAR(out.depth[12], kProbeR + p, 1e-7);
  int touching = 0;
  for (int k = 0; k < 25; ++k) {
    const double expected = SphereDepth(grid[k], c);
    EXPECT_NEAR(out.depth[k], expected, 1e-7) << "probe " << k;
    if (expected > 0) {
      ++touching;
      const double d = expected;
      EXPECT_NEAR(out.area[k], M_PI * (2 * kProbeR * d - d * d), 1e-9) << k;
      const Eigen::Vector3d n = (grid[k] - c).normalized();  // out of the ball
      for (int a = 0; a < 3; ++a) EXPECT_NEAR(out.normal[3 * k + a], n[a], 1e-6);
      EXPECT_EQ(out.partner[k], 1);  // link index of ball/body
    } else {
      EXPECT_EQ(out.partner[k], -1);
      EXPECT_EQ(out.area[k], 0.f);
    }
    EXPECT_EQ(out.depth[25 + k], 0.f) << "env 1 probe " << k;
  }
  // Hand count: centre (depth 3 mm), 4 edge neighbours (|o−c| = 50.01 mm → 1.99 mm), 4
  // diagonal neighbours (51.0 mm → 1.0 mm); the ring at 2 cm is out of reach.
  EXPECT_EQ(touching, 9);
  EXPECT_NEAR(out.depth[13], kProbeR - (std::sqrt(0.01 * 0.01 + 0.049 * 0.049) - kBallR), 1e-7);
  EXPECT_NEAR(out.depth[18], kProbeR - (0.051 - kBallR), 1e-7);
}

TEST_F(PadAndBallTest, FillersAndFilteredLinksReadZero) {
  SensorSpec with_filler = GridSensor("filler", SensorKind::kContactDepthProbe);
  with_filler.probe_radius.assign(25, kProbeR);
  with_filler.probe_radius[12] = 0;  // the centre probe is a filler
  SensorSpec filtered = GridSensor("filtered", SensorKind::kContactDepthProbe);
  filtered.filter_links = {"ball/body"};
  auto a = scene_->AddSensor(with_filler);
  auto b = scene_->AddSensor(filtered);
  ASSERT_TRUE(a.ok() && b.ok());
  const Eigen::Vector3d c(0, 0, kPadHalfZ + kBallR - 0.001);
  ASSERT_TRUE(Step({{Eigen::Vector3d::Zero(), c}, {}}).ok());
  const auto& fa = scene_->FindSensor(*a)->outputs(Branch::kGroundTruth);
  const auto& fb = scene_->FindSensor(*b)->outputs(Branch::kGroundTruth);
  EXPECT_EQ(fa.depth[12], 0.f);
  EXPECT_GT(fa.depth[13], 0.f);  // its neighbours still sense
  for (int k = 0; k < 25; ++k) EXPECT_EQ(fb.depth[k], 0.f) << k;
}

TEST_F(PadAndBallTest, SchmittTriggerSequence) {
  // One probe of radius 1 mm at the pad origin, ball above it: depth = R − (z − r_ball).
  SensorSpec s;
  s.name = "touch";
  s.kind = SensorKind::kContactProbe;
  s.link = "pad";
  s.probe_local_pos = {Eigen::Vector3d::Zero()};
  s.probe_radius = {0.001};
  s.filter_links = {};
  s.contact_threshold = 1e-3;
  s.release_threshold = 5e-4;
  auto id = scene_->AddSensor(s);
  ASSERT_TRUE(id.ok()) << id.status();
  auto ball_for_depth = [](double depth) { return Eigen::Vector3d(0, 0, kBallR + 0.001 - depth); };
  // The pad's own box is the sensor link and is ignored.
  const double depths[] = {0.0, 7e-4, 1.2e-3, 7e-4, 3e-4, 1.1e-3};
  const uint8_t expected[] = {0, 0, 1, 1, 0, 1};  // off, band stays off, on, band stays on, off, on
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(Step({{Eigen::Vector3d::Zero(), ball_for_depth(depths[i])}, {}}).ok());
    const auto& out = scene_->FindSensor(*id)->outputs(Branch::kGroundTruth);
    EXPECT_EQ(out.contact[0], expected[i]) << "step " << i << " depth " << depths[i];
    EXPECT_NEAR(out.depth[0], depths[i], 1e-9);
  }
  // Reset clears the latch: in the band right after a reset the probe reads off.
  ASSERT_TRUE(scene_->Reset({}).ok());
  EXPECT_EQ(scene_->FindSensor(*id)->outputs(Branch::kGroundTruth).contact[0], 0);
  ASSERT_TRUE(Step({{Eigen::Vector3d::Zero(), ball_for_depth(7e-4)}, {}}).ok());
  EXPECT_EQ(scene_->FindSensor(*id)->outputs(Branch::kGroundTruth).contact[0], 0);
}

TEST(KinematicTaxelTest, ForceAndTorqueMatchHandCalculation) {
  // Terrain half-space z ≤ 0. The pad link sits at (0, 0, 0.001), rotated +90° about z, with
  // one probe at p_L = (0.01, 0, 0), R = 2 mm → o_W = (0, 0.01, 0.001), sd = 1 mm, pen = 1 mm.
  // Sensor twist: v = (0.1, 0, −0.05), ω = (0, 0, 2); terrain still.
  //   v_sensor(o) = v + ω × (o − origin) = (0.1, 0, −0.05) + (−0.02, 0, 0) = (0.08, 0, −0.05)
  //   v_rel = −v_sensor(o) = (−0.08, 0, 0.05); v_n = 0.05; v_t = (−0.08, 0, 0)
  //   F_W = (k_n·s + c_n·s·v_n)·n − k_t·v_t, s = pen^p
  //   ω_n = (0 − ω)·n = −2;  T_L = p_L × F_L − k_tw·ω_n·n_L
  for (double exponent : {1.0, 1.5}) {
    SceneSpec spec;
    spec.num_envs = 1;
    spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {})}));
    spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
    SensorSpec s;
    s.name = "kin";
    s.kind = SensorKind::kKinematicTaxel;
    s.link = "pad";
    s.probe_local_pos = {Eigen::Vector3d(0.01, 0, 0)};
    s.probe_radius = {0.002};
    s.spring_damper.normal_stiffness = 1000;
    s.spring_damper.normal_damping = 1;
    s.spring_damper.exponent = exponent;
    s.spring_damper.shear_damping = 1;
    s.spring_damper.twist_damping = 1;
    spec.sensors.push_back(s);
    geometry::MeshStore meshes;
    auto scene = Scene::Create(spec, meshes);
    ASSERT_TRUE(scene.ok()) << scene.status();
    const double h = std::sqrt(0.5);
    const std::vector<double> poses = {0, 0, 0.001, h, 0, 0, h};  // wxyz: 90° about z
    const std::vector<double> twists = {0.1, 0, -0.05, 0, 0, 2};
    StepInput in;
    in.poses = poses;
    in.twists = twists;
    in.quat_order = QuatOrder::kWxyz;
    in.dt = 0.01;
    InlineExecutor ex;
    ASSERT_TRUE((*scene)->Step(in, ex).ok());
    const auto& out = (*scene)->sensors()[0]->outputs(Branch::kGroundTruth);
    const double sp = std::pow(0.001, exponent);
    const double fz = 1000 * sp + 1 * sp * 0.05;
    // F_W = (0.08, 0, fz) → F_L = R^T F_W = (0, −0.08, fz).
    EXPECT_NEAR(out.force[0], 0.0, 1e-7);
    EXPECT_NEAR(out.force[1], -0.08, 1e-7);
    EXPECT_NEAR(out.force[2], fz, 1e-6);
    // p_L × F_L = (0.01, 0, 0) × (0, −0.08, fz) = (0, −0.01·fz, −0.0008); twist adds +2 about z.
    EXPECT_NEAR(out.torque[0], 0.0, 1e-7);
    EXPECT_NEAR(out.torque[1], -0.01 * fz, 1e-7);
    EXPECT_NEAR(out.torque[2], -0.0008 + 2.0, 1e-6);
  }
}

TEST(KinematicTaxelTest, TangentialSenseOfEachForceLaw) {
  // The pad (the sensor link) slides along +x at 0.1 m/s, pressed 1 mm into the still terrain
  // (probe at the link origin, R = 2 mm, link at z = 1 mm). The partner's velocity relative to the
  // sensor is v = (−0.1, 0, 0): v_n = 0, v_t = (−0.1, 0, 0). The two laws report the tangential
  // force in opposite senses, each pinned here:
  //  - SPRING_DAMPER (Genesis' convention): −k_t·v_t, the friction acting on the partner, which
  //    the sensor drags along its own motion: F = (+0.1, 0, k_n·δ) = (0.1, 0, 1) (k_t = 1, k_n = 1000).
  //  - NONLINEAR: the friction acting on the sensor, against the sensor's slip: −μ_d·F_n·x̂ with
  //    F_n = k_p·δ^1.5 = 1e5·(1e-3)^1.5 = 3.16228 N, slip 0.1 ≥ v_d → μ = μ_d = 0.5:
  //    F = (−1.58114, 0, 3.16228).
  SceneSpec spec;
  spec.num_envs = 1;
  spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  for (bool nonlinear : {false, true}) {
    SensorSpec s;
    s.name = nonlinear ? "nonlinear" : "spring_damper";
    s.kind = SensorKind::kKinematicTaxel;
    s.link = "pad";
    s.probe_local_pos = {Eigen::Vector3d::Zero()};
    s.probe_radius = {0.002};
    s.spring_damper.normal_stiffness = 1000;
    s.spring_damper.shear_damping = 1;
    if (nonlinear) s.force_law = SensorSpec::ForceLaw::kNonlinear;
    spec.sensors.push_back(s);
  }
  geometry::MeshStore meshes;
  auto scene = Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok()) << scene.status();
  const std::vector<double> poses = {0, 0, 0.001, 0, 0, 0, 1};
  const std::vector<double> twists = {0.1, 0, 0, 0, 0, 0};
  StepInput in;
  in.poses = poses;
  in.twists = twists;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  InlineExecutor ex;
  ASSERT_TRUE((*scene)->Step(in, ex).ok());
  const auto& sd = (*scene)->FindSensor("spring_damper")->outputs(Branch::kGroundTruth);
  const auto& nl = (*scene)->FindSensor("nonlinear")->outputs(Branch::kGroundTruth);
  EXPECT_NEAR(sd.force[0], 0.1, 1e-6);
  EXPECT_NEAR(sd.force[1], 0.0, 1e-9);
  EXPECT_NEAR(sd.force[2], 1.0, 1e-6);
  const double fn = 1e5 * std::pow(1e-3, 1.5);
  EXPECT_NEAR(nl.force[0], -0.5 * fn, 1e-5);
  EXPECT_NEAR(nl.force[1], 0.0, 1e-9);
  EXPECT_NEAR(nl.force[2], fn, 1e-5);
}

TEST(KinematicTaxelTest, FiniteDifferenceVelocityFeedsDamping) {
  // No twists: the pad moves down 0.5 mm per 10 ms step → v = (0, 0, −0.05) from the 2nd step.
  SceneSpec spec;
  spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  SensorSpec s;
  s.name = "kin";
  s.kind = SensorKind::kKinematicTaxel;
  s.link = "pad";
  s.probe_local_pos = {Eigen::Vector3d::Zero()};
  s.probe_radius = {0.002};
  s.spring_damper.normal_damping = 100;
  spec.sensors.push_back(s);
  geometry::MeshStore meshes;
  auto scene = Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok());
  InlineExecutor ex;
  auto step = [&](double z) {
    const std::vector<double> poses = {0, 0, z, 0, 0, 0, 1};
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE((*scene)->Step(in, ex).ok());
  };
  step(0.0015);  // pen 0.5 mm, v = 0 (first step)
  const auto& out = (*scene)->sensors()[0]->outputs(Branch::kGroundTruth);
  EXPECT_NEAR(out.force[2], 1000 * 0.0005, 1e-7);
  step(0.0010);  // pen 1 mm, v_sensor = −0.05 → v_rel·n = +0.05 (approaching)
  EXPECT_NEAR(out.force[2], 1000 * 0.001 + 100 * 0.001 * 0.05, 1e-7);
  EXPECT_NEAR(out.force[0], 0.0, 1e-9);
  ASSERT_TRUE((*scene)->Reset({}).ok());
  EXPECT_EQ(out.force[2], 0.f);
  step(0.0010);  // after reset the velocity history is gone: no damping
  EXPECT_NEAR(out.force[2], 1000 * 0.001, 1e-7);
}

// A mesh object and several envs in different poses, evaluated with 1, 2 and 8 threads.
TEST(SceneDeterminismTest, BitIdenticalAcrossThreadCounts) {
  geometry::MeshStore meshes;
  const auto sphere = geometry::GeodesicSphere(0.04, 12);
  auto added = meshes.Add(sphere.vertices, sphere.triangles);
  ASSERT_TRUE(added.ok());
  SceneSpec spec = PadAndBall(16);
  spec.entities[1].links[0].shapes = {MeshShape(added->id)};
  spec.sensors.push_back(GridSensor("kin", SensorKind::kKinematicTaxel));
  spec.sensors.push_back(GridSensor("depth", SensorKind::kContactDepthProbe));
  spec.sensors.push_back(GridSensor("touch", SensorKind::kContactProbe));
  std::vector<double> poses;
  for (int e = 0; e < 16; ++e) {
    auto p =
        PosesXyzw({Eigen::Vector3d(0.001 * e, 0, 0), Eigen::Vector3d(0.002 * e - 0.01, 0.001 * e, 0.044 - 0.0002 * e)});
    poses.insert(poses.end(), p.begin(), p.end());
  }
  std::vector<std::vector<char>> results;
  for (int threads : {1, 2, 8}) {
    auto scene = Scene::Create(spec, meshes);
    ASSERT_TRUE(scene.ok()) << scene.status();
    server::ThreadPool pool(threads);
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE((*scene)->Step(in, pool).ok());
    ASSERT_TRUE((*scene)->Step(in, pool).ok());
    std::vector<char> bytes;
    for (const auto* s : (*scene)->sensors()) {
      const auto& o = s->outputs(Branch::kGroundTruth);
      auto append = [&](const auto& v) {
        const char* b = reinterpret_cast<const char*>(v.data());
        bytes.insert(bytes.end(), b, b + v.size() * sizeof(v[0]));
      };
      append(o.force), append(o.torque), append(o.depth), append(o.normal), append(o.area), append(o.partner),
          append(o.contact);
    }
    results.push_back(std::move(bytes));
  }
  // The setup must actually produce contacts, or the comparison proves nothing.
  const auto& depth = results[0];
  ASSERT_FALSE(depth.empty());
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  auto scene = Scene::Create(spec, meshes);
  server::ThreadPool pool(2);
  StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  ASSERT_TRUE((*scene)->Step(in, pool).ok());
  int touching = 0;
  for (float d : (*scene)->FindSensor("depth")->outputs(Branch::kGroundTruth).depth) touching += d > 0;
  EXPECT_GT(touching, 16);
}

TEST(SceneDeterminismTest, ReadersOfDelayedForcesOnSeveralThreadsAgree) {
  // A kinematic taxel with a delay of one step, stepped on two threads: its measured force and
  // torque stay in the delay ring after a step. Four readers at once, two copying them out of the
  // ring (CopyMeasured) and two through outputs(), which copies the ring into the arrays for
  // everyone: all see the same numbers, the previous step's truth (the TSan build checks that
  // they synchronise).
  constexpr int kEnvs = 16;
  geometry::MeshStore meshes;
  SceneSpec spec = PadAndBall(kEnvs);
  spec.sensors.push_back(GridSensor("kin", SensorKind::kKinematicTaxel));
  spec.sensors.back().imperfections.delay = 0.01;
  auto scene = Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok()) << scene.status();
  const sensors::Sensor* kin = (*scene)->FindSensor("kin");
  server::ThreadPool pool(2);
  std::vector<float> previous_truth;
  for (int step = 0; step < 2; ++step) {
    std::vector<double> poses;
    for (int e = 0; e < kEnvs; ++e) {
      auto p = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0.001 * e, 0, kPadHalfZ + kBallR - 0.0005 - 0.0002 * step)});
      poses.insert(poses.end(), p.begin(), p.end());
    }
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE((*scene)->Step(in, pool).ok());
    if (step == 0) previous_truth = kin->outputs(Branch::kGroundTruth).force;
  }
  ASSERT_TRUE(kin->measured_in_ring());
  const size_t per_env = static_cast<size_t>(kin->num_probes()) * 3;
  std::vector<std::vector<float>> seen(4, std::vector<float>(per_env * kEnvs));
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      if (r % 2 == 0) {
        for (int e = 0; e < kEnvs; ++e) kin->CopyMeasured(e, sensors::Channel::kForce, &seen[r][e * per_env]);
      } else {
        seen[r] = kin->outputs(Branch::kMeasured).force;
      }
    });
  }
  for (auto& t : readers) t.join();
  int pressed = 0;
  for (float f : previous_truth) pressed += f != 0;
  ASSERT_GT(pressed, kEnvs) << "the setup must press probes, or the comparison proves nothing";
  for (int r = 0; r < 4; ++r) EXPECT_EQ(seen[r], previous_truth) << "reader " << r;
}

TEST(SceneMemoryTest, TheWorkersScratchIsCountedAndASteadyStepAllocatesNothing) {
  // A noisy probe radius makes the kernel take the measured radii from its worker's workspace
  // (one worker here: the inline executor), and crosstalk takes its passes from it too. The
  // workspace's first block is 64 KiB, so memory_bytes grows by at least that much on the first
  // step; the same step again reuses it and changes nothing.
  geometry::MeshStore meshes;
  SceneSpec spec = PadAndBall(4);
  SensorSpec s = GridSensor("kin", SensorKind::kKinematicTaxel);
  s.imperfections.probe_radius_noise = 0.0005;
  s.imperfections.crosstalk_sigma = 0.01;
  spec.sensors.push_back(s);
  auto scene = Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok()) << scene.status();
  InlineExecutor executor;
  std::vector<Env> envs(4);
  for (auto& e : envs) e.ball = Eigen::Vector3d(0, 0, kPadHalfZ + kBallR - 0.001);  // 1 mm into the pad
  const std::vector<double> poses = Poses(envs);
  StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  const size_t before = (*scene)->memory_bytes();
  ASSERT_TRUE((*scene)->Step(in, executor).ok());
  const size_t after_one = (*scene)->memory_bytes();
  EXPECT_GE(after_one, before + (size_t{64} << 10));
  for (int k = 0; k < 3; ++k) ASSERT_TRUE((*scene)->Step(in, executor).ok());
  EXPECT_EQ((*scene)->memory_bytes(), after_one);
}

TEST_F(PadAndBallTest, InvalidStepsAreRefusedAndChangeNothing) {
  auto id = scene_->AddSensor(GridSensor("depth", SensorKind::kContactDepthProbe));
  ASSERT_TRUE(id.ok());
  const Eigen::Vector3d c(0, 0, kPadHalfZ + kBallR - 0.001);
  ASSERT_TRUE(Step({{Eigen::Vector3d::Zero(), c}, {Eigen::Vector3d::Zero(), c}}).ok());
  const auto before = scene_->FindSensor(*id)->outputs(Branch::kGroundTruth).depth;
  const int64_t steps = scene_->step_count();

  std::vector<double> poses = Poses({{Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)}, {}});
  StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  // NaN in env 1, link 1 (the ball), x.
  poses[(1 * 2 + 1) * 7 + 0] = NAN;
  auto s = scene_->Step(in, pool_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("poses[1][1][0]"));
  poses[(1 * 2 + 1) * 7 + 0] = 0;
  // Zero quaternion on env 0, link 0.
  for (int q = 3; q < 7; ++q) poses[q] = 0;
  s = scene_->Step(in, pool_);
  EXPECT_THAT(s.message(), HasSubstr("poses[0][0]: quaternion norm"));
  poses[6] = 1;
  // Unspecified quaternion order.
  in.quat_order = QuatOrder::kUnspecified;
  // (The only check of the order on the Step path, and its one wording.)
  EXPECT_EQ(scene_->Step(in, pool_).message(), "quat_order: expected XYZW or WXYZ, got QUAT_ORDER_UNSPECIFIED");
  in.quat_order = QuatOrder::kXyzw;
  // Env id out of range and repeated.
  const std::vector<int32_t> bad_env = {0, 5};
  in.env_ids = bad_env;
  s = scene_->Step(in, pool_);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("env_ids[1]: env id 5 out of range [0, 2)"));
  const std::vector<int32_t> twice = {1, 1};
  in.env_ids = twice;
  EXPECT_THAT(scene_->Step(in, pool_).message(), HasSubstr("appears more than once"));
  in.env_ids = {};
  // Wrong size and bad dt.
  in.poses = absl::MakeConstSpan(poses).subspan(7);
  EXPECT_THAT(scene_->Step(in, pool_).message(), HasSubstr("poses: expected shape [2, 2, 7]"));
  in.poses = poses;
  in.dt = 0;
  EXPECT_THAT(scene_->Step(in, pool_).message(), HasSubstr("dt"));

  EXPECT_EQ(scene_->step_count(), steps);
  EXPECT_EQ(scene_->FindSensor(*id)->outputs(Branch::kGroundTruth).depth, before);
  // And the scene still works.
  in.dt = 0.01;
  ASSERT_TRUE(scene_->Step(in, pool_).ok());
  EXPECT_EQ(scene_->step_count(), steps + 1);
}

TEST_F(PadAndBallTest, SubsetStepLeavesOtherEnvsAlone) {
  auto id = scene_->AddSensor(GridSensor("depth", SensorKind::kContactDepthProbe));
  ASSERT_TRUE(id.ok());
  const Eigen::Vector3d c(0, 0, kPadHalfZ + kBallR - 0.001);
  ASSERT_TRUE(Step({{Eigen::Vector3d::Zero(), c}, {Eigen::Vector3d::Zero(), c}}).ok());
  // Step env 1 only, with the ball far away: env 0 keeps its reading.
  poses_ = Poses({{Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)}});
  const std::vector<int32_t> envs = {1};
  StepInput in;
  in.env_ids = envs;
  in.poses = poses_;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  ASSERT_TRUE(scene_->Step(in, pool_).ok());
  const auto& out = scene_->FindSensor(*id)->outputs(Branch::kGroundTruth);
  EXPECT_NEAR(out.depth[12], kProbeR + 0.001, 1e-7);
  EXPECT_EQ(out.depth[25 + 12], 0.f);
  // Reset env 0 only.
  const std::vector<int32_t> env0 = {0};
  ASSERT_TRUE(scene_->Reset(env0).ok());
  EXPECT_EQ(out.depth[12], 0.f);
}

TEST(SceneCreateTest, ErrorsNameTheField) {
  geometry::MeshStore meshes;
  SceneSpec spec = PadAndBall(1);
  SensorSpec s = GridSensor("depth", SensorKind::kContactDepthProbe);
  s.probe_radius = {-0.001};
  spec.sensors.push_back(s);
  auto r = Scene::Create(spec, meshes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("sensors[0].probe_radius[0]"));

  spec.sensors[0].probe_radius = {0.001};
  spec.sensors[0].link = "nope";
  r = Scene::Create(spec, meshes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("sensors[0].link: unknown link 'nope'"));

  spec.sensors.clear();
  spec.entities[1].links[0].shapes = {MeshShape("deadbeef")};
  r = Scene::Create(spec, meshes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("entities[1].links[0].shapes[0].mesh.mesh_id"));

  spec = PadAndBall(1);
  spec.entities[1].links[0].shapes[0].radius = -1;
  r = Scene::Create(spec, meshes);
  EXPECT_THAT(r.status().message(), HasSubstr("entities[1].links[0].shapes[0].sphere.radius"));

  spec = PadAndBall(0);
  EXPECT_THAT(Scene::Create(spec, meshes).status().message(), HasSubstr("num_envs"));

  spec = PadAndBall(1);
  spec.entities[1].name = "hand";
  EXPECT_THAT(Scene::Create(spec, meshes).status().message(), HasSubstr("duplicate entity name"));
}

TEST(SceneCreateTest, ObjectSlotsPerEnvAssetAndEmpty) {
  // Env 0: the default ball; env 1: a box asset; env 2: empty slot.
  geometry::MeshStore meshes;
  SceneSpec spec = PadAndBall(3);
  AssetSpec box;
  box.name = "box";
  box.link_shapes = {{BoxShape({0.05, 0.05, 0.05})}};
  spec.entities[1].assets = {box};
  spec.entities[1].env_assets = {0, 1, -1};
  SensorSpec s = GridSensor("depth", SensorKind::kContactDepthProbe);
  spec.sensors.push_back(s);
  auto scene = Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok()) << scene.status();
  // Object centre 5 cm + 5 mm − 1 mm above the pad centre in every env.
  const Eigen::Vector3d c(0.0, 0, kPadHalfZ + 0.05 - 0.001);
  std::vector<double> poses;
  for (int e = 0; e < 3; ++e) {
    auto p = PosesXyzw({Eigen::Vector3d::Zero(), c});
    poses.insert(poses.end(), p.begin(), p.end());
  }
  StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  InlineExecutor ex;
  ASSERT_TRUE((*scene)->Step(in, ex).ok());
  const auto& d = (*scene)->sensors()[0]->outputs(Branch::kGroundTruth).depth;
  // Ball: only the centre 3×3 block touches; box: its flat bottom face at z = 0.004 presses every
  // probe by R + 1 mm; empty slot: nothing.
  EXPECT_NEAR(d[0 * 25 + 12], 0.003, 1e-7);
  EXPECT_EQ(d[0 * 25 + 0], 0.f);
  for (int k = 0; k < 25; ++k) EXPECT_NEAR(d[1 * 25 + k], 0.003, 1e-7) << k;
  for (int k = 0; k < 25; ++k) EXPECT_EQ(d[2 * 25 + k], 0.f) << k;

  spec.entities[1].env_assets = {0, 2, 0};
  EXPECT_THAT(Scene::Create(spec, meshes).status().message(), HasSubstr("entities[1].env_assets[1]"));
}

TEST(SceneCreateTest, AddAndRemoveSensors) {
  geometry::MeshStore meshes;
  auto scene = Scene::Create(PadAndBall(1), meshes);
  ASSERT_TRUE(scene.ok());
  auto a = (*scene)->AddSensor(GridSensor("a", SensorKind::kContactProbe));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*scene)->AddSensor(GridSensor("a", SensorKind::kContactProbe)).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE((*scene)->RemoveSensor(*a).ok());
  EXPECT_EQ((*scene)->RemoveSensor(*a).code(), absl::StatusCode::kNotFound);
  auto b = (*scene)->AddSensor(GridSensor("a", SensorKind::kContactProbe));
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b->value(), a->value());  // ids are never reused
  SensorSpec bad = GridSensor("c", SensorKind::kContactProbe);
  bad.release_threshold = 1.0;
  EXPECT_THAT((*scene)->AddSensor(bad).status().message(), HasSubstr("release_threshold"));
}

}  // namespace
}  // namespace taxel::scene
