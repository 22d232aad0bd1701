// The service over real gRPC (127.0.0.1:0) through taxel::Client: the lifecycle of a scene,
// with readings checked against closed forms. Consistency with the core, streams and
// concurrency: service_consistency_test.cc; bad inputs: service_errors_test.cc; health, metrics,
// drain and tokens: service_ops_test.cc.
#include <cmath>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr double kPi = 3.141592653589793;

// A probe one pitch (1 cm) beside the ball's lowest point, ball centre 4.9 cm above the probe
// plane: |o − c| = √(0.01² + 0.049²) = 0.0500099990 m, depth = R − (|o − c| − r) = 1.990001 mm.
const double kSideDepth = kProbeR - (std::sqrt(0.01 * 0.01 + 0.049 * 0.049) - kBallR);

// Lifecycle poses (xyzw), pad at the origin in every env:
//   env 0: ball centre (0, 0, 0.054)    — presses the probe under it by 1 mm: depth 3 mm
//   env 1: ball centre (0, 0, 1)        — out of reach: every reading 0
//   env 2: ball centre (0.01, 0, 0.054) — the same, one probe pitch along +x
std::vector<double> LifecyclePoses() {
  std::vector<double> p;
  for (const Eigen::Vector3d& c :
       {Eigen::Vector3d(0, 0, 0.054), Eigen::Vector3d(0, 0, 1), Eigen::Vector3d(0.01, 0, 0.054)}) {
    const auto env = PosesXyzw({Eigen::Vector3d::Zero(), c});
    p.insert(p.end(), env.begin(), env.end());
  }
  return p;
}

class ServiceLifecycleTest : public ServerTest {
 protected:
  v1::SceneInfo Create(const std::string& name = "grasp", int num_envs = 3) {
    auto info = client_->CreateScene(ToWire(GraspSpec(name, num_envs, SphereShape(kBallR))));
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? *info : v1::SceneInfo();
  }
  const v1::SensorReading* Find(const v1::StepResponse& r, const std::string& sensor) {
    for (const auto& reading : r.readings()) {
      if (reading.sensor() == sensor) return &reading;
    }
    ADD_FAILURE() << "no reading of " << sensor;
    return nullptr;
  }
};

TEST_F(ServiceLifecycleTest, ServerInfoReportsTheConfiguredLimits) {
  auto info = client_->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->version().empty());
  EXPECT_FALSE(info->grpc_version().empty());
  EXPECT_EQ(info->limits().max_message_bytes(), 8 << 20);
  EXPECT_EQ(info->limits().max_scenes(), 16);
  EXPECT_EQ(info->limits().max_envs_per_scene(), 64);
  EXPECT_EQ(info->limits().max_probes_per_scene(), 1 << 20);
  EXPECT_EQ(info->limits().max_triangles_per_mesh(), 100000);
  // 0 resolves to three quarters of the memory the process may use: at most ¾ of MemTotal.
  {
    std::ifstream meminfo("/proc/meminfo");
    std::string name;
    double kb = 0;
    meminfo >> name >> kb;
    ASSERT_EQ(name, "MemTotal:");
    EXPECT_GT(info->limits().max_memory_bytes(), 0);
    EXPECT_LE(info->limits().max_memory_bytes(), static_cast<int64_t>(0.75 * kb * 1024) + 1);
  }
  EXPECT_EQ(info->threads(), 2);
  EXPECT_EQ(info->num_scenes(), 0);
  EXPECT_EQ(info->num_meshes(), 0);
  EXPECT_THAT(info->capabilities(), ::testing::Contains("step_stream"));
  EXPECT_THAT(info->capabilities(), ::testing::Contains("sensor:kinematic_taxel"));
  EXPECT_THAT(info->capabilities(), ::testing::Contains("shape:implicit"));
  EXPECT_THAT(info->capabilities(), ::testing::Contains("implicit:truncated_cone"));
}

