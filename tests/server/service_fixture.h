// Shared fixtures of the service tests: a real server on 127.0.0.1:0 with a taxel::Client, the
// grasp scene, deterministic poses, and the in-process core scene used as the bit-for-bit
// reference for readings that travelled over gRPC.
#ifndef TAXEL_TESTS_SERVER_SERVICE_FIXTURE_H_
#define TAXEL_TESTS_SERVER_SERVICE_FIXTURE_H_

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/executor.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "server/codec.h"
#include "server/server.h"
#include "taxel/client.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::testing {

constexpr double kPadHalfZ = 0.005;  // m, half thickness of the pad; probes sit on its top face
constexpr double kProbeR = 0.002;    // m, probe radius of every sensor
constexpr double kBallR = 0.05;      // m
constexpr int kMovingLinks = 2;      // hand/pad, ball/body

/// Limits distinct from the defaults, so that GetServerInfo can be checked against them.
inline server::ServerOptions TestServerOptions() {
  server::ServerOptions o;
  o.address = "127.0.0.1:0";
  o.metrics_address = "";  // the Prometheus exposer takes ~2 s to stop; only the metrics test enables it
  o.eval_threads = 2;
  o.request_threads = 2;
  o.limits.max_message_bytes = 8 << 20;
  o.limits.max_scenes = 16;
  o.limits.max_envs_per_scene = 64;
  o.limits.max_probes_per_scene = 1 << 20;
  o.limits.max_triangles_per_mesh = 100000;
  o.limits.max_memory_bytes = 0;
  return o;
}

/// The grasp scene: a box pad carrying three sensors, a ball (sphere or uploaded mesh) and a
/// ground plane far below. Canonical links: 0 hand/pad, 1 ball/body (moving), 2 ground/plane.
///
///          ball (r = 5 cm), centre c per env
///               .---.
///    __________/_____\__________  z = 0.005: top face of the pad; probes here (R = 2 mm)
///   |          pad (6 × 6 × 1 cm) |
///   |_____________________________| z = −0.005
///
///   ===============================  z = −1: ground (half-space), never within reach
///
/// Sensors (ids in order): 0 "kin" KinematicTaxel, 5×5 grid, pitch 1 cm;
/// 1 "depth" ContactDepthProbe, probes (0, 0), (1 cm, 0), (2 cm, 0);
/// 2 "touch" ContactProbe, probes (0, 0), (2.5 cm, 2.5 cm).
inline scene::SceneSpec GraspSpec(const std::string& name, int num_envs, const scene::ShapeSpec& ball) {
  scene::SceneSpec spec;
  spec.name = name;
  spec.num_envs = num_envs;
  spec.seed = 7;
  spec.entities.push_back(
      Entity("hand", scene::EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, kPadHalfZ})})}));
  spec.entities.push_back(Entity("ball", scene::EntityKind::kObject, {Link("body", {ball})}));
  scene::LinkSpec plane = Link("plane", {HalfSpaceShape()});
  plane.X_WL.p = Eigen::Vector3d(0, 0, -1);
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {plane}));

  spec.sensors.push_back(
      GridSensor("kin", sensors::SensorKind::kKinematicTaxel, "hand/pad", 5, 0.01, kPadHalfZ, kProbeR));

  sensors::SensorSpec depth;
  depth.name = "depth";
  depth.kind = sensors::SensorKind::kContactDepthProbe;
  depth.link = "pad";
  depth.probe_local_pos = {{0, 0, kPadHalfZ}, {0.01, 0, kPadHalfZ}, {0.02, 0, kPadHalfZ}};
  depth.probe_radius = {kProbeR};
  spec.sensors.push_back(depth);

  sensors::SensorSpec touch;
  touch.name = "touch";
  touch.kind = sensors::SensorKind::kContactProbe;
  touch.link = "hand/pad";
  touch.probe_local_pos = {{0, 0, kPadHalfZ}, {0.025, 0.025, kPadHalfZ}};
  touch.probe_radius = {kProbeR};
  spec.sensors.push_back(touch);
  return spec;
}

inline v1::SceneSpec ToWire(const scene::SceneSpec& spec) {
  v1::SceneSpec wire;
  server::EncodeSceneSpec(spec, &wire);
  return wire;
}

