// Codec: step requests (DecodeStep), read plans (PlanRead) and readings (ReadingsWireWriter), against
// an in-process core scene.
#include <cmath>
#include <cstring>

#include "core/common/executor.h"
#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/codec.h"
#include "server/step_wire.h"
#include "taxel/client.h"
#include "tests/support/reference_readings.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace taxel::testing;  // NOLINT

// Wire tensors: DoubleTensor, FloatTensor, Int32Tensor of the C++ client library (taxel/client.h).

constexpr double kZ = 0.005;  // top face of the pad, where the probes sit
constexpr double kR = 0.002;  // probe radius
constexpr double kPi = 3.141592653589793;

// Links (canonical): 0 hand/pad, 1 hand/finger, 2 ball/body (moving), 3 ground/plane.
// Sensors on the pad: 0 "kin" 3×2 grid, 1 "depth" 3 flat probes, 2 "touch" 1×2 grid.
//
//   env 0: ball centre c0 = (0, 0, 0.054)       env 1: c1 = (0.01, 0, 0.054)
//   depth probes at x = 0, 0.01, 0.02 on z = kZ; a ball of radius 5 cm whose centre is 4.9 cm above
//   a probe presses it by 1 mm: depth = R + 1 mm = 3 mm.
scene::SceneSpec StepSpec() {
  scene::SceneSpec spec;
  spec.name = "codec";
  spec.num_envs = 2;
  spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot,
                                 {Link("pad", {BoxShape({0.03, 0.03, kZ})}), Link("finger", {SphereShape(0.01)})}));
  spec.entities.push_back(Entity("ball", scene::EntityKind::kObject, {Link("body", {SphereShape(0.05)})}));
  scene::LinkSpec plane = Link("plane", {HalfSpaceShape()});
  plane.X_WL.p.z() = -1;
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {plane}));
  sensors::SensorSpec kin;
  kin.name = "kin";
  kin.kind = sensors::SensorKind::kKinematicTaxel;
  kin.link = "pad";
  kin.probe_local_pos = PlanarGrid(3, 2, 0.01, kZ);
  kin.grid_rows = 3, kin.grid_cols = 2;
  kin.probe_radius = {kR};
  spec.sensors.push_back(kin);
  sensors::SensorSpec depth;
  depth.name = "depth";
  depth.kind = sensors::SensorKind::kContactDepthProbe;
  depth.link = "pad";
  depth.probe_local_pos = {{0, 0, kZ}, {0.01, 0, kZ}, {0.02, 0, kZ}};
  depth.probe_radius = {kR};
  spec.sensors.push_back(depth);
  sensors::SensorSpec touch;
  touch.name = "touch";
  touch.kind = sensors::SensorKind::kContactProbe;
  touch.link = "pad";
  touch.probe_local_pos = {{0, 0, kZ}, {0.025, 0.025, kZ}};
  touch.grid_rows = 1, touch.grid_cols = 2;
  touch.probe_radius = {kR};
  spec.sensors.push_back(touch);
  return spec;
}

std::vector<double> StepPoses() {
  std::vector<double> p;
  for (double ball_x : {0.0, 0.01}) {
    p.insert(p.end(), {0, 0, 0, 0, 0, 0, 1});           // pad
    p.insert(p.end(), {1, 0, 0, 0, 0, 0, 1});           // finger, out of reach
    p.insert(p.end(), {ball_x, 0, 0.054, 0, 0, 0, 1});  // ball
  }
  return p;
}

class CodecStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto scene = scene::Scene::Create(StepSpec(), meshes_);
    ASSERT_TRUE(scene.ok()) << scene.status();
    scene_ = *std::move(scene);
  }
  v1::StepRequest Request(const std::vector<int64_t>& shape, const std::vector<double>& poses) {
    v1::StepRequest r;
    r.set_scene("codec");
    *r.mutable_poses() = DoubleTensor(shape, poses);
    r.set_quat_order(v1::XYZW);
    r.set_dt(0.01);
    return r;
  }
  void StepLocally() {
    const std::vector<double> poses = StepPoses();
    scene::StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE(scene_->Step(in, executor_).ok());
  }
  const sensors::Sensor& Sensor(const char* name) { return *scene_->FindSensor(name); }

  geometry::MeshStore meshes_;
  InlineExecutor executor_;
  std::unique_ptr<scene::Scene> scene_;
};

// ---------------------------------------------------------------------------------------------
// DecodeStep

