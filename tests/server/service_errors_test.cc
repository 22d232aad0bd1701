// Bad requests over gRPC, and the limits: each gets the right code, names the field in its message,
// carries a google.rpc.BadRequest for INVALID_ARGUMENT / OUT_OF_RANGE, and changes nothing: the
// scene's step count and readings are as before, and it still steps (bad_request_harness.h). The
// full catalogue of raw bad requests over every RPC is bad_input_catalogue_test.cc.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/bad_request_harness.h"

namespace taxel::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kEnvs = kRefEnvs;

// The grasp scene of GraspSpec, stepped once (bad_request_harness.h).
class ServiceErrorsTest : public BadRequestTest {
 protected:
  v1::StepRequest Good() { return MakeStep("grasp", kEnvs, GoodPoses()); }
  v1::SensorSpec GoodSensor() {
    v1::SensorSpec s;
    s.set_name("new");
    s.set_kind(v1::CONTACT_DEPTH_PROBE);
    s.set_link("hand/pad");
    *s.mutable_probe_local_pos() = DoubleTensor({1, 3}, {0, 0, kPadHalfZ});
    *s.mutable_probe_radius() = DoubleTensor({}, {kProbeR});
    return s;
  }
};

constexpr auto kInvalid = grpc::StatusCode::INVALID_ARGUMENT;

TEST_F(ServiceErrorsTest, BadStepsAreRefusedAndChangeNothing) {
  const std::vector<double> good = GoodPoses();
  v1::StepRequest r = Good();
  *r.mutable_poses() = DoubleTensor({2, 1, 7}, std::vector<double>(good.begin(), good.begin() + 14));
  ExpectRefused("poses shape", Step(r), kInvalid, "poses: expected shape [2, 2, 7] (or [4, 7]), got [2, 1, 7]",
                "poses");

  r = Good();
  r.mutable_poses()->mutable_data()->resize(27 * 8);
  ExpectRefused("byte length", Step(r), kInvalid, "poses: shape [2, 2, 7] of FLOAT64 needs 224 bytes, got 216",
                "poses");

  std::vector<double> poses = GoodPoses();
  poses[(1 * kMovingLinks + 0) * 7 + 2] = std::nan("");  // env 1, link 0 (pad), z
  r = MakeStep("grasp", kEnvs, poses);
  ExpectRefused("NaN", Step(r), kInvalid, "poses[1][0][2]: expected a finite number", "poses[1][0][2]");

  poses = GoodPoses();
  for (int k = 3; k < 7; ++k) poses[(0 * kMovingLinks + 1) * 7 + k] = 0;  // env 0, ball: q = 0
  r = MakeStep("grasp", kEnvs, poses);
  ExpectRefused("zero quaternion", Step(r), kInvalid, "poses[0][1]: quaternion norm must be at least 1e-6",
                "poses[0][1]");

  r = Good();
  r.mutable_poses()->set_nonzero_mask(std::string(4, '\xff'));
  ExpectRefused("sparse input", Step(r), kInvalid,
                "poses.nonzero_mask: inputs must be dense (the sparse form is for outputs); leave it empty",
                "poses.nonzero_mask");

  r = Good();
  r.clear_quat_order();
  ExpectRefused("quat order", Step(r), kInvalid, "quat_order: expected XYZW or WXYZ", "quat_order");

  r = Good();
  r.set_dt(0);
  ExpectRefused("dt", Step(r), kInvalid, "dt: expected a finite value > 0, got 0", "dt");

  std::vector<double> twists(kEnvs * kMovingLinks * 6, 0.0);
  twists[(0 * kMovingLinks + 1) * 6 + 4] = INFINITY;
  r = MakeStep("grasp", kEnvs, GoodPoses(), twists);
  ExpectRefused("twist", Step(r), kInvalid, "twists[0][1][4]: expected a finite number", "twists[0][1][4]");

  r = Good();
  r.add_env_ids(0);
  r.add_env_ids(5);
  ExpectRefused("env id", Step(r), grpc::StatusCode::OUT_OF_RANGE, "env_ids[1]: env id 5 out of range [0, 2)",
                "env_ids[1]");

  r = Good();
  r.add_env_ids(1);
  r.add_env_ids(1);
  ExpectRefused("repeated env id", Step(r), kInvalid, "env_ids[1]: env id 1 appears more than once", "env_ids[1]");

  r = Good();
  r.set_scene("nope");
  ExpectRefused("unknown scene", Step(r), grpc::StatusCode::NOT_FOUND, "scene: no scene named 'nope'");

  r = Good();
  r.mutable_read()->add_sensors("kin");
  r.mutable_read()->add_sensors("nope");
  ExpectRefused("unknown sensor", Step(r), grpc::StatusCode::NOT_FOUND, "read.sensors[1]: no sensor named 'nope'");

  r = Good();
  r.mutable_read()->add_channels("pressure");
  ExpectRefused("unknown channel", Step(r), kInvalid, "read.channels[0]: unknown channel 'pressure'",
                "read.channels[0]");
}

