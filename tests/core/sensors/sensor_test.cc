// Tests for core/sensors/sensor.h: the per-kind traits table (one row per SensorKind, in enum
// order, with the channels, pipeline groups and needs that docs/reference.md#sensors and the proto
// give each kind), channel names and widths, the spherical-cap area, and a Sensor's validation,
// buffers, byte estimate, measured branch, history and reset, against hand-computed values.
#include "core/sensors/sensor.h"

#include <cmath>
#include <vector>

#include "core/common/workspace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taxel::sensors {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kPi = 3.141592653589793;

// n probes in a row along x (pitch 1 cm) on link 0, radius 2 mm, of `kind`.
SensorSpec RowSpec(SensorKind kind, int n) {
  SensorSpec s;
  s.name = "row";
  s.kind = kind;
  s.link = "pad";
  for (int i = 0; i < n; ++i) s.probe_local_pos.emplace_back(0.01 * i, 0, 0);
  s.probe_radius = {0.002};
  if (TraitsOf(kind).tracks_links) s.track_links = {"ball"};
  return s;
}

// A sensor on link 0 of a 3-link scene, ignoring link 2, in `envs` envs, seed 7.
absl::StatusOr<std::unique_ptr<Sensor>> Make(SensorSpec spec, int envs = 2) {
  return Sensor::Create(SensorId(4), std::move(spec), LinkIndex(0), {LinkIndex(2)}, 3, envs, 7, "sensors[0]");
}

TEST(SensorKindTraitsTest, OneRowPerKindInEnumOrder) {
  ASSERT_EQ(kNumSensorKinds, 5);
  const char* names[] = {"contact_probe", "contact_depth_probe", "kinematic_taxel", "elastomer_taxel",
                         "proximity_taxel"};
  for (int k = 0; k < kNumSensorKinds; ++k) {
    EXPECT_EQ(static_cast<int>(kSensorKinds[k]), k);
    EXPECT_EQ(TraitsOf(kSensorKinds[k]).name, names[k]);
    EXPECT_EQ(SensorKindName(kSensorKinds[k]), names[k]);
  }
}

TEST(SensorKindTraitsTest, ChannelsGroupsAndNeeds) {
  const auto& contact = TraitsOf(SensorKind::kContactProbe);
  EXPECT_THAT(contact.channels, ElementsAre(Channel::kContact, Channel::kDepth));
  EXPECT_THAT(contact.groups, ElementsAre(ChannelGroup::kScalar));
  const auto& depth = TraitsOf(SensorKind::kContactDepthProbe);
  EXPECT_THAT(depth.channels, ElementsAre(Channel::kDepth, Channel::kNormal, Channel::kArea, Channel::kPartner));
  EXPECT_THAT(depth.history, ElementsAre(Channel::kDepth));
  const auto& kin = TraitsOf(SensorKind::kKinematicTaxel);
  EXPECT_THAT(kin.groups, ElementsAre(ChannelGroup::kForceLike, ChannelGroup::kTorque));
  EXPECT_TRUE(kin.needs_velocities);
  EXPECT_FALSE(kin.tracks_links);
  EXPECT_EQ(kin.evaluator, Evaluator::kProbeRange);
  const auto& gel = TraitsOf(SensorKind::kElastomerTaxel);
  EXPECT_THAT(gel.channels, ElementsAre(Channel::kDisplacement));
  EXPECT_TRUE(gel.tracks_links);
  EXPECT_FALSE(gel.needs_velocities);
  EXPECT_EQ(gel.evaluator, Evaluator::kElastomer);
  const auto& prox = TraitsOf(SensorKind::kProximityTaxel);
  EXPECT_THAT(prox.history, ElementsAre(Channel::kForce, Channel::kTorque));
  EXPECT_TRUE(prox.tracks_links && prox.needs_velocities);
  EXPECT_EQ(prox.evaluator, Evaluator::kProximity);
}