TEST_F(ServiceLifecycleTest, UploadMeshIsContentAddressedAndIdempotent) {
  const geometry::MeshData mesh = BallMesh();
  auto first = client_->UploadMesh(FlatVertices(mesh), FlatTriangles(mesh));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->newly_added());
  EXPECT_EQ(first->mesh_id().size(), 64u);           // SHA-256, hex
  EXPECT_EQ(first->num_triangles(), 20 * 4 * 4);     // 20·frequency² for a geodesic sphere
  EXPECT_EQ(first->num_vertices(), 10 * 4 * 4 + 2);  // Euler: V = T/2 + 2
  EXPECT_TRUE(first->watertight());
  EXPECT_FALSE(first->was_inside_out());
  auto second = client_->UploadMesh(FlatVertices(mesh), FlatTriangles(mesh));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->mesh_id(), first->mesh_id());
  EXPECT_FALSE(second->newly_added());
  auto info = client_->GetServerInfo();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->num_meshes(), 1);
  // The id does not depend on the server: a fresh local store derives the same one.
  geometry::MeshStore local;
  auto added = local.Add(mesh.vertices, mesh.triangles);
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(added->id, first->mesh_id());

  // The same sphere facing inwards is closed but inside out.
  geometry::MeshData flipped = mesh;
  for (auto& t : flipped.triangles) std::swap(t[1], t[2]);
  auto inverted = client_->UploadMesh(FlatVertices(flipped), FlatTriangles(flipped));
  ASSERT_TRUE(inverted.ok()) << inverted.status();
  EXPECT_TRUE(inverted->was_inside_out());
}

// A mesh lives until DeleteMesh, which is refused while a scene uses it; afterwards the server
// holds exactly the bytes it held before the upload, and the id is unknown again.
TEST_F(ServiceLifecycleTest, DeleteMeshWaitsForItsScenesAndGivesBackItsBytes) {
  const auto memory = [&] {
    auto info = client_->GetServerInfo();
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? std::make_pair(info->memory_bytes(), info->num_meshes()) : std::make_pair(int64_t{-1}, -1);
  };
  const auto before = memory();
  const geometry::MeshData mesh = BallMesh();
  auto up = client_->UploadMesh(FlatVertices(mesh), FlatTriangles(mesh));
  ASSERT_TRUE(up.ok()) << up.status();
  const std::string id = up->mesh_id();
  EXPECT_GT(memory().first, before.first);
  ASSERT_TRUE(client_->CreateScene(ToWire(GraspSpec("meshy", 2, MeshShape(id)))).ok());

  const absl::Status in_use = client_->DeleteMesh(id);
  EXPECT_EQ(in_use.code(), absl::StatusCode::kFailedPrecondition) << in_use;
  EXPECT_EQ(std::string(in_use.message()),
            absl::StrCat("mesh_id: mesh '", id, "' is used by scene 'meshy'; delete the scene first"));
  EXPECT_TRUE(client_->GetScene("meshy").ok()) << "a refused DeleteMesh changes nothing";

  ASSERT_TRUE(client_->DeleteScene("meshy").ok());
  ASSERT_TRUE(client_->DeleteMesh(id).ok());
  EXPECT_EQ(memory(), before) << "the mesh's bytes are given back";
  const absl::Status again = client_->DeleteMesh(id);
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(again.message()), absl::StrCat("mesh_id: mesh '", id, "' has not been uploaded"));
  EXPECT_EQ(client_->CreateScene(ToWire(GraspSpec("meshy", 2, MeshShape(id)))).status().code(),
            absl::StatusCode::kNotFound);
  auto reupload = client_->UploadMesh(FlatVertices(mesh), FlatTriangles(mesh));
  ASSERT_TRUE(reupload.ok());
  EXPECT_TRUE(reupload->newly_added());
  EXPECT_EQ(reupload->mesh_id(), id);
}

// A step split by env ranges (envs 0-1, then 2-3 with continues_step) reads exactly what the
// whole step reads, noise and random walk included (their draws are keyed by env and env step),
// and the step count advances once per logical step.
TEST_F(ServiceLifecycleTest, AStepSplitByEnvsReadsWhatTheWholeStepReads) {
  v1::SceneSpec spec = ToWire(GraspSpec("whole", 4, SphereShape(kBallR)));
  spec.mutable_sensors(0)->mutable_imperfections()->set_noise(1e-3);
  spec.mutable_sensors(0)->mutable_imperfections()->set_random_walk(1e-4);
  ASSERT_TRUE(client_->CreateScene(spec).ok());
  spec.set_name("parts");
  ASSERT_TRUE(client_->CreateScene(spec).ok());
  for (int s = 0; s < 3; ++s) {
    const std::vector<double> poses = MovingPoses(4, s);
    auto whole = client_->Step(MakeStep("whole", 4, poses));
    ASSERT_TRUE(whole.ok()) << whole.status();
    std::vector<v1::StepResponse> parts;
    for (int part = 0; part < 2; ++part) {
      v1::StepRequest r = MakeStep("parts", 2, std::vector<double>(poses.begin() + part * 28, poses.begin() + part * 28 + 28));
      r.add_env_ids(2 * part);
      r.add_env_ids(2 * part + 1);
      r.set_continues_step(part > 0);
      auto p = client_->Step(r);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_EQ(p->step(), s + 1) << "part " << part;
      parts.push_back(*std::move(p));
    }
    EXPECT_EQ(whole->step(), s + 1);
    ASSERT_EQ(whole->readings_size(), parts[0].readings_size());
    for (int k = 0; k < whole->readings_size(); ++k) {
      for (const auto& [channel, tensor] : whole->readings(k).channels()) {
        // The whole step's tensor is the two parts' tensors one after the other along the env axis.
        std::string joined = parts[0].readings(k).channels().at(channel).data();
        joined += parts[1].readings(k).channels().at(channel).data();
        EXPECT_EQ(tensor.data(), joined) << whole->readings(k).sensor() << "." << channel << " step " << s;
      }
    }
  }
  auto info = client_->GetScene("parts");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->step(), 3);
}

