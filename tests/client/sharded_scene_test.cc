// taxel::ShardedScene over 3 in-process servers on 127.0.0.1:0 against the same scene on one of
// them: steps of every env, steps with env_ids (the caller's order, the poses' rows in that
// order), resets of some envs, reads and contact-matrix reads return the same bytes. And the env
// split rule and the global env-id checks.
#include "taxel/sharded_scene.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/server/service_fixture.h"

namespace taxel {
namespace {

using ::testing::HasSubstr;
using namespace taxel::testing;  // NOLINT

constexpr int kEnvs = 10;  // SplitEnvs(10, 3): [0, 4), [4, 7), [7, 10)

TEST(SplitEnvsTest, ContiguousRangesTheFirstNModKOneLonger) {
  auto r = SplitEnvs(10, 3);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  const int32_t expected[3][2] = {{0, 4}, {4, 3}, {7, 3}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*r)[i].start, expected[i][0]);
    EXPECT_EQ((*r)[i].count, expected[i][1]);
  }
  auto even = SplitEnvs(1024, 2);
  ASSERT_TRUE(even.ok());
  EXPECT_EQ((*even)[1].start, 512);
  EXPECT_EQ((*even)[1].count, 512);
  auto bad = SplitEnvs(2, 3);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("num_shards: expected 1..num_envs (2) shards, got 3"));
}

// The grasp scene of service_fixture.h with every imperfection on the KinematicTaxel and a
// contact matrix (pad vs the ball, with friction).
v1::SceneSpec ImperfectSpec(const std::string& name) {
  scene::SceneSpec spec = GraspSpec(name, kEnvs, SphereShape(kBallR));
  auto& im = spec.sensors[0].imperfections;
  im.probe_radius_noise = 2e-4;
  im.probe_gain_resample_range = {{0.8, 1.2}};
  im.crosstalk_strength = 0.3, im.crosstalk_sigma = 0.01;
  im.hysteresis_strength = 0.2, im.hysteresis_tau = 0.05;
  im.random_walk = 1e-4, im.noise = 1e-4, im.bias = 1e-5, im.resolution = 1e-6;
  im.dead_taxel_probability = 0.2, im.dead_taxel_value_range = {-1.0, 1.0};
  im.delay = 0.02, im.jitter = 0.01;
  spec.contact_matrix.bodies = {"pad"};
  spec.contact_matrix.partners = {"object/*"};
  spec.contact_matrix.friction = true;
  return ToWire(spec);
}

class ShardedSceneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<Client*> raw;
    for (int i = 0; i < 3; ++i) {
      auto s = server::TaxelServer::Start(TestServerOptions());
      ASSERT_TRUE(s.ok()) << s.status();
      auto c = Client::Connect((*s)->target());
      ASSERT_TRUE(c.ok());
      raw.push_back(c->get());
      servers_.push_back(*std::move(s));
      clients_.push_back(*std::move(c));
    }
    ASSERT_TRUE(clients_[0]->CreateScene(ImperfectSpec("whole")).ok());
    auto sharded = ShardedScene::Create(raw, ImperfectSpec("sharded"));
    ASSERT_TRUE(sharded.ok()) << sharded.status();
    sharded_ = *std::move(sharded);
  }

  // Poses of global envs `envs` (all when empty) at step s, rows in that order.
  static v1::StepRequest StepOf(const std::string& scene, const std::vector<int32_t>& envs, int s) {
    const std::vector<double> all = MovingPoses(kEnvs, s);
    std::vector<double> rows = envs.empty() ? all : std::vector<double>();
    for (int32_t e : envs) rows.insert(rows.end(), all.begin() + e * 14, all.begin() + (e + 1) * 14);
    v1::StepRequest req = MakeStep(scene, envs.empty() ? kEnvs : static_cast<int>(envs.size()), rows);
    req.mutable_env_ids()->Assign(envs.begin(), envs.end());
    req.mutable_read()->add_branches(v1::MEASURED);
    req.mutable_read()->add_branches(v1::GROUND_TRUTH);
    return req;
  }

  std::vector<std::unique_ptr<server::TaxelServer>> servers_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::unique_ptr<ShardedScene> sharded_;
};

template <typename Response>
void ExpectSameReadings(const Response& a, const Response& b, const std::string& when) {
  ASSERT_EQ(a.env_ids_size(), b.env_ids_size()) << when;
  for (int i = 0; i < a.env_ids_size(); ++i) EXPECT_EQ(a.env_ids(i), b.env_ids(i)) << when;
  ASSERT_EQ(a.readings_size(), b.readings_size()) << when;
  for (int i = 0; i < a.readings_size(); ++i) {
    const auto& ra = a.readings(i);
    const auto& rb = b.readings(i);
    EXPECT_EQ(ra.sensor(), rb.sensor());
    EXPECT_EQ(ra.branch(), rb.branch());
    ASSERT_EQ(ra.channels_size(), rb.channels_size());
    for (const auto& [name, t] : ra.channels()) {
      const v1::Tensor& u = rb.channels().at(name);
      EXPECT_EQ(t.dtype(), u.dtype());
      ASSERT_EQ(t.shape_size(), u.shape_size());
      for (int k = 0; k < t.shape_size(); ++k) EXPECT_EQ(t.shape(k), u.shape(k));
      // Bit for bit.
      EXPECT_TRUE(t.data() == u.data()) << when << ": " << ra.sensor() << "." << name;
    }
  }
}

