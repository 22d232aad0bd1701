// The measured branch through the scene: hysteresis, gains, dead taxels, the measured Schmitt
// trigger, history and delay, crosstalk no-ops and blur, the dt check on jitter, determinism.
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using sensors::Branch;
using sensors::Channel;
using sensors::Sensor;
using sensors::SensorKind;
using sensors::SensorSpec;
using ::testing::HasSubstr;
using namespace taxel::testing;  // NOLINT

constexpr double kTop = 0.005;    // top face of the pad (probes sit here)
constexpr double kR = 0.002;      // probe radius
constexpr double kBallR = 0.05;   // ball radius
constexpr double kSlabHZ = 0.01;  // slab half height

// A pad (box, the sensor link), a ball and a wide slab, each object parked far away unless placed.
//
//          ball (r = 5 cm)           slab (10 × 10 × 2 cm)
//             .---.               ______________________
//    ________/_____\________     |______________________|  bottom face at kTop − p: every
//   |        pad            |  z = kTop                       probe reads R + p
//   |_______________________|  z = −kTop
struct Placement {
  Eigen::Vector3d ball = Eigen::Vector3d(0, 0, 1);
  Eigen::Vector3d slab = Eigen::Vector3d(0, 0, 2);
};
// The ball centred over (x, y), pressing p into the top face; the slab pressing p everywhere.
Placement Ball(double p, double x = 0, double y = 0) { return {Eigen::Vector3d(x, y, kTop + kBallR - p)}; }
Placement Slab(double p) {
  Placement pl;
  pl.slab = Eigen::Vector3d(0, 0, kTop + kSlabHZ - p);
  return pl;
}

class Rig {
 public:
  explicit Rig(int num_envs, uint64_t seed = 1) {
    SceneSpec spec;
    spec.num_envs = num_envs;
    spec.seed = seed;
    spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, kTop})})}));
    spec.entities.push_back(Entity("ball", EntityKind::kObject, {Link("body", {SphereShape(kBallR)})}));
    spec.entities.push_back(Entity("slab", EntityKind::kObject, {Link("body", {BoxShape({0.05, 0.05, kSlabHZ})})}));
    auto scene = Scene::Create(spec, meshes_);
    EXPECT_TRUE(scene.ok()) << scene.status();
    scene_ = *std::move(scene);
  }
  const Sensor* Add(const SensorSpec& s) {
    auto id = scene_->AddSensor(s);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? scene_->FindSensor(*id) : nullptr;
  }
  absl::Status Step(const std::vector<Placement>& envs, double dt = 0.01, Executor* ex = nullptr) {
    poses_.clear();
    for (const Placement& e : envs) {
      const auto p = PosesXyzw({Eigen::Vector3d::Zero(), e.ball, e.slab});
      poses_.insert(poses_.end(), p.begin(), p.end());
    }
    StepInput in;
    in.poses = poses_;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = dt;
    return scene_->Step(in, ex != nullptr ? *ex : inline_);
  }
  Scene& scene() { return *scene_; }

 private:
  geometry::MeshStore meshes_;
  std::unique_ptr<Scene> scene_;
  std::vector<double> poses_;
  InlineExecutor inline_;
};

SensorSpec OneProbe(const std::string& name, SensorKind kind) {
  SensorSpec s;
  s.name = name;
  s.kind = kind;
  s.link = "pad";
  s.probe_local_pos = {Eigen::Vector3d(0, 0, kTop)};
  s.probe_radius = {kR};
  return s;
}

// 5 × 5 grid, pitch 1 cm, on the top face.
SensorSpec GridSensor(const std::string& name, SensorKind kind) {
  SensorSpec s = OneProbe(name, kind);
  s.probe_local_pos = PlanarGrid(5, 5, 0.01, kTop);
  s.grid_rows = s.grid_cols = 5;
  return s;
}

TEST(MeasuredBranchTest, HysteresisOnTheDepthAndAfterReset) {
  // Ball pressing p = 1 mm from the first step: D = R + p = 3 mm. dt/τ = 0.2, s = 0.5:
  //   measured 1.5·D, then D·(1 + 0.5·e^{−0.2 i}) for i = 1..4; ground truth D throughout.
  Rig rig(1);
  SensorSpec s = OneProbe("depth", SensorKind::kContactDepthProbe);
  s.imperfections.hysteresis_strength = 0.5;
  s.imperfections.hysteresis_tau = 0.05;
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  const double D = kR + 0.001;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i <= 4; ++i) {
      ASSERT_TRUE(rig.Step({Ball(0.001)}).ok());
      const double expected = i == 0 ? 1.5 * D : D * (1 + 0.5 * std::exp(-0.2 * i));
      EXPECT_NEAR(sensor->outputs(Branch::kMeasured).depth[0], expected, 1e-8) << "round " << round << " i " << i;
      EXPECT_NEAR(sensor->outputs(Branch::kGroundTruth).depth[0], D, 1e-8);
    }
    // Reset clears ξ: the first contact step after it reads 1.5·D again.
    ASSERT_TRUE(rig.scene().Reset({}).ok());
    EXPECT_EQ(sensor->outputs(Branch::kMeasured).depth[0], 0.f);
  }
}