TEST(ChannelTest, NamesAndWidths) {
  const Channel all[] = {Channel::kContact, Channel::kDepth, Channel::kNormal, Channel::kArea,
                         Channel::kPartner, Channel::kForce, Channel::kTorque, Channel::kDisplacement};
  const char* names[] = {"contact", "depth", "normal", "area", "partner", "force", "torque", "displacement"};
  const int widths[] = {1, 1, 3, 1, 1, 3, 3, 3};
  ASSERT_EQ(kNumChannels, 8);
  for (int c = 0; c < kNumChannels; ++c) {
    EXPECT_EQ(ChannelName(all[c]), names[c]);
    EXPECT_EQ(ChannelWidth(all[c]), widths[c]) << names[c];
  }
}

// π(2Rd − d²) with d clamped to [0, 2R]: R = 2 mm, d = 1 mm gives π(4 − 1) mm² = 3π mm²; d = R
// gives πR²; d = 2R gives π(4R² − 4R²) = 0, and so does any deeper d (clamped to 2R).
TEST(SphericalCapAreaTest, ClosedForm) {
  const double R = 0.002;
  EXPECT_NEAR(SphericalCapArea(R, 0.001), 3e-6 * kPi, 1e-18);
  EXPECT_NEAR(SphericalCapArea(R, R), kPi * R * R, 1e-18);
  EXPECT_EQ(SphericalCapArea(R, 0), 0);
  EXPECT_EQ(SphericalCapArea(R, -0.001), 0) << "negative depth clamps to 0";
  EXPECT_NEAR(SphericalCapArea(R, 2 * R), 0, 1e-18);
  EXPECT_NEAR(SphericalCapArea(R, 5 * R), 0, 1e-18) << "depth clamps to 2R";
}

TEST(SensorCreateTest, BuffersPerChannelIdsLinksAndIgnoredLinks) {
  auto s = Make(RowSpec(SensorKind::kContactDepthProbe, 3), 2);
  ASSERT_TRUE(s.ok()) << s.status();
  const Sensor& sensor = **s;
  EXPECT_EQ(sensor.id().value(), 4);
  EXPECT_EQ(sensor.kind(), SensorKind::kContactDepthProbe);
  EXPECT_EQ(sensor.link().value(), 0);
  EXPECT_EQ(sensor.num_probes(), 3);
  EXPECT_EQ(sensor.num_envs(), 2);
  EXPECT_EQ(sensor.layout().size(), 3);
  EXPECT_EQ(sensor.spec().name, "row");
  EXPECT_TRUE(sensor.ignores(LinkIndex(0))) << "its own link";
  EXPECT_FALSE(sensor.ignores(LinkIndex(1)));
  EXPECT_TRUE(sensor.ignores(LinkIndex(2))) << "filtered";
  EXPECT_THAT(sensor.channels(), ElementsAre(Channel::kDepth, Channel::kNormal, Channel::kArea, Channel::kPartner));
  EXPECT_TRUE(sensor.has_channel(Channel::kArea));
  EXPECT_FALSE(sensor.has_channel(Channel::kForce));
  // 2 envs × 3 probes, times the channel's width; partners start at −1 (none), the rest at 0.
  const SensorOutputs& out = sensor.outputs(Branch::kGroundTruth);
  EXPECT_EQ(out.depth.size(), 6u);
  EXPECT_EQ(out.normal.size(), 18u);
  EXPECT_EQ(out.area.size(), 6u);
  EXPECT_THAT(out.partner, ElementsAre(-1, -1, -1, -1, -1, -1));
  EXPECT_TRUE(out.force.empty());
  EXPECT_TRUE(out.contact.empty());
  EXPECT_EQ(sensor.pipeline(), nullptr) << "no imperfection configured";
  EXPECT_EQ(&sensor.outputs(Branch::kMeasured), &out) << "the measured branch is the clean one";
  EXPECT_EQ(sensor.tracked(), nullptr);
}

TEST(SensorCreateTest, ContactProbeReleaseThresholdDefaultsToTheContactThreshold) {
  SensorSpec spec = RowSpec(SensorKind::kContactProbe, 2);
  spec.contact_threshold = 3e-4;
  auto s = Make(spec);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->release_threshold(), 3e-4);
  EXPECT_EQ((*s)->latch().size(), 4u);
  spec.release_threshold = -1e-4;
  s = Make(spec);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->release_threshold(), -1e-4);
}