void ExpectSameMatrix(const v1::GetContactMatrixResponse& a, const v1::GetContactMatrixResponse& b,
                      const std::string& when) {
  ASSERT_EQ(a.env_ids_size(), b.env_ids_size()) << when;
  for (int i = 0; i < a.env_ids_size(); ++i) EXPECT_EQ(a.env_ids(i), b.env_ids(i)) << when;
  EXPECT_EQ(a.rows_size(), b.rows_size());
  EXPECT_TRUE(a.normal().data() == b.normal().data()) << when << ": normal";
  EXPECT_TRUE(a.friction().data() == b.friction().data()) << when << ": friction";
  EXPECT_FALSE(a.normal().data().empty());
}

TEST_F(ShardedSceneTest, ReadsBitForBitWhatOneServerReads) {
  const std::vector<std::vector<int32_t>> plan = {{}, {}, {8, 1, 5, 0, 9}, {}, {}, {6, 2}, {}, {3, 7, 4}, {}};
  for (int s = 0; s < static_cast<int>(plan.size()); ++s) {
    const std::string when = "step " + std::to_string(s);
    if (s == 4) {
      ASSERT_TRUE(clients_[0]->ResetEnvs("whole", std::vector<int32_t>{2, 5, 9}).ok());
      ASSERT_TRUE(sharded_->ResetEnvs(std::vector<int32_t>{2, 5, 9}).ok());
    }
    v1::StepRequest whole_req = StepOf("whole", plan[s], s);
    whole_req.mutable_read()->set_contact_matrix(true);
    v1::StepRequest sharded_req = whole_req;
    sharded_req.set_scene("sharded");
    auto a = clients_[0]->Step(whole_req);
    auto b = sharded_->Step(sharded_req);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    ExpectSameReadings(*a, *b, when);
    ExpectSameMatrix(a->contact_matrix(), b->contact_matrix(), when);
    EXPECT_EQ(b->step(), s + 1);

    v1::ReadSensorsRequest read;
    for (int32_t e : {9, 0, 4, 3}) read.add_env_ids(e);
    read.mutable_read()->add_branches(v1::GROUND_TRUTH);
    read.set_scene("whole");
    auto ra = clients_[0]->ReadSensors(read);
    auto rb = sharded_->ReadSensors(read);
    ASSERT_TRUE(ra.ok() && rb.ok());
    ExpectSameReadings(*ra, *rb, when + " read");

    v1::GetContactMatrixRequest cm;
    cm.set_scene("whole");
    cm.set_friction(true);
    auto ca = clients_[0]->GetContactMatrix(cm);
    auto cb = sharded_->GetContactMatrix(cm);
    ASSERT_TRUE(ca.ok() && cb.ok()) << ca.status() << cb.status();
    ExpectSameMatrix(*ca, *cb, when + " matrix");
  }
}

TEST_F(ShardedSceneTest, TheStreamMatchesTheUnarySteps) {
  auto stream = sharded_->OpenStepStream();
  for (int s = 0; s < 3; ++s) {
    const std::vector<int32_t> envs = s == 1 ? std::vector<int32_t>{9, 2} : std::vector<int32_t>{};
    auto a = clients_[0]->Step(StepOf("whole", envs, s));
    auto b = stream->Step(StepOf("sharded", envs, s));
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    ExpectSameReadings(*a, *b, "stream step " + std::to_string(s));
    EXPECT_EQ(b->sequence(), static_cast<uint64_t>(s + 1));
  }
  EXPECT_TRUE(stream->Close().ok());
}

TEST_F(ShardedSceneTest, EnvIdsAndPosesAreCheckedInTheGlobalNumbering) {
  v1::StepRequest req = StepOf("sharded", {1, 10}, 0);
  auto r = sharded_->Step(req);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(r.status().message(), HasSubstr("env_ids[1]: env id 10 out of range [0, 10)"));
  EXPECT_THAT(sharded_->ResetEnvs(std::vector<int32_t>{5, 5}).message(),
              HasSubstr("env_ids[1]: env id 5 appears more than once"));
  v1::StepRequest short_poses = StepOf("sharded", {1, 2}, 0);
  short_poses.clear_env_ids();
  auto p = sharded_->Step(short_poses);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("poses: expected 10 envs on the first axis"));
}

}  // namespace
}  // namespace taxel