TEST(MeasuredBranchTest, RadiusNoiseIsUniformAndReachesPastTheNominalRadius) {
  // R_m = R + U(−1, 1)·σ_R, σ_R = 1 mm. Probe "deep": the slab presses 1 mm (depth ≥ 1 mm for
  // any R_m ≥ 1 mm), so measured − truth = R_m − R exactly: inside [−σ, σ], mean 0 (standard error
  // σ/√(3·400) = 2.9e-5), variance σ²/3 (relative standard error √(0.8/400) = 4.5%).
  // Probe "near": the ball's surface is 2.5 mm from its centre: truth reads 0, the measured branch
  // reads R_m − 2.5 mm whenever R_m > 2.5 mm (probability ¼) — the broad phase must look that far.
  Rig rig(1);
  SensorSpec deep = GridSensor("deep", SensorKind::kContactDepthProbe);
  deep.imperfections.probe_radius_noise = 0.001;
  SensorSpec near = OneProbe("near", SensorKind::kContactDepthProbe);
  near.probe_local_pos = {Eigen::Vector3d(0.2, 0, kTop)};
  near.imperfections.probe_radius_noise = 0.001;
  const Sensor* d = rig.Add(deep);
  const Sensor* n = rig.Add(near);
  ASSERT_TRUE(d != nullptr && n != nullptr);
  Placement pl = Slab(0.001);
  pl.ball = Eigen::Vector3d(0.2, 0, kTop + kBallR + 0.0025);
  double sum = 0, sum2 = 0;
  int count = 0, near_hits = 0;
  const int steps = 16;
  for (int i = 0; i < steps; ++i) {
    ASSERT_TRUE(rig.Step({pl}).ok());
    for (int k = 0; k < 25; ++k) {
      const double diff = double(d->outputs(Branch::kMeasured).depth[k]) - d->outputs(Branch::kGroundTruth).depth[k];
      EXPECT_LE(std::abs(diff), 0.001 + 1e-8);
      sum += diff, sum2 += diff * diff, ++count;
    }
    EXPECT_EQ(n->outputs(Branch::kGroundTruth).depth[0], 0.f);
    const float m = n->outputs(Branch::kMeasured).depth[0];
    EXPECT_GE(m, 0.f);
    EXPECT_LE(m, 0.0005 + 1e-8);
    near_hits += m > 0;
  }
  const double mean = sum / count, var = sum2 / count - mean * mean;
  EXPECT_NEAR(mean, 0.0, 5 * 0.001 / std::sqrt(3.0 * count));
  EXPECT_NEAR(var, 1e-6 / 3, 0.25 * 1e-6 / 3);
  EXPECT_GT(near_hits, 0);  // expected 4 of 16; P(0) = 0.75^16 = 1%, and the seed is fixed
  EXPECT_LT(near_hits, steps);
}

TEST(MeasuredBranchTest, GainsAreDrawnPerEnvInTheirRangeAndRedrawnAtEachReset) {
  const int envs = 8, n = 25;
  Rig rig(envs, /*seed=*/11);
  SensorSpec s = GridSensor("depth", SensorKind::kContactDepthProbe);
  s.imperfections.probe_gain_resample_range = {{0.5, 1.5}};
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  const std::vector<Placement> pressed(envs, Slab(0.001));  // every probe reads R + 1 mm
  auto ratios = [&] {
    std::vector<double> r;
    const auto& m = sensor->outputs(Branch::kMeasured).depth;
    const auto& t = sensor->outputs(Branch::kGroundTruth).depth;
    for (int i = 0; i < envs * n; ++i) {
      EXPECT_NEAR(t[i], kR + 0.001, 1e-8) << i;
      r.push_back(double(m[i]) / t[i]);
    }
    return r;
  };
  std::vector<std::vector<double>> draws;
  for (int reset = 0; reset < 3; ++reset) {
    if (reset > 0) {
      ASSERT_TRUE(rig.scene().Reset({}).ok());
    }
    ASSERT_TRUE(rig.Step(pressed).ok());
    draws.push_back(ratios());
    const auto& r = draws.back();
    double lo = 2, hi = 0;
    for (int i = 0; i < envs * n; ++i) {
      EXPECT_GE(r[i], 0.5 - 1e-6) << i;
      EXPECT_LE(r[i], 1.5 + 1e-6) << i;
    }
    for (int e = 0; e < envs; ++e) lo = std::min(lo, r[e * n]), hi = std::max(hi, r[e * n]);
    EXPECT_GT(hi - lo, 0.1) << "probe 0 has (nearly) the same gain in every env";
    // Steady between resets: a second step keeps the gains.
    ASSERT_TRUE(rig.Step(pressed).ok());
    EXPECT_EQ(ratios(), r);
  }
  int same01 = 0, same12 = 0;
  for (int i = 0; i < envs * n; ++i) same01 += draws[0][i] == draws[1][i], same12 += draws[1][i] == draws[2][i];
  EXPECT_EQ(same01, 0);
  EXPECT_EQ(same12, 0);
}

TEST(MeasuredBranchTest, FixedPerProbeGainsScaleTheReading) {
  Rig rig(1);
  SensorSpec s = GridSensor("depth", SensorKind::kContactDepthProbe);
  s.imperfections.probe_gain.clear();
  for (int k = 0; k < 25; ++k) s.imperfections.probe_gain.push_back(0.5 + 0.25 * k);  // exact binary fractions
  const Sensor* sensor = rig.Add(s);
  ASSERT_TRUE(rig.Step({Slab(0.001)}).ok());
  for (int k = 0; k < 25; ++k) {
    EXPECT_NEAR(sensor->outputs(Branch::kMeasured).depth[k], (0.5 + 0.25 * k) * (kR + 0.001), 1e-9) << k;
  }
}

