#include "fuzz/fuzz_support.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "server/log.h"

namespace taxel::fuzz {
namespace {

using scene::EntityKind;
using sensors::SensorKind;

scene::ShapeSpec Shape(geometry::ShapeKind kind) {
  scene::ShapeSpec s;
  s.kind = kind;
  return s;
}

scene::EntitySpec Entity(const std::string& name, EntityKind kind, const std::string& link, scene::ShapeSpec shape) {
  scene::EntitySpec e;
  e.name = name;
  e.kind = kind;
  e.links.push_back(scene::LinkSpec{link, {std::move(shape)}, RigidTransform()});
  return e;
}

// A rows × cols grid, pitch `pitch` (m), in the plane z = z0 of the link, centred.
sensors::SensorSpec GridSensor(const std::string& name, SensorKind kind, const std::string& link, int n, double pitch,
                               double z0, double radius) {
  sensors::SensorSpec s;
  s.name = name;
  s.kind = kind;
  s.link = link;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      s.probe_local_pos.emplace_back((j - 0.5 * (n - 1)) * pitch, (i - 0.5 * (n - 1)) * pitch, z0);
  }
  s.grid_rows = s.grid_cols = n;
  s.probe_radius = {radius};
  return s;
}

// Four probes along the finger's +x side, normals +x.
sensors::SensorSpec FingerSensor(const std::string& name, SensorKind kind) {
  sensors::SensorSpec s;
  s.name = name;
  s.kind = kind;
  s.link = "hand/finger";
  for (int i = 0; i < 4; ++i) s.probe_local_pos.emplace_back(0.008, 0, -0.015 + 0.01 * i);
  s.probe_radius = {0.002, 0.002, 0.0015, 0.0};  // the last one is a filler
  s.probe_local_normal = {Eigen::Vector3d(1, 0, 0)};
  return s;
}

// Every stage of the measured branch, with values a client could send.
sensors::ImperfectionSpec AllImperfections(int n) {
  sensors::ImperfectionSpec im;
  im.probe_radius_noise = 1e-4;
  im.probe_gain.assign(n, 1.0);
  for (int i = 0; i < n; ++i) im.probe_gain[i] = 0.9 + 0.01 * i;
  im.probe_gain_resample_range = std::make_pair(0.8, 1.2);
  im.crosstalk_strength = 0.3;
  im.crosstalk_sigma = 0.004;
  im.crosstalk_border = sensors::CrosstalkBorder::kRenormalize;
  im.hysteresis_strength = 0.2;
  im.hysteresis_tau = 0.05;
  im.random_walk = 0.01;
  im.noise = 0.05;
  im.bias = 0.01;
  im.resolution = 0.001;
  im.dead_taxel_probability = 0.1;
  im.dead_taxel_value_range = {0.0, 0.5};
  im.delay = 0.02;
  im.jitter = 0.005;
  im.history_length = 3;
  im.update_period = 2;
  return im;
}

}  // namespace

server::Limits FuzzLimits() {
  server::Limits l;
  l.max_message_bytes = 16 << 20;
  l.max_scenes = 8;
  l.max_envs_per_scene = 64;
  l.max_probes_per_scene = 1 << 16;
  l.max_triangles_per_mesh = 4096;
  l.max_memory_bytes = 256 << 20;
  // Grid building in this -O1 ASan + coverage build: 1'000'000 queries took 63 s of CPU on one
  // fuzzed input (far mesh queries; the coverage hooks on Eigen's comparisons dominate), past the
  // 25 s fuzz timeout. 100'000 bounds any input to a few seconds and still builds small grids.
  l.max_grid_build_queries = 100'000;
  return l;
}

geometry::MeshData ClosedMesh() {
  const double a = 0.02;
  geometry::MeshData m;
  m.vertices = {{a, 0, 0}, {-a, 0, 0}, {0, a, 0}, {0, -a, 0}, {0, 0, a}, {0, 0, -a}};
  // Counter-clockwise seen from outside.
  m.triangles = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4}, {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  return m;
}

