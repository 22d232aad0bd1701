// ReadSpec.gradients over gRPC through the C++ client: the gradient channels, their shapes and
// bytes against the in-process core, the sphere's closed form, and the refusals.
#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kEnvs = 3;

class ServiceGradientsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (HasFatalFailure()) return;
    spec_ = GraspSpec("grasp", kEnvs, SphereShape(kBallR));
    ASSERT_TRUE(client_->CreateScene(ToWire(spec_)).ok());
    local_ = LocalScene::Create(spec_);
    ASSERT_NE(local_, nullptr);
  }
  v1::StepRequest GradientStep(int s, const std::string& scene = "grasp") {
    v1::StepRequest req = MakeStep(scene, kEnvs, MovingPoses(kEnvs, s), MovingTwists(kEnvs, s));
    req.mutable_read()->set_gradients(true);
    return req;
  }
  // The fixture's scene with one more sensor, created as `name`.
  void CreateWithSensor(const sensors::SensorSpec& extra, const std::string& name) {
    v1::SceneSpec wire = ToWire(spec_);
    server::EncodeSensorSpec(extra, wire.add_sensors());
    wire.set_name(name);
    ASSERT_TRUE(client_->CreateScene(wire).ok());
  }
  // The same step in the core, with gradients.
  void LocalStep(int s) {
    const std::vector<double> poses = MovingPoses(kEnvs, s), twists = MovingTwists(kEnvs, s);
    scene::StepInput in;
    in.poses = poses, in.twists = twists, in.quat_order = QuatOrder::kXyzw, in.dt = 0.01, in.gradients = true;
    InlineExecutor ex;
    ASSERT_TRUE(local_->scene().Step(in, ex).ok());
  }
  scene::SceneSpec spec_;
  std::unique_ptr<LocalScene> local_;
};

const v1::Tensor* Find(const v1::StepResponse& r, const std::string& sensor, const std::string& channel) {
  for (const v1::SensorReading& reading : r.readings()) {
    if (reading.sensor() != sensor) continue;
    auto it = reading.channels().find(channel);
    return it == reading.channels().end() ? nullptr : &it->second;
  }
  return nullptr;
}

std::string Bytes(const std::vector<float>& v, size_t per_env, int envs) {
  return std::string(reinterpret_cast<const char*>(v.data()), per_env * envs * sizeof(float));
}

TEST_F(ServiceGradientsTest, StepReturnsEachSensorsGradientShapedAndEqualToTheCore) {
  for (int s = 0; s < 3; ++s) {
    auto response = client_->Step(GradientStep(s));  // sparse on the wire, expanded by the client
    ASSERT_TRUE(response.ok()) << response.status();
    LocalStep(s);
    const v1::Tensor* kin = Find(*response, "kin", "force_gradient");
    const v1::Tensor* depth = Find(*response, "depth", "depth_gradient");
    const v1::Tensor* touch = Find(*response, "touch", "depth_gradient");
    ASSERT_TRUE(kin && depth && touch);
    EXPECT_THAT(kin->shape(), ElementsAre(kEnvs, 5, 5, 3, 2, 6));
    EXPECT_THAT(depth->shape(), ElementsAre(kEnvs, 3, 2, 6));
    EXPECT_THAT(touch->shape(), ElementsAre(kEnvs, 2, 2, 6));
    EXPECT_EQ(kin->dtype(), v1::FLOAT32);
    const scene::Scene& local = local_->scene();
    EXPECT_EQ(kin->data(),
              Bytes(local.FindSensor("kin")->outputs(sensors::Branch::kGroundTruth).force_gradient, 25 * 36, kEnvs));
    EXPECT_EQ(depth->data(),
              Bytes(local.FindSensor("depth")->outputs(sensors::Branch::kGroundTruth).depth_gradient, 3 * 12, kEnvs));
    EXPECT_EQ(touch->data(),
              Bytes(local.FindSensor("touch")->outputs(sensors::Branch::kGroundTruth).depth_gradient, 2 * 12, kEnvs));
  }
}

