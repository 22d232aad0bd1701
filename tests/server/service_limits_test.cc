// The general rule of the service's limits: every allocation whose size a request controls (delay
// rings, surface samples, scaled meshes, uploaded meshes, sensor buffers and histories, contact
// matrices, responses) is computed first and refused with RESOURCE_EXHAUSTED, naming the field
// that asked for it, before anything is allocated or any state changes; what is accepted is
// counted in memory_bytes. One test per allocation, each checking the refusal and the unchanged
// state (step count, memory_bytes, scene list).
#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int kEnvs = 4;
constexpr int64_t kMiB = 1 << 20;

// Envs 0..3: the ball rests on the pad's centre probe.
std::vector<double> RestingPoses(int num_envs) {
  std::vector<double> p;
  for (int e = 0; e < num_envs; ++e) {
    p.insert(p.end(), {0, 0, 0, 0, 0, 0, 1});
    p.insert(p.end(), {0, 0, 0.054, 0, 0, 0, 1});
  }
  return p;
}

class ServiceLimitsTest : public ServerTest {
 protected:
  void SetUp() override {}  // each test starts its own server

  void Start(int64_t max_memory_bytes, int64_t max_message_bytes = 8 * kMiB, int eval_threads = 0,
             int64_t max_grid_build_queries = 0) {
    server::ServerOptions o = TestServerOptions();
    if (eval_threads > 0) o.eval_threads = eval_threads;
    if (max_grid_build_queries > 0) o.limits.max_grid_build_queries = max_grid_build_queries;
    o.limits.max_memory_bytes = max_memory_bytes;
    o.limits.max_message_bytes = max_message_bytes;
    o.limits.max_triangles_per_mesh = 0;  // the largest mesh that fits in one message
    StartServer(o);
  }

  struct State {
    int64_t memory = -1;
    int num_scenes = -1;
    int64_t step = -1;  // of "grasp", -1 when absent
  };
  State Take() {
    State s;
    auto info = client_->GetServerInfo();
    EXPECT_TRUE(info.ok()) << info.status();
    if (info.ok()) s.memory = info->memory_bytes(), s.num_scenes = info->num_scenes();
    auto scene = client_->GetScene("grasp");
    if (scene.ok()) s.step = scene->step();
    return s;
  }
  void ExpectUnchanged(const State& before) {
    const State after = Take();
    EXPECT_EQ(after.memory, before.memory) << "memory_bytes changed";
    EXPECT_EQ(after.num_scenes, before.num_scenes);
    EXPECT_EQ(after.step, before.step) << "the step count changed";
  }
  static void ExpectExhausted(const absl::Status& s, const std::string& field, const std::string& what) {
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(std::string(s.message()), StartsWith(field + ": ")) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(what)) << s;
  }
};

// The grasp scene whose KinematicTaxel "kin" (5 × 5 probes, 6 channels: force and torque) has a
// delay of `delay` seconds.
v1::SceneSpec DelayedGrasp(double delay) {
  v1::SceneSpec spec = ToWire(GraspSpec("grasp", kEnvs, SphereShape(kBallR)));
  spec.mutable_sensors(0)->mutable_imperfections()->set_delay(delay);
  return spec;
}

v1::StepRequest StepAt(double dt) {
  v1::StepRequest r = MakeStep("grasp", kEnvs, RestingPoses(kEnvs));
  r.set_dt(dt);
  r.mutable_read()->set_none(true);
  return r;
}

// Finding 1: a 1 s delay stepped at dt = 1e-8 s asks for a ring of 1e8 + 1 samples per probe:
// 4 envs × 100000001 × 25 probes × 6 channels × 4 B = 240 GB. Refused, at the default memory limit
// (three quarters of this machine's memory) as at a set one, and the scene is as before.
TEST_F(ServiceLimitsTest, DelayRingOfATinyDtIsRefusedBeforeAllocation) {
  for (int64_t limit : {int64_t{0}, 64 * kMiB}) {
    SCOPED_TRACE(limit);
    Start(limit);
    ASSERT_TRUE(client_->CreateScene(DelayedGrasp(1.0)).ok());
    ASSERT_TRUE(client_->Step(StepAt(0.01)).ok());
    const State before = Take();
    auto r = client_->Step(StepAt(1e-8));
    ExpectExhausted(r.status(), "dt", "the delay ring of sensor 'kin' (100000001 samples per probe");
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("needs 240 GB"));
    ExpectUnchanged(before);
    EXPECT_TRUE(client_->Step(StepAt(0.01)).ok());  // alive, and the scene still steps
  }
}

