// The hand-written StepResponse bytes (server/step_wire.h): protobuf parses them into the message
// that EncodeReadings builds, for every read and env order; where the map order cannot differ
// (one channel per reading) they are protobuf's own bytes.
#include "server/step_wire.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"
#include "tests/support/reference_readings.h"

namespace taxel::server {
namespace {

using namespace taxel::testing;  // NOLINT

constexpr int kEnvs = 4;

// The protobuf encoding examples of https://protobuf.dev/programming-guides/encoding/.
TEST(WireVarintTest, MatchesTheProtobufEncodingExamples) {
  const auto bytes = [](uint64_t v) {
    char buf[10];
    return std::string(buf, internal::WriteVarint(v, buf));
  };
  EXPECT_EQ(bytes(1), "\x01");
  EXPECT_EQ(bytes(150), "\x96\x01");  // 150 = 0b1_0010110 → 0x96 0x01
  EXPECT_EQ(bytes(300), "\xac\x02");
  EXPECT_EQ(bytes(0), std::string(1, '\0'));
  // int32 −1 is sign-extended to 64 bits: ten bytes, nine 0xff then 0x01.
  EXPECT_EQ(bytes(~uint64_t{0}), std::string(9, '\xff') + "\x01");
  for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{16383}, uint64_t{16384}, ~uint64_t{0}}) {
    EXPECT_EQ(internal::VarintSize(v), bytes(v).size()) << v;
  }
  EXPECT_EQ(internal::Tag(5, 2), 0x2au);  // StepResponse.readings
}

class StepWireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    local_ = LocalScene::Create(GraspSpec("wire", kEnvs, SphereShape(kBallR)));
    ASSERT_NE(local_, nullptr);
    // Two steps, so that velocities (and so forces) are non-trivial.
    ASSERT_TRUE(local_->Step(MovingPoses(kEnvs, 0)).ok());
    ASSERT_TRUE(local_->Step(MovingPoses(kEnvs, 1), MovingTwists(kEnvs, 1)).ok());
  }

  // head (fields 1–4) as the service fills it.
  static v1::StepResponse Head(const std::vector<int32_t>& envs) {
    v1::StepResponse head;
    head.set_scene("wire");
    head.set_sequence(7);
    head.set_step(2);
    head.mutable_env_ids()->Assign(envs.begin(), envs.end());
    return head;
  }

  // head + hand-written readings + tail, as TaxelHandlers::Step lays them out.
  std::string WireBytes(const ReadPlan& plan, const std::vector<int32_t>& envs, const v1::StepResponse& tail) {
    const std::string head = Head(envs).SerializeAsString();
    const ReadingsWireWriter writer(plan, envs, kEnvs);
    const std::string bytes = Joined(writer.Slices(head));
    EXPECT_EQ(bytes.size(), head.size() + writer.size()) << "size() is exact";
    return bytes + tail.SerializeAsString();
  }

  std::unique_ptr<LocalScene> local_;
};

TEST_F(StepWireTest, ProtobufParsesTheBytesIntoTheMessageEncodeReadingsBuilds) {
  v1::ReadSpec all, both, subset, none;
  both.add_branches(v1::GROUND_TRUTH);
  both.add_branches(v1::MEASURED);
  subset.add_sensors("touch");
  subset.add_sensors("kin");
  subset.add_channels("contact");
  subset.add_channels("torque");
  none.set_none(true);
  v1::StepResponse tail;
  tail.mutable_timing()->set_decode_us(1.5);
  tail.mutable_timing()->set_encode_us(2.5);
  std::vector<v1::ReadSpec> reads = {all, both, subset, none};
  for (int i = 0; i < 4; ++i) reads.push_back(reads[i]), reads.back().set_sparse(true);
  for (const v1::ReadSpec& read : reads) {
    for (const std::vector<int32_t>& envs : {std::vector<int32_t>{0, 1, 2, 3}, {2, 0}, {3}, {}}) {
      SCOPED_TRACE(read.ShortDebugString() + " envs " + std::to_string(envs.size()));
      auto plan = PlanRead(read, local_->scene(), "read");
      ASSERT_TRUE(plan.ok()) << plan.status();
      v1::StepResponse expected = Head(envs);
      EncodeReadings(*plan, envs, kEnvs, expected.mutable_readings());
      expected.MergeFrom(tail);
      v1::StepResponse parsed;
      ASSERT_TRUE(parsed.ParseFromString(WireBytes(*plan, envs, tail)));
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(parsed, expected))
          << parsed.ShortDebugString().substr(0, 2000);
    }
  }
}

