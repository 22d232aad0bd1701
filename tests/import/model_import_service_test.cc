// Imported scenes on a real server (127.0.0.1:0), driven by MuJoCo's poses: the depth a probe
// reads next to a geom placed by MuJoCo, the humanoid's contact matrix over its feet and hands, and
// the scene bundle's round trip (JSON → uploads → CreateScene).
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "taxel/client.h"
#include "taxel/model_import.h"
#include "taxel/scene_bundle.h"
#include "tests/import/import_test_support.h"

namespace taxel::testing {
namespace {

using ::testing::HasSubstr;

std::string UrdfPath() { return WriteTestArmUrdf(); }

class ImportServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions o;
    o.address = "127.0.0.1:0";
    o.metrics_address = "";
    o.eval_threads = 2;
    o.request_threads = 2;
    auto server = server::TaxelServer::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto client = Client::Connect(server_->target());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }
  std::unique_ptr<server::TaxelServer> server_;
  std::unique_ptr<Client> client_;
};

// Where a probe goes: a point s on a geom's surface and the outward normal n there, in world, from
// MuJoCo's own geom_xpos / geom_xmat / geom_size or body frames (never from the imported spec).
struct SurfacePoint {
  const char* what;
  Eigen::Vector3d s, n;
};

Eigen::Vector3d GeomPos(const mjData* d, int g) { return Eigen::Map<const Eigen::Vector3d>(d->geom_xpos + 3 * g); }
Eigen::Matrix3d GeomRot(const mjData* d, int g) {
  return Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d->geom_xmat + 9 * g);
}

// The probe carrier: an OBJECT without shapes, posed per env so that its one probe (radius R, at
// its origin) sits at distance kGap outside each surface point: it reads depth R − kGap.
constexpr double kProbeR = 0.02, kGap = 0.012;

void AddProbeCarrier(v1::SceneSpec* spec) {
  v1::Entity* e = spec->add_entities();
  e->set_name("probe");
  e->set_kind(v1::OBJECT);
  e->add_links()->set_name("body");
  v1::SensorSpec* s = spec->add_sensors();
  s->set_name("depth");
  s->set_kind(v1::CONTACT_DEPTH_PROBE);
  s->set_link("probe/body");
  *s->mutable_probe_local_pos() = DoubleTensor({1, 3}, std::vector<double>{0, 0, 0});
  *s->mutable_probe_radius() = DoubleTensor({}, std::vector<double>{kProbeR});
}

// Steps the scene once with the robot at MuJoCo's pose and the carrier at each point (one env
// each); returns the depth of each env.
std::vector<float> DepthsAt(Client& client, const ImportedModel& imported, const mjData* d,
                            const std::vector<SurfacePoint>& points) {
  const std::vector<double> robot = MovingLinkPoses(imported, d);
  std::vector<double> poses;
  for (const SurfacePoint& p : points) {
    poses.insert(poses.end(), robot.begin(), robot.end());
    const Eigen::Vector3d c = p.s + kGap * p.n;
    poses.insert(poses.end(), {c.x(), c.y(), c.z(), 1, 0, 0, 0});
  }
  v1::StepRequest req;
  req.set_scene(imported.spec().name());
  req.set_quat_order(v1::WXYZ);
  req.set_dt(0.01);
  req.mutable_read()->add_branches(v1::GROUND_TRUTH);
  *req.mutable_poses() =
      DoubleTensor({static_cast<int64_t>(points.size()), static_cast<int64_t>(robot.size() / 7 + 1), 7}, poses);
  auto r = client.Step(req);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  for (const auto& reading : r->readings()) {
    if (reading.sensor() == "depth") return *FloatValues(reading.channels().at("depth"));
  }
  ADD_FAILURE() << "no depth reading";
  return {};
}

void SetHinges(const mjModel* m, mjData* d) {
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] == mjJNT_HINGE) d->qpos[m->jnt_qposadr[j]] = 0.4 - 0.15 * j;
  }
}