// Finding 3: 64 MiB, 4 envs, 1 s delay, dt = 1e-5 s: 4 × 100001 × 150 × 4 B = 240 MB, refused.
// A ring that fits is counted: from dt = 0.01 s (101 slots) to dt = 1e-3 s (1001 slots) the ring
// grows by 4 × 900 × 150 × 4 = 2,160,000 bytes, and memory_bytes by exactly that. One evaluation
// worker: with two, the second step may be the first to reach the other worker, whose scratch
// (counted in memory_bytes too) then grows by its first block.
TEST_F(ServiceLimitsTest, DelayRingIsCountedAndLimited) {
  Start(64 * kMiB, 8 * kMiB, /*eval_threads=*/1);
  ASSERT_TRUE(client_->CreateScene(DelayedGrasp(1.0)).ok());
  ASSERT_TRUE(client_->Step(StepAt(0.01)).ok());
  const State before = Take();
  ExpectExhausted(client_->Step(StepAt(1e-5)).status(), "dt", "(100001 samples per probe");
  ExpectUnchanged(before);
  ASSERT_TRUE(client_->Step(StepAt(1e-3)).ok());
  EXPECT_EQ(Take().memory - before.memory, 2160000);
}

// Finding 2: two 10 cm boxes sampled every micrometre: 6 × (0.1 / 1e-6)² = 6e10 samples a box.
TEST_F(ServiceLimitsTest, SurfaceSamplesAreRefusedBeforeSampling) {
  Start(0);
  const State before = Take();
  scene::SceneSpec spec;
  spec.name = "boxes";
  spec.num_envs = 1;
  spec.entities.push_back(Entity("robot", scene::EntityKind::kRobot, {Link("box", {BoxShape({0.05, 0.05, 0.05})})}));
  spec.entities.push_back(Entity("object", scene::EntityKind::kObject, {Link("box", {BoxShape({0.05, 0.05, 0.05})})}));
  v1::SceneSpec wire = ToWire(spec);
  wire.mutable_contact_matrix()->add_bodies("all");
  wire.mutable_contact_matrix()->add_partners("object/*");
  wire.mutable_contact_matrix()->set_source(v1::ESTIMATED);
  wire.mutable_contact_matrix()->set_sample_spacing(1e-6);
  auto r = client_->CreateScene(wire);
  ExpectExhausted(r.status(), "spec.contact_matrix.sample_spacing", "at 1e-06 m (6.00012e+10 samples so far");
  ExpectUnchanged(before);
  wire.mutable_contact_matrix()->set_sample_spacing(0.005);  // 6 × 20² = 2400 samples: fine
  EXPECT_TRUE(client_->CreateScene(wire).ok());
}

// Finding 5: a scaled copy of a mesh is built for a scene; when the scene is refused (unknown
// sensor link) the copy is freed with it, however often it is tried.
TEST_F(ServiceLimitsTest, RefusedSceneLeavesNoScaledMeshBehind) {
  Start(0);
  const geometry::MeshData ball = BallMesh();
  auto mesh = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  const State before = Take();
  scene::ShapeSpec shape = MeshShape(mesh->mesh_id());
  shape.mesh_scale = Eigen::Vector3d(1.001, 1, 1);
  v1::SceneSpec wire = ToWire(GraspSpec("grasp", kEnvs, shape));
  wire.mutable_sensors(0)->set_link("hand/nope");
  for (int i = 0; i < 3; ++i) {
    auto r = client_->CreateScene(wire);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
    ExpectUnchanged(before);
  }
  // The copy counts as the scene's memory while the scene lives: at least the base mesh's bytes.
  wire.mutable_sensors(0)->set_link("hand/pad");
  ASSERT_TRUE(client_->CreateScene(wire).ok());
  const int64_t with_scene = Take().memory;
  const int64_t mesh_bytes = before.memory;  // the store holds only the base mesh
  EXPECT_GE(with_scene - before.memory, mesh_bytes);
  ASSERT_TRUE(client_->DeleteScene("grasp").ok());
  EXPECT_EQ(Take().memory, before.memory);
}

