// The ESTIMATED contact matrix with sdf_backend GRID (core/contact/contact_matrix.h,
// core/scene/contact_estimation.h): forces against the EXACT backend within what the grid's
// measured error implies, grids taken from the mesh store (reused or built once), no contact
// beyond the band, bit-identical across thread counts, scaled meshes exact, refusals.
//
//        mesh ball (geodesic sphere, R = 5 cm, 20480 triangles), pressed δ_e into the pad in env e
//             .---.
//    ________/_____\________  z = 0.005  top face of the pad (a box primitive, 8 × 8 × 1 cm)
//   |        pad             |
//   |________________________| z = −0.005
//
// Box – mesh has no closed form: both surfaces are sampled and the two one-way integrals averaged
// (pair_contact.h). The ball's samples are tested against the box (exact on either backend); the
// pad's samples against the ball — its mesh on EXACT, its grid on GRID. Only that half changes.
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "Eigen/Geometry"
#include "core/common/field_error.h"
#include "core/scene/contact_estimation.h"
#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/core/contact/contact_matrix_test_util.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using geometry::SdfBackend;
using ::testing::HasSubstr;
using namespace taxel::testing;              // NOLINT
using namespace taxel::scene::contact_test;  // NOLINT

constexpr double kPadHalfZ = 0.005;
constexpr double kBallR = 0.05;
constexpr double kSpacing = 1e-3;  // surface sampling (m): ~600 pad samples under a 2 mm deep ball
// Env e: the ball's lowest point δ_e below the pad's top face (negative: above it), shifted
// sideways and turned so that the pad's samples meet the ball's facets at many places.
constexpr double kDepths[] = {-3e-4, 5e-4, 1e-3, 1.5e-3, 2e-3, 3e-3};
constexpr int kEnvs = sizeof(kDepths) / sizeof(kDepths[0]);

class ContactMatrixGridTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mesh_id_ = AddMeshBall(meshes_, kBallR);
    ASSERT_FALSE(mesh_id_.empty());
  }
  SceneSpec Spec(SdfBackend backend, const Eigen::Vector3d& scale = Eigen::Vector3d::Ones()) const {
    SceneSpec spec = PadAndMeshBallSpec(kEnvs, mesh_id_, kPadHalfZ, scale);
    spec.contact_matrix.bodies = {"pad"};
    spec.contact_matrix.partners = {"object/*"};
    spec.contact_matrix.law = Law();
    spec.contact_matrix.sample_spacing = kSpacing;
    spec.contact_matrix.sdf_backend = backend;
    return spec;
  }
  // One step with the poses of kDepths; the (env, pad, ball) cells of the matrix (N, world).
  static std::vector<Eigen::Vector3d> Forces(Scene& scene, Executor& executor) {
    std::vector<double> poses;
    for (int e = 0; e < kEnvs; ++e) {
      AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero(), &poses);
      const Eigen::Matrix3d R = Eigen::AngleAxisd(0.37 * e, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
      AppendPose(R, Eigen::Vector3d(0.9e-3 * e, -0.6e-3 * e, kPadHalfZ + kBallR - kDepths[e]), &poses);
    }
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    EXPECT_TRUE(scene.Step(in, executor).ok());
    std::vector<Eigen::Vector3d> out;
    for (int e = 0; e < kEnvs; ++e) out.push_back(scene.contact_matrix()->matrix().Normal(e, 0, 0).cast<double>());
    return out;
  }
  std::vector<Eigen::Vector3d> Run(SdfBackend backend, int threads = 2) {
    auto scene = Scene::Create(Spec(backend), meshes_);
    EXPECT_TRUE(scene.ok()) << scene.status();
    if (!scene.ok()) return {};
    server::ThreadPool pool(threads);
    return Forces(**scene, pool);
  }
  geometry::MeshStore meshes_;
  std::string mesh_id_;
};

// The largest |n_grid − n_exact| over 2e5 seeded points of the band under the ball's bottom cap
// (mesh frame, up to 3.5 mm deep; the ball's orientation does not matter, it is a near-sphere):
// the normal error a grid has where the pad's samples fall, measured as the grid measures its
// distance error.
double MeasuredNormalError(const geometry::MeshSdfGrid& grid) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1), w(0, 1);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = 0.02 * u(rng), y = 0.02 * u(rng);
    const Eigen::Vector3d p(x, y, -std::sqrt(kBallR * kBallR - x * x - y * y) + 3.5e-3 * w(rng));
    const geometry::SignedDistanceResult g = grid.Query(p, 0.0), e = grid.mesh().Query(p, 0.0);
    if (e.distance < 0 && g.found()) worst = std::max(worst, (g.normal - e.normal).norm());
  }
  return worst;
}

