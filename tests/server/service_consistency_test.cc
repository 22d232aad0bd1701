// Readings over gRPC against the in-process core (bit for bit), unary Step against StepStream,
// concurrent clients, and a scene deleted under an open stream.
#include <chrono>
#include <cstring>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kEnvs = 4;
constexpr int kSteps = 6;

class ServiceConsistencyTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    mesh_ = BallMesh();
    auto uploaded = client_->UploadMesh(FlatVertices(mesh_), FlatTriangles(mesh_));
    ASSERT_TRUE(uploaded.ok()) << uploaded.status();
    mesh_id_ = uploaded->mesh_id();
  }
  // The grasp scene with the uploaded geodesic sphere as the ball.
  scene::SceneSpec Spec(const std::string& name) const { return GraspSpec(name, kEnvs, MeshShape(mesh_id_)); }
  void CreateOnServer(const std::string& name) {
    auto info = client_->CreateScene(ToWire(Spec(name)));
    ASSERT_TRUE(info.ok()) << info.status();
  }
  // Step s of the test sequence: every env, both branches; twists from step 3 on.
  v1::StepRequest Request(const std::string& scene, int s) const {
    v1::StepRequest req =
        MakeStep(scene, kEnvs, MovingPoses(kEnvs, s), s >= 3 ? MovingTwists(kEnvs, s) : std::vector<double>{});
    req.mutable_read()->add_branches(v1::MEASURED);
    req.mutable_read()->add_branches(v1::GROUND_TRUTH);
    return req;
  }
  absl::Status StepLocal(LocalScene* local, int s) const {
    return local->Step(MovingPoses(kEnvs, s), s >= 3 ? MovingTwists(kEnvs, s) : std::vector<double>{});
  }

  geometry::MeshData mesh_;
  std::string mesh_id_;
};

// Same channels, same bytes (the map order of `channels` is not part of the contract).
void ExpectSameReadings(const v1::StepResponse& a, const v1::StepResponse& b) {
  EXPECT_EQ(a.step(), b.step());
  EXPECT_THAT(a.env_ids(), ::testing::ElementsAreArray(b.env_ids()));
  ASSERT_EQ(a.readings_size(), b.readings_size());
  for (int i = 0; i < a.readings_size(); ++i) {
    EXPECT_EQ(a.readings(i).sensor(), b.readings(i).sensor());
    EXPECT_EQ(a.readings(i).branch(), b.readings(i).branch());
    ASSERT_EQ(a.readings(i).channels().size(), b.readings(i).channels().size());
    for (const auto& [name, t] : a.readings(i).channels()) {
      EXPECT_EQ(t.data(), b.readings(i).channels().at(name).data()) << a.readings(i).sensor() << "." << name;
      EXPECT_THAT(t.shape(), ::testing::ElementsAreArray(b.readings(i).channels().at(name).shape()));
    }
  }
}

TEST_F(ServiceConsistencyTest, ReadingsOverGrpcEqualTheInProcessCoreBitForBit) {
  CreateOnServer("mesh");
  auto local = LocalScene::Create(Spec("mesh"), &mesh_);
  ASSERT_NE(local, nullptr);
  const std::vector<int32_t> all = {0, 1, 2, 3};
  float deepest = 0;
  for (int s = 0; s < kSteps; ++s) {
    SCOPED_TRACE(s);
    auto response = client_->Step(Request("mesh", s));
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_TRUE(StepLocal(local.get(), s).ok());
    // 3 sensors × 2 branches; kin 2 + depth 4 + touch 2 channels per branch.
    EXPECT_EQ(response->readings_size(), 6);
    EXPECT_EQ(ExpectReadingsEqualLocal(response->readings(), local->scene(), all), 16);
    for (float d : local->scene().FindSensor("depth")->outputs(sensors::Branch::kGroundTruth).depth) {
      deepest = std::max(deepest, d);
    }
  }
  // The sequence presses the mesh ball into the probes (the comparison is not of zeros only): at
  // the last step the ball centre is 4.73 cm from the centre probe, 2.7 mm inside a 5 cm sphere,
  // less the facets' sagitta (< 1 mm at 320 triangles): depth > R + 1 mm = 3 mm.
  EXPECT_GT(deepest, 0.003f);

  // A step of an env subset, in a chosen order, is compared on those envs.
  std::vector<double> poses = MovingPoses(kEnvs, kSteps);
  std::vector<double> subset(poses.begin() + 3 * 14, poses.end());      // env 3
  subset.insert(subset.end(), poses.begin() + 14, poses.begin() + 28);  // env 1
  v1::StepRequest req = MakeStep("mesh", 2, subset);
  req.add_env_ids(3);
  req.add_env_ids(1);
  auto response = client_->Step(req);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->env_ids(), ElementsAre(3, 1));
  scene::StepInput in;
  const std::vector<int32_t> ids = {3, 1};
  in.env_ids = ids;
  in.poses = subset;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  InlineExecutor executor;
  ASSERT_TRUE(local->scene().Step(in, executor).ok());
  EXPECT_EQ(ExpectReadingsEqualLocal(response->readings(), local->scene(), ids), 8);
}

