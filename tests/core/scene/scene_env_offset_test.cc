// Env sharding (SceneSpec::env_offset): a scene split into contiguous env ranges, one scene per
// range with env_offset = the range start, reads bit for bit what the unsharded scene reads —
// measured branch (every imperfection on), ground truth, history and the contact matrix — through
// partial steps (env_ids subsets) and resets of some envs. And the offset's range check.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

constexpr double kTop = 0.005;   // top face of the pad (probes sit here)
constexpr double kBallR = 0.05;  // ball radius
constexpr int kEnvs = 12;

// Every stage and timing option of the measured branch, with values that make each one visible.
void EveryImperfection(SensorSpec* s) {
  auto& im = s->imperfections;
  im.probe_radius_noise = 2e-4;
  im.probe_gain_resample_range = {{0.8, 1.2}};
  im.crosstalk_strength = 0.3;
  im.crosstalk_sigma = 0.01;
  im.hysteresis_strength = 0.2, im.hysteresis_tau = 0.05;
  im.random_walk = 1e-4, im.noise = 1e-4, im.bias = 1e-5, im.resolution = 1e-6;
  im.dead_taxel_probability = 0.2, im.dead_taxel_value_range = {-1.0, 1.0};
  im.delay = 0.02, im.jitter = 0.01;
  im.history_length = 3;
}

// Robot "hand" with a 6 × 6 × 1 cm pad and an object "ball" (r = 5 cm) pressing its top face:
//
//            ball
//           .----.
//    ______/______\______   z = kTop: "kin" (5 × 5 KinematicTaxel) and "depth" (5 × 5
//   |        pad         |            ContactDepthProbe, update period 2) on the top face, and
//   |____________________|            "fine" (33 × 33 = 1089 ContactDepthProbe: more probes than
//                                      one task takes, so its measured branch runs in a later pass)
// with a contact matrix (pad vs the ball, friction kept).
SceneSpec ShardSpec(int num_envs, int64_t env_offset) {
  SceneSpec spec;
  spec.name = "sharded";
  spec.num_envs = num_envs;
  spec.seed = 42;
  spec.env_offset = env_offset;
  spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, kTop})})}));
  spec.entities.push_back(Entity("ball", EntityKind::kObject, {Link("body", {SphereShape(kBallR)})}));
  SensorSpec kin = GridSensor("kin", SensorKind::kKinematicTaxel, "pad", 5, 0.01, kTop, 0.002);
  SensorSpec depth = GridSensor("depth", SensorKind::kContactDepthProbe, "pad", 5, 0.01, kTop, 0.002);
  SensorSpec fine = GridSensor("fine", SensorKind::kContactDepthProbe, "pad", 33, 0.0015, kTop, 0.001);
  for (SensorSpec* s : {&kin, &depth, &fine}) EveryImperfection(s);
  depth.imperfections.update_period = 2;
  spec.sensors = {kin, depth, fine};
  spec.contact_matrix.bodies = {"pad"};
  spec.contact_matrix.partners = {"object/*"};
  spec.contact_matrix.friction = true;
  return spec;
}

// The ball of global env e at step t: over the pad, pressing 0.5..2 mm, off-centre by a few mm,
// sliding between steps (so the contact matrix has friction); out of reach when (e + t) % 6 == 5.
std::vector<double> EnvPoses(int e, int t) {
  const double press = 0.0005 + 0.0015 * ((7 * e + 3 * t) % 11) / 11.0;
  Eigen::Vector3d ball(0.002 * ((e + t) % 5 - 2), 0.001 * ((2 * e + t) % 3 - 1), kTop + kBallR - press);
  if ((e + t) % 6 == 5) ball.z() = 1.0;
  return PosesXyzw({Eigen::Vector3d::Zero(), ball});
}

// One scene per contiguous range [offset, offset + size).
struct Shard {
  int64_t offset;
  std::unique_ptr<Scene> scene;
};

class ShardedRig {
 public:
  ShardedRig() : pool_(2) {
    auto whole = Scene::Create(ShardSpec(kEnvs, 0), meshes_);
    EXPECT_TRUE(whole.ok()) << whole.status();
    whole_ = *std::move(whole);
    for (int64_t offset : {0, 4, 8}) {
      auto s = Scene::Create(ShardSpec(4, offset), meshes_);
      EXPECT_TRUE(s.ok()) << s.status();
      shards_.push_back({offset, *std::move(s)});
    }
  }