geometry::MeshData OpenMesh() {
  const double h = 0.05;
  geometry::MeshData m;
  m.vertices = {{-h, -h, 0}, {h, -h, 0}, {h, h, 0}, {-h, h, 0}};
  m.triangles = {{0, 1, 2}, {0, 2, 3}};
  return m;
}

namespace {

struct Meshes {
  geometry::MeshStore store;
  std::string closed_id, open_id;
};

Meshes& GetMeshes() {
  static Meshes* meshes = [] {
    auto* m = new Meshes;
    for (auto [data, id] : {std::make_pair(ClosedMesh(), &m->closed_id), std::make_pair(OpenMesh(), &m->open_id)}) {
      auto added = m->store.Add(std::move(data.vertices), std::move(data.triangles));
      if (!added.ok()) {
        std::fprintf(stderr, "fuzz fixture mesh: %s\n", added.status().ToString().c_str());
        std::abort();
      }
      *id = added->id;
    }
    return m;
  }();
  return *meshes;
}

}  // namespace

geometry::MeshStore& SharedMeshes() { return GetMeshes().store; }
const std::string& ClosedMeshId() { return GetMeshes().closed_id; }
const std::string& OpenMeshId() { return GetMeshes().open_id; }

server::ThreadPool& EvalPool() {
  static server::ThreadPool* pool = new server::ThreadPool(2);
  return *pool;
}

v1::UploadMeshRequest MeshUploadRequest(const geometry::MeshData& mesh) {
  v1::UploadMeshRequest r;
  std::vector<double> xyz;
  for (const Eigen::Vector3d& v : mesh.vertices) xyz.insert(xyz.end(), {v.x(), v.y(), v.z()});
  const int64_t nv = static_cast<int64_t>(mesh.vertices.size()), nt = static_cast<int64_t>(mesh.triangles.size());
  server::EncodeDoubles({nv, 3}, xyz, r.mutable_vertices());
  server::EncodeTensor(v1::INT32, {nt, 3}, mesh.triangles.data(), mesh.triangles.size() * sizeof(geometry::Triangle),
                       r.mutable_triangles());
  return r;
}