// The same poses as XYZW, as WXYZ with quaternions scaled by 2 (normalised on entry; scaling by
// a power of two is exact), and as FLOAT32 compared with the core fed the widened values.
TEST_F(ServiceConsistencyTest, QuaternionOrderScaleAndFloat32InputsAgreeWithTheCore) {
  CreateOnServer("xyzw");
  CreateOnServer("wxyz");
  CreateOnServer("f32");
  auto local = LocalScene::Create(Spec("local"), &mesh_);
  auto local_f32 = LocalScene::Create(Spec("local32"), &mesh_);
  ASSERT_NE(local, nullptr);
  ASSERT_NE(local_f32, nullptr);
  for (int s = 0; s < 3; ++s) {
    SCOPED_TRACE(s);
    const std::vector<double> xyzw = MovingPoses(kEnvs, s);
    std::vector<double> wxyz = xyzw, widened = xyzw;
    std::vector<float> f32;
    for (size_t k = 0; k < xyzw.size(); k += 7) {
      const double* q = &xyzw[k + 3];                                    // x y z w
      for (int i = 0; i < 4; ++i) wxyz[k + 3 + i] = 2 * q[(i + 3) % 4];  // w x y z
    }
    for (size_t k = 0; k < xyzw.size(); ++k) {
      f32.push_back(static_cast<float>(xyzw[k]));
      widened[k] = f32.back();
    }
    auto a = client_->Step(MakeStep("xyzw", kEnvs, xyzw));
    v1::StepRequest wreq = MakeStep("wxyz", kEnvs, wxyz);
    wreq.set_quat_order(v1::WXYZ);
    auto b = client_->Step(wreq);
    v1::StepRequest freq = MakeStep("f32", kEnvs, {});
    *freq.mutable_poses() = FloatTensor({kEnvs, kMovingLinks, 7}, f32);
    auto c = client_->Step(freq);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status() << b.status() << c.status();
    ASSERT_TRUE(local->Step(xyzw).ok());
    ASSERT_TRUE(local_f32->Step(widened).ok());
    EXPECT_EQ(ExpectReadingsEqualLocal(a->readings(), local->scene(), {0, 1, 2, 3}), 8);
    EXPECT_EQ(ExpectReadingsEqualLocal(b->readings(), local->scene(), {0, 1, 2, 3}), 8);
    EXPECT_EQ(ExpectReadingsEqualLocal(c->readings(), local_f32->scene(), {0, 1, 2, 3}), 8);
  }
}

TEST_F(ServiceConsistencyTest, UnaryStepAndStepStreamGiveIdenticalBytes) {
  CreateOnServer("unary");
  CreateOnServer("stream");
  auto stream = client_->OpenStepStream();
  for (int s = 0; s < kSteps; ++s) {
    SCOPED_TRACE(s);
    auto unary = client_->Step(Request("unary", s));
    ASSERT_TRUE(unary.ok()) << unary.status();
    auto streamed = stream->Step(Request("stream", s));
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    EXPECT_EQ(streamed->sequence(), static_cast<uint64_t>(s + 1));  // the client numbers from 1
    EXPECT_EQ(streamed->scene(), "stream");
    ExpectSameReadings(*unary, *streamed);
  }
  EXPECT_TRUE(stream->Close().ok());
}