// A sensor with more probes than one task takes is evaluated over several tasks per env: its raw
// measured values persist until the pipeline runs after all kernels. Every probe of a slab-pressed
// flat list reads gain·(R + p) (exact binary-fraction gains).
TEST(MeasuredBranchTest, ASensorSplitOverTasksGetsItsMeasuredBranchToo) {
  Rig rig(2);
  SensorSpec s = OneProbe("depth", SensorKind::kContactDepthProbe);
  const int n = Sensor::kProbesPerTask + 77;
  s.probe_local_pos.clear();
  for (int k = 0; k < n; ++k) {
    s.probe_local_pos.emplace_back(-0.02 + 0.04 * (k % 40) / 39.0, -0.02 + 0.04 * (k / 40) / 28.0, kTop);
    s.imperfections.probe_gain.push_back(0.5 + 0.25 * (k % 4));
  }
  s.imperfections.probe_gain.erase(s.imperfections.probe_gain.begin());  // drop the default 1.0
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  server::ThreadPool pool(2);
  ASSERT_TRUE(rig.Step({Slab(0.001), Slab(0.0005)}, 0.01, &pool).ok());
  for (int e = 0; e < 2; ++e) {
    const double depth = kR + (e == 0 ? 0.001 : 0.0005);
    for (int k = 0; k < n; ++k) {
      ASSERT_NEAR(sensor->outputs(Branch::kMeasured).depth[e * n + k], (0.5 + 0.25 * (k % 4)) * depth, 1e-9)
          << "env " << e << " probe " << k;
    }
  }
}

TEST(MeasuredBranchTest, DeadTaxelsReadConstantsInTheirRangeRedrawnAtReset) {
  const int envs = 4, n = 25;
  Rig rig(envs, 3);
  SensorSpec s = GridSensor("kin", SensorKind::kKinematicTaxel);
  s.imperfections.dead_taxel_probability = 1;
  s.imperfections.dead_taxel_value_range = {2.0, 3.0};
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  auto measured = [&] {
    std::vector<float> v = sensor->outputs(Branch::kMeasured).force;
    const auto& t = sensor->outputs(Branch::kMeasured).torque;
    v.insert(v.end(), t.begin(), t.end());
    return v;
  };
  std::vector<std::vector<float>> draws;
  for (int reset = 0; reset < 3; ++reset) {
    if (reset > 0) {
      ASSERT_TRUE(rig.scene().Reset({}).ok());
    }
    ASSERT_TRUE(rig.Step(std::vector<Placement>(envs, Slab(0.001))).ok());
    const std::vector<float> v = measured();
    ASSERT_EQ(v.size(), static_cast<size_t>(envs * n * 6));
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_GE(v[i], 2.f) << i;
      EXPECT_LE(v[i], 3.f) << i;
    }
    // Every channel has its own draw (no two channels of probe 0 equal) and the readings do not
    // follow the contact: a step with nothing touching reads the same.
    EXPECT_NE(v[0], v[1]);
    EXPECT_NE(v[0], v[envs * n * 3]);
    EXPECT_LT(sensor->outputs(Branch::kGroundTruth).force[2], 0.f);  // pushes the pad down (−z)
    ASSERT_TRUE(rig.Step(std::vector<Placement>(envs, Placement{})).ok());
    EXPECT_EQ(measured(), v);
    draws.push_back(v);
  }
  int same01 = 0, same12 = 0;
  for (size_t i = 0; i < draws[0].size(); ++i) {
    same01 += draws[0][i] == draws[1][i];
    same12 += draws[1][i] == draws[2][i];
  }
  EXPECT_EQ(same01, 0);
  EXPECT_EQ(same12, 0);
}

TEST(MeasuredBranchTest, SomeDeadTaxelsInEveryWordOfTheMaskTheRestReadTheTruth) {
  // 12 × 12 probes (pitch 4 mm): 144 probes, so the dead mask spans three 64-bit words. With
  // probability 1/2 the dead count is Binomial(144, 1/2): mean 72, sd 6. Every other stage is
  // off, so a live probe reads its ground truth bit for bit, and a dead one a constant in
  // [2, 3] that does not follow the slab's depth.
  const int n = 144;
  Rig rig(1, 11);
  SensorSpec s = GridSensor("kin", SensorKind::kKinematicTaxel);
  s.probe_local_pos = PlanarGrid(12, 12, 0.004, kTop);
  s.grid_rows = s.grid_cols = 12;
  s.imperfections.dead_taxel_probability = 0.5;
  s.imperfections.dead_taxel_value_range = {2.0, 3.0};
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  std::vector<float> first;
  for (double p : {0.001, 0.0015}) {
    ASSERT_TRUE(rig.Step({Slab(p)}).ok());
    const auto& truth = sensor->outputs(Branch::kGroundTruth).force;
    const auto& measured = sensor->outputs(Branch::kMeasured).force;
    ASSERT_EQ(measured.size(), static_cast<size_t>(3 * n));
    int dead_in_word[3] = {0, 0, 0}, live_in_word[3] = {0, 0, 0};
    for (int k = 0; k < n; ++k) {
      ASSERT_LT(truth[3 * k + 2], 0.f) << "probe " << k << " is not pressed";
      const bool dead = measured[3 * k + 2] >= 2.f;
      if (dead) {
        ++dead_in_word[k / 64];
        for (int a = 0; a < 3; ++a) {
          EXPECT_LE(measured[3 * k + a], 3.f) << k;
          if (!first.empty()) {
            EXPECT_EQ(measured[3 * k + a], first[3 * k + a]) << "dead probe " << k << " moved";
          }
        }
      } else {
        ++live_in_word[k / 64];
        for (int a = 0; a < 3; ++a) EXPECT_EQ(measured[3 * k + a], truth[3 * k + a]) << "live probe " << k;
      }
    }
    const int dead = dead_in_word[0] + dead_in_word[1] + dead_in_word[2];
    EXPECT_GE(dead, 72 - 30);
    EXPECT_LE(dead, 72 + 30);
    for (int w = 0; w < 3; ++w) {
      EXPECT_GT(dead_in_word[w], 0) << "word " << w;
      EXPECT_GT(live_in_word[w], 0) << "word " << w;
    }
    first = measured;
  }
}

