// Sensors with sdf_backend GRID (core/sensors/sensor_spec.h, core/scene/scene.h): readings
// against the same sensor on the exact backend within the error the grid reports, grids built
// once per mesh and shared, widened for a larger probe, refused when they do not fit.
//
//        mesh ball (geodesic sphere, r = 5 cm), pressed p into the pad in env e
//             .---.
//    ________/_____\________  z = 0.005  top face of the pad: 16 × 16 probes, pitch 4 mm, R = 2 mm
//   |        pad             |
//   |________________________| z = −0.005
#include <cmath>
#include <memory>
#include <vector>

#include "core/common/field_error.h"
#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using sensors::Branch;
using sensors::SdfBackend;
using sensors::SensorKind;
using sensors::SensorSpec;
using ::testing::HasSubstr;
using namespace taxel::testing;  // NOLINT

constexpr double kPadHalfZ = 0.005;
constexpr double kProbeR = 0.002;
constexpr double kBallR = 0.05;
constexpr int kEnvs = 8;

class GridBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mesh_id_ = AddMeshBall(meshes_, kBallR);
    ASSERT_FALSE(mesh_id_.empty());
  }
  SceneSpec Spec(const Eigen::Vector3d& scale = Eigen::Vector3d::Ones()) const {
    return PadAndMeshBallSpec(kEnvs, mesh_id_, kPadHalfZ, scale);
  }
  static SensorSpec Sensor(const std::string& name, SensorKind kind, SdfBackend backend, double radius = kProbeR) {
    SensorSpec s = GridSensor(name, kind, "pad", 16, 0.004, kPadHalfZ, radius);
    s.sdf_backend = backend;
    return s;
  }
  // Env e: the ball pressed 0.25·e mm into the pad, shifted sideways so that probes see the
  // surface at many angles; velocities from finite differences between two steps.
  static void StepBoth(Scene& scene, Executor& executor) {
    for (int k = 0; k < 2; ++k) {
      std::vector<double> poses;
      for (int e = 0; e < kEnvs; ++e) {
        const double p = 2.5e-4 * e + 1e-5 * k;
        const auto pe =
            PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(1.3e-3 * e, -0.7e-3 * e, kPadHalfZ + kBallR - p)});
        poses.insert(poses.end(), pe.begin(), pe.end());
      }
      StepInput in;
      in.poses = poses;
      in.quat_order = QuatOrder::kXyzw;
      in.dt = 0.01;
      ASSERT_TRUE(scene.Step(in, executor).ok());
    }
  }
  geometry::MeshStore meshes_;
  std::string mesh_id_;
};

TEST_F(GridBackendTest, GridReadingsMatchExactOnesWithinTheReportedError) {
  ASSERT_EQ(meshes_.grid(mesh_id_), nullptr);
  auto scene = Scene::Create(Spec(), meshes_);
  ASSERT_TRUE(scene.ok()) << scene.status();
  Scene& s = **scene;
  for (auto [name, kind, backend] : {std::make_tuple("depth_exact", SensorKind::kContactDepthProbe, SdfBackend::kExact),
                                     std::make_tuple("depth_grid", SensorKind::kContactDepthProbe, SdfBackend::kGrid),
                                     std::make_tuple("kin_exact", SensorKind::kKinematicTaxel, SdfBackend::kExact),
                                     std::make_tuple("kin_grid", SensorKind::kKinematicTaxel, SdfBackend::kGrid)}) {
    auto id = s.AddSensor(Sensor(name, kind, backend), "sensor", MemoryBudget::Unlimited(), &meshes_);
    ASSERT_TRUE(id.ok()) << id.status();
  }
  // Built lazily by the first GRID sensor, with a band covering its probes, and shared after.
  const auto grid = meshes_.grid(mesh_id_);
  ASSERT_NE(grid, nullptr);
  EXPECT_GE(grid->band(), kProbeR);
  const double bound = grid->stats().max_error * 1.05;
  EXPECT_LE(grid->stats().max_error, geometry::MeshStore::kDefaultGridMaxError);
  server::ThreadPool pool(2);
  StepBoth(s, pool);
  const auto& de = s.FindSensor("depth_exact")->outputs(Branch::kGroundTruth);
  const auto& dg = s.FindSensor("depth_grid")->outputs(Branch::kGroundTruth);
  int touching = 0;
  for (size_t k = 0; k < de.depth.size(); ++k) {
    // Depth R − sd: its error is the grid's (plus the float rounding of the output).
    EXPECT_NEAR(dg.depth[k], de.depth[k], bound + 1e-8) << k;
    if (de.depth[k] > 1e-3) {  // well inside: the same partner, and normals that agree
      ++touching;
      EXPECT_EQ(dg.partner[k], de.partner[k]);
      const Eigen::Vector3d ne(de.normal[3 * k], de.normal[3 * k + 1], de.normal[3 * k + 2]);
      const Eigen::Vector3d ng(dg.normal[3 * k], dg.normal[3 * k + 1], dg.normal[3 * k + 2]);
      EXPECT_GT(ne.dot(ng), 0.999) << k;
    }
  }
  EXPECT_GT(touching, 100);
  // KinematicTaxel, default law F = k_n·s·n + c_n·s·v_n·n − k_t·v_t (k_n 1000 N/m, c_n 1, k_t 1):
  // the ball moves 1e-5 m in 0.01 s, |v| ≤ 1e-3 m/s, so |F| = 1000·s to within 2e-3 N and a depth
  // error δ changes |F| by at most 1000·δ + 2·2e-3 N.
  const auto& ke = s.FindSensor("kin_exact")->outputs(Branch::kGroundTruth);
  const auto& kg = s.FindSensor("kin_grid")->outputs(Branch::kGroundTruth);
  for (size_t k = 0; k < ke.force.size(); k += 3) {
    const double fe = std::hypot(ke.force[k], ke.force[k + 1], ke.force[k + 2]);
    const double fg = std::hypot(kg.force[k], kg.force[k + 1], kg.force[k + 2]);
    EXPECT_NEAR(fg, fe, 1000 * bound + 4e-3) << k / 3;
  }
}