v1::SceneSpec FixedSceneSpec(bool reported) {
  using geometry::ShapeKind;
  scene::SceneSpec s;
  s.name = reported ? "fixed-reported" : "fixed";
  s.num_envs = kFixedEnvs;
  s.seed = 7;

  scene::ShapeSpec palm = Shape(ShapeKind::kBox);
  palm.half_extents = Eigen::Vector3d(0.03, 0.03, 0.005);
  scene::ShapeSpec finger = Shape(ShapeKind::kCapsule);
  finger.radius = 0.008;
  finger.half_length = 0.02;
  scene::EntitySpec hand = Entity("hand", EntityKind::kRobot, "palm", palm);
  hand.links.push_back(scene::LinkSpec{"finger", {finger}, RigidTransform()});
  s.entities.push_back(std::move(hand));

  scene::ShapeSpec ball = Shape(ShapeKind::kSphere);
  ball.radius = 0.02;
  scene::EntitySpec object = Entity("ball", EntityKind::kObject, "body", ball);
  scene::ShapeSpec mesh = Shape(ShapeKind::kMesh);
  mesh.mesh_id = ClosedMeshId();
  object.assets.push_back(scene::AssetSpec{"octahedron", {{mesh}}});
  object.env_assets = {0, 1};
  s.entities.push_back(std::move(object));

  scene::ShapeSpec tip = Shape(ShapeKind::kCylinder);
  tip.radius = 0.005;
  tip.half_length = 0.01;
  s.entities.push_back(Entity("dart", EntityKind::kProjectile, "tip", tip));

  scene::EntitySpec ground = Entity("ground", EntityKind::kTerrain, "plane", Shape(ShapeKind::kHalfSpace));
  ground.links[0].X_WL.p = Eigen::Vector3d(0, 0, -0.1);
  s.entities.push_back(std::move(ground));
  scene::ShapeSpec bowl_mesh = Shape(ShapeKind::kMesh);
  bowl_mesh.mesh_id = OpenMeshId();
  // Unscaled: a scaled variant lives only as long as its scenes, and rebuilding its sign grid for
  // every input would cost more than the rest of the input (scaled meshes: the scene seeds).
  scene::EntitySpec bowl = Entity("bowl", EntityKind::kStatic, "shell", bowl_mesh);
  bowl.links[0].X_WL.p = Eigen::Vector3d(0.2, 0, -0.05);
  s.entities.push_back(std::move(bowl));

  s.sensors.push_back(GridSensor("touch", SensorKind::kContactProbe, "hand/palm", 3, 0.01, 0.005, 0.002));
  s.sensors.back().release_threshold = 5e-5;
  s.sensors.push_back(GridSensor("kin", SensorKind::kKinematicTaxel, "hand/palm", 4, 0.008, 0.005, 0.002));
  s.sensors.back().imperfections = AllImperfections(16);
  s.sensors.push_back(GridSensor("gel", SensorKind::kElastomerTaxel, "hand/palm", 4, 0.008, 0.005, 0.0));
  s.sensors.back().track_links = {"ball/body"};
  s.sensors.back().n_sample_points = 32;
  s.sensors.back().probe_local_normal = {Eigen::Vector3d(0, 0, 1)};
  {
    sensors::ImperfectionSpec& im = s.sensors.back().imperfections;
    im.crosstalk_kernel = {0, 0.05, 0, 0.05, 0.8, 0.05, 0, 0.05, 0};
    im.crosstalk_kernel_layers = 1;
    im.crosstalk_kernel_rows = im.crosstalk_kernel_cols = 3;
    im.noise = 1e-5;
  }
  s.sensors.push_back(FingerSensor("depth", SensorKind::kContactDepthProbe));
  s.sensors.back().filter_links = {"hand/palm"};
  s.sensors.back().imperfections.delay = 0.01;
  s.sensors.back().imperfections.history_length = 2;
  s.sensors.push_back(FingerSensor("kin_nl", SensorKind::kKinematicTaxel));
  s.sensors.back().force_law = sensors::SensorSpec::ForceLaw::kNonlinear;
  s.sensors.push_back(FingerSensor("prox", SensorKind::kProximityTaxel));
  s.sensors.back().track_links = {"ball/body", "dart/tip"};
  s.sensors.back().n_sample_points = 32;

  s.contact_matrix.bodies = {"all"};
  s.contact_matrix.partners = {"terrain", "object/*", "robot/*", "projectile/dart", "static/bowl"};
  s.contact_matrix.source = reported ? contact::ContactSource::kReported : contact::ContactSource::kEstimated;
  s.contact_matrix.friction = true;
  s.contact_matrix.sample_spacing = 0.01;  // coarse: keeps the estimated pairs cheap

  v1::SceneSpec out;
  server::EncodeSceneSpec(s, &out);
  return out;
}

std::vector<double> FixedPoses(int num_envs, double phase) {
  std::vector<double> poses;
  for (int e = 0; e < num_envs; ++e) {
    const double dz = 0.0005 * std::sin(phase + e);
    // palm at the origin; finger beside it; ball 1.5 mm into the palm's top face; dart at the finger.
    for (const auto& p : {std::array<double, 3>{0, 0, 0},
                          {0.05, 0, 0.01},
                          {0.002 * e, 0, 0.0235 + dz},
                          {0.05 + 0.008 + 0.004 + dz, 0, 0.01}}) {
      poses.insert(poses.end(), {p[0], p[1], p[2], 0, 0, 0, 1});
    }
  }
  return poses;
}

// ------------------------------------------------------------------------------------------

namespace {

server::ServerOptions FuzzOptions() {
  server::ServerOptions o;
  o.limits = FuzzLimits();
  o.eval_threads = EvalPool().num_workers();
  return o;
}

}  // namespace