// The sparse form of every tensor against the dense one, element by element: the mask has a bit
// exactly where the dense element's bytes are not all zero, and data holds those elements in
// order. Returns the (nonzero, zero) element counts.
std::pair<int64_t, int64_t> ExpectSparseFormOf(const v1::Tensor& sparse, const v1::Tensor& dense) {
  EXPECT_THAT(sparse.shape(), ::testing::ElementsAreArray(dense.shape()));
  EXPECT_TRUE(dense.nonzero_mask().empty());
  const size_t item = dense.dtype() == v1::BOOL ? 1 : 4;
  const size_t n = dense.data().size() / item;
  EXPECT_EQ(sparse.nonzero_mask().size(), (n + 7) / 8);
  std::string expected_data, expected_mask((n + 7) / 8, '\0');
  int64_t nonzero = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::string element = dense.data().substr(i * item, item);
    if (element == std::string(item, '\0')) continue;
    ++nonzero;
    expected_data += element;
    expected_mask[i / 8] = static_cast<char>(expected_mask[i / 8] | (1 << (i % 8)));
  }
  EXPECT_EQ(sparse.data(), expected_data);
  EXPECT_EQ(sparse.nonzero_mask(), expected_mask);
  v1::Tensor expanded = sparse;
  EXPECT_TRUE(ExpandTensor(&expanded).ok());
  EXPECT_EQ(expanded.data(), dense.data());
  EXPECT_TRUE(expanded.nonzero_mask().empty());
  return {nonzero, static_cast<int64_t>(n) - nonzero};
}

TEST_F(ServiceConsistencyTest, SparseReadingsCarryTheNonzeroElementsOfTheDenseOnes) {
  for (const char* name : {"dense", "sparse", "expanded"}) CreateOnServer(name);
  Client::Options o;
  o.target = server_->target();
  o.sparse_readings = false;  // requests as they are, responses as sent
  auto raw = Client::Connect(o);
  ASSERT_TRUE(raw.ok());
  int64_t nonzero = 0, zero = 0;
  for (int s = 0; s < kSteps; ++s) {
    SCOPED_TRACE(s);
    auto dense = (*raw)->Step(Request("dense", s));
    v1::StepRequest req = Request("sparse", s);
    req.mutable_read()->set_sparse(true);
    auto sparse = (*raw)->Step(req);
    auto expanded = client_->Step(Request("expanded", s));  // the default client: sparse, expanded
    ASSERT_TRUE(dense.ok() && sparse.ok() && expanded.ok());
    ASSERT_EQ(dense->readings_size(), sparse->readings_size());
    for (int i = 0; i < dense->readings_size(); ++i) {
      for (const auto& [channel, t] : dense->readings(i).channels()) {
        SCOPED_TRACE(dense->readings(i).sensor() + "." + channel);
        const auto [nz, z] = ExpectSparseFormOf(sparse->readings(i).channels().at(channel), t);
        nonzero += nz, zero += z;
      }
    }
    ExpectSameReadings(*dense, *expanded);
  }
  // Both kinds of element were compared.
  EXPECT_GT(nonzero, 100);
  EXPECT_GT(zero, 100);

  // ReadSensors (the protobuf-built path) gives the same forms.
  v1::ReadSensorsRequest read;
  read.set_scene("dense");
  read.add_env_ids(2);
  read.add_env_ids(0);
  read.mutable_read()->add_branches(v1::GROUND_TRUTH);
  auto dense = (*raw)->ReadSensors(read);
  read.mutable_read()->set_sparse(true);
  auto sparse = (*raw)->ReadSensors(read);
  auto expanded = client_->ReadSensors(read);
  ASSERT_TRUE(dense.ok() && sparse.ok() && expanded.ok());
  ASSERT_EQ(dense->readings_size(), 3);
  ASSERT_EQ(sparse->readings_size(), 3);
  for (int i = 0; i < 3; ++i) {
    for (const auto& [channel, t] : dense->readings(i).channels()) {
      ExpectSparseFormOf(sparse->readings(i).channels().at(channel), t);
      EXPECT_EQ(expanded->readings(i).channels().at(channel).data(), t.data());
    }
  }
}