TEST(SensorCreateTest, ErrorsNameTheFieldAndTheRule) {
  struct Case {
    const char* what;
    SensorSpec spec;
    const char* message;
  };
  std::vector<Case> cases;
  {
    SensorSpec s = RowSpec(SensorKind::kContactProbe, 2);
    s.release_threshold = 1e-3;  // above the 1e-4 contact threshold
    cases.push_back({"release above contact", s,
                     "sensors[0].contact_probe.release_threshold: expected a finite value <= contact_threshold"});
  }
  {
    SensorSpec s = RowSpec(SensorKind::kContactProbe, 2);
    s.contact_threshold = std::nan("");
    cases.push_back({"NaN threshold", s, "sensors[0].contact_probe.contact_threshold: expected a finite number"});
  }
  {
    SensorSpec s = RowSpec(SensorKind::kElastomerTaxel, 2);
    s.elastomer.compressibility = 1.5;
    cases.push_back(
        {"compressibility", s, "sensors[0].elastomer.compressibility: expected a value in [0, 1], got 1.5"});
  }
  {
    SensorSpec s = RowSpec(SensorKind::kElastomerTaxel, 2);
    s.elastomer.lambda_d = 0;
    cases.push_back({"lambda_d", s, "sensors[0].elastomer.lambda_d: expected a finite value > 0"});
  }
  {
    SensorSpec s = RowSpec(SensorKind::kProximityTaxel, 2);
    s.proximity.density_scalar = -1;
    cases.push_back({"density", s, "sensors[0].proximity.density_scalar: expected a finite value >= 0"});
  }
  {
    SensorSpec s = RowSpec(SensorKind::kProximityTaxel, 2);
    s.track_links.clear();
    cases.push_back({"no tracked link", s, "sensors[0].track_links: expected at least one tracked link"});
  }
  {
    SensorSpec s = RowSpec(SensorKind::kElastomerTaxel, 2);
    s.n_sample_points = 20001;
    cases.push_back({"samples", s, "sensors[0].n_sample_points: expected a value in [1, 20000], got 20001"});
  }
  {
    SensorSpec s = RowSpec(SensorKind::kKinematicTaxel, 2);
    s.probe_radius = {-0.001};
    cases.push_back({"radius", s, "sensors[0].probe_radius"});
  }
  for (const Case& c : cases) {
    auto s = Make(c.spec);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(s.status().message(), HasSubstr(c.message)) << c.what;
  }
}

// Bytes per probe and env: 1 (latch) + Σ over channels of (1 B per bool, 4 B per float) × width;
// with imperfections twice that (measured outputs) + 4·W·(6 + max(history, 2)), W the measured width.
TEST(SensorEstimateBytesTest, HandCountedPerKind) {
  // ContactProbe: 1 + contact 1 + depth 4 = 6 B; 9 probes × 2 envs = 108 B.
  EXPECT_EQ(Sensor::EstimateBytes(RowSpec(SensorKind::kContactProbe, 9), 2), 108u);
  // ContactDepthProbe: 1 + depth 4 + normal 12 + area 4 + partner 4 = 25 B; × 4 × 3 = 300 B.
  EXPECT_EQ(Sensor::EstimateBytes(RowSpec(SensorKind::kContactDepthProbe, 4), 3), 300u);
  // ElastomerTaxel: 1 + displacement 12 = 13 B; × 5 × 1.
  EXPECT_EQ(Sensor::EstimateBytes(RowSpec(SensorKind::kElastomerTaxel, 5), 1), 65u);
  // KinematicTaxel with noise: (1 + 12 + 12)·2 + 4·6·(6 + 2) = 242 B; × 4 probes × 3 envs = 2904 B,
  // and a ring pointer of 8 B per env: 2928 B.
  SensorSpec noisy = RowSpec(SensorKind::kKinematicTaxel, 4);
  noisy.imperfections.noise = 0.1;
  EXPECT_EQ(Sensor::EstimateBytes(noisy, 3), 2928u);
  // A history of 5 samples: (25)·2 + 4·6·(6 + 5) = 314 B per probe, + 8 B for the env.
  noisy.imperfections.history_length = 5;
  EXPECT_EQ(Sensor::EstimateBytes(noisy, 1), 4u * 314u + 8u);
  EXPECT_EQ(Sensor::EstimateBytes(noisy, 0), 0u);
  EXPECT_EQ(Sensor::EstimateBytes(noisy, -3), 0u) << "negative env counts estimate nothing";
}