TEST(MeasuredBranchTest, OutOfReachKinematicProbesReadGainTimesZero) {
  // Probe 0 under the ball, probe 1 far from everything. Gain −2 and no other stage: probe 0's
  // measured force is −2 × its true force (exact in float: a power of two), probe 1's is
  // −2 × (+0) = −0 in every component, the same as for a probe whose law runs.
  Rig rig(1);
  SensorSpec s = OneProbe("kin", SensorKind::kKinematicTaxel);
  s.probe_local_pos = {Eigen::Vector3d(0, 0, kTop), Eigen::Vector3d(0.025, 0.025, kTop)};
  s.imperfections.probe_gain = {-2.0};
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  ASSERT_TRUE(rig.Step({Ball(0.001)}).ok());
  const auto& truth = sensor->outputs(Branch::kGroundTruth);
  const auto& measured = sensor->outputs(Branch::kMeasured);
  ASSERT_LT(truth.force[2], 0.f);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(measured.force[a], -2 * truth.force[a]) << a;
    EXPECT_EQ(truth.force[3 + a], 0.f);
    EXPECT_EQ(truth.torque[3 + a], 0.f);
    EXPECT_EQ(measured.force[3 + a], 0.f);
    EXPECT_TRUE(std::signbit(measured.force[3 + a])) << "force " << a;
    EXPECT_TRUE(std::signbit(measured.torque[3 + a])) << "torque " << a;
  }
}

TEST(MeasuredBranchTest, SameSeedSameDrawsWithOneAndTwoThreads) {
  auto run = [](int threads, uint64_t seed) {
    const int envs = 6;
    Rig rig(envs, seed);
    SensorSpec depth = GridSensor("depth", SensorKind::kContactDepthProbe);
    SensorSpec kin = GridSensor("kin", SensorKind::kKinematicTaxel);
    for (SensorSpec* s : {&depth, &kin}) {
      auto& im = s->imperfections;
      im.probe_radius_noise = 2e-4;
      im.probe_gain_resample_range = {{0.8, 1.2}};
      im.crosstalk_strength = 0.3;
      im.crosstalk_sigma = 0.01;
      im.hysteresis_strength = 0.2, im.hysteresis_tau = 0.05;
      im.random_walk = 1e-4, im.noise = 1e-4, im.bias = 1e-5, im.resolution = 1e-5;
      im.dead_taxel_probability = 0.2, im.dead_taxel_value_range = {-1.0, 1.0};
      im.delay = 0.02, im.jitter = 0.01;
    }
    rig.Add(depth);
    rig.Add(kin);
    server::ThreadPool pool(threads);
    std::vector<char> bytes;
    auto append = [&](const auto& v) {
      const char* b = reinterpret_cast<const char*>(v.data());
      bytes.insert(bytes.end(), b, b + v.size() * sizeof(v[0]));
    };
    for (int step = 0; step < 8; ++step) {
      if (step == 5) {
        EXPECT_TRUE(rig.scene().Reset(std::vector<int32_t>{1, 4}).ok());
      }
      std::vector<Placement> pl;
      for (int e = 0; e < envs; ++e) pl.push_back(Ball(0.0005 + 0.0002 * e + 0.0001 * step, 0.002 * e, -0.001 * step));
      EXPECT_TRUE(rig.Step(pl, 0.01, &pool).ok());
      for (const Sensor* s : rig.scene().sensors()) {
        const auto& o = s->outputs(Branch::kMeasured);
        append(o.depth), append(o.area), append(o.force), append(o.torque);
      }
    }
    return bytes;
  };
  const auto one = run(1, 5), two = run(2, 5), other_seed = run(2, 6);
  ASSERT_FALSE(one.empty());
  EXPECT_TRUE(one == two) << "measured branch depends on the thread count";
  EXPECT_FALSE(one == other_seed) << "the seed does not key the draws";
}