TEST(ExpandTensorTest, MalformedSparseFormsAreDataLoss) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  t.add_shape(10);
  t.set_nonzero_mask(std::string("\x03\x00", 2));  // elements 0 and 1
  t.set_data(std::string(8, '\x01'));
  v1::Tensor ok = t;
  ASSERT_TRUE(ExpandTensor(&ok).ok());
  EXPECT_EQ(ok.data(), std::string(8, '\x01') + std::string(32, '\0'));
  v1::Tensor short_data = t;
  short_data.set_data(std::string(4, '\x01'));
  EXPECT_EQ(ExpandTensor(&short_data).code(), absl::StatusCode::kDataLoss);
  v1::Tensor stray_bit = t;
  stray_bit.set_nonzero_mask(std::string("\x03\x04", 2));  // bit 10 is past the 10 elements
  EXPECT_EQ(ExpandTensor(&stray_bit).code(), absl::StatusCode::kDataLoss);
  v1::Tensor long_mask = t;
  long_mask.set_nonzero_mask(std::string("\x03\x00\x00", 3));
  EXPECT_EQ(ExpandTensor(&long_mask).code(), absl::StatusCode::kDataLoss);
}

// A response big enough for the client's two-thread expansion (3 tensors, 12 MB dense): every
// tensor comes back as the dense array it was built from; a malformed one is named.
TEST(ExpandReadingsTest, LargeResponsesExpandOnTwoThreadsToTheDenseArrays) {
  constexpr int64_t kN = 1 << 20;  // floats per tensor
  google::protobuf::RepeatedPtrField<v1::SensorReading> readings;
  std::vector<std::string> dense;
  for (int t = 0; t < 3; ++t) {
    std::vector<float> v(kN, 0.f);
    for (int64_t i = 0; i < kN; ++i) {
      if ((i / 1000 + t) % 3 == 0) v[i] = static_cast<float>(i % 977) - 300.f;  // runs of nonzeros
    }
    v[5] = -0.f;  // kept
    v[kN - 1] = 7.f;
    v1::Tensor dense_tensor = FloatTensor({kN}, v);
    dense.push_back(dense_tensor.data());
    v1::Tensor sparse;
    sparse.set_dtype(v1::FLOAT32);
    sparse.add_shape(kN);
    std::string mask((kN + 7) / 8, '\0'), values;
    for (int64_t i = 0; i < kN; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &v[i], 4);
      if (bits == 0) continue;
      mask[i / 8] = static_cast<char>(mask[i / 8] | (1 << (i % 8)));
      values.append(reinterpret_cast<const char*>(&v[i]), 4);
    }
    sparse.set_data(values);
    sparse.set_nonzero_mask(mask);
    v1::SensorReading* r = readings.Add();
    r->set_sensor("s" + std::to_string(t));
    (*r->mutable_channels())["force"] = sparse;
  }
  auto broken = readings;
  ASSERT_TRUE(ExpandReadings(&readings).ok());
  for (int t = 0; t < 3; ++t) {
    const v1::Tensor& e = readings.Get(t).channels().at("force");
    EXPECT_TRUE(e.nonzero_mask().empty());
    EXPECT_TRUE(e.data() == dense[t]) << t;
  }
  broken.Mutable(2)->mutable_channels()->at("force").mutable_data()->pop_back();
  const absl::Status s = ExpandReadings(&broken);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("readings 's2' channel 'force'"));
}