// Bound of |F_GRID − F_EXACT| in env e. With the pad's samples k (area a_k, exact depth δ_k^e and
// normal n_k^e into the ball; δ_k^g, n_k^g from the grid) and P(u) = k_p·max(0, u)^1.5:
//
//   F_GRID − F_EXACT = ½ Σ_k a_k [P(δ_k^g)·n_k^g − P(δ_k^e)·n_k^e]
//                    = ½ Σ_k a_k [P(δ_k^g) − P(δ_k^e)]·n_k^g + ½ Σ_k a_k P(δ_k^e)·(n_k^g − n_k^e)
//
//  - depth: |δ^g − δ^e| ≤ ε (the grid's measured max_error, × 1.05 as for the sensors), and P is
//    Lipschitz on [0, δ + ε] with constant P'(δ + ε) = 1.5·k_p·√(δ + ε). Only samples with
//    δ^e > −ε count: the mesh is inscribed in the sphere of radius R, so they lie in the disc of
//    radius ρ_ε = √(2R(δ + ε)) where that sphere is deeper than −ε, grown by one spacing s for the
//    patches straddling its rim: area A_ε = π(ρ_ε + s)². First term ≤ ½·ε·P'(δ + ε)·A_ε.
//  - normals: |n^g − n^e| ≤ θ (MeasuredNormalError × 1.05), P(δ^e) ≤ P(δ) (no point of the pad is
//    deeper than δ in the inscribed mesh). Second term ≤ ½·θ·P(δ)·A_ε.
//
// Numbers for the default grid (ε ≈ 8e-6 m, θ ≈ 0.04) at δ = 2 mm: ρ_ε = 14.2 mm, A_ε = 7.2e-4 m²,
// depth 0.5·8e-6·6.7e6·7.2e-4 = 0.019 N, normals 0.5·0.04·8.9e3·7.2e-4 = 0.13 N, of 2.2 N.
double ForceBound(double depth, double eps, double theta) {
  if (depth + eps <= 0) return 0;
  const double k = Law().stiffness;
  const double rho = std::sqrt(2 * kBallR * (depth + eps));
  const double area = kPi * (rho + kSpacing) * (rho + kSpacing);
  return 0.5 * eps * 1.5 * k * std::sqrt(depth + eps) * area + 0.5 * theta * P(std::max(depth, 0.0)) * area;
}

void ExpectWithinGridBound(const std::vector<Eigen::Vector3d>& exact, const std::vector<Eigen::Vector3d>& grid_forces,
                           const geometry::MeshSdfGrid& grid) {
  ASSERT_EQ(exact.size(), static_cast<size_t>(kEnvs));
  ASSERT_EQ(grid_forces.size(), static_cast<size_t>(kEnvs));
  const double eps = 1.05 * grid.stats().max_error, theta = 1.05 * MeasuredNormalError(grid);
  int differ = 0;
  for (int e = 0; e < kEnvs; ++e) {
    SCOPED_TRACE(::testing::Message() << "env " << e << ", depth " << kDepths[e]);
    // The ball pushes the pad down (−z) by about π(2R − δ)·Q(δ) (a sphere on a large box,
    // pair_contact.h), within the sampling and faceting error (a few % for the shallow envs).
    if (kDepths[e] > 0) {
      const double expected = kPi * (2 * kBallR - kDepths[e]) * Q(kDepths[e]);
      EXPECT_NEAR(-exact[e].z(), expected, 0.1 * expected);
    }
    EXPECT_LE((grid_forces[e] - exact[e]).norm(), ForceBound(kDepths[e], eps, theta));
    differ += grid_forces[e] != exact[e];
  }
  EXPECT_EQ(exact[0], Eigen::Vector3d::Zero());  // 0.3 mm above the pad: no contact on either
  EXPECT_EQ(grid_forces[0], Eigen::Vector3d::Zero());
  EXPECT_GE(differ, kEnvs - 1);  // the grid is read: its interpolated answers are not the mesh's
}