TEST_F(ServiceLifecycleTest, CreateSceneReturnsCanonicalLinksAndOutputShapes) {
  const v1::SceneInfo info = Create();
  EXPECT_EQ(info.name(), "grasp");
  EXPECT_EQ(info.num_envs(), 3);
  EXPECT_EQ(info.seed(), 7u);
  EXPECT_EQ(info.step(), 0);
  EXPECT_GT(info.memory_bytes(), 0);
  ASSERT_EQ(info.links_size(), 3);
  // Entity by entity, link by link; fixed links have moving_index −1.
  const std::vector<std::tuple<std::string, std::string, v1::EntityKind, int>> links = {
      {"hand/pad", "hand", v1::ROBOT, 0},
      {"ball/body", "ball", v1::OBJECT, 1},
      {"ground/plane", "ground", v1::TERRAIN, -1}};
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(info.links(l).name(), std::get<0>(links[l]));
    EXPECT_EQ(info.links(l).index(), l);
    EXPECT_EQ(info.links(l).entity(), std::get<1>(links[l]));
    EXPECT_EQ(info.links(l).kind(), std::get<2>(links[l]));
    EXPECT_EQ(info.links(l).moving_index(), std::get<3>(links[l]));
  }
  EXPECT_THAT(info.moving_links(), ElementsAre("hand/pad", "ball/body"));
  ASSERT_EQ(info.sensors_size(), 3);
  const v1::SensorInfo& kin = info.sensors(0);
  EXPECT_EQ(kin.sensor_id(), 0);
  EXPECT_EQ(kin.name(), "kin");
  EXPECT_EQ(kin.kind(), v1::KINEMATIC_TAXEL);
  EXPECT_EQ(kin.link(), "hand/pad");
  EXPECT_EQ(kin.num_probes(), 25);
  EXPECT_THAT(kin.layout(), ElementsAre(5, 5));
  ASSERT_EQ(kin.outputs_size(), 2);
  EXPECT_EQ(kin.outputs(0).channel(), "force");
  EXPECT_EQ(kin.outputs(0).dtype(), v1::FLOAT32);
  EXPECT_THAT(kin.outputs(0).shape(), ElementsAre(3, 5, 5, 3));
  EXPECT_EQ(kin.outputs(1).channel(), "torque");
  EXPECT_THAT(kin.outputs(1).shape(), ElementsAre(3, 5, 5, 3));
  const v1::SensorInfo& depth = info.sensors(1);
  EXPECT_EQ(depth.link(), "hand/pad");  // given as the bare "pad"
  EXPECT_THAT(depth.layout(), ElementsAre(3));
  ASSERT_EQ(depth.outputs_size(), 4);
  EXPECT_EQ(depth.outputs(0).channel(), "depth");
  EXPECT_THAT(depth.outputs(0).shape(), ElementsAre(3, 3));
  EXPECT_EQ(depth.outputs(1).channel(), "normal");
  EXPECT_THAT(depth.outputs(1).shape(), ElementsAre(3, 3, 3));
  EXPECT_EQ(depth.outputs(2).channel(), "area");
  EXPECT_EQ(depth.outputs(3).channel(), "partner");
  EXPECT_EQ(depth.outputs(3).dtype(), v1::INT32);
  const v1::SensorInfo& touch = info.sensors(2);
  EXPECT_EQ(touch.kind(), v1::CONTACT_PROBE);
  EXPECT_EQ(touch.outputs(0).channel(), "contact");
  EXPECT_EQ(touch.outputs(0).dtype(), v1::BOOL);
  EXPECT_THAT(touch.outputs(0).shape(), ElementsAre(3, 2));
}