TEST(MeasuredBranchTest, SchmittTriggerUsesTheMeasuredDepthAndItsReleaseBand) {
  // Gain 2: measured depth = 2 × true depth. On at ≥ 1 mm, off below 0.5 mm.
  //   true depth   0     0.4   0.6   0.4   0.2   0.55   (mm)
  //   measured     0     0.8   1.2   0.8   0.4   1.1
  //   measured on  0     0     1     1     0     1      (band keeps the state)
  //   truth on     0     0     0     0     0     0
  Rig rig(1);
  SensorSpec s = OneProbe("touch", SensorKind::kContactProbe);
  s.probe_radius = {0.001};
  s.contact_threshold = 1e-3;
  s.release_threshold = 5e-4;
  s.imperfections.probe_gain = {2.0};
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  auto ball_for_depth = [](double d) { return Placement{Eigen::Vector3d(0, 0, kTop + kBallR + 0.001 - d)}; };
  const double depths[] = {0.0, 4e-4, 6e-4, 4e-4, 2e-4, 5.5e-4};
  const uint8_t expected[] = {0, 0, 1, 1, 0, 1};
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(rig.Step({ball_for_depth(depths[i])}).ok());
    EXPECT_EQ(sensor->outputs(Branch::kMeasured).contact[0], expected[i]) << "step " << i;
    EXPECT_NEAR(sensor->outputs(Branch::kMeasured).depth[0], 2 * depths[i], 1e-9) << "step " << i;
    EXPECT_EQ(sensor->outputs(Branch::kGroundTruth).contact[0], 0) << "step " << i;
  }
  // Reset clears the measured latch: inside the band right after it, the probe reads off.
  ASSERT_TRUE(rig.scene().Reset({}).ok());
  ASSERT_TRUE(rig.Step({ball_for_depth(4e-4)}).ok());
  EXPECT_EQ(sensor->outputs(Branch::kMeasured).contact[0], 0);
}

TEST(MeasuredBranchTest, HistoryIsNewestFirstZeroFilledAndNotDelayed) {
  Rig rig(1);
  SensorSpec s = OneProbe("depth", SensorKind::kContactDepthProbe);
  s.imperfections.history_length = 3;
  s.imperfections.delay = 0.02;  // 2 steps at dt = 0.01
  SensorSpec k = OneProbe("kin", SensorKind::kKinematicTaxel);
  k.probe_local_pos = {Eigen::Vector3d(0.004, 0.001, kTop)};  // off-centre: torque ≠ 0
  k.imperfections.history_length = 2;
  const Sensor* depth = rig.Add(s);
  const Sensor* kin = rig.Add(k);
  ASSERT_TRUE(depth != nullptr && kin != nullptr);
  const double p[] = {0.0002, 0.0005, 0.0009, 0.0012};
  std::vector<float> truth;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(rig.Step({Ball(p[i])}).ok());
    truth.push_back(depth->outputs(Branch::kGroundTruth).depth[0]);
    EXPECT_NEAR(truth.back(), kR + p[i], 1e-8);
    // Delayed read: 0, 0, x1, x2.
    EXPECT_EQ(depth->outputs(Branch::kMeasured).depth[0], i < 2 ? 0.f : truth[i - 2]) << "step " << i;
    for (int h = 0; h < 3; ++h) {
      float v = -1;
      depth->CopyHistory(0, h, Channel::kDepth, &v);
      EXPECT_EQ(v, h <= i ? truth[i - h] : 0.f) << "step " << i << " history " << h;
    }
  }
  // Force and torque histories come from their own channels.
  float f[3], t[3];
  kin->CopyHistory(0, 0, Channel::kForce, f);
  kin->CopyHistory(0, 0, Channel::kTorque, t);
  const auto& out = kin->outputs(Branch::kGroundTruth);
  ASSERT_LT(out.force[2], 0.f);
  ASSERT_NE(out.torque[0], 0.f);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(f[a], out.force[a]);
    EXPECT_EQ(t[a], out.torque[a]);
  }
}

TEST(MeasuredBranchTest, WithoutJitterTheDelayIsRoundDelayOverDtStepsZeroIncluded) {
  // The slab pressing p_k = k·0.1 mm at step k = 1..8: the truth reads D_k = R + p_k. A delay of
  // d steps reads D_{k−age} (0 before the first sample), age = round(d) half away from zero:
  //   delay 0.0025 s = 0.25 steps → age 0 (the current sample, not the previous one);
  //   0.006 s = 0.6 → 1;  0.015 s = 1.5 → 2;  0.02 s = 2 → 2.
  const struct {
    double delay;
    int age;
  } cases[] = {{0.0025, 0}, {0.006, 1}, {0.015, 2}, {0.02, 2}};
  for (const auto& c : cases) {
    Rig rig(1);
    SensorSpec s = OneProbe("depth", SensorKind::kContactDepthProbe);
    s.imperfections.delay = c.delay;
    const Sensor* depth = rig.Add(s);
    ASSERT_NE(depth, nullptr);
    std::vector<float> truth;
    for (int k = 1; k <= 8; ++k) {
      ASSERT_TRUE(rig.Step({Slab(1e-4 * k)}, 0.01).ok());
      truth.push_back(depth->outputs(Branch::kGroundTruth).depth[0]);
      ASSERT_NEAR(truth.back(), kR + 1e-4 * k, 1e-8);
      const int i = k - 1;  // index of this step's sample
      EXPECT_EQ(depth->outputs(Branch::kMeasured).depth[0], i >= c.age ? truth[i - c.age] : 0.f)
          << "delay " << c.delay << " step " << k;
    }
  }
}

