// Shared helpers of the contact-matrix tests (tests/core/contact/contact_matrix*_test.cc).
#ifndef TAXEL_TESTS_CORE_CONTACT_CONTACT_MATRIX_TEST_UTIL_H_
#define TAXEL_TESTS_CORE_CONTACT_CONTACT_MATRIX_TEST_UTIL_H_

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "Eigen/Geometry"
#include "core/contact/contact_matrix.h"
#include "core/scene/scene.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene::contact_test {

constexpr double kPi = 3.141592653589793;

inline ShapeSpec CapsuleShape(double radius, double half_length, const Eigen::Vector3d& p_LS = Eigen::Vector3d::Zero(),
                              const Eigen::Matrix3d& R_LS = Eigen::Matrix3d::Identity()) {
  ShapeSpec s;
  s.kind = geometry::ShapeKind::kCapsule;
  s.radius = radius;
  s.half_length = half_length;
  s.X_LS.p = p_LS;
  s.X_LS.R = R_LS;
  return s;
}

// The pressure law of these tests: P(u) = k·u^n with k = 1e8 Pa/m^1.5, n = 1.5, no damping;
// Q(u) = ∫0^u P = k·u^2.5/2.5. μ_d = 0.5 (μ_s defaults to it), v_s 1 cm/s, v_d 5 cm/s.
inline contact::NonlinearLawParams Law() {
  contact::NonlinearLawParams law;
  law.stiffness = 1e8;
  law.exponent = 1.5;
  law.damping = 0;
  law.dynamic_friction = 0.5;
  return law;
}
inline double P(double u) { return 1e8 * std::pow(u, 1.5); }
inline double Q(double u) { return 1e8 * std::pow(u, 2.5) / 2.5; }

// Position then quaternion (xyzw) of (R, p).
inline void AppendPose(const Eigen::Matrix3d& R, const Eigen::Vector3d& p, std::vector<double>* out) {
  const Eigen::Quaterniond q(R);
  out->insert(out->end(), {p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w()});
}

// Float32 cell against a double expectation (relative 1e-5, absolute 1e-6 N).
inline void ExpectCell(const contact::ContactMatrix& M, int env, int row, int col, const Eigen::Vector3d& expected) {
  const Eigen::Vector3f v = M.Normal(env, row, col);
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(v[a], expected[a], 1e-5 * expected.norm() + 1e-6)
        << "env " << env << " row " << M.row_names()[row] << " col " << M.column_names()[col] << " axis " << a;
  }
}
inline Eigen::Vector3d FrictionCell(const contact::ContactMatrix& M, int env, int row, int col) {
  const float* f = M.friction(env) + (static_cast<size_t>(row) * M.cols() + col) * 3;
  return {f[0], f[1], f[2]};
}

class Stepper {
 public:
  explicit Stepper(Scene* scene) : scene_(scene) {}
  absl::Status Step(std::vector<double> poses, std::vector<double> twists = {}, std::vector<int32_t> envs = {},
                    ReportedContacts contacts = {}) {
    poses_ = std::move(poses), twists_ = std::move(twists), envs_ = std::move(envs);
    StepInput in;
    in.env_ids = envs_;
    in.poses = poses_;
    in.twists = twists_;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    in.contacts = contacts;
    return scene_->Step(in, pool_);
  }

 private:
  Scene* scene_;
  std::vector<double> poses_, twists_;
  std::vector<int32_t> envs_;
  InlineExecutor pool_;
};

// A scene from `spec` with a contact matrix over `bodies` × `partners` and the law above.
inline absl::StatusOr<std::unique_ptr<Scene>> WithMatrix(
    SceneSpec spec, std::vector<std::string> bodies, std::vector<std::string> partners,
    contact::ContactSource source = contact::ContactSource::kEstimated) {
  spec.contact_matrix.bodies = std::move(bodies);
  spec.contact_matrix.partners = std::move(partners);
  spec.contact_matrix.source = source;
  spec.contact_matrix.law = Law();
  geometry::MeshStore meshes;
  return Scene::Create(spec, meshes);
}

}  // namespace taxel::scene::contact_test

#endif  // TAXEL_TESTS_CORE_CONTACT_CONTACT_MATRIX_TEST_UTIL_H_
