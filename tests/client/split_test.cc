// taxel/split.h: the C++ client's steps and reads of any size.
//
// The scene: 40 envs, a hand with two 32 × 32 KinematicTaxel pads ("left" with noise 1e-3),
// force + torque float32: 2 · 1024 · 6 · 4 = 49,152 bytes of readings per env, 1.97 MB a step,
// against a server whose message limit is 1 MiB. A twin scene (same spec, same seed) is stepped
// by hand in slices of 4 envs, each slice its own step; per-env state and per-env noise draws
// make the joined step equal to the slices bit for bit.
#include "taxel/split.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "taxel/client.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

constexpr int kE = 40, kG = 32;

scene::SceneSpec TwoPads(const std::string& name) {
  scene::SceneSpec spec;
  spec.name = name;
  spec.num_envs = kE;
  spec.seed = 5;
  spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot, {Link("left", {}), Link("right", {})}));
  spec.entities.push_back(Entity("ball", scene::EntityKind::kObject, {Link("body", {SphereShape(0.005)})}));
  spec.sensors.push_back(GridSensor("left", sensors::SensorKind::kKinematicTaxel, "hand/left", kG, 0.001, 0, 0.001));
  spec.sensors.back().imperfections.noise = 1e-3;
  spec.sensors.push_back(GridSensor("right", sensors::SensorKind::kKinematicTaxel, "hand/right", kG, 0.001, 0, 0.001));
  return spec;
}

// [E, 3, 7] xyzw: left pad at the origin, right pad 5 cm along x, the ball 0.2 to 0.8 mm into
// the left pad at a spot that depends on the env and the step.
std::vector<double> Poses(int t) {
  std::vector<double> p;
  for (int e = 0; e < kE; ++e) {
    p.insert(p.end(), {0, 0, 0, 0, 0, 0, 1, 0.05, 0, 0, 0, 0, 0, 1});
    p.insert(p.end(), {0.004 * std::sin(0.1 * e + 0.3 * t), 0.004 * std::cos(0.13 * e),
                       0.005 - 0.0002 - 0.0001 * ((e + t) % 7), 0, 0, 0, 1});
  }
  return p;
}

v1::StepRequest Step(const std::string& scene, const std::vector<double>& poses, int num_envs) {
  v1::StepRequest r;
  r.set_scene(scene);
  *r.mutable_poses() = DoubleTensor({num_envs, 3, 7}, poses);
  r.set_quat_order(v1::XYZW);
  r.set_dt(0.01);
  return r;
}

template <typename Response>
void ExpectJoinedEqualsSlices(const Response& joined, const std::vector<v1::StepResponse>& slices) {
  ASSERT_EQ(joined.env_ids_size(), kE);
  for (int e = 0; e < kE; ++e) EXPECT_EQ(joined.env_ids(e), e);
  for (int k = 0; k < joined.readings_size(); ++k) {
    for (const auto& [channel, tensor] : joined.readings(k).channels()) {
      std::string want;
      for (const auto& s : slices) want += s.readings(k).channels().at(channel).data();
      EXPECT_EQ(tensor.shape(0), kE);
      EXPECT_TRUE(tensor.data() == want) << joined.readings(k).sensor() << "." << channel;
    }
  }
}

class SplitTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    server::ServerOptions o = TestServerOptions();
    o.limits.max_message_bytes = 1 << 20;
    o.limits.max_triangles_per_mesh = 0;  // the largest mesh that fits in 1 MiB
    auto s = server::TaxelServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
    Client::Options options;
    options.target = server_->target();
    options.sparse_readings = GetParam();
    auto c = Client::Connect(options);
    ASSERT_TRUE(c.ok());
    client_ = *std::move(c);
    ASSERT_TRUE(client_->CreateScene(ToWire(TwoPads("big"))).ok());
    ASSERT_TRUE(client_->CreateScene(ToWire(TwoPads("twin"))).ok());
  }
  std::vector<v1::StepResponse> TwinSlices(int t) {
    const std::vector<double> p = Poses(t);
    std::vector<v1::StepResponse> out;
    for (int s = 0; s < kE; s += 4) {
      v1::StepRequest r = Step("twin", std::vector<double>(p.begin() + s * 21, p.begin() + (s + 4) * 21), 4);
      for (int e = s; e < s + 4; ++e) r.add_env_ids(e);
      auto resp = client_->Step(r);
      EXPECT_TRUE(resp.ok()) << resp.status();
      out.push_back(resp.ok() ? *resp : v1::StepResponse());
    }
    return out;
  }
  std::unique_ptr<server::TaxelServer> server_;
  std::unique_ptr<Client> client_;
};

