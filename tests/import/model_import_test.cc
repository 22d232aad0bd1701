// taxel::ImportModel against MuJoCo's compiled model (read independently with mj_loadXML) and
// against sizes and frames worked out by hand from the files.
#include "taxel/model_import.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_support.h"

namespace taxel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Bodies of humanoid.xml in file order (depth first), the world body left out.
const std::vector<std::string> kHumanoidBodies = {"torso",       "head",           "lower_waist",     "pelvis",
                                                  "right_thigh", "right_shin",     "right_foot",      "left_thigh",
                                                  "left_shin",   "left_foot",      "right_upper_arm", "right_lower_arm",
                                                  "right_hand",  "left_upper_arm", "left_lower_arm",  "left_hand"};

TEST(ImportHumanoid, OneRobotEntityWithEveryBodyAndTheFloorAsTerrain) {
  auto imported = ImportModelFile(kHumanoidXml, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const v1::SceneSpec& spec = imported->spec();
  ASSERT_EQ(spec.entities_size(), 2);  // no world geom other than the floor plane: no STATIC entity
  const v1::Entity& robot = spec.entities(0);
  EXPECT_EQ(robot.name(), "Humanoid");  // <mujoco model="Humanoid">
  EXPECT_EQ(robot.kind(), v1::ROBOT);
  EXPECT_EQ(spec.name(), "Humanoid");
  std::vector<std::string> names;
  for (const auto& l : robot.links()) names.push_back(l.name());
  EXPECT_EQ(names, kHumanoidBodies);

  const ModelPtr m = LoadMujoco(kHumanoidXml);
  ASSERT_EQ(imported->moving_bodies.size(), kHumanoidBodies.size());
  for (size_t i = 0; i < kHumanoidBodies.size(); ++i) {
    EXPECT_EQ(imported->moving_bodies[i], mj_name2id(m.get(), mjOBJ_BODY, kHumanoidBodies[i].c_str()));
  }

  // <geom name="floor" size="0 0 .05" type="plane"/> in the worldbody: a half-space at the origin.
  const v1::Entity& terrain = spec.entities(1);
  EXPECT_EQ(terrain.name(), "Humanoid_terrain");
  EXPECT_EQ(terrain.kind(), v1::TERRAIN);
  ASSERT_EQ(terrain.links_size(), 1);
  EXPECT_EQ(terrain.links(0).name(), "world");
  ASSERT_EQ(terrain.links(0).shapes_size(), 1);
  EXPECT_TRUE(terrain.links(0).shapes(0).has_half_space());
  EXPECT_TRUE(PoseOf(terrain.links(0).pose()).isApprox(Eigen::Isometry3d::Identity(), 0));
  EXPECT_TRUE(PoseOf(terrain.links(0).shapes(0).pose()).isApprox(Eigen::Isometry3d::Identity(), 0));
}

// Every geom's size and frame equal the compiled model's, bit for bit.
TEST(ImportHumanoid, GeomSizesAndFramesAreTheCompiledModels) {
  auto imported = ImportModelFile(kHumanoidXml, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const ModelPtr m = LoadMujoco(kHumanoidXml);
  const v1::Entity& robot = imported->spec().entities(0);
  int checked = 0;
  for (int li = 0; li < robot.links_size(); ++li) {
    const int b = mj_name2id(m.get(), mjOBJ_BODY, robot.links(li).name().c_str());
    ASSERT_GE(b, 0);
    ASSERT_EQ(robot.links(li).shapes_size(), m->body_geomnum[b]) << robot.links(li).name();
    for (int k = 0; k < m->body_geomnum[b]; ++k) {
      const int g = m->body_geomadr[b] + k;
      const v1::Shape& s = robot.links(li).shapes(k);
      const mjtNum* size = m->geom_size + 3 * g;
      SCOPED_TRACE(mj_id2name(m.get(), mjOBJ_GEOM, g));
      ASSERT_EQ(s.pose().quat_order(), v1::WXYZ);
      EXPECT_THAT(s.pose().position(), ElementsAre(m->geom_pos[3 * g], m->geom_pos[3 * g + 1], m->geom_pos[3 * g + 2]));
      EXPECT_THAT(s.pose().quaternion(), ElementsAre(m->geom_quat[4 * g], m->geom_quat[4 * g + 1],
                                                     m->geom_quat[4 * g + 2], m->geom_quat[4 * g + 3]));
      if (m->geom_type[g] == mjGEOM_CAPSULE) {
        ASSERT_TRUE(s.has_capsule());
        EXPECT_EQ(s.capsule().radius(), size[0]);
        EXPECT_EQ(s.capsule().half_length(), size[1]);
      } else {
        ASSERT_EQ(m->geom_type[g], mjGEOM_SPHERE);  // the humanoid has only capsules and spheres
        ASSERT_TRUE(s.has_sphere());
        EXPECT_EQ(s.sphere().radius(), size[0]);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, m->ngeom - 1);  // all but the floor
}

// A few geoms against the numbers of the file itself (fromto = segment end points, size = radius).
TEST(ImportHumanoid, CapsulesFromFromtoByHand) {
  auto imported = ImportModelFile(kHumanoidXml, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const v1::Entity& robot = imported->spec().entities(0);
  auto shape = [&](const std::string& link, int k) { return FindLink(robot, link)->shapes(k); };

  // right_upper_arm: fromto="0 0 0 .16 -.16 -.16" size=".04 .16": centre (.08, −.08, −.08), half
  // length |(.16, −.16, −.16)|/2 = .16·√3/2, axis (1, −1, −1)/√3.
  const v1::Shape arm = shape("right_upper_arm", 0);
  EXPECT_DOUBLE_EQ(arm.capsule().radius(), 0.04);
  EXPECT_NEAR(arm.capsule().half_length(), 0.16 * std::sqrt(3.0) / 2, 1e-15);
  const Eigen::Isometry3d X_arm = PoseOf(arm.pose());
  EXPECT_TRUE(X_arm.translation().isApprox(Eigen::Vector3d(0.08, -0.08, -0.08), 1e-14));
  EXPECT_NEAR(std::abs(X_arm.linear().col(2).dot(Eigen::Vector3d(1, -1, -1).normalized())), 1.0, 1e-14);

  // torso: fromto="0 -.07 0 0 .07 0" size=".07": centre 0, half length .07, axis ±y.
  const v1::Shape torso = shape("torso", 0);
  EXPECT_DOUBLE_EQ(torso.capsule().half_length(), 0.07);
  EXPECT_NEAR(std::abs(PoseOf(torso.pose()).linear().col(2).y()), 1.0, 1e-15);

  // right_foot, first geom: fromto="-.07 -.02 0 .14 -.04 0" size=".027": centre (.035, −.03, 0),
  // half length √(.21² + .02²)/2 = √.0445/2.
  const v1::Shape foot = shape("right_foot", 0);
  EXPECT_DOUBLE_EQ(foot.capsule().radius(), 0.027);
  EXPECT_NEAR(foot.capsule().half_length(), std::sqrt(0.0445) / 2, 1e-15);
  EXPECT_TRUE(PoseOf(foot.pose()).translation().isApprox(Eigen::Vector3d(0.035, -0.03, 0), 1e-14));

  // head and hands: spheres .09 and .04 at their bodies' origins.
  EXPECT_DOUBLE_EQ(shape("head", 0).sphere().radius(), 0.09);
  EXPECT_DOUBLE_EQ(shape("left_hand", 0).sphere().radius(), 0.04);
  EXPECT_TRUE(PoseOf(shape("left_hand", 0).pose()).translation().isZero(0));
}

TEST(ImportHumanoid, BodiesByGlobAndEntityName) {
  ImportOptions o;
  o.entity = "h1";
  o.bodies = {"*_foot", "h1/*_hand"};  // a bare name and an "entity/body" glob
  auto imported = ImportModelFile(kHumanoidXml, o);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->spec().entities_size(), 1);  // the world body is not selected: no terrain
  std::vector<std::string> names;
  for (const auto& l : imported->spec().entities(0).links()) names.push_back(l.name());
  EXPECT_THAT(names, ElementsAre("right_foot", "left_foot", "right_hand", "left_hand"));
  EXPECT_EQ(imported->spec().entities(0).name(), "h1");
  // The file's geom names, shape by shape (<geom name="right_right_foot" .../> first).
  EXPECT_THAT(imported->bundle.geom_names.at("h1/right_foot"), ElementsAre("right_right_foot", "left_right_foot"));
}

TEST(ImportErrors, GlobMatchingNothingNamesTheFlag) {
  ImportOptions o;
  o.bodies = {"*_foot", "tail*"};
  auto imported = ImportModelFile(kHumanoidXml, o);
  ASSERT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(imported.status().message(), HasSubstr("--bodies: 'tail*' matches no body"));
}

TEST(ImportErrors, FileThatDoesNotLoadCarriesMujocosError) {
  const std::string path = WriteTempFile("bad.xml", "<mujoco><worldbody><frobnicate/></worldbody></mujoco>\n");
  auto imported = ImportModelFile(path, {});
  ASSERT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(imported.status().message(), HasSubstr("cannot load '" + path + "'"));
  EXPECT_THAT(imported.status().message(), HasSubstr("frobnicate"));  // MuJoCo names the element

  auto missing = ImportModelFile(TestDir() + "/no_such_model.xml", {});
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("no_such_model.xml"));
}

TEST(ImportErrors, BadOptionsNameTheFlag) {
  ImportOptions o;
  o.num_envs = 0;
  EXPECT_THAT(ImportModelFile(kHumanoidXml, o).status().message(), HasSubstr("--num_envs"));
  o.num_envs = 1;
  o.groups = {7};
  EXPECT_THAT(ImportModelFile(kHumanoidXml, o).status().message(), HasSubstr("--groups"));
  o.groups = {};
  o.ellipsoid_frequency = 0;
  EXPECT_THAT(ImportModelFile(kHumanoidXml, o).status().message(), HasSubstr("--ellipsoid_frequency"));
  o.ellipsoid_frequency = 4;
  o.entity = "a/b";
  EXPECT_THAT(ImportModelFile(kHumanoidXml, o).status().message(), HasSubstr("--entity"));
}

// ---------------------------------------------------------------------------------------------
// A height field, an ellipsoid and geom groups (an MJCF written here).
//
//   hfield "h": 3 rows (along y) × 4 columns (along x), size (.3, .2, .1, .05): x in [−.3, .3]
//   (dx = .6/3 = .2), y in [−.2, .2] (dy = .4/2 = .2); raw elevation 10·i + j, which MuJoCo
//   normalises to [0, 1] (÷ 23) and scales by size[2]: height(i, j) = (10·i + j)/23 · 0.1.
//   body "blob" (free joint): an ellipsoid (.1, .05, .02) and a sphere in group 3 that cannot collide;
//   body "target": a mocap body (no joint, but moved by mocap_pos): a ROBOT link;
//   body "shelf": no joint, at (0, .5, .3) yawed 90°: STATIC, with that pose.

std::string HfieldFile() {
  std::string bytes;
  const int32_t dims[2] = {3, 4};
  bytes.append(reinterpret_cast<const char*>(dims), sizeof(dims));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      const float v = static_cast<float>(10 * i + j);
      bytes.append(reinterpret_cast<const char*>(&v), sizeof(v));
    }
  }
  return bytes;
}

std::string TerrainModel() {
  WriteTempFile("terrain.bin", HfieldFile());
  return WriteTempFile("terrain.xml", R"(<mujoco model="terrain test">
  <asset><hfield name="h" file="terrain.bin" size="0.3 0.2 0.1 0.05"/></asset>
  <worldbody>
    <geom name="ground" type="hfield" hfield="h" pos="1 0 0"/>
    <body name="blob" pos="0 0 1">
      <freejoint/>
      <geom name="egg" type="ellipsoid" size="0.1 0.05 0.02"/>
      <geom name="marker" type="sphere" size="0.01" contype="0" conaffinity="0" group="3"/>
    </body>
    <body name="target" mocap="true" pos="0 0 2"><geom name="goal" type="box" size="0.01 0.01 0.01"/></body>
    <body name="shelf" pos="0 0.5 0.3" euler="0 0 90"><geom name="board" type="box" size="0.2 0.1 0.01"/></body>
  </worldbody>
</mujoco>
)");
}

TEST(ImportShapes, HeightfieldSamplesRowsAlongY) {
  const std::string path = TerrainModel();
  auto imported = ImportModelFile(path, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const v1::Entity* terrain = FindEntity(imported->spec(), "terrain_test_terrain");  // ' ' → '_'
  ASSERT_NE(terrain, nullptr);
  const v1::Shape& s = terrain->links(0).shapes(0);
  ASSERT_TRUE(s.has_heightfield());
  const v1::Heightfield& hf = s.heightfield();
  EXPECT_THAT(hf.heights().shape(), ElementsAre(3, 4));
  EXPECT_NEAR(hf.dx(), 0.2, 1e-15);
  EXPECT_NEAR(hf.dy(), 0.2, 1e-15);
  ASSERT_EQ(hf.heights().dtype(), v1::FLOAT64);
  std::vector<double> h(12);
  std::memcpy(h.data(), hf.heights().data().data(), 12 * sizeof(double));
  // hfield_data is float32 in MuJoCo: 1e-8 covers its rounding.
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(h[4 * i + j], (10 * i + j) / 23.0 * 0.1, 1e-8) << i << "," << j;
  }
  EXPECT_TRUE(PoseOf(terrain->links(0).shapes(0).pose()).translation().isApprox(Eigen::Vector3d(1, 0, 0), 0));

  // MuJoCo's own ray caster agrees on where sample (i, j) is: a ray down from above
  // (1 + (j − 1.5)·dx, (i − 1)·dy) hits the surface at height(i, j). The rays are pulled 1e-6 of
  // the way in so that the border samples are hit (the slope moves the height by < 3e-8 m).
  const ModelPtr m = LoadMujoco(path);
  const DataPtr d = MakeData(m.get());
  mj_forward(m.get(), d.get());
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      const mjtNum from[3] = {1 + (j - 1.5) * 0.2 * (1 - 1e-6), (i - 1) * 0.2 * (1 - 1e-6), 0.5}, down[3] = {0, 0, -1};
      int geom = -1;
      const mjtNum dist = mj_ray(m.get(), d.get(), from, down, nullptr, 1, -1, &geom);
      EXPECT_EQ(geom, mj_name2id(m.get(), mjOBJ_GEOM, "ground"));
      EXPECT_NEAR(0.5 - dist, h[4 * i + j], 1e-6) << i << "," << j;
    }
  }
}

