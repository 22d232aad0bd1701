// The bad-input catalogue: raw requests a hostile or careless client can send to every RPC of
// taxel.v1.Taxel (tests/server/bad_inputs/*.cc), each with the code and field path the server must
// answer. After every one the server is alive and unchanged: ServerSnapshot (every scene's info and
// step count, every reading channel of both branches, the contact matrices, memory_bytes,
// num_meshes, the scene list) is bit-identical before and after, and the reference scene still
// steps (bad_request_harness.h).
//
// Each case is a test of its own (Catalogue/BadInputCatalogueTest.IsRefusedAndChangesNothing/
// <Method>_<case>) on a fresh server: an in-process one, or, for cases marked Isolated() (requests
// that could take the process down), a taxel-server child process, so that a crash fails that case
// alone and names the signal and the server's last words.
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "gtest/gtest.h"
#include "tests/server/bad_inputs/bad_input.h"
#include "tests/server/server_process.h"

namespace taxel::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<BadInput> Catalogue() {
  std::vector<BadInput> all;
  for (auto part : {UndecodableCases, MeshCases, DeleteMeshCases, SceneCases, SensorCases, StepCases, QueryCases}) {
    for (BadInput& c : part()) all.push_back(std::move(c));
  }
  return all;
}

// The reference scenes of the cases (bad_inputs/bad_input.h): "grasp" with imperfections on
// "kin" and an ESTIMATED contact matrix with friction, "reported" with a REPORTED one, "bare"
// without.
std::vector<v1::SceneSpec> CatalogueScenes() {
  v1::SceneSpec grasp = ToWire(GraspSpec("grasp", kRefEnvs, SphereShape(kBallR)));
  grasp.mutable_sensors(0)->mutable_imperfections()->set_noise(0.001);
  grasp.mutable_sensors(0)->mutable_imperfections()->set_history_length(4);
  auto* cm = grasp.mutable_contact_matrix();
  cm->add_bodies("all");
  cm->add_partners("terrain");
  cm->add_partners("object/*");
  cm->set_friction(true);

  v1::SceneSpec reported = ToWire(GraspSpec("reported", kRefEnvs, SphereShape(kBallR)));
  reported.clear_sensors();
  cm = reported.mutable_contact_matrix();
  cm->add_bodies("all");
  cm->add_partners("terrain");
  cm->add_partners("object/*");
  cm->set_source(v1::REPORTED);

  return {grasp, reported, ToWire(GraspSpec("bare", kRefEnvs, SphereShape(kBallR)))};
}

class BadInputCatalogueTest : public BadRequestTest, public ::testing::WithParamInterface<BadInput> {
 protected:
  void SetUp() override {
    if (!GetParam().isolated) return BadRequestTest::SetUp();
    // The limits of TestServerOptions(), as flags.
    ASSERT_TRUE(
        child_.Start({"--threads=2", "--max_message_bytes=8388608", "--max_scenes=16", "--max_envs_per_scene=64",
                      "--max_probes_per_scene=1048576", "--max_triangles_per_mesh=100000", "--max_memory_bytes=0"}));
    ASSERT_TRUE(child_.WaitStarted(Clock::now() + std::chrono::seconds(20))) << child_.log();
    Client::Options o;
    o.target = child_.target();
    o.timeout_seconds = 30;
    auto client = Client::Connect(o);
    ASSERT_TRUE(client.ok()) << client.status();
    child_client_ = *std::move(client);
    InitHarness(child_client_.get(), grpc::CreateChannel(child_.target(), grpc::InsecureChannelCredentials()),
                [this](const grpc::Status& status) { return ChildDeath(status); });
  }

  std::vector<v1::SceneSpec> ReferenceScenes() const override { return CatalogueScenes(); }

  // Why the child is gone, or "" while it lives. A process that dies closes its connections
  // before it can be reaped: after UNAVAILABLE, wait (bounded) for it to close its stderr too.
  std::string ChildDeath(const grpc::Status& status) {
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      child_.WaitEof(Clock::now() + std::chrono::seconds(10));
    }
    if (child_.Running()) {
      if (!child_.eof()) return "";
      child_.Wait();  // stderr closed: the process is exiting
    }
    return "taxel-server ended with " + child_.ExitDescription() + "; its stderr ends with:\n" + child_.LogTail();
  }

  ServerProcess child_;
  std::unique_ptr<Client> child_client_;
};