TEST(MeasuredBranchTest, DelayedForceAndTorqueAreReadFromTheRingAndMaterialisedOnDemand) {
  // A kinematic taxel with a delay of 2 steps (dt = 0.01 s) and no other imperfection: its measured
  // force and torque at step k are the truth's of step k − 2, bit for bit (0 before the first
  // sample). After a step they stay in the delay ring; CopyMeasured reads them there, and the
  // first outputs(kMeasured) copies them into the arrays. Three envs, each pressed differently.
  // The step is then taken for env 0 only, with dt halved, which grows the ring (0.02 / 0.005 + 1
  // = 5 slots instead of 3): envs 1 and 2 keep their readings. A reset of env 2 reads 0.
  const int kEnvs = 3;
  Rig rig(kEnvs);
  SensorSpec k = OneProbe("kin", SensorKind::kKinematicTaxel);
  k.probe_local_pos = {Eigen::Vector3d(0.004, 0.001, kTop)};  // off-centre: torque ≠ 0
  k.imperfections.delay = 0.02;
  const Sensor* kin = rig.Add(k);
  ASSERT_NE(kin, nullptr);
  // truth[k][e]: force then torque of env e after step k.
  std::vector<std::vector<std::array<float, 6>>> truth;
  auto copy = [&](int e, Channel c) {
    std::array<float, 3> v{-1, -1, -1};
    kin->CopyMeasured(e, c, v.data());
    return v;
  };
  for (int step = 0; step < 5; ++step) {
    std::vector<Placement> pl;
    for (int e = 0; e < kEnvs; ++e) pl.push_back(Ball(0.0002 + 0.0001 * e + 0.0002 * step, 0.001 * e));
    ASSERT_TRUE(rig.Step(pl).ok());
    const auto& t = kin->outputs(Branch::kGroundTruth);
    auto& now = truth.emplace_back(kEnvs);
    for (int e = 0; e < kEnvs; ++e) {
      for (int a = 0; a < 3; ++a) now[e][a] = t.force[e * 3 + a], now[e][3 + a] = t.torque[e * 3 + a];
      ASSERT_LT(now[e][2], 0.f) << "env " << e << " in contact";
      ASSERT_NE(now[e][3], 0.f);
    }
    EXPECT_EQ(kin->measured_in_ring(), step >= 2) << "step " << step << ": before that the reading is 0";
    {
      // Into a destination of any alignment (a response buffer): one byte in.
      char buffer[1 + 3 * sizeof(float)];
      kin->CopyMeasured(1, Channel::kTorque, buffer + 1);
      float t[3];
      std::memcpy(t, buffer + 1, sizeof(t));
      for (int a = 0; a < 3; ++a) EXPECT_EQ(t[a], step >= 2 ? truth[step - 2][1][3 + a] : 0.f);
    }
    for (int e = 0; e < kEnvs; ++e) {
      const auto f = copy(e, Channel::kForce), tq = copy(e, Channel::kTorque);
      for (int a = 0; a < 3; ++a) {
        EXPECT_EQ(f[a], step >= 2 ? truth[step - 2][e][a] : 0.f) << "step " << step << " env " << e;
        EXPECT_EQ(tq[a], step >= 2 ? truth[step - 2][e][3 + a] : 0.f) << "step " << step << " env " << e;
      }
    }
    const auto& m = kin->outputs(Branch::kMeasured);  // materialises
    EXPECT_FALSE(kin->measured_in_ring());
    for (int e = 0; e < kEnvs; ++e) {
      for (int a = 0; a < 3; ++a) {
        EXPECT_EQ(m.force[e * 3 + a], step >= 2 ? truth[step - 2][e][a] : 0.f);
        EXPECT_EQ(m.torque[e * 3 + a], step >= 2 ? truth[step - 2][e][3 + a] : 0.f);
      }
    }
  }
  // Env 0 alone with dt = 0.005 s, which grows the ring (the readings of envs 1 and 2 must be
  // copied out of the old ring first: read from its freed memory, they would often still look
  // right here, but the ASan build reports the use after free).
  const std::vector<int32_t> only0 = {0};
  std::vector<double> poses = PosesXyzw({Eigen::Vector3d::Zero(), Ball(0.0003).ball, Placement().slab});
  StepInput in;
  in.env_ids = only0;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.005;
  // Leave the readings in the ring before the growth: a fresh step with dt = 0.01 for all first.
  std::vector<Placement> pl;
  for (int e = 0; e < kEnvs; ++e) pl.push_back(Ball(0.0003 + 0.0001 * e, 0.001 * e));
  ASSERT_TRUE(rig.Step(pl).ok());  // step index 5: reads step 3's truth
  ASSERT_TRUE(kin->measured_in_ring());
  InlineExecutor inline_executor;
  ASSERT_TRUE(rig.scene().Step(in, inline_executor).ok());  // step index 6 of env 0
  for (int e = 1; e < kEnvs; ++e) {
    const auto f = copy(e, Channel::kForce), tq = copy(e, Channel::kTorque);
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(f[a], truth[3][e][a]) << "env " << e << " was not stepped: it keeps its reading";
      EXPECT_EQ(tq[a], truth[3][e][3 + a]) << "env " << e;
    }
  }
  // Env 2 reset: it reads 0; env 1 keeps its reading, in the ring or the arrays.
  ASSERT_TRUE(rig.scene().Reset(std::vector<int32_t>{2}).ok());
  const auto f1 = copy(1, Channel::kForce), f2 = copy(2, Channel::kForce);
  const auto& m = kin->outputs(Branch::kMeasured);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(f2[a], 0.f);
    EXPECT_EQ(m.force[6 + a], 0.f);
    EXPECT_EQ(f1[a], truth[3][1][a]);
    EXPECT_EQ(m.force[3 + a], truth[3][1][a]);
  }
}

