// Shared by the importer tests: MuJoCo models loaded independently of the importer, files written
// into the test's temporary directory, and frames of the spec as Eigen transforms.
#ifndef TAXEL_TESTS_IMPORT_IMPORT_TEST_SUPPORT_H_
#define TAXEL_TESTS_IMPORT_IMPORT_TEST_SUPPORT_H_

#include <fstream>
#include <memory>
#include <string>

#include <mujoco/mujoco.h>

#include "Eigen/Geometry"
#include "gtest/gtest.h"
#include "taxel/v1/scene.pb.h"

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

/// Writes `text` to a file named `name` in the test's temporary directory; returns its path.
inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
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

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_IMPORT_IMPORT_TEST_SUPPORT_H_