TEST_F(ServiceConsistencyTest, StepStreamEchoesTheRequestSequenceNumbers) {
  CreateOnServer("seq");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = client_->stub().StepStream(&ctx);
  for (uint64_t seq : {7ull, 8ull, 1000ull, 3ull}) {
    v1::StepRequest req = Request("seq", 0);
    req.set_sequence(seq);
    ASSERT_TRUE(stream->Write(req));
    v1::StepResponse response;
    ASSERT_TRUE(stream->Read(&response));
    EXPECT_EQ(response.sequence(), seq);
  }
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServiceConsistencyTest, TwoClientsOnDifferentScenesConcurrently) {
  constexpr int kConcurrentSteps = 12;
  CreateOnServer("left");
  CreateOnServer("right");
  // Each thread drives its own scene with its own client, one through Step, one through a stream.
  auto run = [&](const std::string& scene, bool use_stream, std::vector<v1::StepResponse>* out) {
    std::unique_ptr<Client> client = NewClient();
    if (client == nullptr) return;
    std::unique_ptr<StepStream> stream = use_stream ? client->OpenStepStream() : nullptr;
    for (int s = 0; s < kConcurrentSteps; ++s) {
      auto r = use_stream ? stream->Step(Request(scene, s % kSteps)) : client->Step(Request(scene, s % kSteps));
      if (!r.ok()) {
        ADD_FAILURE() << scene << " step " << s << ": " << r.status();
        return;
      }
      out->push_back(*std::move(r));
    }
    if (stream != nullptr) {
      EXPECT_TRUE(stream->Close().ok());
    }
  };
  std::vector<v1::StepResponse> left, right;
  std::thread a(run, "left", false, &left);
  std::thread b(run, "right", true, &right);
  a.join();
  b.join();
  ASSERT_EQ(left.size(), static_cast<size_t>(kConcurrentSteps));
  ASSERT_EQ(right.size(), static_cast<size_t>(kConcurrentSteps));

  auto local = LocalScene::Create(Spec("local"), &mesh_);
  ASSERT_NE(local, nullptr);
  for (int s = 0; s < kConcurrentSteps; ++s) {
    SCOPED_TRACE(s);
    ASSERT_TRUE(StepLocal(local.get(), s % kSteps).ok());
    EXPECT_EQ(left[s].step(), s + 1);
    EXPECT_EQ(right[s].step(), s + 1);
    EXPECT_EQ(ExpectReadingsEqualLocal(left[s].readings(), local->scene(), {0, 1, 2, 3}), 16);
    EXPECT_EQ(ExpectReadingsEqualLocal(right[s].readings(), local->scene(), {0, 1, 2, 3}), 16);
  }
}

TEST_F(ServiceConsistencyTest, DeletingTheSceneEndsOpenStreamsWithNotFound) {
  CreateOnServer("doomed");
  // Stream 1 (client wrapper) and stream 2 (raw) each step once, then sit idle.
  auto wrapped = client_->OpenStepStream();
  ASSERT_TRUE(wrapped->Step(Request("doomed", 0)).ok());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));  // a hang fails, not blocks
  auto raw = client_->stub().StepStream(&ctx);
  ASSERT_TRUE(raw->Write(Request("doomed", 0)));
  v1::StepResponse response;
  ASSERT_TRUE(raw->Read(&response));
  EXPECT_EQ(response.step(), 2);

  std::unique_ptr<Client> other = NewClient();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->DeleteScene("doomed").ok());

  // The idle raw stream is ended by the server without any further request from us.
  EXPECT_FALSE(raw->Read(&response));
  const grpc::Status ended = raw->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(ended.error_message(), HasSubstr("scene 'doomed' was deleted"));
  // The wrapper's next step reports the same.
  auto next = wrapped->Step(Request("doomed", 1));
  EXPECT_EQ(next.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(next.status().message(), HasSubstr("scene 'doomed' was deleted"));

  // A stream opened afterwards gets NOT_FOUND on its first step, and others keep working.
  auto late = client_->OpenStepStream();
  EXPECT_EQ(late->Step(Request("doomed", 0)).status().code(), absl::StatusCode::kNotFound);
  CreateOnServer("alive");
  auto fresh = client_->OpenStepStream();
  EXPECT_TRUE(fresh->Step(Request("alive", 0)).ok());
  EXPECT_TRUE(fresh->Close().ok());
}

}  // namespace
}  // namespace taxel::testing