TEST_F(CodecStepTest, NestedFloat64PosesAreZeroCopy) {
  const v1::StepRequest req = Request({2, 3, 7}, StepPoses());
  DecodedStep step;
  ASSERT_TRUE(DecodeStep(req, *scene_, &step).ok());
  EXPECT_EQ(reinterpret_cast<const char*>(step.input.poses.data()), req.poses().data().data());
  EXPECT_EQ(step.input.poses.size(), 42u);
  EXPECT_TRUE(step.pose_storage.empty());
  EXPECT_TRUE(step.input.env_ids.empty());
  EXPECT_TRUE(step.input.twists.empty());
  EXPECT_EQ(step.input.quat_order, QuatOrder::kXyzw);
  EXPECT_EQ(step.input.dt, 0.01);
}

TEST_F(CodecStepTest, EmptyReportedContactsDecodeToNone) {
  // K = 0 contacts: empty INT32 [0] arrays and a FLOAT64 [0, 3] force. (Found by the
  // reported_contacts fuzzer under UBSan: the INT32 arrays were copied with memcpy into an empty
  // vector, whose data() is null, fuzz/reproducers/reported_contacts_fuzzer/.)
  v1::StepRequest req = Request({2, 3, 7}, StepPoses());
  auto* c = req.mutable_contacts();
  *c->mutable_env() = Int32Tensor({0}, {});
  *c->mutable_body() = Int32Tensor({0}, {});
  *c->mutable_partner() = Int32Tensor({0}, {});
  *c->mutable_force() = DoubleTensor({0, 3}, {});
  DecodedStep step;
  const absl::Status s = DecodeStep(req, *scene_, &step);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(step.input.contacts.size(), 0u);
  EXPECT_TRUE(step.input.contacts.env.empty());
  EXPECT_TRUE(step.input.contacts.force.empty());
}

TEST_F(CodecStepTest, FlatPosesFloat32AndEnvSubsetsAreAccepted) {
  DecodedStep flat;
  const v1::StepRequest flat_req = Request({6, 7}, StepPoses());  // [E·L, 7]; outlives `flat` (zero-copy)
  ASSERT_TRUE(DecodeStep(flat_req, *scene_, &flat).ok());
  EXPECT_THAT(std::vector<double>(flat.input.poses.begin(), flat.input.poses.end()), ::testing::Eq(StepPoses()));

  v1::StepRequest req = Request({2, 3, 7}, {});
  std::vector<float> f32;
  for (double v : StepPoses()) f32.push_back(static_cast<float>(v));
  *req.mutable_poses() = FloatTensor({2, 3, 7}, f32);
  req.set_quat_order(v1::WXYZ);
  DecodedStep step;
  ASSERT_TRUE(DecodeStep(req, *scene_, &step).ok());
  ASSERT_EQ(step.input.poses.size(), 42u);
  EXPECT_EQ(step.input.poses.data(), step.pose_storage.data());
  EXPECT_EQ(step.input.poses[14], 0.0);                         // env 0 ball x
  EXPECT_EQ(step.input.poses[35], static_cast<double>(0.01f));  // env 1 ball x, widened exactly
  EXPECT_EQ(step.input.poses[37], static_cast<double>(0.054f));
  EXPECT_EQ(step.input.quat_order, QuatOrder::kWxyz);

  // env_ids [1]: one env on the first axis.
  const std::vector<double> all = StepPoses();
  v1::StepRequest one = Request({1, 3, 7}, std::vector<double>(all.begin(), all.begin() + 21));
  one.add_env_ids(1);
  DecodedStep sub;
  ASSERT_TRUE(DecodeStep(one, *scene_, &sub).ok());
  EXPECT_THAT(sub.env_ids, ElementsAre(1));
  EXPECT_THAT(std::vector<int32_t>(sub.input.env_ids.begin(), sub.input.env_ids.end()), ElementsAre(1));
}

TEST_F(CodecStepTest, TwistsNestedOrFlat) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 3, 6}, {6, 6}}) {
    v1::StepRequest req = Request({2, 3, 7}, StepPoses());
    std::vector<double> twists(36);
    for (size_t i = 0; i < twists.size(); ++i) twists[i] = 0.5 * static_cast<double>(i);
    *req.mutable_twists() = DoubleTensor(shape, twists);
    DecodedStep step;
    ASSERT_TRUE(DecodeStep(req, *scene_, &step).ok()) << ShapeString(shape);
    ASSERT_EQ(step.input.twists.size(), 36u);
    EXPECT_EQ(step.input.twists[35], 17.5);
  }
}