TEST_F(ContactMatrixGridTest, ForcesMatchTheExactBackendWithinTheGridError) {
  ASSERT_EQ(meshes_.grid(mesh_id_), nullptr);
  const auto exact = Run(SdfBackend::kExact);
  EXPECT_EQ(meshes_.grid(mesh_id_), nullptr);  // EXACT builds no grid
  const auto grid_forces = Run(SdfBackend::kGrid);
  const auto grid = meshes_.grid(mesh_id_);  // built on first use, and kept for later users
  ASSERT_NE(grid, nullptr);
  EXPECT_GE(grid->band(), geometry::MeshLookup::kMinGridBand);
  EXPECT_LE(grid->stats().max_error, geometry::MeshLookup::kDefaultGridMaxError);
  ExpectWithinGridBound(exact, grid_forces, *grid);
  // The deepest env (3 mm) lies partly deeper than the band: those samples are answered exactly.
  EXPECT_LT(grid->band(), kDepths[kEnvs - 1]);
}

// A coarse grid uploaded with the mesh (cells of millimetres, band 2 mm) is used as it is, and
// its larger error still bounds the forces.
TEST_F(ContactMatrixGridTest, UploadedGridIsReusedAndItsErrorBoundsTheForces) {
  auto uploaded = meshes_.AddGrid(mesh_id_, geometry::SdfGridOptions{5e-4, 2e-3}, MemoryBudget::Unlimited());
  ASSERT_TRUE(uploaded.ok()) << uploaded.status();
  const auto exact = Run(SdfBackend::kExact);
  const auto grid_forces = Run(SdfBackend::kGrid);
  EXPECT_EQ(meshes_.grid(mesh_id_), *uploaded);
  EXPECT_GT((*uploaded)->stats().max_error, 1e-5);  // coarser than the default grid's
  ExpectWithinGridBound(exact, grid_forces, **uploaded);
}

TEST_F(ContactMatrixGridTest, BitIdenticalAcrossThreadCounts) {
  const auto one = Run(SdfBackend::kGrid, 1);
  EXPECT_EQ(Run(SdfBackend::kGrid, 2), one);
  EXPECT_EQ(Run(SdfBackend::kGrid, 5), one);
}

TEST_F(ContactMatrixGridTest, ScaledMeshesKeepTheExactPath) {
  const Eigen::Vector3d scale(1.0, 1.0, 0.8);
  auto exact = Scene::Create(Spec(SdfBackend::kExact, scale), meshes_);
  auto grid = Scene::Create(Spec(SdfBackend::kGrid, scale), meshes_);
  ASSERT_TRUE(exact.ok() && grid.ok());
  EXPECT_EQ(meshes_.grid(mesh_id_), nullptr);  // nothing to build: the only mesh is scaled
  InlineExecutor inline_executor;
  EXPECT_EQ(Forces(**grid, inline_executor), Forces(**exact, inline_executor));
}

TEST_F(ContactMatrixGridTest, RefusalsNameTheField) {
  // A budget that holds the scene on EXACT (its samples, the matrix) with 1 MB to spare; the grid
  // takes more: its band shell alone is 4πR²·2·band / h³ ≈ 5e5 float nodes (2 MB) at h = 0.5 mm.
  FixedMemoryBudget measure(1e12);
  ASSERT_TRUE(Scene::Create(Spec(SdfBackend::kExact), meshes_, measure).ok());
  FixedMemoryBudget small(measure.reserved() + 1e6);
  auto scene = Scene::Create(Spec(SdfBackend::kGrid), meshes_, small);
  EXPECT_EQ(scene.status().code(), absl::StatusCode::kResourceExhausted) << scene.status();
  EXPECT_EQ(FieldOf(scene.status()), "contact_matrix.sdf_backend");
  EXPECT_THAT(scene.status().message(), HasSubstr("signed-distance grid"));
  EXPECT_EQ(meshes_.grid(mesh_id_), nullptr);
  // Without a mesh store there is nowhere to get a grid from.
  SceneSpec spec = Spec(SdfBackend::kGrid);
  auto model = SceneModel::Build(spec, meshes_, MemoryBudget::Unlimited());
  ASSERT_TRUE(model.ok());
  auto est = ContactEstimation::Create(spec.contact_matrix, **model, "contact_matrix");
  EXPECT_EQ(est.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FieldOf(est.status()), "contact_matrix.sdf_backend");
  // REPORTED contacts come from the simulator: no signed distance to read.
  spec.contact_matrix.source = contact::ContactSource::kReported;
  scene = Scene::Create(spec, meshes_);
  EXPECT_EQ(scene.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FieldOf(scene.status()), "contact_matrix.sdf_backend");
  EXPECT_THAT(scene.status().message(), HasSubstr("REPORTED"));
}

}  // namespace
}  // namespace taxel::scene