//  URDF at shoulder .4, wrist .25, tip .1, shell −.05 rad; five envs, one per surface point.
TEST_F(ImportServiceTest, UrdfPosedByMujocoReadsTheDepthNextToEachGeom) {
  auto imported = ImportModelFile(UrdfPath(), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  imported->bundle.scene.set_num_envs(5);
  AddProbeCarrier(&imported->bundle.scene);
  auto info = CreateSceneFromBundle(*client_, imported->bundle);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->moving_links(), ::testing::ElementsAre("test_arm/upper", "test_arm/paddle", "test_arm/tip",
                                                           "test_arm/shell", "probe/body"));

  const ModelPtr m = LoadMujoco(UrdfPath());
  const DataPtr d = MakeData(m.get());
  SetHinges(m.get(), d.get());
  mj_forward(m.get(), d.get());
  auto geom = [&](const char* body) { return m->body_geomadr[mj_name2id(m.get(), mjOBJ_BODY, body)]; };
  const int paddle = geom("paddle"), upper = geom("upper"), tip = geom("tip");
  const int base = m->body_geomadr[0];
  const int shell_body = mj_name2id(m.get(), mjOBJ_BODY, "shell");
  const Eigen::Isometry3d X_WShell = BodyPose(d.get(), shell_body);
  const std::vector<SurfacePoint> points = {
      // paddle box: centre of its +z face (half height size[2]).
      {"paddle +z face", GeomPos(d.get(), paddle) + GeomRot(d.get(), paddle).col(2) * m->geom_size[3 * paddle + 2],
       GeomRot(d.get(), paddle).col(2)},
      // upper cylinder: mid-height on its side, along the geom's x.
      {"upper cylinder side", GeomPos(d.get(), upper) + GeomRot(d.get(), upper).col(0) * m->geom_size[3 * upper],
       GeomRot(d.get(), upper).col(0)},
      // tip sphere: along the tip body's x (away from the paddle).
      {"tip sphere",
       GeomPos(d.get(), tip) + BodyPose(d.get(), mj_name2id(m.get(), mjOBJ_BODY, "tip")).linear().col(0) * 0.025,
       BodyPose(d.get(), mj_name2id(m.get(), mjOBJ_BODY, "tip")).linear().col(0)},
      // base box (static, on the world): centre of its −x face, (−.1, 0, .05).
      {"base −x face", Eigen::Vector3d(-0.1, 0, 0.05), Eigen::Vector3d(-1, 0, 0)},
      // shell mesh: centre of the cuboid's top face, (.01 + .03, .02 + .02, .03 + .02) in the shell
      // link frame (the file's numbers and the URDF's collision origin).
      {"shell mesh top face", X_WShell * Eigen::Vector3d(0.04, 0.04, 0.05), X_WShell.linear().col(2)},
  };
  (void)base;
  const std::vector<float> depth = DepthsAt(*client_, *imported, d.get(), points);
  ASSERT_EQ(depth.size(), points.size());
  for (size_t e = 0; e < points.size(); ++e) {
    EXPECT_NEAR(depth[e], kProbeR - kGap, 1e-6) << points[e].what;  // float32 output, float32 mesh
  }
}

