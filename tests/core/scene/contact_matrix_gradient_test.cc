// The contact matrix's gradient (ContactMatrixSpec::gradients) in a scene: each cell's ∂F/∂(ξ_body,
// ξ_partner) against central differences of the scene's own matrix, for a robot/object pair, a
// robot/robot pair (the antisymmetric mirrored cell) and a partner of two links (moved as one
// rigid body about its first link's origin); creation errors, memory and reset.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "Eigen/Geometry"
#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/contact/contact_matrix_test_util.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using ::testing::HasSubstr;
using namespace taxel::testing;              // NOLINT
using namespace taxel::scene::contact_test;  // NOLINT
using Twist = Eigen::Matrix<double, 6, 1>;

// Moving links in canonical order: hand/thumb, hand/index, cup/body, cup/handle. Implicit spheres
// (thumb 2 cm, index 2.5 cm, handle 1 cm) and the cup's body SE(4) of semi-axes 3, 3, 4 cm, each
// shape off its link's origin; in the x-y plane:
//
//          index (I)---handle (H)          I touches H (1 mm) and T (0.5 mm);
//          /                               T touches the cup's flat side (1 mm).
//   thumb (T)  [ cup body ]
//
// Every link also moves (twists), so that the closing speeds and the damping term vary with the
// poses too.
struct Grasp {
  static constexpr double kThumb = 0.02, kIndex = 0.025, kHandle = 0.01;
  std::vector<Eigen::Vector3d> origins;  // link origins
  std::vector<Eigen::Matrix3d> rotations;
  std::vector<Eigen::Vector3d> shape_offsets;  // X_LS.p of each link's shape (link frame)

  Grasp() {
    shape_offsets = {{0.01, 0, 0}, {0, 0, 0.004}, {0, 0, -0.005}, {0.003, 0, 0}};
    rotations = {Eigen::Matrix3d::Identity(), Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()).toRotationMatrix(),
                 Eigen::Matrix3d::Identity(), Eigen::AngleAxisd(-0.2, Eigen::Vector3d::UnitY()).toRotationMatrix()};
    // Shape centres first, then the link origins that put them there.
    const Eigen::Vector3d c_T(0.01, 0, 0);
    const Eigen::Vector3d c_B(c_T.x() + kThumb + 0.03 - 0.001, 0, 0);  // the SE's −x face near its axis
    const Eigen::Vector3d c_H = c_B + Eigen::Vector3d(0, 0.055, 0);
    // I on the circles |I − T| = R_T + R_I − 0.5 mm and |I − H| = R_I + R_H − 1 mm (z = 0).
    const double a = kThumb + kIndex - 5e-4, b = kIndex + kHandle - 1e-3, d = (c_H - c_T).norm();
    const double x = (a * a - b * b + d * d) / (2 * d), y = std::sqrt(a * a - x * x);
    const Eigen::Vector3d u = (c_H - c_T) / d, v(-u.y(), u.x(), 0);
    const Eigen::Vector3d c_I = c_T + x * u + y * v;
    const Eigen::Vector3d centres[4] = {c_T, c_I, c_B, c_H};
    for (int l = 0; l < 4; ++l) origins.push_back(centres[l] - rotations[l] * shape_offsets[l]);
  }

  SceneSpec Spec() const {
    SceneSpec spec;
    spec.entities.push_back(Entity("hand", EntityKind::kRobot,
                                   {Link("thumb", {ImplicitSphereShape(kThumb, shape_offsets[0])}),
                                    Link("index", {ImplicitSphereShape(kIndex, shape_offsets[1])})}));
    spec.entities.push_back(Entity("cup", EntityKind::kObject,
                                   {Link("body", {SuperellipsoidShape(4, {0.03, 0.03, 0.04}, shape_offsets[2])}),
                                    Link("handle", {ImplicitSphereShape(kHandle, shape_offsets[3])})}));
    spec.contact_matrix.bodies = {"all"};
    spec.contact_matrix.partners = {"robot/*", "object/*"};
    spec.contact_matrix.law = Law();
    spec.contact_matrix.law.damping = 1e5;
    spec.contact_matrix.gradients = true;
    return spec;
  }

  // Poses with the links in `moved` displaced by the world twist ξ about `about` (one rigid motion).
  std::vector<double> Poses(const std::vector<int>& moved = {}, const Twist& xi = Twist::Zero(),
                            const Eigen::Vector3d& about = Eigen::Vector3d::Zero()) const {
    const double angle = xi.tail<3>().norm();
    const Eigen::Matrix3d R =
        angle == 0 ? Eigen::Matrix3d::Identity() : Eigen::AngleAxisd(angle, xi.tail<3>() / angle).toRotationMatrix();
    std::vector<double> poses;
    for (int l = 0; l < 4; ++l) {
      const bool moves = std::find(moved.begin(), moved.end(), l) != moved.end();
      AppendPose(moves ? Eigen::Matrix3d(R * rotations[l]) : rotations[l],
                 moves ? Eigen::Vector3d(about + xi.head<3>() + R * (origins[l] - about)) : origins[l], &poses);
    }
    return poses;
  }
  static std::vector<double> Twists() {
    return {0.01, 0, 0, 0, 0, 0.5, /**/ 0, -0.02, 0.01, 0.3, 0, 0, /**/ -0.01, 0, 0, 0, 0.2, 0, /**/ 0, 0, 0, 0, 0, 0};
  }
};