TEST_F(CodecStepTest, ShapeAndDtypeErrorsNameTheField) {
  struct Case {
    std::string name;
    v1::StepRequest req;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"L wrong", Request({2, 2, 7}, std::vector<double>(28, 0.0)),
                   "poses: expected shape [2, 3, 7] (or [6, 7]), got [2, 2, 7]"});
  cases.push_back({"E wrong", Request({3, 3, 7}, std::vector<double>(63, 0.0)),
                   "poses: expected shape [2, 3, 7] (or [6, 7]), got [3, 3, 7]"});
  cases.push_back({"flat wrong", Request({42}, std::vector<double>(42, 0.0)),
                   "poses: expected shape [2, 3, 7] (or [6, 7]), got [42]"});
  cases.push_back({"bytes", Request({2, 3, 7}, std::vector<double>(41, 0.0)),
                   "poses: shape [2, 3, 7] of FLOAT64 needs 336 bytes, got 328"});
  v1::StepRequest missing = Request({2, 3, 7}, StepPoses());
  missing.clear_poses();
  cases.push_back({"missing", missing, "poses: required: shape [2, 3, 7]"});
  v1::StepRequest ints = Request({2, 3, 7}, StepPoses());
  *ints.mutable_poses() = Int32Tensor({2, 3, 7}, std::vector<int32_t>(42, 0));
  cases.push_back({"int poses", ints, "poses: expected dtype FLOAT32 or FLOAT64, got INT32"});
  v1::StepRequest twists = Request({2, 3, 7}, StepPoses());
  *twists.mutable_twists() = DoubleTensor({2, 3, 7}, std::vector<double>(42, 0.0));
  cases.push_back({"twists", twists, "twists: expected shape [2, 3, 6] (or [6, 6]), got [2, 3, 7]"});
  // (An unspecified quat_order passes the codec: Scene::Step checks it, scene_test.cc.)
  v1::StepRequest subset = Request({2, 3, 7}, StepPoses());
  subset.add_env_ids(0);  // one env id: the first axis must be 1
  cases.push_back({"subset", subset, "poses: expected shape [1, 3, 7] (or [3, 7]), got [2, 3, 7]"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DecodedStep step;
    const absl::Status s = DecodeStep(c.req, *scene_, &step);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
}

// ---------------------------------------------------------------------------------------------
// PlanRead

TEST_F(CodecStepTest, EmptyReadPlansEverySensorAndChannelMeasured) {
  auto plan = PlanRead(v1::ReadSpec(), *scene_, "read");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->items.size(), 3u);
  EXPECT_EQ(plan->items[0].sensor->spec().name, "kin");
  EXPECT_EQ(plan->items[1].sensor->spec().name, "depth");
  EXPECT_EQ(plan->items[2].sensor->spec().name, "touch");
  using sensors::Channel;
  EXPECT_THAT(plan->items[0].channels, ElementsAre(Channel::kForce, Channel::kTorque));
  EXPECT_THAT(plan->items[1].channels,
              ElementsAre(Channel::kDepth, Channel::kNormal, Channel::kArea, Channel::kPartner));
  EXPECT_THAT(plan->items[2].channels, ElementsAre(Channel::kContact, Channel::kDepth));
  EXPECT_THAT(plan->branches, ElementsAre(sensors::Branch::kMeasured));

  v1::ReadSpec none;
  none.set_none(true);
  none.add_sensors("no-such-sensor");  // `none` wins: nothing is resolved
  auto empty = PlanRead(none, *scene_, "read");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->items.empty());
}

TEST_F(CodecStepTest, ReadKeepsTheRequestedSensorOrderChannelsAndBranches) {
  v1::ReadSpec read;
  read.add_sensors("touch");
  read.add_sensors("kin");
  read.add_channels("depth");
  read.add_channels("torque");
  read.add_branches(v1::GROUND_TRUTH);
  read.add_branches(v1::MEASURED);
  auto plan = PlanRead(read, *scene_, "read");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->items.size(), 2u);
  EXPECT_EQ(plan->items[0].sensor->spec().name, "touch");
  EXPECT_THAT(plan->items[0].channels, ElementsAre(sensors::Channel::kDepth));
  EXPECT_EQ(plan->items[1].sensor->spec().name, "kin");
  EXPECT_THAT(plan->items[1].channels, ElementsAre(sensors::Channel::kTorque));
  EXPECT_THAT(plan->branches, ElementsAre(sensors::Branch::kGroundTruth, sensors::Branch::kMeasured));
}