TEST(ImportShapes, MocapBodiesMoveWeldedBodiesAreStatic) {
  auto imported = ImportModelFile(TerrainModel(), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const v1::Entity* robot = FindEntity(imported->spec(), "terrain_test");
  ASSERT_NE(robot, nullptr);
  ASSERT_EQ(robot->links_size(), 2);
  EXPECT_EQ(robot->links(0).name(), "blob");
  EXPECT_EQ(robot->links(1).name(), "target");
  const v1::Entity* fixed = FindEntity(imported->spec(), "terrain_test_static");
  ASSERT_NE(fixed, nullptr);
  ASSERT_EQ(fixed->links_size(), 1);
  EXPECT_EQ(fixed->links(0).name(), "shelf");
  const Eigen::Isometry3d X_WS = PoseOf(fixed->links(0).pose());
  EXPECT_TRUE(X_WS.translation().isApprox(Eigen::Vector3d(0, 0.5, 0.3), 1e-15));
  EXPECT_TRUE(X_WS.linear().col(0).isApprox(Eigen::Vector3d(0, 1, 0), 1e-12));  // yawed 90°: x → y
  EXPECT_THAT(fixed->links(0).shapes(0).box().half_extents(), ElementsAre(0.2, 0.1, 0.01));
}

TEST(ImportShapes, EllipsoidAsAnImplicitSuperellipsoidAndGroupsSelectGeoms) {
  // MuJoCo's ellipsoid (size = semi-axes) is SE(n = 1) with the same semi-axes: exact, no mesh.
  auto imported = ImportModelFile(TerrainModel(), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const v1::Entity* robot = FindEntity(imported->spec(), "terrain_test");
  ASSERT_NE(robot, nullptr);
  const v1::Link* blob = FindLink(*robot, "blob");
  ASSERT_NE(blob, nullptr);
  ASSERT_EQ(blob->shapes_size(), 1);  // the group-3 marker cannot collide: left out
  ASSERT_TRUE(blob->shapes(0).implicit().has_superellipsoid());
  const v1::Implicit::Superellipsoid& se = blob->shapes(0).implicit().superellipsoid();
  EXPECT_EQ(se.n(), 1);
  EXPECT_THAT(se.semi_axes(), ElementsAre(0.1, 0.05, 0.02));
  EXPECT_TRUE(imported->bundle.meshes.empty());
  EXPECT_TRUE(imported->notes.empty());

  ImportOptions o;
  o.groups = {3};
  auto markers = ImportModelFile(TerrainModel(), o);
  ASSERT_TRUE(markers.ok()) << markers.status();
  ASSERT_EQ(markers->spec().entities_size(), 1);  // the hfield and the ellipsoid are in group 0
  ASSERT_EQ(markers->spec().entities(0).links(0).shapes_size(), 1);
  EXPECT_DOUBLE_EQ(markers->spec().entities(0).links(0).shapes(0).sphere().radius(), 0.01);
}

}  // namespace
}  // namespace taxel::testing