Eigen::Vector3d Cell(const contact::ContactMatrix& M, int row, int col) { return M.Normal(0, row, col).cast<double>(); }

// The [3, 6] block of cell (row, col): side 0 the body, 1 the partner.
Eigen::Matrix<double, 3, 6> GradientBlock(const contact::ContactMatrix& M, int row, int col, int side) {
  const float* g = M.gradient(0) + (static_cast<size_t>(row) * M.cols() + col) * contact::ContactMatrix::kGradientFloats;
  Eigen::Matrix<double, 3, 6> out;
  for (int a = 0; a < 3; ++a) {
    for (int k = 0; k < 6; ++k) out(a, k) = g[a * 12 + side * 6 + k];
  }
  return out;
}

class ContactMatrixGradientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    geometry::MeshStore meshes;
    auto scene = Scene::Create(grasp_.Spec(), meshes);
    ASSERT_TRUE(scene.ok()) << scene.status();
    scene_ = std::move(*scene);
  }
  const contact::ContactMatrix& Step(const std::vector<double>& poses) {
    Stepper stepper(scene_.get());
    const absl::Status st = stepper.Step(poses, Grasp::Twists());
    EXPECT_TRUE(st.ok()) << st;
    return scene_->contact_matrix()->matrix();
  }
  // Central differences of cell (row, col) for twists of the links `moved` about `about`,
  // Richardson-extrapolated from steps h and h/2 (h = 1e-4 m or rad: truncation O((h/δ)⁴) ~ 1e-4
  // for overlaps δ ≥ 0.5 mm; the float32 cells round to ~6e-8·|F|, ~1e-3·|F| per metre or radian
  // after dividing by the step).
  Eigen::Matrix<double, 3, 6> Differences(int row, int col, const std::vector<int>& moved,
                                          const Eigen::Vector3d& about) {
    Eigen::Matrix<double, 3, 6> out;
    for (int k = 0; k < 6; ++k) {
      auto D = [&](double h) {
        Twist xi = Twist::Zero();
        xi[k] = h;
        const Eigen::Vector3d plus = Cell(Step(grasp_.Poses(moved, xi, about)), row, col);
        const Eigen::Vector3d minus = Cell(Step(grasp_.Poses(moved, -xi, about)), row, col);
        return Eigen::Vector3d((plus - minus) / (2 * h));
      };
      out.col(k) = (4 * D(5e-5) - D(1e-4)) / 3;
    }
    return out;
  }
  void ExpectCellGradient(int row, int col, const std::vector<int>& body, const std::vector<int>& partner) {
    const contact::ContactMatrix& M = Step(grasp_.Poses());
    ASSERT_GT(Cell(M, row, col).norm(), 0.01) << "the cell must carry a force";
    const Eigen::Matrix<double, 3, 6> gb = GradientBlock(M, row, col, 0), gp = GradientBlock(M, row, col, 1);
    const Eigen::Matrix<double, 3, 6> fb = Differences(row, col, body, grasp_.origins[body[0]]);
    const Eigen::Matrix<double, 3, 6> fp = Differences(row, col, partner, grasp_.origins[partner[0]]);
    // Translation (N/m) and rotation (N/rad) blocks, each relative to its size, plus the float32
    // rounding of the differences (10 × 1e-3·|F|). A wrong twist convention errs by the lever arm
    // (~1 cm) times the translation block: ~50 N/rad here.
    const double rounding = 1e-2 * Cell(M, row, col).norm();
    for (int blk = 0; blk < 6; blk += 3) {
      EXPECT_LE((gb.middleCols<3>(blk) - fb.middleCols<3>(blk)).norm(), 2e-3 * fb.middleCols<3>(blk).norm() + rounding)
          << "body block " << blk << "\n" << gb << "\n" << fb;
      EXPECT_LE((gp.middleCols<3>(blk) - fp.middleCols<3>(blk)).norm(), 2e-3 * fp.middleCols<3>(blk).norm() + rounding)
          << "partner block " << blk << "\n" << gp << "\n" << fp;
    }
  }
  Grasp grasp_;
  std::unique_ptr<Scene> scene_;
};