TEST(MeasuredBranchTest, JitteredAgeIsRoundedProbabilisticallyAroundTheDelay) {
  // delay = jitter = 0.005 s at dt = 0.01 s: d = 0.5 + U(−0.5, 0.5) ∈ [0, 1) steps, and the age is
  // 1 with probability d (else 0): P(age = 1) = E[d] = 1/2. The slab alternates between two depths
  // so that each reading tells the age apart. 400 steps: the fraction of age 1 has a standard
  // deviation of 0.025; accept [0.4, 0.6]. Every reading is one of the two newest samples.
  Rig rig(1);
  SensorSpec s = OneProbe("depth", SensorKind::kContactDepthProbe);
  s.imperfections.delay = 0.005;
  s.imperfections.jitter = 0.005;
  const Sensor* depth = rig.Add(s);
  ASSERT_NE(depth, nullptr);
  float previous = 0;
  int age1 = 0, age0 = 0;
  const int kSteps = 400;
  for (int k = 0; k < kSteps; ++k) {
    ASSERT_TRUE(rig.Step({Slab(k % 2 == 0 ? 2e-4 : 5e-4)}, 0.01).ok());
    const float now = depth->outputs(Branch::kGroundTruth).depth[0];
    const float read = depth->outputs(Branch::kMeasured).depth[0];
    ASSERT_NE(now, previous);
    if (read == now) {
      ++age0;
    } else {
      ASSERT_EQ(read, previous) << "step " << k;
      ++age1;
    }
    previous = now;
  }
  EXPECT_EQ(age0 + age1, kSteps);
  EXPECT_GT(age1, 0.4 * kSteps);
  EXPECT_LT(age1, 0.6 * kSteps);
}

TEST(MeasuredBranchTest, JitterAboveDtIsRefusedByStep) {
  Rig rig(1);
  SensorSpec s = OneProbe("depth", SensorKind::kContactDepthProbe);
  s.imperfections.delay = 0.03;
  s.imperfections.jitter = 0.015;
  ASSERT_NE(rig.Add(s), nullptr);
  const absl::Status st = rig.Step({Ball(0.001)}, 0.01);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("dt: sensor 'depth' has a jitter of 0.015 s, which must not exceed dt (0.01 s)"));
  EXPECT_EQ(rig.scene().step_count(), 0);
  EXPECT_TRUE(rig.Step({Ball(0.001)}, 0.02).ok());
  // And jitter > delay is refused when the sensor is added.
  s.name = "other";
  s.imperfections.jitter = 0.04;
  auto id = rig.scene().AddSensor(s);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), HasSubstr("sensor.imperfections.jitter: expected jitter <= delay"));
}

TEST(MeasuredBranchTest, CrosstalkThatChangesNothingLeavesTheTruthBitForBit) {
  // Active pipelines (any() is true) whose stages change nothing: strength 0 (with a σ and a
  // history), and an identity kernel, on tilted probe normals so that the normal/tangential
  // split would round. The ball is off-centre and moving, so force and torque have every component.
  Rig rig(1);
  std::vector<const Sensor*> sensors;
  for (SensorKind kind : {SensorKind::kKinematicTaxel, SensorKind::kContactDepthProbe}) {
    const std::string base = kind == SensorKind::kKinematicTaxel ? "kin" : "depth";
    SensorSpec zero = GridSensor(base + "_zero", kind);
    zero.probe_local_normal = {Eigen::Vector3d(0.2, -0.3, 1.0)};
    zero.imperfections.crosstalk_sigma = 0.01;
    zero.imperfections.history_length = 1;
    SensorSpec identity = zero;
    identity.name = base + "_identity";
    identity.imperfections.crosstalk_kernel = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    identity.imperfections.crosstalk_kernel_layers = 1;
    identity.imperfections.crosstalk_kernel_rows = identity.imperfections.crosstalk_kernel_cols = 3;
    identity.imperfections.crosstalk_border = sensors::CrosstalkBorder::kRenormalize;
    sensors.push_back(rig.Add(zero));
    sensors.push_back(rig.Add(identity));
  }
  ASSERT_TRUE(rig.Step({Ball(0.0015, 0.004, 0.003)}).ok());
  ASSERT_TRUE(rig.Step({Ball(0.0016, 0.006, 0.001)}).ok());
  for (const Sensor* s : sensors) {
    ASSERT_NE(s, nullptr);
    const auto& m = s->outputs(Branch::kMeasured);
    const auto& t = s->outputs(Branch::kGroundTruth);
    ASSERT_NE(&m, &t);
    auto same = [](const auto& a, const auto& b) {
      return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
    };
    EXPECT_TRUE(same(m.force, t.force)) << s->spec().name;
    EXPECT_TRUE(same(m.torque, t.torque)) << s->spec().name;
    EXPECT_TRUE(same(m.depth, t.depth)) << s->spec().name;
    EXPECT_TRUE(same(m.area, t.area)) << s->spec().name;
  }
  const auto& f = sensors[0]->outputs(Branch::kGroundTruth).force;
  EXPECT_NE(f[12 * 3 + 0], 0.f);
  EXPECT_NE(f[12 * 3 + 1], 0.f);
}

TEST(MeasuredBranchTest, GaussianBlurLowersThePeakAndSpreadsToTheCorners) {
  // Ball pressing 1 mm over the centre: only the centre 3 × 3 block touches. Blur σ = pitch.
  Rig rig(1);
  SensorSpec s = GridSensor("depth", SensorKind::kContactDepthProbe);
  s.imperfections.crosstalk_strength = 0.8;
  s.imperfections.crosstalk_sigma = 0.01;
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  ASSERT_TRUE(rig.Step({Ball(0.001)}).ok());
  const auto& t = sensor->outputs(Branch::kGroundTruth).depth;
  const auto& m = sensor->outputs(Branch::kMeasured).depth;
  EXPECT_NEAR(t[12], kR + 0.001, 1e-8);
  EXPECT_LT(m[12], t[12]);
  for (int corner : {0, 4, 20, 24}) {
    EXPECT_EQ(t[corner], 0.f) << corner;
    EXPECT_GT(m[corner], 0.f) << corner;
  }
}