TEST_F(ServiceErrorsTest, StepBytesThatAreNoStepRequestAreRefused) {
  // Field 4 (poses) announced with 100 bytes of which 2 follow; then field 0, which is invalid.
  for (const std::string& bytes : {std::string("\x22\x64\x08\x01", 4), std::string("\x00\x01", 2)}) {
    for (bool stream : {false, true}) {
      ExpectRefused(stream ? "stream" : "unary", RawStep(bytes, stream), kInvalid,
                    "request: not a valid taxel.v1.StepRequest", "request");
    }
  }
}

TEST_F(ServiceErrorsTest, BadReadsAreRefused) {
  v1::ReadSensorsRequest r;
  r.set_scene("grasp");
  r.add_env_ids(2);
  ExpectRefused("env id", Read(r), grpc::StatusCode::OUT_OF_RANGE, "env_ids[0]: env id 2 out of range [0, 2)",
                "env_ids[0]");
  r.clear_env_ids();
  r.mutable_read()->add_sensors("ghost");
  ExpectRefused("unknown sensor", Read(r), grpc::StatusCode::NOT_FOUND, "read.sensors[0]: no sensor named 'ghost'");
  r.set_scene("nope");
  ExpectRefused("unknown scene", Read(r), grpc::StatusCode::NOT_FOUND, "scene: no scene named 'nope'");
}

TEST_F(ServiceErrorsTest, BadScenesAreRefused) {
  const v1::SceneSpec good = ToWire(GraspSpec("other", kEnvs, SphereShape(kBallR)));
  v1::SceneSpec s = ToWire(GraspSpec("grasp", kEnvs, SphereShape(kBallR)));
  ExpectRefused("duplicate name", Create(s), grpc::StatusCode::ALREADY_EXISTS,
                "spec.name: a scene named 'grasp' already exists");

  s = good;
  s.set_num_envs(65);
  ExpectRefused("too many envs", Create(s), grpc::StatusCode::RESOURCE_EXHAUSTED,
                "spec.num_envs: 65 exceeds the server limit of 64 envs per scene");

  s = good;
  s.set_name("no spaces");
  ExpectRefused("scene name", Create(s), kInvalid, "spec.name: expected 1 to 128 letters", "spec.name");

  s = good;
  s.mutable_entities(0)->clear_kind();
  ExpectRefused("entity kind", Create(s), kInvalid, "spec.entities[0].kind: expected ROBOT", "spec.entities[0].kind");

  s = good;
  s.mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->clear_geometry();
  ExpectRefused("no geometry", Create(s), kInvalid, "spec.entities[1].links[0].shapes[0]: expected one of sphere",
                "spec.entities[1].links[0].shapes[0]");

  s = good;
  s.mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->mutable_sphere()->set_radius(-1);
  // The core names this "shapes[0].radius", the wire "shapes[0].sphere.radius" (see the report).
  ExpectRefused("sphere radius", Create(s), kInvalid, "expected a finite value > 0, got -1",
                "spec.entities[1].links[0].shapes[0].*");

  s = good;
  s.mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->mutable_mesh()->set_mesh_id("0123abcd");
  ExpectRefused("unknown mesh", Create(s), grpc::StatusCode::NOT_FOUND,
                "spec.entities[1].links[0].shapes[0].mesh.mesh_id: mesh '0123abcd' has not been uploaded");

  s = good;
  *s.mutable_sensors(1)->mutable_probe_radius() = DoubleTensor({}, {-0.001});
  ExpectRefused("negative radius", Create(s), kInvalid, "spec.sensors[1].probe_radius[0]: expected a finite value >= 0",
                "spec.sensors[1].probe_radius[0]");

  s = good;
  s.mutable_sensors(2)->set_link("hand/nope");
  ExpectRefused("unknown link", Create(s), grpc::StatusCode::NOT_FOUND,
                "spec.sensors[2].link: unknown link 'hand/nope'");
  EXPECT_EQ(client_->ListScenes()->scenes_size(), 1) << "no refused scene was registered";
}

