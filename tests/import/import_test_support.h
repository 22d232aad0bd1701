// Shared by the importer tests: MuJoCo models loaded independently of the importer, files written
// into the test's temporary directory, and frames of the spec as Eigen transforms.
#ifndef TAXEL_TESTS_IMPORT_IMPORT_TEST_SUPPORT_H_
#define TAXEL_TESTS_IMPORT_IMPORT_TEST_SUPPORT_H_

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "Eigen/Geometry"
#include "gtest/gtest.h"
#include "taxel/v1/scene.pb.h"
#include <mujoco/mujoco.h>
#include <sys/stat.h>

namespace taxel::testing {

inline constexpr char kHumanoidXml[] = "/usr/share/mujoco/model/humanoid/humanoid.xml";  // libmujoco-samples

using ModelPtr = std::unique_ptr<mjModel, void (*)(mjModel*)>;
using DataPtr = std::unique_ptr<mjData, void (*)(mjData*)>;

/// mj_loadXML of `path`, asserting that it loads (the reference the importer is checked against).
inline ModelPtr LoadMujoco(const std::string& path) {
  char error[1024] = "";
  ModelPtr m(mj_loadXML(path.c_str(), nullptr, error, sizeof(error)), mj_deleteModel);
  EXPECT_NE(m, nullptr) << error;
  return m;
}

inline DataPtr MakeData(const mjModel* m) { return DataPtr(mj_makeData(m), mj_deleteData); }

/// A directory of this process under the test's temporary directory (CTest runs tests in
/// parallel processes, each writing the same file names).
inline std::string TestDir() {
  const std::string dir = ::testing::TempDir() + "/taxel_import_" + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

/// Writes `text` to a file named `name` in TestDir(); returns its path.
inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = TestDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// X_AB of a wire Pose (WXYZ or XYZW; empty parts are the identity).
inline Eigen::Isometry3d PoseOf(const v1::Pose& p) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  if (p.position_size() == 3) X.translation() = Eigen::Vector3d(p.position(0), p.position(1), p.position(2));
  if (p.quaternion_size() == 4) {
    const bool wxyz = p.quat_order() == v1::WXYZ;
    const double w = wxyz ? p.quaternion(0) : p.quaternion(3);
    const double x = wxyz ? p.quaternion(1) : p.quaternion(0);
    const double y = wxyz ? p.quaternion(2) : p.quaternion(1);
    const double z = wxyz ? p.quaternion(3) : p.quaternion(2);
    X.linear() = Eigen::Quaterniond(w, x, y, z).normalized().toRotationMatrix();
  }
  return X;
}

/// X_WB of MuJoCo body b from data->xpos / data->xquat (WXYZ).
inline Eigen::Isometry3d BodyPose(const mjData* d, int b) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.translation() = Eigen::Vector3d(d->xpos[3 * b], d->xpos[3 * b + 1], d->xpos[3 * b + 2]);
  X.linear() = Eigen::Quaterniond(d->xquat[4 * b], d->xquat[4 * b + 1], d->xquat[4 * b + 2], d->xquat[4 * b + 3])
                   .toRotationMatrix();
  return X;
}

/// The entity named `name` of the spec, or nullptr.
inline const v1::Entity* FindEntity(const v1::SceneSpec& spec, const std::string& name) {
  for (const auto& e : spec.entities()) {
    if (e.name() == name) return &e;
  }
  return nullptr;
}

inline const v1::Link* FindLink(const v1::Entity& e, const std::string& name) {
  for (const auto& l : e.links()) {
    if (l.name() == name) return &l;
  }
  return nullptr;
}

//   side view (x right, z up), at q = 0:
//
//                 tip (sphere r .025) at (.1, 0, .4) ── joint tip_joint (z) on the paddle
//        paddle ═══╪═══  box .1 × .04 × .02 (full sizes), yawed 90°, centre (.05, 0, .4)
//                  │     joint wrist (x) at (0, 0, .4)
//             upper│     cylinder r .03, length .3, centre (0, 0, .25)
//                  │     joint shoulder (y) at (0, 0, .1)
//        ┌─────────┴─────────┐         shell: a .06 × .04 × .02 cuboid mesh (shell.obj, corner at
//        │ base: box .2×.1×.1│ [shell]  its file origin), link at (.2, 0, 0) (joint shell_joint, z),
//        └───────────────────┘          collision origin (.01, .02, .03)
//   base is the root link: welded to the world → STATIC. MuJoCo's URDF reader fuses bodies welded
//   to their parent (compiler fusestatic, on for URDF), so its geoms arrive on the world body:
//   link "world". Its <visual> sphere is dropped.
inline constexpr char kTestArmUrdf[] = R"(<robot name="test_arm">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><sphere radius="0.5"/></geometry></visual>
    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.2 0.1 0.1"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 0.15"/><geometry><cylinder radius="0.03" length="0.3"/></geometry></collision>
  </link>
  <link name="paddle">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0.05 0 0" rpy="0 0 1.5707963267948966"/><geometry><box size="0.1 0.04 0.02"/></geometry></collision>
  </link>
  <link name="tip">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><geometry><sphere radius="0.025"/></geometry></collision>
  </link>
  <link name="shell">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0.01 0.02 0.03"/><geometry><mesh filename="shell.obj"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="wrist" type="revolute"><parent link="upper"/><child link="paddle"/>
    <origin xyz="0 0 0.3"/><axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="tip_joint" type="revolute"><parent link="paddle"/><child link="tip"/>
    <origin xyz="0.1 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="shell_joint" type="revolute"><parent link="base"/><child link="shell"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>
)";

// The cuboid [0, .06] × [0, .04] × [0, .02], faces counter-clockwise seen from outside
// (tests/data/shell_cuboid.obj, shared with tests/python/test_import.py).
inline std::string ShellObj() {
  std::ifstream in(TAXEL_TEST_DATA_DIR "/shell_cuboid.obj", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes test_arm.urdf and its shell.obj; returns the URDF's path.
inline std::string WriteTestArmUrdf() {
  WriteTempFile("shell.obj", ShellObj());
  return WriteTempFile("test_arm.urdf", kTestArmUrdf);
}

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_IMPORT_IMPORT_TEST_SUPPORT_H_
