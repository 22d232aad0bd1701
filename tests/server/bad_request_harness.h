// The harness of the bad-request tests (service_errors_test.cc, bad_input_catalogue_test.cc):
//  - RawCall: any method of taxel.v1.Taxel with arbitrary request bytes (grpc::GenericStub), so a
//    test can send what a hostile client can, including bytes that are no message at all;
//  - ServerSnapshot: everything a request could change — every scene's SceneInfo (step count,
//    sensors, memory), every reading channel of both branches, the contact matrix, the scene list,
//    and the server's memory_bytes / num_meshes;
//  - BadRequestTest::ExpectRefused: the code, the message ("field.path: ..."), the BadRequest field
//    violation of INVALID_ARGUMENT / OUT_OF_RANGE; then that nothing changed, and that the server
//    still answers and steps.
#ifndef TAXEL_TESTS_SERVER_BAD_REQUEST_HARNESS_H_
#define TAXEL_TESTS_SERVER_BAD_REQUEST_HARNESS_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {

/// One RPC with the given context; returns its final status.
using RefusableCall = std::function<grpc::Status(grpc::ClientContext*)>;

/// Calls `method` ("Step", "CreateScene", ...) of taxel.v1.Taxel with `bytes` as the serialised
/// request, bypassing the stubs. StepStream: the bytes are the stream's only message, followed by
/// the client's half-close. `*answered` (optional): whether the server sent a response message.
inline grpc::Status RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                            const std::string& bytes, grpc::ClientContext* ctx, bool* answered = nullptr) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  // Operations are issued one at a time, so each Next() is the completion of the last one.
  const auto next = [&cq] {
    void* tag;
    bool ok = false;
    return cq.Next(&tag, &ok) && ok;
  };
  const grpc::Slice slice(bytes);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  bool got = false;
  const std::string path = "/taxel.v1.Taxel/" + method;
  if (method != "StepStream") {
    auto call = stub.PrepareUnaryCall(ctx, path, request, &cq);
    call->StartCall();
    call->Finish(&response, &status, nullptr);
    next();
    got = status.ok();
  } else {
    auto call = stub.PrepareCall(ctx, path, &cq);
    call->StartCall(nullptr);
    if (next()) {
      call->Write(request, nullptr);
      if (next()) {
        call->WritesDone(nullptr);
        next();
      }
      call->Read(&response, nullptr);
      got = next();
    }
    call->Finish(&status, nullptr);
    next();
  }
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
  if (answered != nullptr) *answered = got;
  return status;
}

/// A call of `method` with a typed request.
inline RefusableCall Call(std::shared_ptr<grpc::Channel> channel, const std::string& method,
                          const google::protobuf::Message& request) {
  return [channel, method, bytes = request.SerializeAsString()](grpc::ClientContext* ctx) {
    return RawCall(channel, method, bytes, ctx);
  };
}

/// Everything a request could change, keyed by what it is ("grasp/info", "grasp/env1/kin/MEASURED/force",
/// "grasp/env0/contact_matrix") → bytes.
struct ServerSnapshot {
  int64_t memory_bytes = -1;  // GetServerInfo
  int num_meshes = -1;
  std::vector<std::string> scenes;       // ListScenes, in order
  std::map<std::string, int64_t> steps;  // scene → step count
  std::map<std::string, std::string> state;

  /// The keys whose bytes differ, or "" when the snapshots are equal.
  std::string DiffFrom(const ServerSnapshot& before) const {
    std::vector<std::string> diff;
    if (memory_bytes != before.memory_bytes) {
      diff.push_back(absl::StrCat("memory_bytes ", before.memory_bytes, " -> ", memory_bytes));
    }
    if (num_meshes != before.num_meshes)
      diff.push_back(absl::StrCat("num_meshes ", before.num_meshes, " -> ", num_meshes));
    if (scenes != before.scenes) {
      diff.push_back(
          absl::StrCat("scenes [", absl::StrJoin(before.scenes, ", "), "] -> [", absl::StrJoin(scenes, ", "), "]"));
    }
    for (const auto& [scene, step] : steps) {
      auto it = before.steps.find(scene);
      if (it != before.steps.end() && it->second != step) {
        diff.push_back(absl::StrCat(scene, " step ", it->second, " -> ", step));
      }
    }
    for (const auto& [key, bytes] : state) {
      auto it = before.state.find(key);
      if (it == before.state.end()) {
        diff.push_back(key + " appeared");
      } else if (it->second != bytes) {
        diff.push_back(key + " changed");
      }
    }
    for (const auto& [key, bytes] : before.state) {
      if (state.count(key) == 0) diff.push_back(key + " disappeared");
    }
    return absl::StrJoin(diff, "; ");
  }
};