TEST_P(BadInputCatalogueTest, IsRefusedAndChangesNothing) {
  const BadInput& c = GetParam();
  BadInputContext ctx;
  ctx.client = &client();
  if (c.setup) {
    c.setup(ctx);
    if (HasFatalFailure()) return;
  }
  const std::string bytes = c.request(c.method, ctx);
  ExpectRefused(
      c.method + " " + c.name,
      [&](grpc::ClientContext* call) {
        bool answered = false;
        const grpc::Status status = RawCall(channel(), c.method, bytes, call, &answered);
        if (c.method == "StepStream") {
          EXPECT_FALSE(answered) << "a stream answered a bad request with a response";
        }
        return status;
      },
      c.want);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInputCatalogueTest, ::testing::ValuesIn(Catalogue()),
                         [](const ::testing::TestParamInfo<BadInput>& info) {
                           return info.param.method + "_" + info.param.name;
                         });

// The catalogue itself: at least 120 cases, every RPC covered (undecodable bytes and more), unique
// names, and an undeclared number for every enum field a request can carry.
TEST(BadInputCatalogueCoverageTest, CoversEveryRpcAndEveryRequestEnum) {
  const std::vector<BadInput> all = Catalogue();
  EXPECT_GE(all.size(), 120u);
  std::map<std::string, int> per_method;
  std::set<std::string> names;
  for (const BadInput& c : all) {
    ++per_method[c.method];
    EXPECT_TRUE(names.insert(c.method + "_" + c.name).second) << "duplicate case " << c.method << "_" << c.name;
  }
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("taxel.v1.Taxel");
  ASSERT_NE(service, nullptr);
  for (int m = 0; m < service->method_count(); ++m) {
    const std::string& name = service->method(m)->name();
    // 3 undecodable cases per RPC, and at least one about its content where it has any.
    const bool has_fields = service->method(m)->input_type()->field_count() > 0;
    EXPECT_GE(per_method[name], has_fields ? 4 : 3) << name;
  }
  // Every INVALID_ARGUMENT / OUT_OF_RANGE answer names its field (checked against the BadRequest
  // violation by ExpectStatusMatches), the accepted alternative too.
  const auto names_field = [](grpc::StatusCode code) {
    return code == grpc::StatusCode::INVALID_ARGUMENT || code == grpc::StatusCode::OUT_OF_RANGE;
  };
  for (const BadInput& c : all) {
    if (names_field(c.want.code)) {
      EXPECT_FALSE(c.want.field.empty()) << c.method << "_" << c.name << ": no field path to check";
    }
    if (names_field(c.want.alternative)) {
      EXPECT_FALSE(c.want.alternative_field.empty()) << c.method << "_" << c.name << ": no alternative field path";
    }
  }
  std::string counts;
  for (const auto& [method, n] : per_method) counts += absl::StrCat(method, " ", n, ", ");
  RecordProperty("cases", static_cast<int>(all.size()));
  std::cout << "catalogue: " << all.size() << " cases: " << counts << "\n";

  // Every enum-typed field reachable from a request message: the catalogue sets each one to an
  // undeclared number somewhere (named here by the case that does).
  const std::map<std::string, std::string> enum_cases = {
      {"taxel.v1.Tensor.dtype", "UploadMesh_vertices_dtype_9"},
      {"taxel.v1.Pose.quat_order", "CreateScene_pose_quat_order_7"},
      {"taxel.v1.Entity.kind", "CreateScene_entity_kind_9"},
      {"taxel.v1.SensorSpec.kind", "AddSensor_kind_9"},
      {"taxel.v1.SensorSpec.sdf_backend", "AddSensor_sdf_backend_7"},
      {"taxel.v1.KinematicTaxelOptions.force_law", "AddSensor_kinematic_force_law_5"},
      {"taxel.v1.ImperfectionOptions.crosstalk_border", "AddSensor_crosstalk_border_9"},
      {"taxel.v1.ContactMatrixSpec.source", "CreateScene_contact_source_5"},
      {"taxel.v1.ContactMatrixSpec.sdf_backend", "CreateScene_contact_sdf_backend_7"},
      {"taxel.v1.StepRequest.quat_order", "Step_quat_order_5"},
      {"taxel.v1.ReadSpec.branches", "ReadSensors_branch_9"},
  };
  std::set<std::string> seen;
  std::function<void(const google::protobuf::Descriptor*)> walk = [&](const google::protobuf::Descriptor* d) {
    if (!seen.insert(d->full_name()).second) return;
    for (int f = 0; f < d->field_count(); ++f) {
      const auto* field = d->field(f);
      if (field->enum_type() != nullptr) {
        auto it = enum_cases.find(field->full_name());
        EXPECT_TRUE(it != enum_cases.end()) << "no case sets " << field->full_name() << " out of range";
        if (it != enum_cases.end()) {
          EXPECT_TRUE(names.count(it->second)) << it->second;
        }
      }
      if (field->message_type() != nullptr) walk(field->message_type());
    }
  };
  for (int m = 0; m < service->method_count(); ++m) walk(service->method(m)->input_type());
}

}  // namespace
}  // namespace taxel::testing