// The humanoid at a bent configuration: the head's top and both hands, outwards from the forearms.
TEST_F(ImportServiceTest, HumanoidPosedByMujocoReadsTheDepthNextToHeadAndHands) {
  auto imported = ImportModelFile(kHumanoidXml, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  imported->bundle.scene.set_num_envs(3);
  AddProbeCarrier(&imported->bundle.scene);
  auto info = CreateSceneFromBundle(*client_, imported->bundle);
  ASSERT_TRUE(info.ok()) << info.status();

  const ModelPtr m = LoadMujoco(kHumanoidXml);
  const DataPtr d = MakeData(m.get());
  SetHinges(m.get(), d.get());
  const double root[7] = {0.3, -0.2, 1.6, 0.95, 0.1, 0.2, -0.2};  // free joint: position, WXYZ
  for (int k = 0; k < 7; ++k) d->qpos[k] = root[k];
  mju_normalize4(d->qpos + 3);
  mj_forward(m.get(), d.get());
  auto g = [&](const char* name) { return mj_name2id(m.get(), mjOBJ_GEOM, name); };
  const Eigen::Vector3d head_up = GeomRot(d.get(), g("head")).col(2);
  std::vector<SurfacePoint> points = {{"head top", GeomPos(d.get(), g("head")) + 0.09 * head_up, head_up}};
  for (const char* side : {"right", "left"}) {
    const int hand = g((std::string(side) + "_hand").c_str()), arm = g((std::string(side) + "_lower_arm").c_str());
    const Eigen::Vector3d out = (GeomPos(d.get(), hand) - GeomPos(d.get(), arm)).normalized();
    points.push_back({side, GeomPos(d.get(), hand) + m->geom_size[3 * hand] * out, out});
  }
  const std::vector<float> depth = DepthsAt(*client_, *imported, d.get(), points);
  ASSERT_EQ(depth.size(), points.size());
  for (size_t e = 0; e < points.size(); ++e) EXPECT_NEAR(depth[e], kProbeR - kGap, 1e-6) << points[e].what;
}

// Contact matrix over the feet and hands against the floor. Env 0: the humanoid lowered until
// MuJoCo reports its feet 1 mm into the floor; env 1: lifted 10 cm clear. MuJoCo's own contact
// list says which rows touch; the model is mirror-symmetric in y, so both feet carry the same force.
TEST_F(ImportServiceTest, HumanoidContactMatrixOverFeetAndHands) {
  ImportOptions o;
  o.num_envs = 2;
  auto imported = ImportModelFile(kHumanoidXml, o);
  ASSERT_TRUE(imported.ok()) << imported.status();
  v1::ContactMatrixSpec* cm = imported->bundle.scene.mutable_contact_matrix();
  cm->add_bodies("*_foot");
  cm->add_bodies("*_hand");
  cm->add_partners("terrain");
  auto info = CreateSceneFromBundle(*client_, imported->bundle);
  ASSERT_TRUE(info.ok()) << info.status();

  const ModelPtr m = LoadMujoco(kHumanoidXml);
  const DataPtr d = MakeData(m.get());
  mj_forward(m.get(), d.get());
  const int foot = mj_name2id(m.get(), mjOBJ_GEOM, "right_right_foot");
  const double lowest = d->geom_xpos[3 * foot + 2] - m->geom_size[3 * foot];  // foot capsules are level at qpos0
  d->qpos[2] -= lowest + 0.001;
  mj_forward(m.get(), d.get());
  std::set<std::string> touching;  // bodies MuJoCo reports in contact with the floor
  for (int c = 0; c < d->ncon; ++c) {
    const int g = d->contact[c].geom1 == 0 ? d->contact[c].geom2 : d->contact[c].geom1;
    EXPECT_NEAR(d->contact[c].dist, -0.001, 1e-9);
    touching.insert(mj_id2name(m.get(), mjOBJ_BODY, m->geom_bodyid[g]));
  }
  EXPECT_EQ(touching, (std::set<std::string>{"right_foot", "left_foot"}));

  std::vector<double> poses = MovingLinkPoses(*imported, d.get());
  const std::vector<double> env0 = poses;
  for (size_t l = 0; l < env0.size(); l += 7) {
    poses.insert(poses.end(), env0.begin() + l, env0.begin() + l + 7);
    poses[poses.size() - 5] += 0.1;  // z of that link, 10 cm up
  }
  v1::StepRequest req;
  req.set_scene(imported->spec().name());
  req.set_quat_order(v1::WXYZ);
  req.set_dt(0.005);
  req.mutable_read()->set_contact_matrix(true);
  *req.mutable_poses() = DoubleTensor({2, static_cast<int64_t>(env0.size() / 7), 7}, poses);
  auto r = client_->Step(req);
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& matrix = r->contact_matrix();
  ASSERT_EQ(matrix.columns_size(), 1);
  ASSERT_EQ(matrix.rows_size(), 4);
  const std::vector<float> normal = *FloatValues(matrix.normal());  // [2, 4, 1, 3]
  std::map<std::string, double> fz;
  for (int row = 0; row < 4; ++row) {
    const std::string body = matrix.rows(row).substr(matrix.rows(row).find('/') + 1);
    fz[body] = normal[3 * row + 2];
    EXPECT_EQ(normal[12 + 3 * row + 2], 0.0f) << "lifted env, " << body;
    if (touching.count(body)) {
      EXPECT_GT(fz[body], 0) << body;
    } else {
      EXPECT_EQ(fz[body], 0) << body;
    }
  }
  EXPECT_NEAR(fz["right_foot"], fz["left_foot"], 1e-4 * fz["left_foot"]);
}

// The server reads the imported height field as MuJoCo lays it out. 3 rows (y) × 4 columns (x),
// size (.3, .2, .1, .05): dx = dy = .2. Raw values: a flat patch of 5 over rows 0–1 × columns 0–1
// (the −x, −y corner), the rest rising to 23; MuJoCo normalises by the range 0..23, so the patch is at
// z = 5/23 · .1. Its centre is (−.3 + .1, −.2 + .1) = (−.2, −.1) in the field's frame, placed at
// (1, 0, 0). A probe kGap above the patch centre is more than .1 m (the patch's half width) from any
// sloped part, so it reads R − kGap; a grid read transposed or flipped would put other samples
// (0, 9, 12, 14, 17, 20, 21 or 23) under the probe.
TEST_F(ImportServiceTest, HeightfieldIsReadAsMujocoLaysItOut) {
  const float raw[12] = {5, 5, 9, 0, 5, 5, 12, 17, 20, 14, 21, 23};
  std::string bytes;
  const int32_t dims[2] = {3, 4};
  bytes.append(reinterpret_cast<const char*>(dims), sizeof(dims));
  bytes.append(reinterpret_cast<const char*>(raw), sizeof(raw));
  WriteTempFile("patch.bin", bytes);
  const std::string path = WriteTempFile("patch.xml", R"(<mujoco model="patch">
  <asset><hfield name="h" file="patch.bin" size="0.3 0.2 0.1 0.05"/></asset>
  <worldbody>
    <geom name="ground" type="hfield" hfield="h" pos="1 0 0"/>
    <body name="marker" pos="0 0 3"><freejoint/><geom type="sphere" size="0.01"/></body>
  </worldbody>
</mujoco>
)");
  ImportOptions o;
  o.num_envs = 1;
  auto imported = ImportModelFile(path, o);
  ASSERT_TRUE(imported.ok()) << imported.status();
  AddProbeCarrier(&imported->bundle.scene);
  auto info = CreateSceneFromBundle(*client_, imported->bundle);
  ASSERT_TRUE(info.ok()) << info.status();

  const ModelPtr m = LoadMujoco(path);
  const DataPtr d = MakeData(m.get());
  mj_forward(m.get(), d.get());
  const Eigen::Vector3d s(1 - 0.2, -0.1, 5.0 / 23 * 0.1);
  // MuJoCo's ray caster finds the patch there too.
  const mjtNum from[3] = {s.x(), s.y(), 1}, down[3] = {0, 0, -1};
  int geom = -1;
  EXPECT_NEAR(1 - mj_ray(m.get(), d.get(), from, down, nullptr, 1, -1, &geom), s.z(), 1e-7);
  const std::vector<float> depth = DepthsAt(*client_, *imported, d.get(), {{"patch", s, Eigen::Vector3d::UnitZ()}});
  ASSERT_EQ(depth.size(), 1u);
  EXPECT_NEAR(depth[0], kProbeR - kGap, 1e-6);
}

TEST(SceneBundle, JsonRoundTripIsExact) {
  auto imported = ImportModelFile(UrdfPath(), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const std::string json = SceneBundleToJson(imported->bundle);
  auto back = ParseSceneBundleJson(json, "bundle.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back->scene, imported->spec()));
  ASSERT_EQ(back->meshes.size(), 1u);
  EXPECT_EQ(back->meshes[0].mesh_id, imported->bundle.meshes[0].mesh_id);
  EXPECT_EQ(back->meshes[0].arrays.vertices, imported->bundle.meshes[0].arrays.vertices);
  EXPECT_EQ(back->meshes[0].arrays.triangles, imported->bundle.meshes[0].arrays.triangles);
  EXPECT_EQ(back->geom_names, imported->bundle.geom_names);

  // A plain SceneSpec is a bundle without meshes.
  auto plain = ParseSceneBundleJson(R"({"name": "s", "num_envs": 2})", "spec.json");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->scene.num_envs(), 2);
  EXPECT_TRUE(plain->meshes.empty());
}

TEST(SceneBundle, MalformedMeshesNameTheField) {
  const auto bad = [](const std::string& meshes) {
    return ParseSceneBundleJson(absl::StrCat(R"({"scene": {"name": "s"}, "meshes": )", meshes, "}"), "b.json").status();
  };
  EXPECT_THAT(bad(R"([{"mesh_id": "x", "vertices": [0, 0, 0], "triangles": [0, 1.5, 2]}])").message(),
              HasSubstr("b.json: meshes[0].triangles[1]: expected a vertex index"));
  EXPECT_THAT(bad(R"([{"mesh_id": "x", "vertices": [0, 0], "triangles": []}])").message(),
              HasSubstr("meshes[0].vertices: expected a multiple of 3"));
  EXPECT_THAT(bad(R"([{"mesh_id": "x", "vertices": []}])").message(), HasSubstr("meshes[0].triangles: missing"));
  EXPECT_THAT(bad(R"([{"mesh_id": "x", "vertices": [], "triangles": [], "colour": 1}])").message(),
              HasSubstr("meshes[0].colour: unknown key"));
  EXPECT_THAT(ParseSceneBundleJson(R"({"scene": {"nmae": "s"}})", "b.json").status().message(),
              HasSubstr("b.json: scene:"));
}

// The shell cuboid arrives welded (8 corners): the server sees it closed and outward.
TEST_F(ImportServiceTest, ImportedCuboidIsWatertight) {
  auto imported = ImportModelFile(UrdfPath(), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const BundleMesh& mesh = imported->bundle.meshes.at(0);
  auto r = client_->UploadMesh(mesh.arrays.vertices, mesh.arrays.triangles);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mesh_id(), mesh.mesh_id);
  EXPECT_EQ(r->num_vertices(), 8);
  EXPECT_TRUE(r->watertight());
  EXPECT_FALSE(r->was_inside_out());
}

TEST_F(ImportServiceTest, EditedMeshIsRefusedByItsId) {
  auto imported = ImportModelFile(UrdfPath(), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  imported->bundle.meshes[0].arrays.vertices[0] += 0.001;  // edited, id left as it was
  auto info = CreateSceneFromBundle(*client_, imported->bundle);
  ASSERT_EQ(info.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(info.status().message(), HasSubstr("meshes[0].mesh_id"));
}

// The mug's real OBJ mesh (12676 vertices) uploads and its scene creates.
TEST_F(ImportServiceTest, MugMeshUploadsAndCreates) {
  ImportOptions o;
  o.groups = {1, 3};
  auto imported = ImportModelFile("/usr/share/mujoco/model/mug/mug.xml", o);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto info = CreateSceneFromBundle(*client_, imported->bundle);
  ASSERT_TRUE(info.ok()) << info.status();
}

}  // namespace
}  // namespace taxel::testing