TEST_F(ServiceLifecycleTest, GetAndListScenes) {
  const v1::SceneInfo created = Create("a");
  Create("b", 1);
  auto got = client_->GetScene("a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->SerializeAsString(), created.SerializeAsString());
  auto list = client_->ListScenes();
  ASSERT_TRUE(list.ok()) << list.status();
  std::vector<std::string> names;
  for (const auto& s : list->scenes()) names.push_back(s.name());
  EXPECT_THAT(names, UnorderedElementsAre("a", "b"));
  auto info = client_->GetServerInfo();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->num_scenes(), 2);
}

TEST_F(ServiceLifecycleTest, AddAndRemoveSensorsByNameAndId) {
  Create();
  v1::SensorSpec extra;
  extra.set_name("extra");
  extra.set_kind(v1::CONTACT_DEPTH_PROBE);
  extra.set_link("pad");
  *extra.mutable_probe_local_pos() = DoubleTensor({1, 3}, {0, 0, kPadHalfZ});
  *extra.mutable_probe_radius() = DoubleTensor({}, {kProbeR});
  auto added = client_->AddSensor("grasp", extra);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->sensor_id(), 3);
  EXPECT_EQ(added->link(), "hand/pad");
  EXPECT_EQ(added->num_probes(), 1);
  EXPECT_THAT(added->outputs(0).shape(), ElementsAre(3, 1));
  EXPECT_EQ(client_->GetScene("grasp")->sensors_size(), 4);
  auto step = client_->Step(MakeStep("grasp", 3, LifecyclePoses()));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->readings_size(), 4);

  ASSERT_TRUE(client_->RemoveSensor("grasp", "extra").ok());
  EXPECT_EQ(client_->GetScene("grasp")->sensors_size(), 3);
  extra.set_name("extra2");
  added = client_->AddSensor("grasp", extra);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->sensor_id(), 4);  // ids are never reused

  v1::RemoveSensorRequest by_id;
  by_id.set_scene("grasp");
  by_id.set_sensor_id(4);
  v1::RemoveSensorResponse response;
  {
    grpc::ClientContext ctx;
    EXPECT_TRUE(client_->stub().RemoveSensor(&ctx, by_id, &response).ok());
  }
  EXPECT_EQ(client_->GetScene("grasp")->sensors_size(), 3);
  {
    grpc::ClientContext ctx;
    const grpc::Status again = client_->stub().RemoveSensor(&ctx, by_id, &response);
    EXPECT_EQ(again.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(again.error_message(), HasSubstr("sensor_id: no sensor with id 4"));
  }
  const absl::Status unknown = client_->RemoveSensor("grasp", "nope");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.message(), HasSubstr("name: no sensor named 'nope'"));
  {
    v1::RemoveSensorRequest neither;
    neither.set_scene("grasp");
    grpc::ClientContext ctx;
    const grpc::Status s = client_->stub().RemoveSensor(&ctx, neither, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(BadRequestField(s), "sensor");
  }
}