// Uploads are estimated (MeshStore::EstimateBytes: 320 kB + 420 B per triangle + 64 B per
// vertex) and refused before the mesh is built: 320 triangles and 162 vertices ask for
// 320000 + 134400 + 10368 = 464768 bytes, over a 400 kB limit.
TEST_F(ServiceLimitsTest, MeshUploadIsRefusedBeforeItIsBuilt) {
  Start(400000);
  const State before = Take();
  const geometry::MeshData ball = BallMesh();
  auto r = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ExpectExhausted(r.status(), "triangles", "a mesh of 162 vertices and 320 triangles needs 465 KB");
  ExpectUnchanged(before);
}

// Mesh grids (UploadMeshRequest.grid, or a sensor with sdf_backend GRID): counted in memory_bytes
// at the bytes UploadMeshResponse.grid reports, and refused before allocation when they do not fit.
TEST_F(ServiceLimitsTest, MeshGridsAreCountedAndRefusedBeforeAllocation) {
  Start(64 * kMiB);
  const geometry::MeshData ball = BallMesh();
  auto plain = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->has_grid());
  const State before = Take();
  // 1e-7 m on a 320-triangle ball needs cells of well under a micrometre: terabytes. Refused, and
  // the mesh is as it was (uploaded, no grid).
  v1::MeshGridOptions fine;
  fine.set_max_error(1e-7);
  auto refused = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball), fine);
  ExpectExhausted(refused.status(), "grid.max_error", "signed-distance grid");
  ExpectUnchanged(before);
  // A GRID sensor builds the grid on first use; the grid's bytes are then the mesh's.
  ASSERT_TRUE(client_->CreateScene(ToWire(GraspSpec("grasp", kEnvs, MeshShape(plain->mesh_id())))).ok());
  const State with_scene = Take();
  v1::AddSensorRequest add;
  add.set_scene("grasp");
  *add.mutable_sensor() = ToWire(GraspSpec("grasp", kEnvs, SphereShape(kBallR))).sensors(0);
  add.mutable_sensor()->set_name("kin_grid");
  add.mutable_sensor()->set_sdf_backend(v1::GRID);
  grpc::ClientContext ctx;
  v1::SensorInfo info;
  const grpc::Status s = client_->stub().AddSensor(&ctx, add, &info);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto again = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));  // reports the grid it has
  ASSERT_TRUE(again.ok() && again->has_grid());
  const int64_t grid_bytes = again->grid().bytes();
  EXPECT_GT(grid_bytes, 0);
  EXPECT_LE(again->grid().max_error(), 1e-4);
  EXPECT_GE(Take().memory - with_scene.memory, grid_bytes);
  // Deleting the scene and the mesh gives everything back.
  ASSERT_TRUE(client_->DeleteScene("grasp").ok());
  ASSERT_TRUE(client_->DeleteMesh(plain->mesh_id()).ok());
  EXPECT_EQ(Take().memory, 0);
}