/// The geodesic sphere used as a mesh ball: radius kBallR, 320 triangles, 162 vertices.
inline geometry::MeshData BallMesh() { return geometry::GeodesicSphere(kBallR, 4); }
inline std::vector<double> FlatVertices(const geometry::MeshData& m) {
  std::vector<double> v;
  for (const auto& p : m.vertices) v.insert(v.end(), {p.x(), p.y(), p.z()});
  return v;
}
inline std::vector<int32_t> FlatTriangles(const geometry::MeshData& m) {
  std::vector<int32_t> t;
  for (const auto& tri : m.triangles) t.insert(t.end(), tri.begin(), tri.end());
  return t;
}

/// Deterministic poses [num_envs, 2, 7] (xyzw) of step `s`: the pad tilts about x and slides
/// with the env, the ball sinks into it and drifts, so that depths, normals and (from step 1 on)
/// finite-difference velocities all differ between envs and steps.
inline std::vector<double> MovingPoses(int num_envs, int s) {
  std::vector<double> out;
  for (int e = 0; e < num_envs; ++e) {
    const double a = 0.05 * e + 0.01 * s;  // rad, pad tilt about x
    out.insert(out.end(), {0.002 * e, 0, 0, std::sin(a / 2), 0, 0, std::cos(a / 2)});
    out.insert(out.end(), {0.003 * e, 0.001 * s, 0.0545 - 0.0005 * s, 0, 0, 0, 1});
  }
  return out;
}

/// Twists [num_envs, 2, 6] of step `s` (m/s, rad/s, world).
inline std::vector<double> MovingTwists(int num_envs, int s) {
  std::vector<double> out;
  for (int e = 0; e < num_envs; ++e) {
    out.insert(out.end(), {0.01 * e, 0, 0, 0.5, 0, 0});
    out.insert(out.end(), {0, 0.1, -0.05 * (s + 1), 0, 0, 0.2 * e});
  }
  return out;
}