FuzzServer::FuzzServer(geometry::MeshStore* meshes)
    : options_(FuzzOptions()),
      registry_(options_.limits, meshes),
      handlers_(server::TaxelHandlers::Deps{&options_, &registry_, &metrics_, &EvalPool(), &draining_}) {
  server::SetLogLevel(server::LogLevel::kWarning);
  // As server/server.cc wires its store.
  meshes->set_grid_builds(&EvalPool(), static_cast<double>(options_.limits.max_grid_build_queries));
}

absl::Status LiveScene::WithScene(absl::FunctionRef<absl::Status(scene::Scene&)> fn) {
  return server->registry().WithScene(kTenant, name, [&](server::SceneEntry& entry) { return fn(entry.scene()); });
}

absl::StatusOr<LiveScene> CreateScene(const v1::SceneSpec& spec, std::unique_ptr<FuzzServer> server) {
  LiveScene live;
  live.server = std::move(server);
  if (live.server == nullptr) {
    live.server = std::make_unique<FuzzServer>(&SharedMeshes());
    // The tenant uploads the fixture meshes first (a scene sees only its tenant's meshes); the
    // shared store has them built already, so this only records them.
    for (const geometry::MeshData& m : {ClosedMesh(), OpenMesh()}) {
      TAXEL_RETURN_IF_ERROR(live.server->Run(&server::TaxelHandlers::UploadMesh, MeshUploadRequest(m)));
    }
  }
  v1::CreateSceneRequest request;
  *request.mutable_spec() = spec;
  TAXEL_RETURN_IF_ERROR(live.server->Run(&server::TaxelHandlers::CreateScene, request, &live.info));
  live.name = live.info.name();
  return live;
}

LiveScene CreateSceneOrDie(const v1::SceneSpec& spec) {
  auto live = CreateScene(spec);
  if (!live.ok()) {
    std::fprintf(stderr, "fuzz fixture scene '%s': %s\n", spec.name().c_str(), live.status().ToString().c_str());
    std::abort();
  }
  return *std::move(live);
}

LiveScene& FixedScene(bool reported) {
  static LiveScene* scenes[2] = {nullptr, nullptr};
  LiveScene*& live = scenes[reported ? 1 : 0];
  if (live == nullptr) live = new LiveScene(CreateSceneOrDie(FixedSceneSpec(reported)));
  const absl::Status reset = live->Run(&server::TaxelHandlers::ResetEnvs, v1::ResetEnvsRequest());
  if (!reset.ok()) {
    std::fprintf(stderr, "fuzz fixture reset: %s\n", reset.ToString().c_str());
    std::abort();
  }
  return *live;
}

absl::Status AddSensor(const v1::SensorSpec& sensor, LiveScene& live) {
  v1::AddSensorRequest request;
  request.set_scene(live.name);
  *request.mutable_sensor() = sensor;
  return live.server->Run(&server::TaxelHandlers::AddSensor, request);
}

absl::Status RunSessionOp(const SessionOp& op, LiveScene& live) {
  using server::TaxelHandlers;
  switch (op.op_case()) {
    case SessionOp::kStep: return live.Run(&TaxelHandlers::Step, op.step());
    case SessionOp::kReset: return live.Run(&TaxelHandlers::ResetEnvs, op.reset());
    case SessionOp::kUpdateSensor: return live.Run(&TaxelHandlers::UpdateSensor, op.update_sensor());
    case SessionOp::kAddSensor: return AddSensor(op.add_sensor(), live);
    case SessionOp::kRemoveSensor: return live.Run(&TaxelHandlers::RemoveSensor, op.remove_sensor());
    case SessionOp::kReadSensors: return live.Run(&TaxelHandlers::ReadSensors, op.read_sensors());
    case SessionOp::kGetContactMatrix: return live.Run(&TaxelHandlers::GetContactMatrix, op.get_contact_matrix());
    case SessionOp::OP_NOT_SET: break;
  }
  return absl::OkStatus();
}

}  // namespace taxel::fuzz