// Grid builds are bounded in exact distance queries (--max_grid_build_queries, here 2e6). On the
// 320-triangle ball (r = 5 cm, bounds half-diagonal ρ = 5·√3 cm, area ≈ 0.031 m², default band 5 mm):
// - 1e-8 m: the coarsest cell it allows is 3·√(1e-8 · (ρ + band)) = 0.09 mm, bricks of 0.73 mm, and
//   band·area / (0.73 mm)³ ≈ 4e5 bricks of 730 queries: 3e8, refused before any work;
// - 1e-6 m passes that (0.9 mm cells: 400 bricks, 3e5 queries) but the facets' edges drive the
//   cell-size search far below it: refused during the search, before the grid's queries;
// - 1e-3 m builds at the 2.5 mm start cell, a few 1e5 queries.
// Either refusal leaves nothing: no mesh stored, memory_bytes as before.
TEST_F(ServiceLimitsTest, MeshGridBuildsAreBoundedInQueries) {
  Start(64 * kMiB, 8 * kMiB, 0, 2'000'000);
  const geometry::MeshData ball = BallMesh();
  const State before = Take();
  v1::MeshGridOptions grid;
  grid.set_max_error(1e-8);
  auto refused = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball), grid);
  ExpectExhausted(refused.status(), "grid.max_error", "(the coarsest this error allows)");
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("over the limit of 2e+06")) << refused.status();
  ExpectUnchanged(before);
  grid.set_max_error(1e-6);
  refused = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball), grid);
  ExpectExhausted(refused.status(), "grid.max_error", "over the limit of 2e+06");
  EXPECT_THAT(std::string(refused.status().message()), Not(HasSubstr("coarsest"))) << refused.status();
  ExpectUnchanged(before);
  auto info = client_->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->num_meshes(), 0);
  // The limit that refused it is the one the server reports.
  EXPECT_EQ(info->limits().max_grid_build_queries(), 2'000'000);
  // The mesh was not kept: deleting it is NOT_FOUND.
  const std::string id = geometry::TriangleMesh::ContentId(ball.vertices, ball.triangles);
  EXPECT_EQ(client_->DeleteMesh(id).code(), absl::StatusCode::kNotFound);
  // A coarser grid of the same mesh then builds, within the limit.
  grid.set_max_error(1e-3);
  auto built = client_->UploadMesh(FlatVertices(ball), FlatTriangles(ball), grid);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->mesh_id(), id);
  EXPECT_TRUE(built->newly_added());
  EXPECT_LE(built->grid().max_error(), 1e-3);
  EXPECT_GT(Take().memory, before.memory);
}

// Sensor buffers and histories: a history of 4096 samples of 25 probes × 6 channels in 4 envs is
// 4 × 4096 × 150 × 4 B = 9.8 MB, over a limit of 4 MiB; the scene keeps its sensors.
TEST_F(ServiceLimitsTest, SensorHistoryIsRefusedBeforeAllocation) {
  Start(4 * kMiB);
  ASSERT_TRUE(client_->CreateScene(ToWire(GraspSpec("grasp", kEnvs, SphereShape(kBallR)))).ok());
  ASSERT_TRUE(client_->Step(MakeStep("grasp", kEnvs, RestingPoses(kEnvs))).ok());
  const State before = Take();
  v1::AddSensorRequest add;
  add.set_scene("grasp");
  v1::SceneSpec spec = ToWire(GraspSpec("grasp", kEnvs, SphereShape(kBallR)));
  *add.mutable_sensor() = spec.sensors(0);
  add.mutable_sensor()->set_name("kin2");
  add.mutable_sensor()->mutable_imperfections()->set_history_length(4096);
  grpc::ClientContext ctx;
  v1::SensorInfo info;
  const grpc::Status s = client_->stub().AddSensor(&ctx, add, &info);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_THAT(s.error_message(), StartsWith("sensor: sensor 'kin2' needs"));
  ExpectUnchanged(before);
  auto scene = client_->GetScene("grasp");
  ASSERT_TRUE(scene.ok());
  EXPECT_EQ(scene->sensors_size(), 3);
}

