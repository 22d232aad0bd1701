// The sensors of the imperfections issue over gRPC: ElastomerTaxel, ProximityTaxel and the
// measured branch, history reads and run-time updates, against the in-process core.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kEnvs = 3;

// The grasp scene plus an 8×8 elastomer gel on the pad and a 4×4 proximity skin, both tracking
// the ball, and imperfections on the kinematic taxel.
scene::SceneSpec SensorsSpec(const std::string& name) {
  scene::SceneSpec spec = GraspSpec(name, kEnvs, SphereShape(kBallR));
  sensors::SensorSpec& kin = spec.sensors[0];
  kin.imperfections.probe_gain = {1.5};
  kin.imperfections.noise = 0.01;
  kin.imperfections.history_length = 3;
  sensors::SensorSpec gel =
      GridSensor("gel", sensors::SensorKind::kElastomerTaxel, "hand/pad", 8, 0.005, kPadHalfZ, 0.001);
  gel.probe_local_normal = {{0, 0, 1}};
  gel.track_links = {"ball/body"};
  gel.n_sample_points = 200;
  gel.imperfections.hysteresis_strength = 0.5;
  gel.imperfections.hysteresis_tau = 0.05;
  spec.sensors.push_back(gel);
  sensors::SensorSpec prox =
      GridSensor("prox", sensors::SensorKind::kProximityTaxel, "hand/pad", 4, 0.01, kPadHalfZ, 0.006);
  prox.probe_local_normal = {{0, 0, 1}};
  prox.track_links = {"ball"};
  prox.n_sample_points = 300;
  prox.proximity.twist_scalar = 0.5;
  prox.imperfections.delay = 0.02;
  prox.imperfections.crosstalk_strength = 0.3;
  prox.imperfections.crosstalk_sigma = 0.01;
  spec.sensors.push_back(prox);
  return spec;
}

class ServiceSensorsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (HasFatalFailure()) return;
    spec_ = SensorsSpec("sensors");
    auto created = client_->CreateScene(ToWire(spec_));
    ASSERT_TRUE(created.ok()) << created.status();
    info_ = *created;
    local_ = LocalScene::Create(spec_);
    ASSERT_NE(local_, nullptr);
  }
  scene::SceneSpec spec_;
  v1::SceneInfo info_;
  std::unique_ptr<LocalScene> local_;
};

TEST_F(ServiceSensorsTest, SceneInfoDescribesTheNewSensors) {
  ASSERT_EQ(info_.sensors_size(), 5);
  const v1::SensorInfo& gel = info_.sensors(3);
  EXPECT_EQ(gel.kind(), v1::ELASTOMER_TAXEL);
  ASSERT_EQ(gel.outputs_size(), 1);
  EXPECT_EQ(gel.outputs(0).channel(), "displacement");
  EXPECT_THAT(gel.outputs(0).shape(), ::testing::ElementsAre(kEnvs, 8, 8, 3));
  EXPECT_TRUE(gel.has_imperfections());
  EXPECT_TRUE(info_.sensors(0).has_imperfections());
  EXPECT_EQ(info_.sensors(0).history_length(), 3);
  EXPECT_FALSE(info_.sensors(1).has_imperfections());
  EXPECT_EQ(info_.sensors(4).kind(), v1::PROXIMITY_TAXEL);
}

TEST_F(ServiceSensorsTest, BothBranchesEqualTheCoreBitForBit) {
  // The server evaluates on 2 threads, the reference on the calling thread: the measured branch
  // (noise, hysteresis, crosstalk, delay) must still be identical.
  int compared = 0;
  for (int s = 0; s < 5; ++s) {
    const auto poses = MovingPoses(kEnvs, s);
    v1::StepRequest req = MakeStep("sensors", kEnvs, poses);
    req.mutable_read()->add_branches(v1::MEASURED);
    req.mutable_read()->add_branches(v1::GROUND_TRUTH);
    auto r = client_->Step(req);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(local_->Step(poses).ok());
    compared += ExpectReadingsEqualLocal(r->readings(), local_->scene(), {0, 1, 2});
  }
  EXPECT_EQ(compared, 5 * 2 * (2 + 4 + 2 + 1 + 2));
  // The ball is pressed into the pad: the gel and the proximity skin see it, and the measured
  // kinematic force differs from the truth (gain 1.5 and noise).
  const auto* gel = local_->scene().FindSensor("gel");
  float max_u = 0;
  for (float v : gel->outputs(sensors::Branch::kGroundTruth).displacement) max_u = std::max(max_u, std::abs(v));
  EXPECT_GT(max_u, 0.f);
  const auto* kin = local_->scene().FindSensor("kin");
  EXPECT_NE(kin->outputs(sensors::Branch::kMeasured).force, kin->outputs(sensors::Branch::kGroundTruth).force);
}