// Shape dimensions are named after the wire's oneof ("shapes[0].sphere.radius"), the field the request has.
TEST_F(ServiceErrorsTest, ShapeDimensionErrorsNameTheWireField) {
  v1::SceneSpec s = ToWire(GraspSpec("other", kEnvs, SphereShape(kBallR)));
  s.mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->mutable_sphere()->set_radius(-1);
  ExpectRefused("sphere radius", Create(s), kInvalid, "expected a finite value > 0, got -1",
                "spec.entities[1].links[0].shapes[0].sphere.radius");
  s = ToWire(GraspSpec("other", kEnvs, SphereShape(kBallR)));
  s.mutable_entities(0)->mutable_links(0)->mutable_shapes(0)->mutable_box()->set_half_extents(0, -1);
  ExpectRefused("box half extents", Create(s), kInvalid, "expected a finite value > 0, got -1",
                "spec.entities[0].links[0].shapes[0].box.half_extents[0]");
}

TEST_F(ServiceErrorsTest, BadSensorsAreRefused) {
  v1::SensorSpec s = GoodSensor();
  s.set_link("hand/nope");
  ExpectRefused("unknown link", Add(s), grpc::StatusCode::NOT_FOUND, "sensor.link: unknown link 'hand/nope'");

  s = GoodSensor();
  *s.mutable_probe_radius() = DoubleTensor({}, {-0.001});
  ExpectRefused("negative radius", Add(s), kInvalid, "sensor.probe_radius[0]: expected a finite value >= 0, got -0.001",
                "sensor.probe_radius[0]");

  s = GoodSensor();
  *s.mutable_probe_radius() = DoubleTensor({2}, {0.001, 0.001});
  ExpectRefused("radius count", Add(s), kInvalid, "sensor.probe_radius: expected a scalar, [1], got [2]",
                "sensor.probe_radius");

  s = GoodSensor();
  s.set_name("kin");
  ExpectRefused("duplicate", Add(s), grpc::StatusCode::ALREADY_EXISTS,
                "sensor.name: a sensor named 'kin' already exists");

  s = GoodSensor();
  s.set_kind(v1::ELASTOMER_TAXEL);
  ExpectRefused("elastomer without tracked links", Add(s), kInvalid,
                "sensor.track_links: expected at least one tracked link", "sensor.track_links");
  EXPECT_EQ(client_->GetScene("grasp")->sensors_size(), 3) << "no refused sensor was added";
}

TEST_F(ServiceErrorsTest, BadMeshesAreRefused) {
  v1::UploadMeshRequest m;
  *m.mutable_vertices() = DoubleTensor({3, 3}, {0, 0, 0, 1, 0, 0, 0, 1, 0});
  *m.mutable_triangles() = Int32Tensor({1, 3}, {0, 1, 7});
  ExpectRefused("index", Upload(m), kInvalid, "triangles[0]: vertex index 7 out of range [0, 3)", "triangles[0]");

  *m.mutable_triangles() = DoubleTensor({1, 3}, {0, 1, 2});
  ExpectRefused("dtype", Upload(m), kInvalid, "triangles: expected INT32 of shape [T, 3], got FLOAT64 [1, 3]",
                "triangles");

  *m.mutable_triangles() = Int32Tensor({100001, 3}, std::vector<int32_t>(300003, 0));
  ExpectRefused("too many triangles", Upload(m), grpc::StatusCode::RESOURCE_EXHAUSTED,
                "triangles: 100001 triangles exceed the limit of 100000");
  EXPECT_EQ(client_->GetServerInfo()->num_meshes(), 0);
}