// Rows thumb (0), index (1); columns robot/thumb (0), robot/index (1), object/cup (2).
TEST_F(ContactMatrixGradientTest, RobotOnObjectMatchesDifferences) { ExpectCellGradient(0, 2, {0}, {2, 3}); }
TEST_F(ContactMatrixGradientTest, PartnerOfTwoLinksMovesAsOneBody) { ExpectCellGradient(1, 2, {1}, {2, 3}); }
TEST_F(ContactMatrixGradientTest, RobotOnRobotMatchesDifferences) { ExpectCellGradient(0, 1, {0}, {1}); }
TEST_F(ContactMatrixGradientTest, MirroredRobotCellMatchesDifferences) { ExpectCellGradient(1, 0, {1}, {0}); }

TEST_F(ContactMatrixGradientTest, ResetZeroesTheGradient) {
  const contact::ContactMatrix& M = Step(grasp_.Poses());
  ASSERT_GT(GradientBlock(M, 0, 2, 0).norm(), 0);
  ASSERT_TRUE(scene_->Reset(std::vector<int32_t>{0}).ok());
  for (int r = 0; r < M.rows(); ++r) {
    for (int c = 0; c < M.cols(); ++c) EXPECT_EQ(GradientBlock(M, r, c, 0).norm() + GradientBlock(M, r, c, 1).norm(), 0);
  }
}

TEST_F(ContactMatrixGradientTest, MemoryCountsTheGradient) {
  // 1 env × 2 rows × 3 columns × 3 × 4 bytes = 72 per matrix; the gradient 12 times that.
  EXPECT_EQ(scene_->contact_matrix()->matrix().memory_bytes(), 72u * 13);
}

TEST(ContactMatrixGradientErrors, NeedImplicitShapesAndEstimatedContacts) {
  geometry::MeshStore meshes;
  SceneSpec spec = Grasp().Spec();
  spec.entities[1].links[1].shapes = {BoxShape({0.01, 0.01, 0.01})};
  auto scene = Scene::Create(spec, meshes);
  ASSERT_EQ(scene.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(scene.status().message()), HasSubstr("contact_matrix.gradients"));
  EXPECT_THAT(std::string(scene.status().message()), HasSubstr("link 'cup/handle' has a box shape"));
  spec = Grasp().Spec();
  spec.contact_matrix.source = contact::ContactSource::kReported;
  scene = Scene::Create(spec, meshes);
  ASSERT_EQ(scene.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(scene.status().message()), HasSubstr("REPORTED"));
}

}  // namespace
}  // namespace taxel::scene