/// Takes a snapshot through `client`. Readings and contact matrices are read one env at a time, so
/// that scenes whose whole readings exceed the message limit can be snapshot too.
inline ServerSnapshot TakeSnapshot(Client& client) {
  ServerSnapshot s;
  auto server = client.GetServerInfo();
  EXPECT_TRUE(server.ok()) << "GetServerInfo: " << server.status();
  if (server.ok()) {
    s.memory_bytes = server->memory_bytes();
    s.num_meshes = server->num_meshes();
  }
  auto list = client.ListScenes();
  EXPECT_TRUE(list.ok()) << "ListScenes: " << list.status();
  if (!list.ok()) return s;
  for (const v1::SceneInfo& info : list->scenes()) {
    const std::string& name = info.name();
    s.scenes.push_back(name);
    s.steps[name] = info.step();
    s.state[name + "/info"] = info.SerializeAsString();
    for (int e = 0; e < info.num_envs(); ++e) {
      const std::string env = absl::StrCat(name, "/env", e);
      v1::ReadSensorsRequest read;
      read.set_scene(name);
      read.add_env_ids(e);
      read.mutable_read()->add_branches(v1::MEASURED);
      read.mutable_read()->add_branches(v1::GROUND_TRUTH);
      auto readings = client.ReadSensors(read);
      EXPECT_TRUE(readings.ok()) << "ReadSensors " << env << ": " << readings.status();
      if (readings.ok()) {
        for (const auto& r : readings->readings()) {
          for (const auto& [channel, t] : r.channels()) {
            s.state[absl::StrCat(env, "/", r.sensor(), "/", v1::Branch_Name(r.branch()), "/", channel)] = t.data();
          }
        }
      }
      if (!info.has_contact_matrix()) continue;
      v1::GetContactMatrixRequest cm;
      cm.set_scene(name);
      cm.add_env_ids(e);
      cm.set_friction(info.contact_matrix().friction());
      auto matrix = client.GetContactMatrix(cm);
      EXPECT_TRUE(matrix.ok()) << "GetContactMatrix " << env << ": " << matrix.status();
      if (matrix.ok()) s.state[env + "/contact_matrix"] = matrix->normal().data() + matrix->friction().data();
    }
  }
  return s;
}

/// What a refusal must look like. `field`: the exact field path, or a prefix of it when it ends
/// with '*'; the message starts with it ("field.path: ...") and, for INVALID_ARGUMENT and
/// OUT_OF_RANGE, the BadRequest's first field violation names it. `message`: a substring.
struct Refusal {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string field;
  std::string message;
  /// Also accepted instead of `code` (UNKNOWN = nothing else), with its own field path: e.g.
  /// RESOURCE_EXHAUSTED, or INVALID_ARGUMENT naming the parameter that asks for too much.
  grpc::StatusCode alternative = grpc::StatusCode::UNKNOWN;
  std::string alternative_field;
};

/// "INVALID_ARGUMENT".
inline std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

/// The field violations of every google.rpc.BadRequest in `status`'s details, as
/// (field, description) pairs; none when it carries no details.
inline std::vector<std::pair<std::string, std::string>> BadRequestViolations(const grpc::Status& status) {
  std::vector<std::pair<std::string, std::string>> out;
  google::rpc::Status rpc;
  if (status.error_details().empty() || !rpc.ParseFromString(status.error_details())) return out;
  for (const auto& any : rpc.details()) {
    google::rpc::BadRequest bad;
    if (!any.UnpackTo(&bad)) continue;
    for (const auto& v : bad.field_violations()) out.emplace_back(v.field(), v.description());
  }
  return out;
}