TEST_F(StepWireTest, DelayedForceAndTorqueAreEncodedFromTheRingAsFromTheArrays) {
  // "kin" with a delay of one step and noise: after a step its measured force and torque are
  // still in the delay ring, and the writer takes them from there (ChannelArray::copy_env). The
  // reference encoder reads the output arrays (outputs() copies the ring into them first), so
  // each case is written before the reference runs, on readings fresh from a step.
  scene::SceneSpec spec = GraspSpec("wire", kEnvs, SphereShape(kBallR));
  spec.sensors[0].imperfections.delay = 0.01;
  spec.sensors[0].imperfections.noise = 1e-3;
  local_ = LocalScene::Create(spec);
  ASSERT_NE(local_, nullptr);
  const sensors::Sensor* kin = local_->scene().sensors().front();
  ASSERT_EQ(kin->spec().name, "kin");
  v1::ReadSpec measured, both;
  measured.add_branches(v1::MEASURED);
  both.add_branches(v1::MEASURED);
  both.add_branches(v1::GROUND_TRUTH);
  both.set_sparse(true);
  int step = 0;
  for (const v1::ReadSpec& read : {measured, both}) {
    for (const std::vector<int32_t>& envs : {std::vector<int32_t>{0, 1, 2, 3}, {2, 0}, {3}}) {
      SCOPED_TRACE(read.ShortDebugString() + " envs " + std::to_string(envs.size()));
      for (int k = 0; k < 2; ++k, ++step) ASSERT_TRUE(local_->Step(MovingPoses(kEnvs, step)).ok());
      ASSERT_TRUE(kin->measured_in_ring());
      auto plan = PlanRead(read, local_->scene(), "read");
      ASSERT_TRUE(plan.ok()) << plan.status();
      v1::StepResponse parsed;
      ASSERT_TRUE(parsed.ParseFromString(WireBytes(*plan, envs, v1::StepResponse())));
      ASSERT_TRUE(kin->measured_in_ring()) << "the writer read the ring without copying it out";
      v1::StepResponse expected = Head(envs);
      EncodeReadings(*plan, envs, kEnvs, expected.mutable_readings());
      ASSERT_FALSE(kin->measured_in_ring());
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(parsed, expected))
          << parsed.ShortDebugString().substr(0, 2000);
      // The measured force differs from the truth (noise), so the comparison is not vacuous.
      const auto& m = kin->outputs(sensors::Branch::kMeasured).force;
      const auto& t = kin->outputs(sensors::Branch::kGroundTruth).force;
      EXPECT_NE(m, t);
    }
  }
}

TEST_F(StepWireTest, OneChannelPerReadingGivesProtobufsOwnBytes) {
  // With one map entry per reading the map order cannot differ: byte-for-byte protobuf's output.
  for (const char* channel : {"force", "depth", "contact", "partner"}) {
    SCOPED_TRACE(channel);
    v1::ReadSpec read;
    read.add_channels(channel);
    read.add_branches(v1::MEASURED);
    read.add_branches(v1::GROUND_TRUTH);
    auto plan = PlanRead(read, local_->scene(), "read");
    ASSERT_TRUE(plan.ok());
    const std::vector<int32_t> envs = {3, 1, 2};
    v1::StepResponse expected = Head(envs);
    EncodeReadings(*plan, envs, kEnvs, expected.mutable_readings());
    EXPECT_EQ(WireBytes(*plan, envs, v1::StepResponse()), expected.SerializeAsString());
  }
}

TEST_F(StepWireTest, ReadingsCarryTheCoreBuffersBitForBit) {
  auto plan = PlanRead(v1::ReadSpec(), local_->scene(), "read");
  ASSERT_TRUE(plan.ok());
  const std::vector<int32_t> envs = {1, 3, 0};
  v1::StepResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(WireBytes(*plan, envs, v1::StepResponse())));
  // kin 2 + depth 4 + touch 2 channels.
  EXPECT_EQ(ExpectReadingsEqualLocal(parsed.readings(), local_->scene(), envs), 8);
}

// Channels of more than one 64 Ki-element chunk: 1200 envs × 25 kin probes × 3 = 90,000 floats
// per channel, so the packed values of a channel come from two chunks (as two slices); all envs
// in order (no gather) and reversed (gathered first). Expanded, the tensors are the dense ones.
TEST(StepWireChunksTest, SparseChannelsSpanningChunksExpandToTheDenseReadings) {
  constexpr int kManyEnvs = 1200;
  auto local = LocalScene::Create(GraspSpec("chunks", kManyEnvs, SphereShape(kBallR)));
  ASSERT_NE(local, nullptr);
  ASSERT_TRUE(local->Step(MovingPoses(kManyEnvs, 0)).ok());
  ASSERT_TRUE(local->Step(MovingPoses(kManyEnvs, 1), MovingTwists(kManyEnvs, 1)).ok());
  v1::ReadSpec read;
  read.add_sensors("kin");
  read.add_branches(v1::GROUND_TRUTH);
  auto plan = PlanRead(read, local->scene(), "read");
  read.set_sparse(true);
  auto sparse_plan = PlanRead(read, local->scene(), "read");
  ASSERT_TRUE(plan.ok() && sparse_plan.ok());
  std::vector<int32_t> in_order(kManyEnvs), reversed(kManyEnvs);
  for (int e = 0; e < kManyEnvs; ++e) in_order[e] = e, reversed[e] = kManyEnvs - 1 - e;
  ThreadPool pool(2);
  for (const auto* envs : {&in_order, &reversed}) {
    v1::StepResponse dense;
    EncodeReadings(*plan, *envs, kManyEnvs, dense.mutable_readings());
    const ReadingsWireWriter writer(*sparse_plan, *envs, kManyEnvs, &pool);
    const std::string bytes = Joined(writer.Slices(""));
    ASSERT_EQ(bytes.size(), writer.size());
    v1::StepResponse sparse;
    ASSERT_TRUE(sparse.ParseFromString(bytes));
    ASSERT_EQ(sparse.readings_size(), 1);
    int nonzero_elements = 0;
    for (const auto& [name, t] : dense.readings(0).channels()) {
      SCOPED_TRACE(name);
      v1::Tensor expanded = sparse.readings(0).channels().at(name);
      ASSERT_FALSE(expanded.nonzero_mask().empty());
      nonzero_elements += static_cast<int>(expanded.data().size() / 4);
      ASSERT_TRUE(ExpandTensor(&expanded).ok());
      EXPECT_EQ(expanded.data(), t.data());
      EXPECT_EQ(t.data().size(), size_t{kManyEnvs} * 75 * 4);
    }
    EXPECT_GT(nonzero_elements, 1000);  // the comparison is not of zeros only
  }
}

}  // namespace
}  // namespace taxel::server