TEST_F(GridBackendTest, UploadedGridIsReusedAndALargerProbeWidensIt) {
  auto uploaded = meshes_.AddGrid(mesh_id_, geometry::SdfGridOptions{1e-4, 3e-3}, MemoryBudget::Unlimited());
  ASSERT_TRUE(uploaded.ok()) << uploaded.status();
  auto scene = Scene::Create(Spec(), meshes_);
  ASSERT_TRUE(scene.ok());
  Scene& s = **scene;
  ASSERT_TRUE(s.AddSensor(Sensor("a", SensorKind::kContactDepthProbe, SdfBackend::kGrid), "sensor",
                          MemoryBudget::Unlimited(), &meshes_)
                  .ok());
  EXPECT_EQ(meshes_.grid(mesh_id_), *uploaded);  // band 3 mm covers R = 2 mm: no new grid
  // R = 4 mm needs a wider band: a new grid, with the error asked for at upload.
  ASSERT_TRUE(s.AddSensor(Sensor("b", SensorKind::kContactDepthProbe, SdfBackend::kGrid, 4e-3), "sensor",
                          MemoryBudget::Unlimited(), &meshes_)
                  .ok());
  const auto wide = meshes_.grid(mesh_id_);
  EXPECT_NE(wide, *uploaded);
  EXPECT_GE(wide->band(), 4e-3);
  EXPECT_EQ(wide->stats().requested_max_error, 1e-4);
  // Both sensors now query the widened grid: where the smaller probe touches, depth_b = depth_a + 2 mm
  // up to the float rounding of the outputs.
  InlineExecutor inline_executor;
  StepBoth(s, inline_executor);
  const auto& a = s.FindSensor("a")->outputs(Branch::kGroundTruth);
  const auto& b = s.FindSensor("b")->outputs(Branch::kGroundTruth);
  for (size_t k = 0; k < a.depth.size(); ++k) {
    if (a.depth[k] > 0) {
      EXPECT_NEAR(b.depth[k], a.depth[k] + 2e-3, 1e-8) << k;
    }
  }
}

TEST_F(GridBackendTest, BitIdenticalAcrossThreadCounts) {
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 5}) {
    SceneSpec spec = Spec();
    spec.sensors.push_back(Sensor("kin", SensorKind::kKinematicTaxel, SdfBackend::kGrid));
    auto scene = Scene::Create(spec, meshes_);
    ASSERT_TRUE(scene.ok()) << scene.status();
    server::ThreadPool pool(threads);
    StepBoth(**scene, pool);
    results.push_back((*scene)->FindSensor("kin")->outputs(Branch::kGroundTruth).force);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST_F(GridBackendTest, ScaledMeshesKeepTheExactPath) {
  SceneSpec spec = Spec(Eigen::Vector3d(1.0, 1.0, 0.8));
  spec.sensors.push_back(Sensor("exact", SensorKind::kContactDepthProbe, SdfBackend::kExact));
  spec.sensors.push_back(Sensor("grid", SensorKind::kContactDepthProbe, SdfBackend::kGrid));
  auto scene = Scene::Create(spec, meshes_);
  ASSERT_TRUE(scene.ok()) << scene.status();
  EXPECT_EQ(meshes_.grid(mesh_id_), nullptr);  // nothing to build: the only mesh is scaled
  InlineExecutor inline_executor;
  StepBoth(**scene, inline_executor);
  EXPECT_EQ((*scene)->FindSensor("exact")->outputs(Branch::kGroundTruth).depth,
            (*scene)->FindSensor("grid")->outputs(Branch::kGroundTruth).depth);
}

TEST_F(GridBackendTest, RefusalsNameTheFieldAndChangeNothing) {
  auto scene = Scene::Create(Spec(), meshes_);
  ASSERT_TRUE(scene.ok());
  Scene& s = **scene;
  // The sensor's buffers fit in 1 MB, a grid of this mesh (about 3 MB) does not.
  FixedMemoryBudget small(1e6);
  auto id = s.AddSensor(Sensor("g", SensorKind::kContactDepthProbe, SdfBackend::kGrid), "sensor", small, &meshes_);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(FieldOf(id.status()), "sensor.sdf_backend");
  EXPECT_THAT(id.status().message(), HasSubstr("signed-distance grid"));
  EXPECT_EQ(s.FindSensor("g"), nullptr);
  EXPECT_EQ(meshes_.grid(mesh_id_), nullptr);
  // Without a mesh store there is nowhere to get a grid from.
  id = s.AddSensor(Sensor("g", SensorKind::kContactDepthProbe, SdfBackend::kGrid));
  EXPECT_EQ(id.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FieldOf(id.status()), "sensor.sdf_backend");
  // A ProximityTaxel reads point clouds, not signed distances.
  SensorSpec prox = Sensor("p", SensorKind::kProximityTaxel, SdfBackend::kGrid);
  prox.track_links = {"ball/body"};
  id = s.AddSensor(prox, "sensor", MemoryBudget::Unlimited(), &meshes_);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FieldOf(id.status()), "sensor.sdf_backend");
  EXPECT_TRUE(s.sensors().empty());
}

}  // namespace
}  // namespace taxel::scene