TEST(SensorMemoryTest, GrowsWithTheEnvsByAtLeastTheEstimatedBuffers) {
  auto two = Make(RowSpec(SensorKind::kKinematicTaxel, 16), 2);
  auto ten = Make(RowSpec(SensorKind::kKinematicTaxel, 16), 10);
  ASSERT_TRUE(two.ok() && ten.ok());
  // 8 more envs of 16 probes hold at least their force and torque: 8 × 16 × (12 + 12) B.
  const size_t per_env = 16 * 24;
  EXPECT_GE((*ten)->memory_bytes() - (*two)->memory_bytes(), 8 * per_env);
}

TEST(SensorTaskTest, MeasuredWidthAndTasksPerKind) {
  const int widths[] = {1, 1, 6, 3, 6};  // contact, depth, kinematic, elastomer, proximity
  for (int k = 0; k < kNumSensorKinds; ++k) {
    auto s = Make(RowSpec(kSensorKinds[k], 3));
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ((*s)->measured_width(), widths[k]) << k;
    EXPECT_EQ((*s)->probes_per_task(), kSensorKinds[k] == SensorKind::kElastomerTaxel ? 3 : Sensor::kProbesPerTask);
    EXPECT_TRUE((*s)->one_task_per_env());
  }
  auto big = Make(RowSpec(SensorKind::kContactDepthProbe, Sensor::kProbesPerTask + 1));
  ASSERT_TRUE(big.ok());
  EXPECT_FALSE((*big)->one_task_per_env());
}

// A sensor evaluated by one task per env takes its raw buffer from the workspace; a larger one
// keeps [E·n·W] of its own, env e at offset e·n·W.
TEST(SensorMeasuredTest, RawBuffersComeFromTheWorkspaceOrTheSensor) {
  SensorSpec small = RowSpec(SensorKind::kKinematicTaxel, 4);
  small.imperfections.noise = 0.1;
  auto s = Make(small, 3);
  ASSERT_TRUE(s.ok());
  Workspace ws;
  {
    Workspace::Scope scope(ws);
    float* a = (*s)->raw_measured(0, ws);
    float* b = (*s)->raw_measured(1, ws);
    EXPECT_NE(a, b);
    EXPECT_GE(ws.used_bytes(), 2 * 4 * 6 * sizeof(float));
  }
  const int n = Sensor::kProbesPerTask + 1;
  SensorSpec large = RowSpec(SensorKind::kKinematicTaxel, n);
  large.imperfections.noise = 0.1;
  auto l = Make(large, 3);
  ASSERT_TRUE(l.ok());
  Workspace::Scope scope(ws);
  float* e0 = (*l)->raw_measured(0, ws);
  EXPECT_EQ((*l)->raw_measured(2, ws) - e0, 2 * n * 6);
  EXPECT_EQ(ws.used_bytes(), 0u) << "nothing taken from the workspace";
}