/// The server's own answer to one unary Step or ReadSensors: the raw stub, without the client's
/// splitting of calls over the message limit (taxel/split.h), for tests of the server's refusals.
template <typename Response, typename Request>
absl::StatusOr<Response> Unsplit(
    Client& client, grpc::Status (v1::Taxel::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request) {
  grpc::ClientContext ctx;
  Response response;
  const grpc::Status s = (client.stub().*method)(&ctx, request, &response);
  if (!s.ok()) return FromGrpc(s);
  return response;
}
inline absl::StatusOr<v1::StepResponse> UnsplitStep(Client& client, const v1::StepRequest& request) {
  return Unsplit(client, &v1::Taxel::Stub::Step, request);
}
inline absl::StatusOr<v1::ReadSensorsResponse> UnsplitRead(Client& client, const v1::ReadSensorsRequest& request) {
  return Unsplit(client, &v1::Taxel::Stub::ReadSensors, request);
}

inline v1::StepRequest MakeStep(const std::string& scene, int num_envs, const std::vector<double>& poses,
                                const std::vector<double>& twists = {}) {
  v1::StepRequest req;
  req.set_scene(scene);
  *req.mutable_poses() = DoubleTensor({num_envs, kMovingLinks, 7}, poses);
  if (!twists.empty()) *req.mutable_twists() = DoubleTensor({num_envs, kMovingLinks, 6}, twists);
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  return req;
}

/// The in-process reference: the same spec run by the core on the calling thread.
class LocalScene {
 public:
  /// `mesh` (optional) is added to the local store first, as UploadMesh does on the server.
  static std::unique_ptr<LocalScene> Create(const scene::SceneSpec& spec, const geometry::MeshData* mesh = nullptr) {
    std::unique_ptr<LocalScene> s(new LocalScene());
    if (mesh != nullptr) {
      auto added = s->meshes_.Add(mesh->vertices, mesh->triangles);
      if (!added.ok()) ADD_FAILURE() << added.status();
    }
    auto scene = scene::Scene::Create(spec, s->meshes_);
    if (!scene.ok()) {
      ADD_FAILURE() << scene.status();
      return nullptr;
    }
    s->scene_ = *std::move(scene);
    return s;
  }
  absl::Status Step(const std::vector<double>& poses, const std::vector<double>& twists = {}) {
    scene::StepInput in;
    in.poses = poses;
    in.twists = twists;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    return scene_->Step(in, executor_);
  }
  scene::Scene& scene() { return *scene_; }

 private:
  LocalScene() = default;
  geometry::MeshStore meshes_;
  InlineExecutor executor_;
  std::unique_ptr<scene::Scene> scene_;
};

/// The bytes of one channel of a core sensor for `envs` (in that order), as a reading carries them.
inline std::string LocalChannelBytes(const sensors::Sensor& s, sensors::Branch branch, const std::string& channel,
                                     const std::vector<int32_t>& envs) {
  const sensors::SensorOutputs& o = s.outputs(branch);
  const size_t n = static_cast<size_t>(s.num_probes());
  const char* data = nullptr;
  size_t per_env = 0;  // bytes
  if (channel == "contact") data = reinterpret_cast<const char*>(o.contact.data()), per_env = n;
  if (channel == "depth") data = reinterpret_cast<const char*>(o.depth.data()), per_env = 4 * n;
  if (channel == "area") data = reinterpret_cast<const char*>(o.area.data()), per_env = 4 * n;
  if (channel == "partner") data = reinterpret_cast<const char*>(o.partner.data()), per_env = 4 * n;
  if (channel == "normal") data = reinterpret_cast<const char*>(o.normal.data()), per_env = 12 * n;
  if (channel == "force") data = reinterpret_cast<const char*>(o.force.data()), per_env = 12 * n;
  if (channel == "torque") data = reinterpret_cast<const char*>(o.torque.data()), per_env = 12 * n;
  if (channel == "displacement") data = reinterpret_cast<const char*>(o.displacement.data()), per_env = 12 * n;
  EXPECT_NE(data, nullptr) << "unknown channel " << channel;
  std::string out;
  if (data == nullptr) return out;
  for (int32_t e : envs) out.append(data + per_env * e, per_env);
  return out;
}

/// Every channel of every reading equals the local scene's buffers for `envs`, byte for byte;
/// returns the number of channels compared.
inline int ExpectReadingsEqualLocal(const google::protobuf::RepeatedPtrField<v1::SensorReading>& readings,
                                    const scene::Scene& local, const std::vector<int32_t>& envs) {
  int compared = 0;
  for (const v1::SensorReading& r : readings) {
    const sensors::Sensor* s = local.FindSensor(r.sensor());
    EXPECT_NE(s, nullptr) << r.sensor();
    if (s == nullptr) continue;
    const auto branch = r.branch() == v1::GROUND_TRUTH ? sensors::Branch::kGroundTruth : sensors::Branch::kMeasured;
    for (const auto& [name, tensor] : r.channels()) {
      EXPECT_EQ(tensor.data(), LocalChannelBytes(*s, branch, name, envs)) << r.sensor() << "." << name;
      ++compared;
    }
  }
  return compared;
}

/// The google.rpc.Status carried by a gRPC status, and its first BadRequest violation's field
/// ("" when there is none).
inline std::string BadRequestField(const grpc::Status& status) {
  google::rpc::Status rpc;
  if (status.error_details().empty() || !rpc.ParseFromString(status.error_details())) return "";
  for (const auto& any : rpc.details()) {
    google::rpc::BadRequest bad;
    if (any.UnpackTo(&bad) && bad.field_violations_size() > 0) return bad.field_violations(0).field();
  }
  return "";
}

/// A float32 element of an output tensor.
inline float FloatAt(const v1::Tensor& t, size_t i) {
  float f;
  std::memcpy(&f, t.data().data() + 4 * i, 4);
  return f;
}
inline int32_t Int32At(const v1::Tensor& t, size_t i) {
  int32_t v;
  std::memcpy(&v, t.data().data() + 4 * i, 4);
  return v;
}

/// A server with TestServerOptions() (or given options) and a client connected to it.
class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(TestServerOptions()); }
  void StartServer(const server::ServerOptions& options, std::map<std::string, std::string> tokens = {}) {
    auto server = server::TaxelServer::Start(options, {}, std::move(tokens));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto client = Client::Connect(server_->target());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }
  std::unique_ptr<Client> NewClient(const std::string& token = "") {
    Client::Options o;
    o.target = server_->target();
    o.timeout_seconds = 30;
    o.bearer_token = token;
    auto client = Client::Connect(o);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  std::unique_ptr<server::TaxelServer> server_;
  std::unique_ptr<Client> client_;
};

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_SERVER_SERVICE_FIXTURE_H_