// A mesh at the triangle limit must fit in one message: settings where it cannot refuse to start,
// naming both flags. 2M triangles (the default) need 2M·12 + (1M + 2)·24 + 256 = 48,000,304 bytes.
TEST(MeshLimitsTest, AMeshAtTheTriangleLimitFitsInOneMessage) {
  EXPECT_EQ(server::LargestMeshUploadBytes(2'000'000), 48'000'304);
  // 0 resolves to the largest closed mesh that fits, at most 2M: at 1 MiB, (1,048,576 − 304)/24
  // = 43,678 triangles, whose upload takes exactly 1,048,576 bytes.
  server::Limits derived;
  EXPECT_EQ(server::ResolveMeshLimit(derived), 2'000'000);
  derived.max_message_bytes = 1 << 20;
  EXPECT_EQ(server::ResolveMeshLimit(derived), 43678);
  EXPECT_EQ(server::LargestMeshUploadBytes(43678), 1 << 20);
  EXPECT_TRUE(server::ValidateMeshLimits(server::Limits{}).ok()) << "the defaults";
  server::ServerOptions options = TestServerOptions();
  options.limits.max_message_bytes = 1 << 20;  // 100000 triangles need 2,400,304 bytes
  auto refused = server::TaxelServer::Start(options);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(refused.status().message()),
            "max_triangles_per_mesh: a closed mesh of 100000 triangles (float64 vertices) takes 2400304 bytes to "
            "upload, over --max_message_bytes=1048576; lower --max_triangles_per_mesh or raise --max_message_bytes");

  // At the limit: a geodesic sphere of 20·31² = 19220 triangles and 9612 vertices (float64)
  // uploads through a server whose message limit is just what the rule asks for.
  options.limits.max_triangles_per_mesh = 19220;
  options.limits.max_message_bytes = server::LargestMeshUploadBytes(19220);
  auto tight = server::TaxelServer::Start(options);
  ASSERT_TRUE(tight.ok()) << tight.status();
  auto client = Client::Connect((*tight)->target());
  ASSERT_TRUE(client.ok());
  const geometry::MeshData sphere = geometry::GeodesicSphere(0.05, 31);
  ASSERT_EQ(sphere.triangles.size(), 19220u);
  auto up = (*client)->UploadMesh(FlatVertices(sphere), FlatTriangles(sphere));
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(up->num_triangles(), 19220);
  EXPECT_TRUE(up->watertight());
}

TEST_F(ServiceErrorsTest, OversizeMessagesAreRefusedByTheTransport) {
  server::ServerOptions options = TestServerOptions();
  options.limits.max_message_bytes = 1 << 20;
  options.limits.max_triangles_per_mesh = 0;  // the largest mesh that fits in 1 MiB
  auto small = server::TaxelServer::Start(options);
  ASSERT_TRUE(small.ok()) << small.status();
  auto client = Client::Connect((*small)->target());  // the client allows 64 MiB
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->CreateScene(ToWire(GraspSpec("grasp", kEnvs, SphereShape(kBallR)))).ok());
  ASSERT_TRUE((*client)->Step(Good()).ok());
  auto info = (*client)->GetServerInfo();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->limits().max_message_bytes(), 1 << 20);

  v1::StepRequest huge = Good();
  huge.mutable_poses()->mutable_data()->append(2 << 20, '\0');  // 2 MiB more than the poses need
  auto refused = (*client)->Step(huge);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  // gRPC's own refusal, with the flags that set the limits (taxel::FromGrpc).
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("larger than max (1048"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("the server's --max_message_bytes"));
  EXPECT_EQ((*client)->GetScene("grasp")->step(), 1);
  auto next = (*client)->Step(Good());
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->step(), 2);
}

// Readings larger than the message limit are refused before the step, not after it: a
// response the transport cannot send would otherwise report an error for a step that happened.
TEST_F(ServiceErrorsTest, ResponsesOverTheMessageLimitAreRefusedBeforeStepping) {
  server::ServerOptions options = TestServerOptions();
  options.limits.max_message_bytes = 1 << 20;
  options.limits.max_triangles_per_mesh = 0;  // the largest mesh that fits in 1 MiB
  auto small = server::TaxelServer::Start(options);
  ASSERT_TRUE(small.ok()) << small.status();
  auto client = Client::Connect((*small)->target());
  ASSERT_TRUE(client.ok());
  // 64 envs × a 40×40 kin grid: force + torque = 64·1600·3·4·2 = 2,457,600 bytes > 1 MiB.
  scene::SceneSpec spec = GraspSpec("big", 64, SphereShape(kBallR));
  spec.sensors[0].probe_local_pos = PlanarGrid(40, 40, 0.001, kPadHalfZ);
  spec.sensors[0].grid_rows = spec.sensors[0].grid_cols = 40;
  ASSERT_TRUE((*client)->CreateScene(ToWire(spec)).ok());
  std::vector<double> poses;
  for (int e = 0; e < 64; ++e) {
    auto p = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 0.054)});
    poses.insert(poses.end(), p.begin(), p.end());
  }
  auto refused = UnsplitStep(**client, MakeStep("big", 64, poses));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("read: "));
  EXPECT_THAT(refused.status().message(), HasSubstr("1048576"));
  EXPECT_EQ((*client)->GetScene("big")->step(), 0) << "the refused step must not have happened";

  v1::StepRequest quiet = MakeStep("big", 64, poses);
  quiet.mutable_read()->set_none(true);  // state update only
  auto stepped = (*client)->Step(quiet);
  ASSERT_TRUE(stepped.ok()) << stepped.status();
  EXPECT_EQ(stepped->step(), 1);
  EXPECT_EQ(stepped->readings_size(), 0);

  v1::ReadSensorsRequest read;
  read.set_scene("big");
  auto all = UnsplitRead(**client, read);
  EXPECT_EQ(all.status().code(), absl::StatusCode::kResourceExhausted) << all.status();
  // The client splits what the server refuses whole (taxel/split.h): all 64 envs, in order.
  auto split = (*client)->ReadSensors(read);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->env_ids_size(), 64);
  for (int e = 0; e < 10; ++e) read.add_env_ids(e);  // 10 envs: 384,000 bytes of kin readings
  auto some = UnsplitRead(**client, read);
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->env_ids_size(), 10);
}