/// Checks `status` against `want` (code, message, BadRequest field). A refusal with a field path,
/// whatever its code, carries exactly one violation: that path, and as its description the message
/// after "<path>: " (unless BoundedStatus cut both).
inline void ExpectStatusMatches(const grpc::Status& status, const Refusal& want) {
  using ::testing::HasSubstr;
  using ::testing::StartsWith;
  const grpc::StatusCode code = status.error_code();
  const bool alternative = want.alternative != grpc::StatusCode::UNKNOWN && code == want.alternative;
  if (!alternative) {
    EXPECT_EQ(CodeName(code), CodeName(want.code)) << "message: '" << status.error_message() << "'";
  }
  EXPECT_THAT(status.error_message(), HasSubstr(want.message));
  const std::string& path = alternative ? want.alternative_field : want.field;
  if (path.empty()) return;
  const bool prefix = path.back() == '*';
  const std::string field = prefix ? path.substr(0, path.size() - 1) : path;
  EXPECT_THAT(status.error_message(), StartsWith(prefix ? field : field + ": ")) << "the message names the field";
  {
    if (prefix) {
      EXPECT_THAT(BadRequestField(status), StartsWith(field)) << "BadRequest field violation";
    } else {
      EXPECT_EQ(BadRequestField(status), field) << "BadRequest field violation";
    }
    const auto violations = BadRequestViolations(status);
    ASSERT_EQ(violations.size(), 1u) << "one BadRequest field violation";
    const std::string& message = status.error_message();
    const std::string& path_sent = violations[0].first;
    // BoundedStatus cuts a message over 1 kB to "<first 984 bytes>... (N bytes)", and the
    // violation's description the same way on its own: then both end so.
    const bool cut = absl::EndsWith(message, " bytes)") && message.find("... (") != std::string::npos;
    if (message.size() <= 1024 && message.size() >= path_sent.size() + 2) {
      EXPECT_EQ(message.substr(0, path_sent.size() + 2), path_sent + ": ") << "the message starts with the path";
      if (cut) {
        EXPECT_TRUE(absl::EndsWith(violations[0].second, " bytes)")) << "the violation's description is cut too";
        EXPECT_LE(violations[0].second.size(), 1024u);
      } else {
        EXPECT_EQ(violations[0].second, message.substr(path_sent.size() + 2)) << "the violation's description";
      }
    }
  }
}

constexpr int kRefEnvs = 2;  // envs of the reference scene "grasp"

/// Ball pressing the centre probe in env 0, out of reach in env 1 (poses [2, 2, 7], xyzw).
inline std::vector<double> GoodPoses() {
  auto p = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 0.054)});
  auto q = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)});
  p.insert(p.end(), q.begin(), q.end());
  return p;
}

/// GoodPoses() of the first two envs, the ball out of reach in the others ([num_envs, 2, 7]).
inline std::vector<double> RefPoses(int num_envs) {
  std::vector<double> p = GoodPoses();
  for (int e = kRefEnvs; e < num_envs; ++e) {
    auto q = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)});
    p.insert(p.end(), q.begin(), q.end());
  }
  p.resize(static_cast<size_t>(num_envs) * kMovingLinks * 7);
  return p;
}