  // Steps global envs `envs` (all, in order, when empty) of the whole scene and, with their
  // local ids in the same order, each shard that has some of them.
  void Step(const std::vector<int32_t>& envs, int t) {
    std::vector<int32_t> all;
    for (int e = 0; e < kEnvs; ++e) all.push_back(e);
    const std::vector<int32_t>& order = envs.empty() ? all : envs;
    ASSERT_TRUE(StepScene(*whole_, envs, order, t).ok());
    for (Shard& s : shards_) {
      std::vector<int32_t> local, global;
      for (int32_t e : order) {
        if (e >= s.offset && e < s.offset + 4) {
          local.push_back(static_cast<int32_t>(e - s.offset));
          global.push_back(e);
        }
      }
      if (local.empty()) continue;
      ASSERT_TRUE(StepScene(*s.scene, local, global, t).ok());
    }
  }

  void Reset(const std::vector<int32_t>& envs) {
    ASSERT_TRUE(whole_->Reset(envs).ok());
    for (Shard& s : shards_) {
      std::vector<int32_t> local;
      for (int32_t e : envs) {
        if (e >= s.offset && e < s.offset + 4) local.push_back(static_cast<int32_t>(e - s.offset));
      }
      if (!local.empty()) {
        ASSERT_TRUE(s.scene->Reset(local).ok());
      }
    }
  }

  // Every reading of global env e in the whole scene and in its shard, compared byte for byte.
  void ExpectSameEnv(int e, const std::string& when) const {
    const Shard& s = shards_[e / 4];
    const int local = e - static_cast<int>(s.offset);
    for (const Sensor* a : whole_->sensors()) {
      const Sensor* b = s.scene->FindSensor(a->spec().name);
      ASSERT_NE(b, nullptr);
      for (Branch br : {Branch::kMeasured, Branch::kGroundTruth}) {
        EXPECT_EQ(EnvBytes(*a, br, e), EnvBytes(*b, br, local))
            << when << ": sensor " << a->spec().name << " branch " << static_cast<int>(br) << " env " << e;
      }
      EXPECT_EQ(HistoryBytes(*a, e), HistoryBytes(*b, local)) << when << ": history of " << a->spec().name;
    }
    const auto& ma = whole_->contact_matrix()->matrix();
    const auto& mb = s.scene->contact_matrix()->matrix();
    const size_t cells = static_cast<size_t>(ma.rows()) * ma.cols() * 3;
    EXPECT_EQ(0, std::memcmp(ma.normal(e), mb.normal(local), cells * sizeof(float))) << when << ": normal " << e;
    EXPECT_EQ(0, std::memcmp(ma.friction(e), mb.friction(local), cells * sizeof(float))) << when << ": friction";
  }

  // Something must differ between envs, or the comparison above could not tell envs apart.
  bool EnvsDiffer(int e0, int e1) const {
    const Sensor* kin = whole_->FindSensor("kin");
    return EnvBytes(*kin, Branch::kMeasured, e0) != EnvBytes(*kin, Branch::kMeasured, e1);
  }

 private:
  // Steps `ids` of `scene` with the poses of global envs `global` (same order) at step t.
  absl::Status StepScene(Scene& scene, const std::vector<int32_t>& ids, const std::vector<int32_t>& global, int t) {
    std::vector<double> poses;
    for (int32_t e : global) {
      const auto p = EnvPoses(e, t);
      poses.insert(poses.end(), p.begin(), p.end());
    }
    StepInput in;
    in.env_ids = ids;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    return scene.Step(in, pool_);
  }

  static std::vector<uint8_t> EnvBytes(const Sensor& s, Branch br, int env) {
    const sensors::SensorOutputs& o = s.outputs(br);
    std::vector<uint8_t> out;
    auto append = [&](const auto& v, int width) {
      const size_t per_env = static_cast<size_t>(s.num_probes()) * width;
      const auto* b = reinterpret_cast<const uint8_t*>(v.data() + per_env * env);
      out.insert(out.end(), b, b + per_env * sizeof(v[0]));
    };
    for (Channel c : s.channels()) {
      const int w = sensors::ChannelWidth(c);
      switch (c) {
        case Channel::kContact: append(o.contact, w); break;
        case Channel::kDepth: append(o.depth, w); break;
        case Channel::kNormal: append(o.normal, w); break;
        case Channel::kArea: append(o.area, w); break;
        case Channel::kPartner: append(o.partner, w); break;
        case Channel::kForce: append(o.force, w); break;
        case Channel::kTorque: append(o.torque, w); break;
        case Channel::kDisplacement: append(o.displacement, w); break;
      }
    }
    return out;
  }