TEST_F(CodecStepTest, ReadErrors) {
  v1::ReadSpec unknown_sensor;
  unknown_sensor.add_sensors("kin");
  unknown_sensor.add_sensors("zzz");
  auto a = PlanRead(unknown_sensor, *scene_, "read");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(a.status().message(), HasSubstr("read.sensors[1]: no sensor named 'zzz'"));

  v1::ReadSpec unknown_channel;
  unknown_channel.add_channels("force");
  unknown_channel.add_channels("forc");
  auto b = PlanRead(unknown_channel, *scene_, "read");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), HasSubstr("read.channels[1]: unknown channel 'forc'"));

  v1::ReadSpec bad_branch;
  bad_branch.add_branches(static_cast<v1::Branch>(7));
  auto c = PlanRead(bad_branch, *scene_, "read");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("read.branches[0]: expected MEASURED or GROUND_TRUTH"));
}

// ---------------------------------------------------------------------------------------------
// Readings, as the server writes them (ReadingsWireWriter) and protobuf parses them

std::string Bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }
float FloatAt(const v1::Tensor& t, size_t i) {
  float f;
  std::memcpy(&f, t.data().data() + 4 * i, 4);
  return f;
}
int32_t Int32At(const v1::Tensor& t, size_t i) {
  int32_t v;
  std::memcpy(&v, t.data().data() + 4 * i, 4);
  return v;
}

TEST_F(CodecStepTest, ReadingsOfAllEnvsHaveTheLayoutShapesAndTheSensorBuffers) {
  StepLocally();
  auto plan = PlanRead(v1::ReadSpec(), *scene_, "read");
  ASSERT_TRUE(plan.ok());
  const auto out = WrittenReadings(*plan, {0, 1}, 2);
  ASSERT_EQ(out.size(), 3);
  const auto& kin = out[0];
  EXPECT_EQ(kin.sensor(), "kin");
  EXPECT_EQ(kin.sensor_id(), 0);
  EXPECT_EQ(kin.branch(), v1::MEASURED);
  ASSERT_EQ(kin.channels().size(), 2u);
  const v1::Tensor& force = kin.channels().at("force");
  EXPECT_EQ(force.dtype(), v1::FLOAT32);
  EXPECT_THAT(force.shape(), ElementsAre(2, 3, 2, 3));  // [E, rows, cols, 3]
  const auto& o = Sensor("kin").outputs(sensors::Branch::kMeasured);
  EXPECT_EQ(force.data(), Bytes(o.force.data(), 2 * 6 * 3 * 4));
  EXPECT_THAT(kin.channels().at("torque").shape(), ElementsAre(2, 3, 2, 3));

  const auto& depth = out[1];
  EXPECT_EQ(depth.sensor_id(), 1);
  EXPECT_THAT(depth.channels().at("depth").shape(), ElementsAre(2, 3));  // [E, n]
  EXPECT_THAT(depth.channels().at("normal").shape(), ElementsAre(2, 3, 3));
  EXPECT_THAT(depth.channels().at("area").shape(), ElementsAre(2, 3));
  EXPECT_EQ(depth.channels().at("partner").dtype(), v1::INT32);
  EXPECT_THAT(depth.channels().at("partner").shape(), ElementsAre(2, 3));

  const auto& touch = out[2];
  EXPECT_EQ(touch.channels().at("contact").dtype(), v1::BOOL);
  EXPECT_THAT(touch.channels().at("contact").shape(), ElementsAre(2, 1, 2));  // [E, rows, cols]
  // Probe (0, 0) touches in both envs (3 mm and 1.99 mm deep); probe (2.5, 2.5) cm in neither.
  EXPECT_EQ(touch.channels().at("contact").data(), std::string("\x01\x00\x01\x00", 4));

  // The force on the centre-adjacent kin probe of env 0 is the closed form: at (±5 mm, 0 or ±1 cm).
  // Probe (row 1, col 0) = (−5 mm, 0, kZ): |o − c0| = √(0.005² + 0.049²) → pen = R − (|o − c0| − 0.05);
  // F = k_n·pen·n with n = (o − c0)/|o − c0| (first step: no velocity).
  const Eigen::Vector3d o10(-0.005, 0, kZ), c0(0, 0, 0.054);
  const double dist = (o10 - c0).norm();
  const Eigen::Vector3d F = 1000 * (kR - (dist - 0.05)) * (o10 - c0) / dist;
  float f[3];
  std::memcpy(f, force.data().data() + 4 * 3 * 2, 12);  // env 0, probe 2 = (row 1, col 0)
  EXPECT_NEAR(f[0], F.x(), 1e-6);
  EXPECT_NEAR(f[1], 0.0, 1e-7);
  EXPECT_NEAR(f[2], F.z(), 1e-5);
}

