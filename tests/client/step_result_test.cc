// taxel::StepResult (client/cpp/taxel/step_result.h): the raw step path equals the protobuf path
// bit for bit over a real server, unary and streamed; Parse reads any bytes as protobuf does
// (split anywhere across slices, merged fields, truncated or corrupted input).
#include "taxel/step_result.h"

#include <random>
#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr int kEnvs = 4;

// `bytes` as a ByteBuffer of slices of `chunk` bytes (the last one shorter).
grpc::ByteBuffer Split(const std::string& bytes, size_t chunk) {
  std::vector<grpc::Slice> slices;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    slices.emplace_back(bytes.data() + at, std::min(chunk, bytes.size() - at));
  }
  if (slices.empty()) slices.emplace_back();
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// What StepResult::Parse must agree with: protobuf's own parse of the same bytes.
void ExpectParsesLikeProtobuf(const std::string& bytes, size_t chunk) {
  v1::StepResponse expected;
  const bool protobuf_ok = expected.ParseFromString(bytes);
  StepResult result;
  const absl::Status s = result.Parse(Split(bytes, chunk));
  ASSERT_EQ(s.ok(), protobuf_ok) << s;
  if (!s.ok()) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ(result.num_readings(), 0);
    return;
  }
  // Unknown fields inside readings are skipped, not kept (see Parse).
  expected.DiscardUnknownFields();
  v1::StepResponse got = result.ToProto();
  got.DiscardUnknownFields();
  MessageDifferencer differencer;
  std::string report;
  differencer.ReportDifferencesToString(&report);
  EXPECT_TRUE(differencer.Compare(got, expected)) << report.substr(0, 1000);
}

// A response with every kind of field: readings of two sensors and branches, a contact matrix,
// timing, env ids.
v1::StepResponse Sample() {
  v1::StepResponse r;
  r.set_scene("sample");
  r.set_sequence(12);
  r.set_step(99);
  for (int32_t e : {3, 0, 2}) r.add_env_ids(e);
  for (v1::Branch b : {v1::MEASURED, v1::GROUND_TRUTH}) {
    v1::SensorReading* reading = r.add_readings();
    reading->set_sensor("left");
    reading->set_sensor_id(4);
    reading->set_branch(b);
    (*reading->mutable_channels())["force"] = FloatTensor({3, 2, 3}, std::vector<float>(18, b == v1::MEASURED ? 1.5f : -2));
    (*reading->mutable_channels())["partner"] = Int32Tensor({3, 2}, {1, -1, 2, -1, 3, -1});
  }
  v1::SensorReading* empty = r.add_readings();  // a sensor with no channels read
  empty->set_sensor("right");
  r.mutable_timing()->set_evaluate_us(12.5);
  r.mutable_contact_matrix()->add_rows("palm");
  *r.mutable_contact_matrix()->mutable_normal() = FloatTensor({3, 1, 1, 3}, std::vector<float>(9, 0.25f));
  return r;
}

TEST(StepResultParseTest, ReadsProtobufBytesSplitAnywhere) {
  const std::string bytes = Sample().SerializeAsString();
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, bytes.size()}) {
    SCOPED_TRACE(chunk);
    ExpectParsesLikeProtobuf(bytes, chunk);
  }
  StepResult result;
  ASSERT_TRUE(result.Parse(Split(bytes, 5)).ok());
  const int left = result.FindReading("left");
  ASSERT_EQ(left, 0);
  EXPECT_EQ(result.FindReading("left", v1::GROUND_TRUTH), 1);
  EXPECT_EQ(result.FindReading("nope"), -1);
  EXPECT_THAT(result.floats(left, "force"), ::testing::Each(1.5f));
  EXPECT_EQ(result.floats(left, "force").size(), 18u);
  EXPECT_TRUE(result.floats(left, "partner").empty()) << "INT32, not FLOAT32";
  EXPECT_EQ(result.bytes(left, "partner").size(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(result.bytes(left, "partner").data()) % 16, 0u);
  EXPECT_TRUE(result.bytes(left, "torque").empty());
  EXPECT_TRUE(result.header().readings(left).channels().at("force").data().empty()) << "the header holds no data";
  EXPECT_EQ(result.header().contact_matrix().normal().data().size(), 36u) << "the contact matrix is complete";
}

TEST(StepResultParseTest, MergesRepeatedFieldsAndMapKeysAsProtobufDoes) {
  // Two messages back to back are one message with both sets of fields (protobuf's merge rule):
  // readings append, the later scalar wins.
  v1::StepResponse second;
  second.set_scene("second");
  second.add_readings()->set_sensor("extra");
  ExpectParsesLikeProtobuf(Sample().SerializeAsString() + second.SerializeAsString(), 3);
  // One reading holding two map entries of the same key (and a sensor name twice): the last wins.
  v1::SensorReading a, b;
  a.set_sensor("a");
  (*a.mutable_channels())["depth"] = FloatTensor({1, 2}, {1, 2});
  b.set_sensor("b");
  (*b.mutable_channels())["depth"] = FloatTensor({1, 1}, {7});
  const std::string reading = a.SerializeAsString() + b.SerializeAsString();
  std::string bytes = "\x2a";  // field 5, length-delimited
  bytes += static_cast<char>(reading.size());
  ASSERT_LT(reading.size(), 128u);
  ExpectParsesLikeProtobuf(bytes + reading, 4);
  // Unknown fields (a newer server) are skipped.
  ExpectParsesLikeProtobuf(Sample().SerializeAsString() + std::string("\xa0\x06\x01", 3), 8);  // field 100 = 1
}