TEST_F(ServiceErrorsTest, ScenesAndProbesBeyondTheLimitsAreRefused) {
  server::ServerOptions options = TestServerOptions();
  options.limits.max_scenes = 2;
  options.limits.max_probes_per_scene = 100;
  auto limited = server::TaxelServer::Start(options);
  ASSERT_TRUE(limited.ok()) << limited.status();
  auto client = Client::Connect((*limited)->target());
  ASSERT_TRUE(client.ok());
  // The grasp scene has 25 + 3 + 2 = 30 probes per env: 3 envs take 90 of the 100 probe slots.
  auto four = (*client)->CreateScene(ToWire(GraspSpec("four", 4, SphereShape(kBallR))));
  EXPECT_EQ(four.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(four.status().message(),
              HasSubstr("spec.sensors: num_envs x probes = 120 exceeds the server limit of 100"));
  ASSERT_TRUE((*client)->CreateScene(ToWire(GraspSpec("a", 3, SphereShape(kBallR)))).ok());
  // 3 × (30 + 4) = 102 > 100.
  v1::SensorSpec extra = GoodSensor();
  *extra.mutable_probe_local_pos() = DoubleTensor({4, 3}, std::vector<double>(12, 0.0));
  auto added = (*client)->AddSensor("a", extra);
  EXPECT_EQ(added.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(added.status().message(),
              HasSubstr("sensor: num_envs x probes would be 102, over the server limit of 100"));
  EXPECT_EQ((*client)->GetScene("a")->sensors_size(), 3);
  ASSERT_TRUE((*client)->CreateScene(ToWire(GraspSpec("b", 1, SphereShape(kBallR)))).ok());
  auto third = (*client)->CreateScene(ToWire(GraspSpec("c", 1, SphereShape(kBallR))));
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.status().message(), HasSubstr("maximum of 2 scenes"));
  EXPECT_EQ((*client)->ListScenes()->scenes_size(), 2);
}

// The contact matrix counts against the memory limit before anything is allocated.
TEST_F(ServiceErrorsTest, ContactMatricesCountAgainstTheMemoryLimit) {
  server::ServerOptions options = TestServerOptions();
  options.limits.max_memory_bytes = 2 << 20;
  auto limited = server::TaxelServer::Start(options);
  ASSERT_TRUE(limited.ok()) << limited.status();
  auto client = Client::Connect((*limited)->target());
  ASSERT_TRUE(client.ok());
  // A robot of 40 sphere links over a terrain, 64 envs. Every link × (terrain + 40 robot links),
  // with friction: 64 · 40 · 41 · 3 · 4 · 2 = 2,519,040 bytes > 2 MiB = 2,097,152.
  scene::SceneSpec spec;
  spec.name = "humanoid";
  spec.num_envs = 64;
  std::vector<scene::LinkSpec> links;
  for (int i = 0; i < 40; ++i) links.push_back(Link("l" + std::to_string(i), {SphereShape(0.05)}));
  spec.entities.push_back(Entity("bot", scene::EntityKind::kRobot, links));
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  spec.contact_matrix.bodies = {"all"};
  spec.contact_matrix.partners = {"terrain", "robot/*"};
  spec.contact_matrix.friction = true;
  auto refused = (*client)->CreateScene(ToWire(spec));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("memory limit"));
  EXPECT_EQ((*client)->ListScenes()->scenes_size(), 0);
  // Two named feet against the terrain: 64 · 2 · 1 · 12 · 2 = 3,072 bytes fit.
  spec.contact_matrix.bodies = {"l0", "l1"};
  spec.contact_matrix.partners = {"terrain"};
  auto created = (*client)->CreateScene(ToWire(spec));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->contact_matrix().bytes(), 64 * 2 * 1 * 12);
}

}  // namespace
}  // namespace taxel::testing