TEST_F(CodecStepTest, EnvSubsetsComeInTheRequestedOrder) {
  StepLocally();
  v1::ReadSpec read;
  read.add_sensors("depth");
  read.add_branches(v1::GROUND_TRUTH);
  read.add_branches(v1::MEASURED);
  auto plan = PlanRead(read, *scene_, "read");
  ASSERT_TRUE(plan.ok());
  const auto out = WrittenReadings(*plan, {1, 0}, 2);
  ASSERT_EQ(out.size(), 2);  // one per branch
  EXPECT_EQ(out[0].branch(), v1::GROUND_TRUTH);
  EXPECT_EQ(out[1].branch(), v1::MEASURED);
  const v1::Tensor& depth = out[0].channels().at("depth");
  EXPECT_THAT(depth.shape(), ElementsAre(2, 3));
  // Env 1 first (ball over x = 1 cm), then env 0 (ball over x = 0):
  //   |o − c| = 4.9 cm under the centre → depth 3 mm; √(1² + 4.9²) cm = 5.00099990 cm one probe
  //   away → depth 2 mm − 0.0099990 mm = 1.990001 mm; √(2² + 4.9²) cm > 5.2 cm → 0.
  const double side = kR - (std::sqrt(0.01 * 0.01 + 0.049 * 0.049) - 0.05);
  const std::vector<double> expected = {side, 0.003, side, 0.003, side, 0};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(FloatAt(depth, i), expected[i], 1e-9) << i;
  const auto& o = Sensor("depth").outputs(sensors::Branch::kGroundTruth);
  EXPECT_EQ(depth.data(), Bytes(o.depth.data() + 3, 12) + Bytes(o.depth.data(), 12));
  // Normals out of the ball, (0, 0, −1) under its centre; partner = link 2 (ball/body), −1 for none.
  const v1::Tensor& partner = out[0].channels().at("partner");
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(Int32At(partner, i), 2) << i;
  EXPECT_EQ(Int32At(partner, 5), -1);
  EXPECT_FLOAT_EQ(FloatAt(out[0].channels().at("normal"), 3 * 1 + 2), -1.0f);  // env 1, probe 1, z
  // Area of the cap: π(2Rd − d²) with d = 3 mm.
  EXPECT_NEAR(FloatAt(out[0].channels().at("area"), 3), kPi * (2 * kR * 0.003 - 0.003 * 0.003), 2e-12);
  EXPECT_EQ(out[1].channels().at("depth").data(), depth.data());  // no imperfections: branches agree

  const auto single = WrittenReadings(*plan, {1}, 2);
  EXPECT_THAT(single[0].channels().at("normal").shape(), ElementsAre(1, 3, 3));
  EXPECT_EQ(single[0].channels().at("depth").data(), Bytes(o.depth.data() + 3, 12));
}

TEST_F(CodecStepTest, ResponseEstimateBoundsTheEncodedSize) {
  StepLocally();
  v1::ReadSpec both;
  both.add_branches(v1::MEASURED);
  both.add_branches(v1::GROUND_TRUTH);
  for (const v1::ReadSpec& read : {v1::ReadSpec(), both}) {
    auto plan = PlanRead(read, *scene_, "read");
    ASSERT_TRUE(plan.ok());
    v1::StepResponse head;
    head.set_scene("codec");
    head.set_sequence(~uint64_t{0});
    head.set_step(int64_t{1} << 40);
    head.add_env_ids(1);
    head.add_env_ids(0);
    const std::vector<int32_t> envs = {1, 0};
    const int64_t bytes = static_cast<int64_t>(head.ByteSizeLong() + ReadingsWireWriter(*plan, envs, 2).size());
    // Data alone: per env, kin 6·3·4·2 + depth 3·(4 + 12 + 4 + 4) + touch 2·(1 + 4) = 226 bytes.
    const int64_t data =
        2 * (6 * 3 * 4 * 2 + 3 * (4 + 12 + 4 + 4) + 2 * (1 + 4)) * static_cast<int64_t>(plan->branches.size());
    const int64_t estimate = EstimateResponseBytes(*plan, 2);
    EXPECT_GE(estimate, bytes);
    EXPECT_GE(bytes, data);
    EXPECT_LE(estimate, data + 4096);  // framing only, not a multiple of the data
  }
  v1::ReadSpec none;
  none.set_none(true);
  auto plan = PlanRead(none, *scene_, "read");
  ASSERT_TRUE(plan.ok());
  EXPECT_LE(EstimateResponseBytes(*plan, 2), 2048);
}

}  // namespace
}  // namespace taxel::server
