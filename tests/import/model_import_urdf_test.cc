// taxel::ImportModel on a URDF written here (box, cylinder, sphere and mesh links; frames worked
// out by hand), on the mug of libmujoco-samples (a real OBJ mesh), and the frames of every geom at
// a non-trivial configuration against MuJoCo's own geom_xpos / geom_xmat.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "taxel/mesh_io.h"
#include "taxel/model_import.h"
#include "tests/import/import_test_support.h"

namespace taxel::testing {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> LinkNames(const v1::Entity& e) {
  std::vector<std::string> names;
  for (const auto& l : e.links()) names.push_back(l.name());
  return names;
}

// Enclosed volume of a closed mesh (divergence theorem: Σ a·(b × c)/6 over the triangles).
double Volume(const MeshArrays& a) {
  double v = 0;
  for (size_t t = 0; t < a.triangles.size(); t += 3) {
    Eigen::Vector3d p[3];
    for (int k = 0; k < 3; ++k) p[k] = Eigen::Map<const Eigen::Vector3d>(&a.vertices[3 * a.triangles[t + k]]);
    v += p[0].dot(p[1].cross(p[2])) / 6;
  }
  return v;
}

// Largest distance from a point of `a` to the nearest point of `b` (brute force).
double MaxNearest(const std::vector<Eigen::Vector3d>& a, const std::vector<Eigen::Vector3d>& b) {
  double worst = 0;
  for (const auto& p : a) {
    double best = INFINITY;
    for (const auto& q : b) best = std::min(best, (p - q).squaredNorm());
    worst = std::max(worst, std::sqrt(best));
  }
  return worst;
}

std::vector<Eigen::Vector3d> Points(const MeshArrays& a, const Eigen::Isometry3d& X) {
  std::vector<Eigen::Vector3d> out;
  for (size_t i = 0; i < a.vertices.size(); i += 3)
    out.push_back(X * Eigen::Vector3d(a.vertices[i], a.vertices[i + 1], a.vertices[i + 2]));
  return out;
}

TEST(ImportUrdf, LinksShapesAndFramesByHand) {
  auto imported = ImportModelFile(WriteTestArmUrdf(), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const v1::SceneSpec& spec = imported->spec();
  ASSERT_EQ(spec.entities_size(), 2);
  const v1::Entity& robot = spec.entities(0);
  EXPECT_EQ(robot.name(), "test_arm");
  EXPECT_THAT(LinkNames(robot), ElementsAre("upper", "paddle", "tip", "shell"));
  const v1::Entity& fixed = spec.entities(1);
  EXPECT_EQ(fixed.name(), "test_arm_static");
  EXPECT_EQ(fixed.kind(), v1::STATIC);
  ASSERT_THAT(LinkNames(fixed), ElementsAre("world"));

  // base (on the world): one box (the visual sphere is gone), half extents = URDF size / 2, 5 cm up.
  const v1::Link& base = fixed.links(0);
  ASSERT_EQ(base.shapes_size(), 1);
  EXPECT_THAT(base.shapes(0).box().half_extents(), ElementsAre(0.1, 0.05, 0.05));
  EXPECT_TRUE(PoseOf(base.shapes(0).pose()).translation().isApprox(Eigen::Vector3d(0, 0, 0.05), 1e-15));
  EXPECT_TRUE(PoseOf(base.pose()).isApprox(Eigen::Isometry3d::Identity(), 1e-15));

  // upper: cylinder radius .03, half length .15, 15 cm along the link's z.
  const v1::Shape& cyl = FindLink(robot, "upper")->shapes(0);
  EXPECT_DOUBLE_EQ(cyl.cylinder().radius(), 0.03);
  EXPECT_DOUBLE_EQ(cyl.cylinder().half_length(), 0.15);
  EXPECT_TRUE(PoseOf(cyl.pose()).translation().isApprox(Eigen::Vector3d(0, 0, 0.15), 1e-15));

  // paddle: box (.05, .02, .01) yawed 90°: its x axis along the link's y.
  const v1::Shape& paddle = FindLink(robot, "paddle")->shapes(0);
  EXPECT_THAT(paddle.box().half_extents(), ElementsAre(0.05, 0.02, 0.01));
  const Eigen::Isometry3d X_paddle = PoseOf(paddle.pose());
  EXPECT_TRUE(X_paddle.translation().isApprox(Eigen::Vector3d(0.05, 0, 0), 1e-15));
  EXPECT_TRUE(X_paddle.linear().col(0).isApprox(Eigen::Vector3d(0, 1, 0), 1e-12));
  EXPECT_TRUE(X_paddle.linear().col(2).isApprox(Eigen::Vector3d(0, 0, 1), 1e-12));

  EXPECT_DOUBLE_EQ(FindLink(robot, "tip")->shapes(0).sphere().radius(), 0.025);

  // shell: wherever MuJoCo recentred the mesh, link pose × shape pose × vertex is the file's vertex
  // moved by the joint origin (.2, 0, 0) and the collision origin (.01, .02, .03), at q = 0.
  const ModelPtr m = LoadMujoco(WriteTestArmUrdf());
  const DataPtr d = MakeData(m.get());
  mj_forward(m.get(), d.get());
  const v1::Shape& shell = FindLink(robot, "shell")->shapes(0);
  ASSERT_EQ(imported->bundle.meshes.size(), 1u);
  const MeshArrays& mesh = imported->bundle.meshes[0].arrays;
  EXPECT_EQ(shell.mesh().mesh_id(), imported->bundle.meshes[0].mesh_id);
  const Eigen::Isometry3d X_WS = BodyPose(d.get(), mj_name2id(m.get(), mjOBJ_BODY, "shell")) * PoseOf(shell.pose());
  auto file = ParseObj(ShellObj());
  ASSERT_TRUE(file.ok());
  Eigen::Isometry3d X_expected = Eigen::Isometry3d::Identity();
  X_expected.translation() = Eigen::Vector3d(0.21, 0.02, 0.03);
  const auto got = Points(mesh, X_WS), want = Points(*file, X_expected);
  EXPECT_EQ(got.size(), 8u);
  EXPECT_LT(MaxNearest(got, want), 1e-7);  // mesh_vert is float32
  EXPECT_LT(MaxNearest(want, got), 1e-7);
  EXPECT_NEAR(Volume(mesh), 0.06 * 0.04 * 0.02, 1e-10);  // closed and facing outwards
}

// The mug's visual mesh (group 1, contype 0: selected with groups {1}): mug.obj scaled by .01 and
// turned by euler="90 0 0" (90° about x), on the mug body at the origin.
TEST(ImportUrdf, RealObjMeshOfTheMugSample) {
  ImportOptions o;
  o.groups = {1};
  auto imported = ImportModelFile("/usr/share/mujoco/model/mug/mug.xml", o);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->bundle.meshes.size(), 1u);
  const v1::Link& mug = imported->spec().entities(0).links(0);
  ASSERT_EQ(mug.shapes_size(), 1);
  auto file = ReadMeshFile("/usr/share/mujoco/model/mug/mug.obj");
  ASSERT_TRUE(file.ok()) << file.status();
  Eigen::Isometry3d X_file = Eigen::Isometry3d::Identity();
  X_file.linear() = 0.01 * Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitX()).toRotationMatrix();
  const auto got = Points(imported->bundle.meshes[0].arrays, PoseOf(mug.shapes(0).pose()));
  const auto want = Points(*file, X_file);
  EXPECT_LT(MaxNearest(got, want), 1e-7);
  EXPECT_LT(MaxNearest(want, got), 1e-7);
}