TEST_F(ServiceLifecycleTest, StepReadResetDelete) {
  Create();
  v1::StepRequest req = MakeStep("grasp", 3, LifecyclePoses());
  req.set_sequence(42);
  auto step = client_->Step(req);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->scene(), "grasp");
  EXPECT_EQ(step->sequence(), 42u);
  EXPECT_EQ(step->step(), 1);
  EXPECT_THAT(step->env_ids(), ElementsAre(0, 1, 2));
  EXPECT_GE(step->timing().evaluate_us(), 0);
  EXPECT_GE(step->timing().decode_us(), 0);
  ASSERT_EQ(step->readings_size(), 3);

  // kin, env 0, centre probe (row 2, col 2): F = k_n·depth·n = 1000·0.003·(0, 0, −1) N; T = p × F = 0
  // since p = (0, 0, 0.005) is parallel to F.
  const v1::SensorReading* kin = Find(*step, "kin");
  ASSERT_NE(kin, nullptr);
  const v1::Tensor& force = kin->channels().at("force");
  EXPECT_THAT(force.shape(), ElementsAre(3, 5, 5, 3));
  EXPECT_NEAR(FloatAt(force, 3 * 12 + 0), 0.0, 1e-6);
  EXPECT_NEAR(FloatAt(force, 3 * 12 + 2), -3.0, 1e-5);
  EXPECT_NEAR(FloatAt(kin->channels().at("torque"), 3 * 12 + 0), 0.0, 1e-6);
  for (size_t i = 75; i < 150; ++i) EXPECT_EQ(FloatAt(force, i), 0.0f) << "env 1 is out of reach";

  // depth: env 0 [3 mm, side, 0]; env 1 zeros; env 2 [side, 3 mm, side].
  const v1::SensorReading* depth = Find(*step, "depth");
  ASSERT_NE(depth, nullptr);
  const std::vector<double> expected_depth = {0.003, kSideDepth, 0, 0, 0, 0, kSideDepth, 0.003, kSideDepth};
  for (size_t i = 0; i < 9; ++i) EXPECT_NEAR(FloatAt(depth->channels().at("depth"), i), expected_depth[i], 1e-9) << i;
  EXPECT_NEAR(FloatAt(depth->channels().at("area"), 0), kPi * (2 * kProbeR * 0.003 - 0.003 * 0.003), 2e-12);
  EXPECT_FLOAT_EQ(FloatAt(depth->channels().at("normal"), 2), -1.0f);             // env 0, probe 0: out of the ball
  const std::vector<int32_t> expected_partner = {1, 1, -1, -1, -1, -1, 1, 1, 1};  // 1 = ball/body
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(Int32At(depth->channels().at("partner"), i), expected_partner[i]) << i;

  // touch: the probe under the ball is on in envs 0 and 2; the corner probe never.
  const v1::SensorReading* touch = Find(*step, "touch");
  ASSERT_NE(touch, nullptr);
  EXPECT_EQ(touch->channels().at("contact").data(), std::string("\x01\x00\x00\x00\x01\x00", 6));

  // ReadSensors: a subset of envs in the requested order, chosen sensors and channels.
  v1::ReadSensorsRequest read;
  read.set_scene("grasp");
  read.add_env_ids(2);
  read.add_env_ids(0);
  read.mutable_read()->add_sensors("depth");
  read.mutable_read()->add_channels("depth");
  read.mutable_read()->add_channels("partner");
  auto latest = client_->ReadSensors(read);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->step(), 1);
  EXPECT_THAT(latest->env_ids(), ElementsAre(2, 0));
  ASSERT_EQ(latest->readings_size(), 1);
  ASSERT_EQ(latest->readings(0).channels().size(), 2u);
  const v1::Tensor& d = latest->readings(0).channels().at("depth");
  EXPECT_THAT(d.shape(), ElementsAre(2, 3));
  const std::vector<double> env2_env0 = {kSideDepth, 0.003, kSideDepth, 0.003, kSideDepth, 0};
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(FloatAt(d, i), env2_env0[i], 1e-9) << i;
  EXPECT_EQ(d.data().substr(0, 12), depth->channels().at("depth").data().substr(24, 12));
  EXPECT_EQ(d.data().substr(12, 12), depth->channels().at("depth").data().substr(0, 12));

  // ResetEnvs(0): env 0 reads 0 (partner −1), env 2 keeps its readings; the step count stays.
  ASSERT_TRUE(client_->ResetEnvs("grasp", {0}).ok());
  v1::ReadSensorsRequest all;
  all.set_scene("grasp");
  auto after = client_->ReadSensors(all);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->step(), 1);
  for (const v1::SensorReading& r : after->readings()) {
    const v1::SensorReading* before = Find(*step, r.sensor());
    ASSERT_NE(before, nullptr);
    for (const auto& [channel, t] : r.channels()) {
      SCOPED_TRACE(r.sensor() + "." + channel);
      const size_t per_env = t.data().size() / 3;
      const std::string zero_env = channel == "partner" ? std::string(per_env, '\xff') : std::string(per_env, '\0');
      EXPECT_EQ(t.data().substr(0, per_env), zero_env);
      EXPECT_EQ(t.data().substr(per_env), before->channels().at(channel).data().substr(per_env));
    }
  }
  const absl::Status bad_reset = client_->ResetEnvs("grasp", {3});
  EXPECT_EQ(bad_reset.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(bad_reset.message(), HasSubstr("env_ids[0]: env id 3 out of range [0, 3)"));

  // DeleteScene: then every call on it is NOT_FOUND.
  ASSERT_TRUE(client_->DeleteScene("grasp").ok());
  EXPECT_EQ(client_->GetScene("grasp").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(client_->GetScene("grasp").status().message(), HasSubstr("scene: no scene named 'grasp'"));
  EXPECT_EQ(client_->Step(req).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(client_->ReadSensors(all).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(client_->DeleteScene("grasp").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(client_->ListScenes()->scenes().empty());
  EXPECT_EQ(client_->GetServerInfo()->num_scenes(), 0);
}

TEST_F(ServiceLifecycleTest, ContactMatrixNeedsOneInTheScene) {
  Create();
  v1::GetContactMatrixRequest req;
  req.set_scene("grasp");
  auto m = client_->GetContactMatrix(req);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(m.status().message(), HasSubstr("this scene has no contact matrix"));
}

}  // namespace
}  // namespace taxel::testing
