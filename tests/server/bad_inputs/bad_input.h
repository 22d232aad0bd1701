// One entry of the bad-input catalogue (bad_input_catalogue_test.cc): a raw request to one RPC of
// taxel.v1.Taxel, what the server must answer, and, when the request needs it, the state it
// refers to (made before the snapshot, so it is part of what must not change).
//
// Requests are written as text-format protos (Text), as a good request with one mutation
// (Spec, Sensor, StepWith, ...), or as bytes that are no message at all (Bytes). The reference
// scenes they address (see the catalogue test):
//   "grasp"    GraspSpec (service_fixture.h), 2 envs; "kin" has imperfections (noise 1e-3,
//              history_length 4); an ESTIMATED contact matrix, bodies [all], partners
//              [terrain, object/*], with friction. Links: 0 hand/pad, 1 ball/body, 2 ground/plane.
//   "reported" the same bodies and ball without sensors; a REPORTED contact matrix, no friction.
//   "bare"     GraspSpec without a contact matrix.
#ifndef TAXEL_TESTS_SERVER_BAD_INPUTS_BAD_INPUT_H_
#define TAXEL_TESTS_SERVER_BAD_INPUTS_BAD_INPUT_H_

#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/text_format.h"
#include "tests/server/bad_request_harness.h"

namespace taxel::testing {

/// What a case's setup leaves for its request.
struct BadInputContext {
  Client* client = nullptr;
  std::string mesh_id;  // of a mesh the setup uploaded
};

/// The serialised request of `method`.
using RequestBytes = std::function<std::string(const std::string& method, BadInputContext&)>;

struct BadInput {
  std::string name;    // the test's name: letters, digits and '_'
  std::string method;  // an RPC of taxel.v1.Taxel
  RequestBytes request;
  Refusal want;
  std::function<void(BadInputContext&)> setup;  // optional
  /// Run against a taxel-server child process: the request may bring the process down (today it
  /// does), which must fail this case only, naming the signal, not the whole test binary.
  bool isolated = false;