/// A server holding the reference scenes (ReferenceScenes(), each stepped once with GoodPoses()),
/// and ExpectRefused. By default the server is the in-process one of ServerTest; a fixture may
/// instead call InitHarness with a client of another server (a child process, say) and a
/// liveness check.
class BadRequestTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (HasFatalFailure()) return;
    InitHarness(client_.get(), grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  }

  /// The scenes every test starts with; the first is the one stepped after every refusal.
  virtual std::vector<v1::SceneSpec> ReferenceScenes() const {
    return {ToWire(GraspSpec("grasp", kRefEnvs, SphereShape(kBallR)))};
  }

  /// `dead(status)` (optional; given the refused call's status) returns why the server is gone,
  /// or "" while it lives.
  void InitHarness(Client* client, std::shared_ptr<grpc::Channel> channel,
                   std::function<std::string(const grpc::Status&)> dead = {}) {
    client_ptr_ = client;
    channel_ = std::move(channel);
    dead_ = std::move(dead);
    const std::vector<v1::SceneSpec> scenes = ReferenceScenes();
    ref_scene_ = scenes.front().name();
    for (const v1::SceneSpec& spec : scenes) {
      auto created = client_ptr_->CreateScene(spec);
      ASSERT_TRUE(created.ok()) << spec.name() << ": " << created.status();
      if (created->moving_links_size() == kMovingLinks) {
        auto stepped = client_ptr_->Step(MakeStep(spec.name(), spec.num_envs(), RefPoses(spec.num_envs())));
        ASSERT_TRUE(stepped.ok()) << spec.name() << ": " << stepped.status();
      }
    }
  }

  ServerSnapshot Take() { return TakeSnapshot(*client_ptr_); }

  /// Runs `call` and checks the refusal, that nothing changed and that the server still steps.
  void ExpectRefused(const std::string& what, const RefusableCall& call, const Refusal& want) {
    SCOPED_TRACE(what);
    const ServerSnapshot before = Take();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const grpc::Status status = call(&ctx);
    if (dead_) {
      if (const std::string why = dead_(status); !why.empty()) {
        ADD_FAILURE() << "the server died on this request (got " << CodeName(status.error_code()) << " '"
                      << status.error_message() << "'): " << why;
        return;
      }
    }
    // Every failure below says what the server answered.
    SCOPED_TRACE(absl::StrCat("got ", CodeName(status.error_code()), " '", status.error_message().substr(0, 500),
                              "', BadRequest field '", BadRequestField(status), "'"));
    ExpectStatusMatches(status, want);
    const ServerSnapshot after = Take();
    EXPECT_EQ(after.DiffFrom(before), "") << "a refused request changed the server's state";
    auto good = client_ptr_->Step(MakeStep(ref_scene_, kRefEnvs, GoodPoses()));
    ASSERT_TRUE(good.ok()) << "the server no longer steps: " << good.status();
    EXPECT_EQ(good->step(), before.steps.at(ref_scene_) + 1);
  }
  void ExpectRefused(const std::string& what, const RefusableCall& call, grpc::StatusCode code,
                     const std::string& message, const std::string& field = "") {
    Refusal want;
    want.code = code;
    want.field = field;
    want.message = message;
    ExpectRefused(what, call, want);
  }

  // Calls of the reference server.
  RefusableCall Step(const v1::StepRequest& req) { return Call(channel_, "Step", req); }
  RefusableCall Read(const v1::ReadSensorsRequest& req) { return Call(channel_, "ReadSensors", req); }
  RefusableCall Upload(const v1::UploadMeshRequest& req) { return Call(channel_, "UploadMesh", req); }
  RefusableCall Create(const v1::SceneSpec& spec) {
    v1::CreateSceneRequest req;
    *req.mutable_spec() = spec;
    return Call(channel_, "CreateScene", req);
  }
  RefusableCall Add(const v1::SensorSpec& sensor) {
    v1::AddSensorRequest req;
    req.set_scene(ref_scene_);
    *req.mutable_sensor() = sensor;
    return Call(channel_, "AddSensor", req);
  }
  /// Step (unary) or StepStream (one message) with arbitrary request bytes.
  RefusableCall RawStep(const std::string& bytes, bool stream) {
    return [this, bytes, stream](grpc::ClientContext* ctx) {
      bool answered = false;
      const grpc::Status s = RawCall(channel_, stream ? "StepStream" : "Step", bytes, ctx, &answered);
      if (stream) {
        EXPECT_FALSE(answered) << "no response to a bad request";
      }
      return s;
    };
  }

  Client& client() { return *client_ptr_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  Client* client_ptr_ = nullptr;
  std::string ref_scene_;
  std::shared_ptr<grpc::Channel> channel_;
  std::function<std::string(const grpc::Status&)> dead_;
};

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_SERVER_BAD_REQUEST_HARNESS_H_