TEST(StepResultParseTest, TruncatedOrCorruptedBytesAreRefusedOrReadLikeProtobuf) {
  const std::string bytes = Sample().SerializeAsString();
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    ExpectParsesLikeProtobuf(bytes.substr(0, n), 16);
  }
  std::mt19937 rng(20261130);
  for (int trial = 0; trial < 500; ++trial) {
    std::string bad = bytes;
    bad[rng() % bad.size()] = static_cast<char>(rng());
    SCOPED_TRACE(trial);
    ExpectParsesLikeProtobuf(bad, 1 + rng() % 32);
  }
  StepResult result;
  EXPECT_EQ(result.Parse(Split(std::string("\x2a\x7f\x01", 3), 1)).code(), absl::StatusCode::kDataLoss);
}

// Over a real server: the raw path (StepResult) against the protobuf path (v1::StepResponse) and
// the in-process core.
class StepResultServerTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    for (const char* name : {"a", "b"}) {
      ASSERT_TRUE(client_->CreateScene(ToWire(GraspSpec(name, kEnvs, SphereShape(kBallR)))).ok());
    }
    local_ = LocalScene::Create(GraspSpec("a", kEnvs, SphereShape(kBallR)));
    ASSERT_NE(local_, nullptr);
  }
  static v1::StepRequest Request(const std::string& scene, int s) {
    v1::StepRequest req = MakeStep(scene, kEnvs, MovingPoses(kEnvs, s), MovingTwists(kEnvs, s));
    req.mutable_read()->add_branches(v1::MEASURED);
    req.mutable_read()->add_branches(v1::GROUND_TRUTH);
    return req;
  }
  // Equal but for the server's phase times, which differ from call to call.
  static void ExpectSameResponse(v1::StepResponse raw, v1::StepResponse proto) {
    raw.clear_timing();
    proto.clear_timing();
    raw.clear_scene();
    proto.clear_scene();
    EXPECT_TRUE(MessageDifferencer::Equals(raw, proto));
  }
  std::unique_ptr<LocalScene> local_;
};

TEST_F(StepResultServerTest, UnaryRawPathEqualsTheProtobufPathAndTheCoreBitForBit) {
  const std::vector<int32_t> all = {0, 1, 2, 3};
  StepResult result;  // reused, as in a simulation loop
  for (int s = 0; s < 4; ++s) {
    SCOPED_TRACE(s);
    ASSERT_TRUE(client_->Step(Request("a", s), &result).ok());
    auto proto = client_->Step(Request("b", s));
    ASSERT_TRUE(proto.ok()) << proto.status();
    ASSERT_TRUE(local_->Step(MovingPoses(kEnvs, s), MovingTwists(kEnvs, s)).ok());
    ExpectSameResponse(result.ToProto(), *proto);
    EXPECT_EQ(result.header().scene(), "a");
    EXPECT_EQ(result.header().step(), s + 1);
    // 3 sensors × 2 branches; kin 2 + depth 4 + touch 2 channels per branch.
    EXPECT_EQ(ExpectReadingsEqualLocal(result.ToProto().readings(), local_->scene(), all), 16);
    const int kin = result.FindReading("kin");
    ASSERT_GE(kin, 0);
    const auto& force = local_->scene().FindSensor("kin")->outputs(sensors::Branch::kMeasured).force;
    EXPECT_THAT(result.floats(kin, "force"), ::testing::ElementsAreArray(force));
  }
}

TEST_F(StepResultServerTest, StreamRawPathEqualsTheProtobufPathAndEnvSubsetsKeepTheirOrder) {
  auto raw = client_->OpenStepStream();
  auto proto = client_->OpenStepStream();
  StepResult result;
  for (int s = 0; s < 3; ++s) {
    SCOPED_TRACE(s);
    v1::StepRequest a = Request("a", s), b = Request("b", s);
    if (s == 2) {  // the last step moves envs 3 and 1 only, in that order
      for (v1::StepRequest* r : {&a, &b}) {
        const std::vector<double> poses = MovingPoses(kEnvs, s);
        std::vector<double> sub(poses.begin() + 3 * 14, poses.end());
        sub.insert(sub.end(), poses.begin() + 14, poses.begin() + 28);
        *r->mutable_poses() = DoubleTensor({2, kMovingLinks, 7}, sub);
        r->clear_twists();
        r->add_env_ids(3);
        r->add_env_ids(1);
      }
    }
    ASSERT_TRUE(raw->Step(a, &result).ok());
    auto response = proto->Step(b);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(result.header().sequence(), static_cast<uint64_t>(s + 1));
    ExpectSameResponse(result.ToProto(), *response);
  }
  EXPECT_THAT(result.header().env_ids(), ::testing::ElementsAre(3, 1));
  EXPECT_TRUE(raw->Close().ok());
  EXPECT_TRUE(proto->Close().ok());
}

TEST_F(StepResultServerTest, ErrorsKeepTheServersCodeAndMessage) {
  StepResult result;
  v1::StepRequest bad = Request("a", 0);
  bad.set_quat_order(v1::QUAT_ORDER_UNSPECIFIED);
  absl::Status s = client_->Step(bad, &result);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("quat_order"));
  auto stream = client_->OpenStepStream();
  s = stream->Step(Request("nope", 0), &result);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(stream->Step(Request("a", 0), &result).code(), absl::StatusCode::kFailedPrecondition) << "closed";
}

}  // namespace
}  // namespace taxel::testing