// Every geom of the humanoid and of the URDF: link pose (xpos, xquat) × shape pose = MuJoCo's
// geom pose (geom_xpos, geom_xmat) at a configuration with every joint away from zero.
void ExpectGeomFramesMatch(const std::string& path) {
  auto imported = ImportModelFile(path, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  const ModelPtr m = LoadMujoco(path);
  const DataPtr d = MakeData(m.get());
  for (int j = 0; j < m->njnt; ++j) {
    const int a = m->jnt_qposadr[j];
    if (m->jnt_type[j] == mjJNT_HINGE) d->qpos[a] = 0.3 + 0.1 * j;
    if (m->jnt_type[j] == mjJNT_FREE) {
      const double q[7] = {0.2, -0.1, 1.3, 0.9, 0.1, -0.3, 0.2};
      for (int k = 0; k < 7; ++k) d->qpos[a + k] = q[k];
      mju_normalize4(d->qpos + a + 3);
    }
  }
  mj_forward(m.get(), d.get());
  const v1::Entity& robot = imported->spec().entities(0);
  int checked = 0;
  for (int li = 0; li < robot.links_size(); ++li) {
    const int b = imported->moving_bodies[li];
    for (int k = 0; k < robot.links(li).shapes_size(); ++k) {
      const int g = m->body_geomadr[b] + k;
      const Eigen::Isometry3d X_WG = BodyPose(d.get(), b) * PoseOf(robot.links(li).shapes(k).pose());
      const Eigen::Vector3d p(d->geom_xpos[3 * g], d->geom_xpos[3 * g + 1], d->geom_xpos[3 * g + 2]);
      const Eigen::Matrix3d R = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d->geom_xmat + 9 * g);
      EXPECT_LT((X_WG.translation() - p).norm(), 1e-12) << mj_id2name(m.get(), mjOBJ_GEOM, g);
      EXPECT_LT((X_WG.linear() - R).norm(), 1e-12) << mj_id2name(m.get(), mjOBJ_GEOM, g);
      ++checked;
    }
  }
  EXPECT_GT(checked, 3);
}

TEST(ImportFrames, HumanoidGeomsFollowMujocoPoses) { ExpectGeomFramesMatch(kHumanoidXml); }
TEST(ImportFrames, UrdfGeomsFollowMujocoPoses) { ExpectGeomFramesMatch(WriteTestArmUrdf()); }

}  // namespace
}  // namespace taxel::testing