// A ContactProbe with only a bias of 0.2 mm: measured depth = raw + bias, the measured trigger on
// at ≥ 0.1 mm, fillers (radius 0) stay 0; the ground truth is untouched.
//   probe 0: raw 0       → 0.2 mm, on      probe 1: raw −0.15 mm → 0.05 mm, off
//   probe 2: filler, raw 1 mm → 0, off
TEST(SensorMeasuredTest, FinishMeasuredRunsThePipelineIntoTheMeasuredOutputs) {
  SensorSpec spec = RowSpec(SensorKind::kContactProbe, 3);
  spec.probe_radius = {0.002, 0.002, 0.0};
  spec.imperfections.bias = 2e-4;
  spec.imperfections.history_length = 2;
  auto s = Make(spec, 2);
  ASSERT_TRUE(s.ok()) << s.status();
  Sensor& sensor = **s;
  ASSERT_NE(sensor.pipeline(), nullptr);
  EXPECT_THAT(sensor.history_channels(), ElementsAre(Channel::kDepth));
  sensor.pipeline()->Prepare(0.01);
  Workspace ws;
  auto finish = [&](int env, uint64_t step, std::vector<float> raw_in) {
    Workspace::Scope scope(ws);
    float* raw = sensor.raw_measured(env, ws);
    std::copy(raw_in.begin(), raw_in.end(), raw);
    sensor.FinishMeasured(env, step, step, 0.01, raw, ws);
  };
  finish(1, 1, {0.0f, -1.5e-4f, 1e-3f});
  const SensorOutputs& m = sensor.outputs(Branch::kMeasured);
  EXPECT_NEAR(m.depth[3], 2e-4, 1e-9);
  EXPECT_NEAR(m.depth[4], 0.5e-4, 1e-9);
  EXPECT_EQ(m.depth[5], 0.f);
  EXPECT_THAT(std::vector<uint8_t>(m.contact.begin() + 3, m.contact.end()), ElementsAre(1, 0, 0));
  EXPECT_THAT(std::vector<float>(m.depth.begin(), m.depth.begin() + 3), Each(0.f)) << "env 0 untouched";
  EXPECT_THAT(sensor.outputs(Branch::kGroundTruth).depth, Each(0.f));

  // History: newest first, zeros before there were that many samples.
  float h[3];
  sensor.CopyHistory(1, 0, Channel::kDepth, h);
  EXPECT_NEAR(h[0], 2e-4, 1e-9);
  EXPECT_NEAR(h[1], 0.5e-4, 1e-9);
  sensor.CopyHistory(1, 1, Channel::kDepth, h);
  EXPECT_THAT(h, ElementsAre(0.f, 0.f, 0.f));
  finish(1, 2, {1e-3f, 0.0f, 0.0f});
  sensor.CopyHistory(1, 0, Channel::kDepth, h);
  EXPECT_NEAR(h[0], 1.2e-3, 1e-9);
  sensor.CopyHistory(1, 1, Channel::kDepth, h);
  EXPECT_NEAR(h[0], 2e-4, 1e-9);
  EXPECT_NEAR(h[1], 0.5e-4, 1e-9);
}

// The kinematic taxel's 6 measured values per probe split into force (0..2) and torque (3..5).
TEST(SensorMeasuredTest, ForceAndTorqueSplitFromTheSixMeasuredValues) {
  SensorSpec spec = RowSpec(SensorKind::kKinematicTaxel, 2);
  spec.imperfections.bias = 1.0;
  spec.imperfections.history_length = 1;
  auto s = Make(spec, 1);
  ASSERT_TRUE(s.ok()) << s.status();
  Sensor& sensor = **s;
  sensor.pipeline()->Prepare(0.01);
  Workspace ws;
  Workspace::Scope scope(ws);
  float* raw = sensor.raw_measured(0, ws);
  for (int i = 0; i < 12; ++i) raw[i] = static_cast<float>(i);
  sensor.FinishMeasured(0, 1, 1, 0.01, raw, ws);
  const SensorOutputs& m = sensor.outputs(Branch::kMeasured);
  EXPECT_THAT(m.force, ElementsAre(1, 2, 3, 7, 8, 9));
  EXPECT_THAT(m.torque, ElementsAre(4, 5, 6, 10, 11, 12));
  float torque[6];
  sensor.CopyHistory(0, 0, Channel::kTorque, torque);
  EXPECT_THAT(torque, ElementsAre(4, 5, 6, 10, 11, 12));
}

TEST(SensorResetTest, ResetEnvClearsThatEnvOnly) {
  auto s = Make(RowSpec(SensorKind::kContactDepthProbe, 2), 2);
  ASSERT_TRUE(s.ok());
  Sensor& sensor = **s;
  SensorOutputs& t = sensor.mutable_truth();
  t.depth = {1, 2, 3, 4};
  t.partner = {5, 6, 7, 8};
  for (float& v : t.normal) v = 1;
  sensor.ResetEnv(1, 1);
  EXPECT_THAT(t.depth, ElementsAre(1, 2, 0, 0));
  EXPECT_THAT(t.partner, ElementsAre(5, 6, -1, -1));
  EXPECT_THAT(t.normal, ElementsAre(1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0));
  auto probe = Make(RowSpec(SensorKind::kContactProbe, 2), 2);
  ASSERT_TRUE(probe.ok());
  (*probe)->latch() = {1, 1, 1, 1};
  (*probe)->ResetEnv(0, 1);
  EXPECT_THAT((*probe)->latch(), ElementsAre(0, 0, 1, 1));
}

}  // namespace
}  // namespace taxel::sensors