  BadInput&& Setup(std::function<void(BadInputContext&)> fn) && {
    setup = std::move(fn);
    return std::move(*this);
  }
  BadInput&& Isolated() && {
    isolated = true;
    return std::move(*this);
  }
  /// Also accept `code` with the field path `field` (see Refusal::alternative).
  BadInput&& OrElse(grpc::StatusCode code, std::string field) && {
    want.alternative = code;
    want.alternative_field = std::move(field);
    return std::move(*this);
  }
};

inline void PrintTo(const BadInput& c, std::ostream* os) { *os << c.method << "/" << c.name; }

constexpr auto kInvalid = grpc::StatusCode::INVALID_ARGUMENT;
constexpr auto kOutOfRange = grpc::StatusCode::OUT_OF_RANGE;
constexpr auto kNotFound = grpc::StatusCode::NOT_FOUND;
constexpr auto kExists = grpc::StatusCode::ALREADY_EXISTS;
constexpr auto kPrecondition = grpc::StatusCode::FAILED_PRECONDITION;
constexpr auto kExhausted = grpc::StatusCode::RESOURCE_EXHAUSTED;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

inline BadInput Case(std::string name, std::string method, RequestBytes request, grpc::StatusCode code,
                     std::string field, std::string message = "") {
  BadInput c;
  c.name = std::move(name);
  c.method = std::move(method);
  c.request = std::move(request);
  c.want.code = code;
  c.want.field = std::move(field);
  c.want.message = std::move(message);
  return c;
}

// ---- Requests ----

/// The request message type of `method`, empty.
inline std::unique_ptr<google::protobuf::Message> NewRequest(const std::string& method) {
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("taxel.v1.Taxel");
  const auto* m = service != nullptr ? service->FindMethodByName(method) : nullptr;
  if (m == nullptr) return nullptr;
  return std::unique_ptr<google::protobuf::Message>(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(m->input_type())->New());
}

/// Bytes as they are: not necessarily a message.
inline RequestBytes Bytes(std::string bytes) {
  return [bytes = std::move(bytes)](const std::string&, BadInputContext&) { return bytes; };
}

/// A request in protobuf text format, of the method's request type.
inline RequestBytes Text(std::string text) {
  return [text = std::move(text)](const std::string& method, BadInputContext&) {
    auto request = NewRequest(method);
    if (request == nullptr || !google::protobuf::TextFormat::ParseFromString(text, request.get())) {
      ADD_FAILURE() << "the fixture is no text-format " << method << " request: " << text;
      return std::string();
    }
    return request->SerializeAsString();
  };
}

/// A message built by `fn` (which may use the setup's context).
template <typename Message>
RequestBytes Build(std::function<void(Message&, BadInputContext&)> fn) {
  return [fn = std::move(fn)](const std::string&, BadInputContext& ctx) {
    Message m;
    fn(m, ctx);
    return m.SerializeAsString();
  };
}

/// The scene CreateScene cases start from: GraspSpec "other" (valid and not yet on the server).
/// entities: [0] hand (ROBOT; link pad, box), [1] ball (OBJECT; link body, sphere),
/// [2] ground (TERRAIN; link plane, half-space at z = −1); sensors: [0] kin (KinematicTaxel, 5×5
/// grid), [1] depth (ContactDepthProbe, 3 probes), [2] touch (ContactProbe, 2 probes).
inline v1::SceneSpec GoodSpec() { return ToWire(GraspSpec("other", kRefEnvs, SphereShape(kBallR))); }

/// CreateScene with GoodSpec() after `fn`.
inline RequestBytes Spec(std::function<void(v1::SceneSpec&)> fn) {
  return Build<v1::CreateSceneRequest>([fn = std::move(fn)](v1::CreateSceneRequest& r, BadInputContext&) {
    *r.mutable_spec() = GoodSpec();
    fn(*r.mutable_spec());
  });
}

/// The sensor AddSensor cases start from: a ContactDepthProbe "new" with one probe on hand/pad.
inline v1::SensorSpec GoodSensor() {
  v1::SensorSpec s;
  s.set_name("new");
  s.set_kind(v1::CONTACT_DEPTH_PROBE);
  s.set_link("hand/pad");
  *s.mutable_probe_local_pos() = DoubleTensor({1, 3}, {0, 0, kPadHalfZ});
  *s.mutable_probe_radius() = DoubleTensor({}, {kProbeR});
  return s;
}

/// AddSensor to "grasp" with GoodSensor() after `fn`.
inline RequestBytes Sensor(std::function<void(v1::SensorSpec&)> fn) {
  return Build<v1::AddSensorRequest>([fn = std::move(fn)](v1::AddSensorRequest& r, BadInputContext&) {
    r.set_scene("grasp");
    *r.mutable_sensor() = GoodSensor();
    fn(*r.mutable_sensor());
  });
}

/// A good step of "grasp" (GoodPoses, dt 0.01, XYZW).
inline v1::StepRequest GoodStep() { return MakeStep("grasp", kRefEnvs, GoodPoses()); }

/// Step (or StepStream) with GoodStep() after `fn`.
inline RequestBytes StepWith(std::function<void(v1::StepRequest&)> fn) {
  return Build<v1::StepRequest>([fn = std::move(fn)](v1::StepRequest& r, BadInputContext&) {
    r = GoodStep();
    fn(r);
  });
}

/// A tensor with an arbitrary dtype number, shape and bytes: what no helper would build.
inline v1::Tensor RawTensor(int dtype, std::vector<int64_t> shape, std::string data) {
  v1::Tensor t;
  t.set_dtype(static_cast<v1::DType>(dtype));
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(std::move(data));
  return t;
}

// ---- Setups ----

/// Creates `spec` on the server (a setup step); fails the test if it cannot.
/// Setup: uploads BallMesh() and keeps its id in ctx.mesh_id.
inline void UploadBall(BadInputContext& ctx) {
  const geometry::MeshData mesh = BallMesh();
  auto uploaded = ctx.client->UploadMesh(FlatVertices(mesh), FlatTriangles(mesh));
  ASSERT_TRUE(uploaded.ok()) << uploaded.status();
  ctx.mesh_id = uploaded->mesh_id();
}

inline void MustCreate(BadInputContext& ctx, const v1::SceneSpec& spec) {
  auto created = ctx.client->CreateScene(spec);
  ASSERT_TRUE(created.ok()) << "setup: " << spec.name() << ": " << created.status();
}
inline void MustAdd(BadInputContext& ctx, const std::string& scene, const v1::SensorSpec& sensor) {
  auto added = ctx.client->AddSensor(scene, sensor);
  ASSERT_TRUE(added.ok()) << "setup: " << sensor.name() << ": " << added.status();
}

// ---- Scenes past the 8 MiB message limit of the test server ----

/// "big": GraspSpec with 64 envs and a 75 × 75 "kin" grid. Its readings of all envs take
/// 64 · 5625 · (12 + 12) bytes (force, torque) = 8.64 MB > 8 MiB = 8,388,608 bytes.
inline v1::SceneSpec BigReadingsScene() {
  scene::SceneSpec spec = GraspSpec("big", 64, SphereShape(kBallR));
  spec.sensors[0].probe_local_pos = PlanarGrid(75, 75, 0.0004, kPadHalfZ);
  spec.sensors[0].grid_rows = spec.sensors[0].grid_cols = 75;
  return ToWire(spec);
}

/// "bigcm": a robot of 74 sphere links over a terrain, 64 envs, a REPORTED contact matrix of every
/// link against the terrain and every link, with friction: 64 · 74 · 75 · 3 · 4 · 2 = 8,524,800
/// bytes > 8 MiB. No sensors.
inline v1::SceneSpec BigMatrixScene() {
  scene::SceneSpec spec;
  spec.name = "bigcm";
  spec.num_envs = 64;
  std::vector<scene::LinkSpec> links;
  for (int i = 0; i < 74; ++i) links.push_back(Link("l" + std::to_string(i), {SphereShape(0.01)}));
  spec.entities.push_back(Entity("bot", scene::EntityKind::kRobot, links));
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  spec.contact_matrix.bodies = {"all"};
  spec.contact_matrix.partners = {"terrain", "robot/*"};
  spec.contact_matrix.source = contact::ContactSource::kReported;
  spec.contact_matrix.friction = true;
  return ToWire(spec);
}

/// A good step of "bigcm" (links 10 cm apart, 1 m up) that reads its contact matrix.
inline v1::StepRequest BigMatrixStep() {
  std::vector<double> poses;
  for (int e = 0; e < 64; ++e) {
    for (int l = 0; l < 74; ++l) poses.insert(poses.end(), {0.1 * l, 0.1 * e, 1, 0, 0, 0, 1});
  }
  v1::StepRequest r;
  r.set_scene("bigcm");
  *r.mutable_poses() = DoubleTensor({64, 74, 7}, poses);
  r.set_quat_order(v1::XYZW);
  r.set_dt(0.01);
  r.mutable_read()->set_contact_matrix(true);
  return r;
}

// ---- The catalogue, by RPC ----

std::vector<BadInput> UndecodableCases();  // every RPC
std::vector<BadInput> MeshCases();         // UploadMesh
std::vector<BadInput> DeleteMeshCases();   // DeleteMesh
std::vector<BadInput> SceneCases();        // CreateScene
std::vector<BadInput> SensorCases();       // AddSensor, RemoveSensor, UpdateSensor
std::vector<BadInput> StepCases();         // Step, StepStream
std::vector<BadInput> QueryCases();        // GetScene, DeleteScene, ReadSensors, ResetEnvs, GetContactMatrix

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_SERVER_BAD_INPUTS_BAD_INPUT_H_