TEST_P(SplitTest, AStepOverTheLimitEqualsSmallSlicesAndCountsOnce) {
  std::vector<v1::StepResponse> slices;
  for (int t = 0; t < 2; ++t) {
    auto whole = client_->Step(Step("big", Poses(t), kE));
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ(whole->step(), t + 1);
    slices = TwinSlices(t);
    ExpectJoinedEqualsSlices(*whole, slices);
    // The ball presses the left pad: some force in every env.
    const std::vector<float> f = *FloatValues(whole->readings(0).channels().at("force"));
    int pressed = 0;
    for (size_t i = 2; i < f.size(); i += 3) pressed += f[i] != 0;
    EXPECT_GT(pressed, kE);
  }
  EXPECT_EQ(client_->GetScene("big")->step(), 2);
  EXPECT_EQ(client_->GetScene("twin")->step(), 2 * kE / 4);

  // A read of every env is split too, and equals the last step.
  v1::ReadSensorsRequest read;
  read.set_scene("big");
  auto all = client_->ReadSensors(read);
  ASSERT_TRUE(all.ok()) << all.status();
  ExpectJoinedEqualsSlices(*all, slices);

  // On a stream: the step goes as parts, and the stream keeps working after it.
  auto stream = client_->OpenStepStream();
  auto third = stream->Step(Step("big", Poses(2), kE));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->step(), 3);
  ExpectJoinedEqualsSlices(*third, TwinSlices(2));
  const std::vector<double> p3 = Poses(3);
  v1::StepRequest small = Step("big", std::vector<double>(p3.begin(), p3.begin() + 21), 1);
  small.add_env_ids(7);
  auto fourth = stream->Step(small);
  ASSERT_TRUE(fourth.ok()) << fourth.status();
  EXPECT_EQ(fourth->step(), 4);
  EXPECT_TRUE(stream->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(DenseAndSparse, SplitTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Sparse" : "Dense"; });

// The estimate, by hand: per env 5 (env id) + 2 sensors × 2 channels × 1024 probes × 3 × 4 B =
// 49,157 B dense, plus 2 × 2 × 3072 / 8 = 1,536 B of masks when sparse; fixed 1024 + 2 × 128 +
// 4 × 64 = 1,536 B. At 1 MiB: (0.9 · 1,048,576 − 1,536) / 49,157 = 19.16 → 19 envs a part.
TEST(SplitEstimateTest, ReadingBytesAndEnvsPerPart) {
  v1::SceneInfo info;
  for (const char* name : {"left", "right"}) {
    v1::SensorInfo* s = info.add_sensors();
    s->set_name(name);
    for (const char* ch : {"force", "torque"}) {
      v1::OutputInfo* o = s->add_outputs();
      o->set_channel(ch);
      o->set_dtype(v1::FLOAT32);
      for (int64_t d : {40, 32, 32, 3}) o->add_shape(d);
    }
  }
  v1::ReadSpec read;
  int64_t per_env = 0, fixed = 0;
  internal::ReadingBytes(info, read, 0, &per_env, &fixed);
  EXPECT_EQ(per_env, 49157);
  EXPECT_EQ(fixed, 1536);
  EXPECT_EQ(internal::EnvsPerPart(1 << 20, per_env, fixed, 40), 19);
  EXPECT_EQ(internal::EnvsPerPart(64 << 20, per_env, fixed, 40), 40) << "all fit";
  read.set_sparse(true);
  internal::ReadingBytes(info, read, 0, &per_env, &fixed);
  EXPECT_EQ(per_env, 49157 + 1536);
  read.add_channels("force");
  read.add_sensors("left");
  internal::ReadingBytes(info, read, 3, &per_env, &fixed);  // 3 samples of one channel
  EXPECT_EQ(per_env, 5 + 3 * (12288 + 384));
}

// StepPart: env rows of flat poses, twists and the reported contacts of the part's envs.
TEST(SplitEstimateTest, APartCarriesItsEnvsRowsAndContacts) {
  v1::StepRequest whole;
  whole.set_scene("s");
  std::vector<double> poses;
  for (int e = 0; e < 4; ++e) poses.insert(poses.end(), {double(e), 0, 0, 0, 0, 0, 1, double(e), 1, 0, 0, 0, 0, 1});
  *whole.mutable_poses() = DoubleTensor({8, 7}, poses);  // flat [E·L, 7], L = 2
  whole.add_env_ids(3), whole.add_env_ids(1), whole.add_env_ids(0), whole.add_env_ids(2);
  *whole.mutable_contacts()->mutable_env() = Int32Tensor({3}, std::vector<int32_t>{1, 3, 1});
  *whole.mutable_contacts()->mutable_body() = Int32Tensor({3}, std::vector<int32_t>{0, 0, 1});
  *whole.mutable_contacts()->mutable_partner() = Int32Tensor({3}, std::vector<int32_t>{2, 2, 2});
  *whole.mutable_contacts()->mutable_force() = DoubleTensor({3, 3}, std::vector<double>{1, 0, 0, 2, 0, 0, 3, 0, 0});
  const std::vector<int32_t> envs(whole.env_ids().begin(), whole.env_ids().end());
  auto part = internal::StepPart(whole, envs, 1, 2);  // envs 1 and 0: rows 1 and 2 of the poses
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_THAT(part->env_ids(), ::testing::ElementsAre(1, 0));
  EXPECT_TRUE(part->continues_step());
  EXPECT_THAT(part->poses().shape(), ::testing::ElementsAre(4, 7));
  EXPECT_EQ(part->poses().data(), whole.poses().data().substr(1 * 14 * 8, 2 * 14 * 8));
  // Contacts 0 and 2 are env 1's; contact 1 (env 3) belongs to another part.
  EXPECT_EQ(part->contacts().env().data(), Int32Tensor({2}, std::vector<int32_t>{1, 1}).data());
  EXPECT_EQ(part->contacts().force().data(), DoubleTensor({2, 3}, std::vector<double>{1, 0, 0, 3, 0, 0}).data());
  EXPECT_THAT(part->contacts().force().shape(), ::testing::ElementsAre(2, 3));
  auto first = internal::StepPart(whole, envs, 0, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->continues_step());
  *whole.mutable_poses() = DoubleTensor({7, 7}, std::vector<double>(49, 0));
  EXPECT_EQ(internal::StepPart(whole, envs, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace taxel::testing