TEST_F(ServiceSensorsTest, HistoryIsNewestFirstAndZeroFilled) {
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(client_->Step(MakeStep("sensors", kEnvs, MovingPoses(kEnvs, s))).ok());
  v1::ReadSensorsRequest req;
  req.set_scene("sensors");
  req.add_env_ids(2);
  req.mutable_read()->add_sensors("kin");
  req.set_history(3);
  auto r = client_->ReadSensors(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->readings_size(), 1);
  const v1::Tensor& f = r->readings(0).channels().at("force");
  EXPECT_THAT(f.shape(), ::testing::ElementsAre(1, 3, 5, 5, 3));
  // Index 0 is the latest measured sample (no delay on this sensor): the current reading.
  v1::ReadSensorsRequest now;
  now.set_scene("sensors");
  now.add_env_ids(2);
  now.mutable_read()->add_sensors("kin");
  auto current = client_->ReadSensors(now);
  ASSERT_TRUE(current.ok());
  const std::string& cur = current->readings(0).channels().at("force").data();
  const size_t sample = 25 * 3 * 4;
  EXPECT_EQ(f.data().substr(0, sample), cur);
  // Index 2: only two steps so far → zeros.
  EXPECT_EQ(f.data().substr(2 * sample, sample), std::string(sample, '\0'));
  // Index 1 differs from index 0 (the ball moved and the noise changed).
  EXPECT_NE(f.data().substr(sample, sample), f.data().substr(0, sample));
  // More than kept, or a sensor without a pipeline, is refused.
  req.set_history(4);
  EXPECT_THAT(client_->ReadSensors(req).status().message(), HasSubstr("history: sensor 'kin' keeps 3 samples"));
  req.set_history(1);
  req.mutable_read()->clear_sensors();
  req.mutable_read()->add_sensors("depth");
  EXPECT_EQ(client_->ReadSensors(req).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ServiceSensorsTest, HistoryOfSeveralEnvsComesInRequestOrderDenseAndSparse) {
  for (int s = 0; s < 3; ++s) ASSERT_TRUE(client_->Step(MakeStep("sensors", kEnvs, MovingPoses(kEnvs, s))).ok());
  // A client that leaves sparse responses as the server sent them.
  Client::Options o;
  o.target = server_->target();
  o.sparse_readings = false;
  auto raw = Client::Connect(o);
  ASSERT_TRUE(raw.ok()) << raw.status();
  auto history = [&](std::vector<int32_t> envs, bool sparse) {
    v1::ReadSensorsRequest req;
    req.set_scene("sensors");
    for (int32_t e : envs) req.add_env_ids(e);
    req.mutable_read()->add_sensors("kin");
    req.mutable_read()->set_sparse(sparse);
    req.set_history(3);
    auto r = (*raw)->ReadSensors(req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->readings(0).channels().at("force") : v1::Tensor();
  };
  // [envs, history, 5, 5, 3]: env 2's block of three samples, then env 0's, each the same as a
  // read of that env alone.
  const v1::Tensor both = history({2, 0}, false);
  EXPECT_THAT(both.shape(), ::testing::ElementsAre(2, 3, 5, 5, 3));
  const size_t block = 3 * 25 * 3 * 4;
  ASSERT_EQ(both.data().size(), 2 * block);
  EXPECT_EQ(both.data().substr(0, block), history({2}, false).data());
  EXPECT_EQ(both.data().substr(block), history({0}, false).data());
  EXPECT_NE(both.data().substr(0, block), both.data().substr(block));
  // The sparse form (this client does not expand it) expands to the same bytes.
  v1::Tensor sparse = history({2, 0}, true);
  EXPECT_FALSE(sparse.nonzero_mask().empty());
  ASSERT_TRUE(ExpandTensor(&sparse).ok());
  EXPECT_EQ(sparse.data(), both.data());
}

TEST_F(ServiceSensorsTest, UpdateSensorSetsGainsPerEnvAndNoise) {
  // Silence the noise, then set env 1's gains to 2: measured = gain × truth exactly.
  v1::UpdateSensorRequest up;
  up.set_scene("sensors");
  up.set_sensor("kin");
  up.set_noise(0.0);
  up.add_env_ids(1);
  *up.mutable_probe_gain() = DoubleTensor({25}, std::vector<double>(25, 2.0));
  grpc::ClientContext ctx;
  v1::SensorInfo info;
  ASSERT_TRUE(client_->stub().UpdateSensor(&ctx, up, &info).ok());
  ASSERT_TRUE(client_->Step(MakeStep("sensors", kEnvs, MovingPoses(kEnvs, 3))).ok());
  ASSERT_TRUE(local_->Step(MovingPoses(kEnvs, 3)).ok());
  v1::ReadSensorsRequest req;
  req.set_scene("sensors");
  req.mutable_read()->add_sensors("kin");
  req.mutable_read()->add_channels("force");
  req.mutable_read()->add_branches(v1::MEASURED);
  req.mutable_read()->add_branches(v1::GROUND_TRUTH);
  auto r = client_->ReadSensors(req);
  ASSERT_TRUE(r.ok());
  const v1::Tensor& m = r->readings(0).channels().at("force");
  const v1::Tensor& t = r->readings(1).channels().at("force");
  int nonzero = 0;
  for (int e = 0; e < kEnvs; ++e) {
    const double gain = e == 1 ? 2.0 : 1.5;
    for (int k = 0; k < 75; ++k) {
      const float truth = FloatAt(t, e * 75 + k), measured = FloatAt(m, e * 75 + k);
      EXPECT_FLOAT_EQ(measured, static_cast<float>(gain * truth)) << "env " << e << " value " << k;
      nonzero += truth != 0;
    }
  }
  EXPECT_GT(nonzero, 10);
  // Errors: unknown sensor, a sensor without imperfections, a gain array of the wrong size.
  grpc::ClientContext c2;
  up.set_sensor("nope");
  EXPECT_EQ(client_->stub().UpdateSensor(&c2, up, &info).error_code(), grpc::StatusCode::NOT_FOUND);
  grpc::ClientContext c3;
  up.set_sensor("depth");
  EXPECT_EQ(client_->stub().UpdateSensor(&c3, up, &info).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  grpc::ClientContext c4;
  up.set_sensor("kin");
  *up.mutable_probe_gain() = DoubleTensor({3}, {1.0, 2.0, 3.0});
  const grpc::Status bad = client_->stub().UpdateSensor(&c4, up, &info);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(BadRequestField(bad), "probe_gain");
}

TEST_F(ServiceSensorsTest, OptionErrorsNameTheirFields) {
  v1::SensorSpec s;
  server::EncodeSensorSpec(spec_.sensors[0], &s);
  s.set_name("k2");
  s.mutable_imperfections()->set_hysteresis_strength(0.5);
  s.mutable_imperfections()->set_hysteresis_tau(0);
  auto r = client_->AddSensor("sensors", s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("sensor.imperfections.hysteresis_tau"));
  s.mutable_imperfections()->set_hysteresis_strength(0);
  *s.mutable_imperfections()->mutable_crosstalk_kernel() = DoubleTensor({2, 2}, {1, 0, 0, 0});
  EXPECT_THAT(client_->AddSensor("sensors", s).status().message(), HasSubstr("odd-sized"));
  s.mutable_imperfections()->clear_crosstalk_kernel();
  s.mutable_imperfections()->set_delay(0.01);
  s.mutable_imperfections()->set_jitter(0.02);
  EXPECT_THAT(client_->AddSensor("sensors", s).status().message(), HasSubstr("jitter <= delay"));
  // jitter ≤ dt is checked per step: a step with dt below a sensor's jitter is refused.
  s.mutable_imperfections()->set_delay(0.05);
  ASSERT_TRUE(client_->AddSensor("sensors", s).ok());
  v1::StepRequest step = MakeStep("sensors", kEnvs, MovingPoses(kEnvs, 0));
  step.set_dt(0.01);
  auto refused = client_->Step(step);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("dt: sensor 'k2' has a jitter of 0.02 s"));
  EXPECT_EQ(client_->GetScene("sensors")->step(), 0);
  // An unknown tracked link.
  v1::SensorSpec g;
  server::EncodeSensorSpec(spec_.sensors[3], &g);
  g.set_name("g2");
  g.set_track_links(0, "nowhere");
  auto nf = client_->AddSensor("sensors", g);
  EXPECT_EQ(nf.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(nf.status().message(), HasSubstr("sensor.track_links[0]: unknown link 'nowhere'"));
}

}  // namespace
}  // namespace taxel::testing
