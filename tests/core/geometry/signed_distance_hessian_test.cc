// SignedDistanceHessian against central differences of each shape's own normal, at random points
// inside and outside every shape kind (faces, edges, vertices, rims, caps).
#include "core/geometry/signed_distance_hessian.h"

#include <random>
#include <string>
#include <vector>

#include "core/geometry/implicit_shape.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_store.h"
#include "gtest/gtest.h"

namespace taxel::geometry {
namespace {

// Central difference of the normal, column j = ∂n/∂q_j.
Eigen::Matrix3d NormalDifference(const Shape& s, const Eigen::Vector3d& q, double h) {
  Eigen::Matrix3d d;
  for (int j = 0; j < 3; ++j) {
    const Eigen::Vector3d e = h * Eigen::Vector3d::Unit(j);
    d.col(j) = (s.SignedDistance(q + e).normal - s.SignedDistance(q - e).normal) / (2 * h);
  }
  return d;
}

struct Case {
  std::string name;
  Shape shape;
  Eigen::Vector3d sample_half;  // points drawn uniformly in [−half, half]³
};

std::vector<Case> Cases() {
  static MeshStore* store = new MeshStore();
  std::vector<Case> cases;
  cases.push_back({"sphere", *Shape::Sphere(0.05), Eigen::Vector3d::Constant(0.08)});
  cases.push_back({"box", *Shape::Box({0.04, 0.03, 0.02}), Eigen::Vector3d(0.07, 0.06, 0.05)});
  cases.push_back({"capsule", *Shape::Capsule(0.02, 0.03), Eigen::Vector3d(0.04, 0.04, 0.08)});
  cases.push_back({"cylinder", *Shape::Cylinder(0.03, 0.04), Eigen::Vector3d(0.06, 0.06, 0.07)});
  cases.push_back({"half_space", Shape::HalfSpace(), Eigen::Vector3d::Constant(0.05)});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> height(0, 0.01);
  std::vector<double> heights(6 * 7);
  for (double& z : heights) z = height(rng);
  cases.push_back({"heightfield", Shape::FromHeightfield(*Heightfield::Create(6, 7, 0.02, 0.025, heights)),
                   Eigen::Vector3d(0.05, 0.05, 0.02)});
  MeshData box = SubdividedBox({0.04, 0.03, 0.02}, 2);
  cases.push_back(
      {"mesh_box", Shape::FromMesh(store->Add(box.vertices, box.triangles)->mesh), Eigen::Vector3d(0.07, 0.06, 0.05)});
  MeshData ball = GeodesicSphere(0.05, 4);
  cases.push_back({"mesh_sphere", Shape::FromMesh(store->Add(ball.vertices, ball.triangles)->mesh),
                   Eigen::Vector3d::Constant(0.07)});
  cases.push_back(
      {"implicit_se4",
       Shape::FromImplicit(std::make_shared<ImplicitShape>(*ImplicitShape::Superellipsoid(4, {0.04, 0.03, 0.02}))),
       Eigen::Vector3d(0.06, 0.05, 0.04)});
  cases.push_back(
      {"implicit_cone",
       Shape::FromImplicit(std::make_shared<ImplicitShape>(*ImplicitShape::TruncatedCone(10, 0.03, 0.015, 0.03, 0.03))),
       Eigen::Vector3d(0.05, 0.05, 0.05)});
  return cases;
}

class SignedDistanceHessianTest : public ::testing::TestWithParam<Case> {};

// Where a 2h stencil and an h stencil agree the normal is smooth across the stencil (no medial
// axis or feature change inside it); there the analytic Hessian must match the h stencil to
// 1e-6 of max(‖H‖, 1/(10 cm)) (central differences: O(h²·|∂³n|) ≈ 1e-10 at h = 1e-6 m).
TEST_P(SignedDistanceHessianTest, MatchesCentralDifferencesOfTheNormal) {
  const Case& c = GetParam();
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  int checked = 0, curved = 0;
  const int kSamples = 400;
  for (int i = 0; i < kSamples; ++i) {
    const Eigen::Vector3d q(u(rng) * c.sample_half.x(), u(rng) * c.sample_half.y(), u(rng) * c.sample_half.z());
    const SignedDistanceResult r = c.shape.SignedDistance(q);
    if (std::abs(r.distance) < 1e-4) continue;  // on the surface the normal is a feature's
    const Eigen::Matrix3d fd = NormalDifference(c.shape, q, 1e-6);
    const Eigen::Matrix3d fd2 = NormalDifference(c.shape, q, 2e-6);
    const double scale = std::max(fd.norm(), 10.0);
    if ((fd - fd2).norm() > 1e-4 * scale) continue;  // the stencil crosses a non-smooth set
    const Eigen::Matrix3d H = SignedDistanceHessian(c.shape, q, r);
    ASSERT_LE((H - fd).norm(), 1e-6 * scale)
        << c.name << " at q = " << q.transpose() << " sd " << r.distance << "\nH =\n"
        << H << "\nfd =\n"
        << fd;
    EXPECT_LE((H - H.transpose()).norm(), 1e-9 * scale);
    ++checked;
    curved += fd.norm() > 1e-3;
  }
  // Most samples are away from non-smooth sets; curved samples exist for every shape with any
  // (the half-space and the heightfield's faces and walls are flat, but its edges are not).
  EXPECT_GE(checked, kSamples * 6 / 10) << c.name;
  if (c.name != "half_space") {
    EXPECT_GT(curved, 10) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, SignedDistanceHessianTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace taxel::geometry