// A history read returns `history` samples of each env: its size is checked as such. 4 envs of
// "kin" (25 probes, force + torque, 8 samples kept), 12 KiB messages, sparse (a mask bit per
// element), sent to the server as it is (no client-side split). history 8 = 32 env-samples: the estimate is
// 1024 + 5·32 + 128 + 2·(64 + 32·25·3·4 + 32·25·3/8) = 21,240 bytes (the real 8·4·25·6·4 =
// 19,200 bytes of samples would not fit either): refused, naming read and the flag. history 2:
// 8 env-samples, about 5.6 kB: answered.
TEST_F(ServiceLimitsTest, AHistoryReadIsCountedBySamples) {
  Start(0, 12 * 1024);
  v1::SceneSpec spec = ToWire(GraspSpec("grasp", kEnvs, SphereShape(kBallR)));
  spec.mutable_sensors(0)->mutable_imperfections()->set_history_length(8);
  ASSERT_TRUE(client_->CreateScene(spec).ok());
  ASSERT_TRUE(client_->Step(MakeStep("grasp", kEnvs, RestingPoses(kEnvs))).ok());
  v1::ReadSensorsRequest read;
  read.set_scene("grasp");
  read.mutable_read()->add_sensors("kin");
  read.mutable_read()->set_sparse(true);
  read.set_history(8);
  auto refused = UnsplitRead(*client_, read);
  ExpectExhausted(refused.status(), "read", "the readings of 32 envs take about 21240 bytes");
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_message_bytes"));
  read.set_history(2);
  auto answered = client_->ReadSensors(read);
  ASSERT_TRUE(answered.ok()) << answered.status();
  EXPECT_THAT(answered->readings(0).channels().at("force").shape(), ::testing::ElementsAre(kEnvs, 2, 5, 5, 3));
}

// A hand of 8 box links over a ball, with a REPORTED matrix of every robot link against every
// link of the hand and the ball, friction kept: 8 rows × 9 columns.
v1::SceneSpec MultiLinkSpec(int num_envs) {
  scene::SceneSpec spec;
  spec.name = "grasp";
  spec.num_envs = num_envs;
  std::vector<scene::LinkSpec> links;
  for (int b = 0; b < 8; ++b) links.push_back(Link(absl::StrCat("l", b), {BoxShape({0.01, 0.01, 0.01})}));
  spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot, links));
  spec.entities.push_back(Entity("ball", scene::EntityKind::kObject, {Link("body", {SphereShape(kBallR)})}));
  v1::SceneSpec wire = ToWire(spec);
  wire.mutable_contact_matrix()->add_bodies("all");
  wire.mutable_contact_matrix()->add_partners("robot/*");   // the 8 links
  wire.mutable_contact_matrix()->add_partners("object/*");  // the ball's slot
  wire.mutable_contact_matrix()->set_source(v1::REPORTED);
  wire.mutable_contact_matrix()->set_friction(true);
  return wire;
}

// Contact matrices are reserved before they are allocated: 64 envs × 8 × 9 × 12 B × 2 = 110.6 kB
// after the link state of 64 × 9 moving links (83 kB at 144 B each) does not fit 150 kB.
TEST_F(ServiceLimitsTest, ContactMatrixIsReservedBeforeAllocation) {
  Start(150000);
  const State before = Take();
  auto r = client_->CreateScene(MultiLinkSpec(64));
  ExpectExhausted(r.status(), "spec.contact_matrix.bodies", "a 64 x 8 x 9 contact matrix needs 111 KB");
  ExpectUnchanged(before);
}

// Finding 4: the REPORTED matrix of a step's response is part of the response's size: 8 envs ×
// 8 bodies × 9 partners × 12 B × 2 (friction) = 13,824 bytes over a 12 KiB message limit. The
// step is refused before it runs: the step count does not move.
TEST_F(ServiceLimitsTest, ContactMatrixResponseOverTheMessageLimitChangesNothing) {
  Start(0, 12 * 1024);
  constexpr int kE = 8, kBodies = 8;
  auto created = client_->CreateScene(MultiLinkSpec(kE));
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->contact_matrix().columns_size(), 9);
  v1::StepRequest step;
  step.set_scene("grasp");
  std::vector<double> poses;
  for (int e = 0; e < kE; ++e) {
    for (int l = 0; l <= kBodies; ++l) poses.insert(poses.end(), {0.1 * l, 0, 0, 0, 0, 0, 1});
  }
  *step.mutable_poses() = DoubleTensor({kE, kBodies + 1, 7}, poses);
  step.set_quat_order(v1::XYZW);
  step.set_dt(0.01);
  step.mutable_read()->set_none(true);
  ASSERT_TRUE(client_->Step(step).ok());
  const State before = Take();
  ASSERT_EQ(before.step, 1);
  step.mutable_read()->set_contact_matrix(true);
  auto r = UnsplitStep(*client_, step);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("of them the contact matrix), over the message limit"));
  ExpectUnchanged(before);
}

}  // namespace
}  // namespace taxel::testing