  static std::vector<float> HistoryBytes(const Sensor& s, int env) {
    std::vector<float> out;
    for (Channel c : s.history_channels()) {
      for (int h = 0; h < s.spec().imperfections.history_length; ++h) {
        std::vector<float> sample(static_cast<size_t>(s.num_probes()) * sensors::ChannelWidth(c));
        s.CopyHistory(env, h, c, sample.data());
        out.insert(out.end(), sample.begin(), sample.end());
      }
    }
    return out;
  }

  geometry::MeshStore meshes_;
  server::ThreadPool pool_;
  std::unique_ptr<Scene> whole_;
  std::vector<Shard> shards_;
};

TEST(SceneEnvOffsetTest, ThreeShardsReadBitForBitWhatTheWholeSceneReads) {
  ShardedRig rig;
  // t: what the step does (global env ids; the shards get their local ids in the same order).
  const std::vector<std::vector<int32_t>> steps = {
      {}, {}, {10, 3, 7, 0, 5}, {}, {}, {11, 1}, {}, {6, 2, 9, 4, 8}, {}, {},
  };
  for (int t = 0; t < static_cast<int>(steps.size()); ++t) {
    if (t == 4) rig.Reset({2, 5, 9});
    if (t == 8) rig.Reset({0, 11, 6, 7});
    rig.Step(steps[t], t);
    for (int e = 0; e < kEnvs; ++e) rig.ExpectSameEnv(e, "step " + std::to_string(t));
  }
  // Envs 0, 4 and 8 are env 0 of their shards: they must read differently, or a comparison
  // blind to the env could pass with the offset ignored.
  EXPECT_TRUE(rig.EnvsDiffer(0, 4));
  EXPECT_TRUE(rig.EnvsDiffer(4, 8));
}

TEST(SceneEnvOffsetTest, TheOffsetKeysTheDrawsWithTheSamePoses) {
  // Two 1-env scenes, same poses, env_offset 0 and 1: with noise on they read differently, and the
  // scene with offset 1 reads what env 1 of a 2-env scene with both envs at those poses reads.
  geometry::MeshStore meshes;
  InlineExecutor inline_executor;
  auto step = [&](Scene& scene, int envs) {
    std::vector<double> poses;
    for (int e = 0; e < envs; ++e) {
      const auto p = EnvPoses(0, 0);
      poses.insert(poses.end(), p.begin(), p.end());
    }
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    return scene.Step(in, inline_executor);
  };
  auto a = Scene::Create(ShardSpec(1, 0), meshes);
  auto b = Scene::Create(ShardSpec(1, 1), meshes);
  auto both = Scene::Create(ShardSpec(2, 0), meshes);
  ASSERT_TRUE(a.ok() && b.ok() && both.ok());
  // Four steps: the 20 ms delay (±10 ms jitter) at dt = 10 ms reads 0 until the ring is filled.
  for (int t = 0; t < 4; ++t) ASSERT_TRUE(step(**a, 1).ok() && step(**b, 1).ok() && step(**both, 2).ok());
  const auto& fa = (*a)->FindSensor("kin")->outputs(Branch::kMeasured).force;
  const auto& fb = (*b)->FindSensor("kin")->outputs(Branch::kMeasured).force;
  const auto& f2 = (*both)->FindSensor("kin")->outputs(Branch::kMeasured).force;
  ASSERT_EQ(fb.size() * 2, f2.size());
  EXPECT_NE(0, std::memcmp(fa.data(), fb.data(), fb.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(fb.data(), f2.data() + fb.size(), fb.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(fa.data(), f2.data(), fa.size() * sizeof(float)));
}

TEST(SceneEnvOffsetTest, TheOffsetMustBeNonNegativeAndKeepTheEnvsBelowTwoToThe32) {
  geometry::MeshStore meshes;
  // 2^32 − 4 + 4 envs = 2^32: the last global env is 2^32 − 1, the largest the 32-bit key holds.
  EXPECT_TRUE(Scene::Create(ShardSpec(4, (int64_t{1} << 32) - 4), meshes).ok());
  for (int64_t bad : {int64_t{-1}, (int64_t{1} << 32) - 3, int64_t{1} << 40}) {
    auto s = Scene::Create(ShardSpec(4, bad), meshes);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), HasSubstr("env_offset: expected 0 <= env_offset and env_offset + num_envs (4)"));
    EXPECT_THAT(s.status().message(), HasSubstr(absl::StrCat("got ", bad)));
  }
}

}  // namespace
}  // namespace taxel::scene