// Against a ball, the depth's gradient has a closed form: with u = (o − c)/|o − c| (the ball's
// outward normal at the probe centre o, c the ball's centre),
//   ∂d/∂t_partner = u, ∂d/∂θ_partner = (o − c) × u = 0 (rotating the ball about its centre),
//   ∂d/∂t_sensor = −u, ∂d/∂θ_sensor = −(o − p_pad) × u.
TEST_F(ServiceGradientsTest, DepthGradientAgainstTheBallMatchesTheClosedForm) {
  const int s = 2;
  auto response = client_->Step(GradientStep(s));
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::Tensor* g = Find(*response, "depth", "depth_gradient");
  const v1::Tensor* d = Find(*response, "depth", "depth");
  ASSERT_TRUE(g && d);
  const std::vector<double> poses = MovingPoses(kEnvs, s);
  const Eigen::Vector3d probes[3] = {{0, 0, kPadHalfZ}, {0.01, 0, kPadHalfZ}, {0.02, 0, kPadHalfZ}};
  int touching = 0;
  for (int e = 0; e < kEnvs; ++e) {
    const double* pad = &poses[14 * e];
    const Eigen::Quaterniond q(pad[6], pad[3], pad[4], pad[5]);
    const Eigen::Vector3d p_pad(pad[0], pad[1], pad[2]), c(poses[14 * e + 7], poses[14 * e + 8], poses[14 * e + 9]);
    for (int k = 0; k < 3; ++k) {
      const size_t base = (static_cast<size_t>(e) * 3 + k) * 12;
      if (FloatAt(*d, e * 3 + k) == 0) {
        for (int j = 0; j < 12; ++j) EXPECT_EQ(FloatAt(*g, base + j), 0.f);
        continue;
      }
      ++touching;
      const Eigen::Vector3d o = q * probes[k] + p_pad, u = (o - c).normalized();
      const Eigen::Vector3d w = -(o - p_pad).cross(u);
      for (int a = 0; a < 3; ++a) {
        EXPECT_NEAR(FloatAt(*g, base + a), -u[a], 1e-6) << e << " " << k;
        EXPECT_NEAR(FloatAt(*g, base + 3 + a), w[a], 1e-7);
        EXPECT_NEAR(FloatAt(*g, base + 6 + a), u[a], 1e-6);
        EXPECT_NEAR(FloatAt(*g, base + 9 + a), 0, 1e-7);
      }
    }
  }
  EXPECT_GE(touching, 3);
}

TEST_F(ServiceGradientsTest, WithoutTheFlagNoGradientIsSent) {
  auto response = client_->Step(MakeStep("grasp", kEnvs, MovingPoses(kEnvs, 0)));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(Find(*response, "depth", "depth_gradient"), nullptr);
  EXPECT_EQ(Find(*response, "kin", "force_gradient"), nullptr);
}

// Each refusal names read.gradients and its rule, and changes nothing (the step count stays).
TEST_F(ServiceGradientsTest, RefusalsNameTheFieldAndTheRule) {
  ASSERT_TRUE(client_->Step(GradientStep(0)).ok());
  // A kind without gradients.
  sensors::SensorSpec gel =
      GridSensor("gel", sensors::SensorKind::kElastomerTaxel, "hand/pad", 4, 0.005, kPadHalfZ, 0.001);
  gel.probe_local_normal = {{0, 0, 1}};
  gel.track_links = {"ball/body"};
  gel.n_sample_points = 50;
  CreateWithSensor(gel, "with_gel");
  v1::StepRequest req = GradientStep(1, "with_gel");
  auto refused = UnsplitStep(*client_, req);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("read.gradients: sensor 'gel' (elastomer_taxel) has no gradients"));
  req.mutable_read()->add_sensors("depth");  // listing the others is fine
  EXPECT_TRUE(UnsplitStep(*client_, req).ok());

  // The gradient's channel left out.
  req = GradientStep(1);
  req.mutable_read()->add_channels("normal");
  refused = UnsplitStep(*client_, req);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      refused.status().message(),
      HasSubstr("read.gradients: sensor 'kin': its gradient is that of 'force', which read.channels leaves out"));

  // ReadSensors.
  v1::ReadSensorsRequest read;
  read.set_scene("grasp");
  read.mutable_read()->set_gradients(true);
  auto read_refused = UnsplitRead(*client_, read);
  EXPECT_EQ(read_refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read_refused.status().message(), HasSubstr("read.gradients: gradients are computed by a step"));

  auto after = client_->Step(GradientStep(1));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->step(), 2);  // the refused steps did not count
}

TEST_F(ServiceGradientsTest, ImperfectSensorsCarryTheGroundTruthsGradient) {
  sensors::SensorSpec noisy = spec_.sensors[1];
  noisy.name = "noisy";
  noisy.imperfections.noise = 0.001;
  CreateWithSensor(noisy, "noisy");
  v1::StepRequest req = GradientStep(1, "noisy");
  auto refused = UnsplitStep(*client_, req);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("sensor 'noisy' has imperfections"));
  req.mutable_read()->add_branches(v1::MEASURED);
  req.mutable_read()->add_branches(v1::GROUND_TRUTH);
  auto response = client_->Step(req);
  ASSERT_TRUE(response.ok()) << response.status();
  int noisy_gradients = 0, depth_gradients = 0;
  for (const v1::SensorReading& r : response->readings()) {
    const bool has = r.channels().count("depth_gradient") > 0;
    if (r.sensor() == "noisy") {
      noisy_gradients += has;
      EXPECT_EQ(has, r.branch() == v1::GROUND_TRUTH);
    }
    if (r.sensor() == "depth") depth_gradients += has;  // no imperfections: both branches
  }
  EXPECT_EQ(noisy_gradients, 1);
  EXPECT_EQ(depth_gradients, 2);
}

}  // namespace
}  // namespace taxel::testing