TEST(MeasuredBranchTest, AHugeCrosstalkSigmaSpansTheGrid) {
  // σ = 1e300 m: 3σ/spacing does not fit an int (found by add_sensor_fuzzer under UBSan). The
  // kernel's half width is clamped to the grid (±4 on the 5 × 5 grid: 9 × 9) and the Gaussian is
  // flat over it, so with strength 1 every taxel reads Σ truth / 81: each 9 × 9 window, clipped
  // by the zero border, covers the whole grid.
  Rig rig(1);
  SensorSpec s = GridSensor("depth", SensorKind::kContactDepthProbe);
  s.imperfections.crosstalk_strength = 1;
  s.imperfections.crosstalk_sigma = 1e300;
  const Sensor* sensor = rig.Add(s);
  ASSERT_NE(sensor, nullptr);
  ASSERT_TRUE(rig.Step({Ball(0.001)}).ok());
  const auto& truth = sensor->outputs(Branch::kGroundTruth).depth;
  const auto& measured = sensor->outputs(Branch::kMeasured).depth;
  ASSERT_GT(truth[12], 0.f);
  // Taxel (i, j) sums the truth over the 9 × 9 kernel window clipped to the grid, divided by 81
  // (the L1-normalised flat kernel): the corner (0, 0) sees the whole grid too (window ±4).
  double total = 0;
  for (int k = 0; k < 25; ++k) total += truth[k];
  for (int k = 0; k < 25; ++k) EXPECT_NEAR(measured[k], total / 81, 1e-6 * total) << k;
}

TEST(MeasuredBranchTest, RenormalizedCrosstalkConservesTheTotalNormalForce) {
  // KinematicTaxel grid, ball pressing near corner (0, 0) (probe at (−2, −2) cm): with
  // `renormalize` Σ F_z over the grid is conserved (to 1e-6 relative); with `zero` force leaks
  // out past the border.
  Rig rig(1);
  SensorSpec renorm = GridSensor("renorm", SensorKind::kKinematicTaxel);
  renorm.imperfections.crosstalk_strength = 1;
  renorm.imperfections.crosstalk_sigma = 0.01;
  renorm.imperfections.crosstalk_border = sensors::CrosstalkBorder::kRenormalize;
  SensorSpec zero = renorm;
  zero.name = "zero";
  zero.imperfections.crosstalk_border = sensors::CrosstalkBorder::kZero;
  const Sensor* r = rig.Add(renorm);
  const Sensor* z = rig.Add(zero);
  ASSERT_TRUE(r != nullptr && z != nullptr);
  ASSERT_TRUE(rig.Step({Ball(0.0015, -0.018, -0.019)}).ok());
  auto total_z = [](const std::vector<float>& f) {
    double t = 0;
    for (size_t k = 2; k < f.size(); k += 3) t += f[k];
    return t;
  };
  const double truth = total_z(r->outputs(Branch::kGroundTruth).force);
  ASSERT_LT(truth, 0);
  EXPECT_NEAR(total_z(r->outputs(Branch::kMeasured).force), truth, 1e-6 * std::abs(truth));
  EXPECT_GT(total_z(z->outputs(Branch::kMeasured).force), 0.9 * truth);  // |leaked| > 10 %
  EXPECT_LT(total_z(z->outputs(Branch::kMeasured).force), 0.0);
}

TEST(MeasuredBranchTest, GridAndFlatLayoutsAgreeAndCrosstalkNeedsARegularGrid) {
  Rig rig(1);
  SensorSpec grid = GridSensor("grid", SensorKind::kKinematicTaxel);
  SensorSpec flat = grid;
  flat.name = "flat";
  flat.grid_rows = flat.grid_cols = 0;
  const Sensor* g = rig.Add(grid);
  const Sensor* f = rig.Add(flat);
  ASSERT_TRUE(rig.Step({Ball(0.001, 0.003, 0)}).ok());
  ASSERT_TRUE(rig.Step({Ball(0.0012, 0.004, 0.001)}).ok());
  EXPECT_EQ(g->outputs(Branch::kGroundTruth).force, f->outputs(Branch::kGroundTruth).force);
  EXPECT_EQ(g->outputs(Branch::kGroundTruth).torque, f->outputs(Branch::kGroundTruth).torque);
  EXPECT_LT(g->outputs(Branch::kGroundTruth).force[12 * 3 + 2], 0.f);

  flat.name = "flat_crosstalk";
  flat.imperfections.crosstalk_strength = 0.5;
  flat.imperfections.crosstalk_sigma = 0.01;
  auto id = rig.scene().AddSensor(flat);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), HasSubstr("sensor.imperfections.crosstalk: crosstalk needs a grid layout"));
  SensorSpec irregular = GridSensor("irregular", SensorKind::kKinematicTaxel);
  irregular.probe_local_pos[7].x() += 0.002;
  irregular.imperfections.crosstalk_kernel = {0, 0.1, 0, 0.1, 0.6, 0.1, 0, 0.1, 0};
  irregular.imperfections.crosstalk_kernel_layers = 1;
  irregular.imperfections.crosstalk_kernel_rows = irregular.imperfections.crosstalk_kernel_cols = 3;
  id = rig.scene().AddSensor(irregular);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), HasSubstr("crosstalk needs a regular grid; probe [1, 2]"));
}

}  // namespace
}  // namespace taxel::scene
