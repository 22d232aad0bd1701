// Implicit shapes in a scene: a contact probe against a superellipsoid, the ESTIMATED contact matrix
// of an implicit shape on a half-space and of implicit pairs (with their warm starts per env), and
// creation errors, all against closed forms or cold solves.
#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "Eigen/Geometry"
#include "core/geometry/implicit_pair.h"
#include "core/geometry/implicit_shape.h"
#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/core/contact/contact_matrix_test_util.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using sensors::Branch;
using sensors::SensorKind;
using sensors::SensorSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace taxel::testing;              // NOLINT
using namespace taxel::scene::contact_test;  // NOLINT

constexpr double kPadHalfZ = 0.005;
constexpr double kProbeR = 0.002;

// The pad (a box, half-height kPadHalfZ) with a ContactDepthProbe "depth" of rows × rows probes
// (R = kProbeR, pitch `pitch`) on its top face, and an object "soap" of one SE(n, semi).
SceneSpec PadUnderSuperellipsoid(int n, const Eigen::Vector3d& semi, int rows, double pitch) {
  SceneSpec spec;
  spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, kPadHalfZ})})}));
  spec.entities.push_back(Entity("soap", EntityKind::kObject, {Link("body", {SuperellipsoidShape(n, semi)})}));
  SensorSpec sensor;
  sensor.name = "depth";
  sensor.kind = SensorKind::kContactDepthProbe;
  sensor.link = "pad";
  sensor.probe_local_pos = PlanarGrid(rows, rows, pitch, kPadHalfZ);
  sensor.grid_rows = sensor.grid_cols = rows;
  sensor.probe_radius = {kProbeR};
  spec.sensors.push_back(sensor);
  return spec;
}

// A 3×3 grid of probes (pitch 1 cm, R = 2 mm) on the top face of a box pad, and an implicit
// superellipsoid SE(n; a = 4 cm, b = 3 cm, c = 2 cm) whose bottom (0, 0, −c) is `gap` above the
// centre probe's centre o = (0, 0, 0.005):
//
//            .-''''''-.    SE, centre (0, 0, 0.005 + gap + c)
//           (          )
//            '-.____.-'    bottom at z = 0.005 + gap
//    _______o___o___o______  z = 0.005  probe centres
//   |        pad           |
//
// Along the axis the foot point is exactly the bottom (symmetry; the outside problem is convex),
// so the centre probe reads depth R − gap; SE(1) is the ellipsoid up to ε = 1e-12.
void ProbeAgainstSuperellipsoid(int n) {
  SCOPED_TRACE(::testing::Message() << "n = " << n);
  const Eigen::Vector3d semi(0.04, 0.03, 0.02);
  const SceneSpec spec = PadUnderSuperellipsoid(n, semi, 3, 0.01);
  geometry::MeshStore meshes;
  auto scene = Scene::Create(spec, meshes);
  ASSERT_TRUE(scene.ok()) << scene.status();
  InlineExecutor pool;
  const double eps = geometry::SuperquadricEpsilon(n);
  // The SE's bottom: (z²/c² + ε)ⁿ + 2εⁿ + 1e-16 = 1.
  const double bottom = semi.z() * std::sqrt(std::pow(1 - 2 * std::pow(eps, n) - 1e-16, 1.0 / n) - eps);
  for (double gap : {0.0015, 0.0005, -0.001}) {
    const Eigen::Vector3d c(0, 0, kPadHalfZ + gap + bottom);
    std::vector<double> poses = PosesXyzw({Eigen::Vector3d::Zero(), c});
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE((*scene)->Step(in, pool).ok());
    const auto& out = (*scene)->FindSensor("depth")->outputs(Branch::kGroundTruth);
    EXPECT_NEAR(out.depth[4], kProbeR - gap, 1e-7) << "gap " << gap;
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(out.normal[12 + a], a == 2 ? -1 : 0, 1e-6);  // out of the SE
    EXPECT_EQ(out.partner[4], 1);
  }
}

TEST(SceneImplicitTest, ContactProbeReadsTheClosedFormDepthOfAnEllipsoid) { ProbeAgainstSuperellipsoid(1); }
TEST(SceneImplicitTest, ContactProbeReadsTheClosedFormDepthOfASuperellipsoid) { ProbeAgainstSuperellipsoid(4); }

// The readings of `kind` over the 3×3 pad with a ball (R = 5 cm) pressed 1 mm into the pad's top
// face, the ball given by `ball`.
sensors::SensorOutputs ReadingsAgainstBall(SensorKind kind, const ShapeSpec& ball) {
  SceneSpec spec;
  spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, kPadHalfZ})})}));
  spec.entities.push_back(Entity("ball", EntityKind::kObject, {Link("body", {ball})}));
  SensorSpec sensor;
  sensor.name = "s";
  sensor.kind = kind;
  sensor.link = "pad";
  sensor.probe_local_pos = PlanarGrid(3, 3, 0.01, kPadHalfZ);
  sensor.grid_rows = sensor.grid_cols = 3;
  sensor.probe_radius = {kProbeR};
  if (kind == SensorKind::kElastomerTaxel || kind == SensorKind::kProximityTaxel) sensor.track_links = {"ball/body"};
  sensor.n_sample_points = 20000;  // spacing ~1.25 mm on the ball: several points per probe sphere
  spec.sensors.push_back(sensor);
  geometry::MeshStore meshes;
  auto scene = Scene::Create(spec, meshes);
  EXPECT_TRUE(scene.ok()) << scene.status();
  if (!scene.ok()) return {};
  InlineExecutor pool;
  std::vector<double> poses = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0.002, 0, kPadHalfZ + 0.05 - 0.001)});
  StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  EXPECT_TRUE((*scene)->Step(in, pool).ok());
  return (*scene)->FindSensor("s")->outputs(Branch::kGroundTruth);
}

TEST(SceneImplicitTest, EverySensorReadsAnImplicitBallLikeThePrimitiveBall) {
  // The implicit sphere and the primitive sphere (its own closed form) have the same exact
  // distances, so the distance-based sensors read the same to float precision (the elastomer's
  // shear tracks surface points too, but they only move with the ball: zero on a first step); the
  // proximity taxel samples each surface with its own area-uniform random points, so its total
  // force agrees to the sampling noise.
  for (SensorKind kind : {SensorKind::kContactDepthProbe, SensorKind::kKinematicTaxel, SensorKind::kElastomerTaxel,
                          SensorKind::kProximityTaxel}) {
    SCOPED_TRACE(sensors::SensorKindName(kind));
    const sensors::SensorOutputs implicit = ReadingsAgainstBall(kind, ImplicitSphereShape(0.05));
    const sensors::SensorOutputs primitive = ReadingsAgainstBall(kind, SphereShape(0.05));
    if (kind == SensorKind::kProximityTaxel) {
      // Sum of the probes' normal forces (z): each surface's own random points, so to the noise.
      double a = 0, b = 0;
      for (size_t k = 0; k < implicit.force.size(); k += 3) a += implicit.force[k + 2], b += primitive.force[k + 2];
      EXPECT_NE(b, 0);
      EXPECT_NEAR(a, b, 0.2 * std::abs(b));
      continue;
    }
    for (const auto& [a, b] : {std::pair{&implicit.depth, &primitive.depth},
                               {&implicit.force, &primitive.force},
                               {&implicit.displacement, &primitive.displacement}}) {
      ASSERT_EQ(a->size(), b->size());
      double scale = 0;
      for (float v : *b) scale = std::max(scale, static_cast<double>(std::abs(v)));
      for (size_t i = 0; i < a->size(); ++i) EXPECT_NEAR((*a)[i], (*b)[i], 1e-5 * scale + 1e-9) << i;
    }
  }
}

TEST(SceneImplicitTest, EstimatedMatrixOfAnImplicitBallOnTerrainMatchesArchimedes) {
  // An implicit sphere (R = 5 cm) δ deep in a half-space: the sampled method against the closed
  // form 2πR·Q(δ) of the primitive sphere (Archimedes' zones), within the sampling error (3 %).
  const double R = 0.05;
  SceneSpec spec;
  spec.entities.push_back(Entity("bot", EntityKind::kRobot, {Link("ball", {ImplicitSphereShape(R)})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  auto scene = WithMatrix(spec, {"all"}, {"terrain"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  ASSERT_THAT(M.row_names(), ElementsAre("ball"));
  for (double depth : {1e-3, 2e-3}) {
    std::vector<double> poses;
    AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, R - depth), &poses);
    server::ThreadPool pool(1);
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE((*scene)->Step(in, pool).ok());
    const double expected = 2 * kPi * R * Q(depth);
    EXPECT_NEAR(M.Normal(0, 0, 0).z(), expected, 0.03 * expected) << depth;
    EXPECT_NEAR(M.Normal(0, 0, 0).head<2>().norm(), 0, 0.01 * expected);
  }
}

TEST(SceneImplicitTest, EstimatedMatrixOfTwoImplicitBallsUsesThePairSolve) {
  // Implicit spheres R_a = 5 cm (robot) and R_b = 3 cm (object), centres R_a + R_b − δ apart along
  // u: the implicit pair method (pair_contact.h) gives F = 2π·R_e·Q(δ), R_e = R_a R_b/(R_a + R_b),
  // on the robot along −u (exact for spheres: α, the witness points and the curvatures are).
  const double ra = 0.05, rb = 0.03, r_eff = ra * rb / (ra + rb);
  SceneSpec spec;
  spec.entities.push_back(Entity("bot", EntityKind::kRobot, {Link("tip", {ImplicitSphereShape(ra)})}));
  spec.entities.push_back(Entity("obj", EntityKind::kObject, {Link("ball", {ImplicitSphereShape(rb)})}));
  auto scene = WithMatrix(spec, {"all"}, {"object/*"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  const Eigen::Vector3d u = Eigen::Vector3d(1, 2, 2) / 3.0;
  for (double depth : {5e-4, 1e-3}) {
    std::vector<double> poses;
    AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0.1, 0, 0.2), &poses);
    AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0.1, 0, 0.2) + (ra + rb - depth) * u, &poses);
    server::ThreadPool pool(1);
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE((*scene)->Step(in, pool).ok());
    const Eigen::Vector3d expected = -2 * kPi * r_eff * Q(depth) * u;
    // float32 cells.
    EXPECT_NEAR((M.Normal(0, 0, 0).cast<double>() - expected).norm(), 0, 1e-6 * expected.norm()) << depth;
  }
}

// A 6×6 ContactDepthProbe grid (pitch 4 mm) under SE(4) (semi-axes 4, 3, 2 cm) in 3 envs, the
// SE sliding and tilting a little each step (as in a simulation, 0.2 mm and 0.01 rad per step). With
// implicit shapes in the scene each probe keeps its last foot point as the next step's start.
struct SlidingSe4 {
  SceneSpec spec;
  static constexpr int kEnvs = 3;
  SlidingSe4() {
    spec = PadUnderSuperellipsoid(4, {0.04, 0.03, 0.02}, 6, 0.004);
    spec.num_envs = kEnvs;
  }
  // The poses of step t (env e: the SE's bottom 1 mm below the probe centres, slid and tilted).
  static std::vector<double> Poses(int t) {
    std::vector<double> poses;
    for (int e = 0; e < kEnvs; ++e) {
      AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero(), &poses);
      const Eigen::Matrix3d R = Eigen::AngleAxisd(0.01 * t + 0.1 * e, Eigen::Vector3d(1, 1, 0).normalized()).matrix();
      AppendPose(R, Eigen::Vector3d(2e-4 * t, 1e-3 * e, kPadHalfZ + 0.02 - 0.001), &poses);
    }
    return poses;
  }
  // A step on `poses` (which must outlive it: StepInput holds a view).
  static StepInput Input(const std::vector<double>& poses) {
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    return in;
  }
};

TEST(SceneImplicitTest, WarmStartsGiveTheColdReadings) {
  // A scene stepped through 8 poses (warm starts one step stale) against a new scene per pose
  // (every solve cold): the same depths and normals to float precision (the solves agree to
  // ~1e-12 relative); after Reset the next step is cold again and still agrees.
  SlidingSe4 fixture;
  geometry::MeshStore meshes;
  auto warm = Scene::Create(fixture.spec, meshes);
  ASSERT_TRUE(warm.ok()) << warm.status();
  InlineExecutor pool;
  int touching = 0;
  for (int t = 0; t < 8; ++t) {
    SCOPED_TRACE(t);
    if (t == 5) {
      ASSERT_TRUE((*warm)->Reset(std::vector<int32_t>{1}).ok());
    }
    const std::vector<double> poses = SlidingSe4::Poses(t);
    ASSERT_TRUE((*warm)->Step(SlidingSe4::Input(poses), pool).ok());
    auto cold = Scene::Create(fixture.spec, meshes);
    ASSERT_TRUE(cold.ok());
    ASSERT_TRUE((*cold)->Step(SlidingSe4::Input(poses), pool).ok());
    const auto& a = (*warm)->FindSensor("depth")->outputs(Branch::kGroundTruth);
    const auto& b = (*cold)->FindSensor("depth")->outputs(Branch::kGroundTruth);
    for (size_t k = 0; k < a.depth.size(); ++k) {
      touching += b.depth[k] > 0;
      ASSERT_NEAR(a.depth[k], b.depth[k], 1e-9) << k;
      for (int c = 0; c < 3; ++c) ASSERT_NEAR(a.normal[3 * k + c], b.normal[3 * k + c], 1e-6) << k;
    }
  }
  EXPECT_GT(touching, 8 * SlidingSe4::kEnvs * 10);  // most probes touch: the starts are exercised
}

// Warm starts per (env, pair of shapes). The robot link carries two superellipsoids A0 (at the
// link origin) and A1 (8 cm along x, out of reach); the object is SE(8) B resting 1 mm into A0's
// top. Each env holds the states of (A0, B) and (A1, B); only (A0, B) is solved (A1's outer ball
// misses B's).
//
//        ___B___                    z
//   .---(--------)--.   .-------.   |
//   |       A0      |   |   A1  |   o-- x
//   '---------------'   '-------'
class ImplicitPairWarmStartTest : public ::testing::Test {
 protected:
  static constexpr int kEnvs = 3;
  const Eigen::Vector3d axes_a_{0.03, 0.02, 0.015}, axes_b_{0.02, 0.015, 0.01};

  std::unique_ptr<Scene> Make() const {
    SceneSpec spec;
    spec.num_envs = kEnvs;
    spec.entities.push_back(Entity("bot", EntityKind::kRobot,
                                   {Link("hand", {SuperellipsoidShape(4, axes_a_),
                                                  SuperellipsoidShape(4, axes_a_, Eigen::Vector3d(0.08, 0, 0))})}));
    spec.entities.push_back(Entity("obj", EntityKind::kObject, {Link("body", {SuperellipsoidShape(8, axes_b_)})}));
    auto scene = WithMatrix(spec, {"all"}, {"object/*"});
    EXPECT_TRUE(scene.ok()) << scene.status();
    return scene.ok() ? std::move(*scene) : nullptr;
  }
  /// The object's pose in env e at step k: B 1 mm into A0, moving by 0.1 mm and 0.01 rad a step
  /// (step 3 puts B's origin at negative x: the pair is then solved from B's origin).
  RigidTransform ObjectPose(int env, int k) const {
    RigidTransform X;
    X.R = Eigen::AngleAxisd(0.05 * env + 0.01 * k, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
    X.p = Eigen::Vector3d(k < 3 ? 1e-4 * (k + env) : -1e-3, 2e-4 * env, axes_a_.z() + axes_b_.z() - 0.001 - 1e-4 * k);
    return X;
  }
  std::vector<double> Poses(int k) const {
    std::vector<double> poses;
    for (int e = 0; e < kEnvs; ++e) {
      AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero(), &poses);
      const RigidTransform X = ObjectPose(e, k);
      AppendPose(X.R, X.p, &poses);
    }
    return poses;
  }
  static void Step(Scene& scene, const std::vector<double>& poses, Executor& pool) {
    StepInput in;
    in.poses = poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    ASSERT_TRUE(scene.Step(in, pool).ok());
  }
  /// α of (A0, B) in env e at step k, solved cold in the order the scene solved it.
  double ColdAlpha(int env, int k, bool reversed) const {
    const geometry::ImplicitShape a = *geometry::ImplicitShape::Superellipsoid(4, axes_a_);
    const geometry::ImplicitShape b = *geometry::ImplicitShape::Superellipsoid(8, axes_b_);
    const RigidTransform X_AB = ObjectPose(env, k);
    return reversed ? geometry::SolveImplicitPair(b, a, X_AB.Inverse()).alpha
                    : geometry::SolveImplicitPair(a, b, X_AB).alpha;
  }
};

TEST_F(ImplicitPairWarmStartTest, TwoStepsGiveTheColdAlphaInFewerSteps) {
  auto warm = Make(), cold = Make();
  ASSERT_TRUE(warm && cold);
  InlineExecutor pool;
  Step(*warm, Poses(1), pool);
  Step(*warm, Poses(2), pool);
  Step(*cold, Poses(2), pool);
  const ContactEstimation& w = *warm->contact_matrix();
  const ContactEstimation& c = *cold->contact_matrix();
  for (int e = 0; e < kEnvs; ++e) {
    ASSERT_EQ(w.implicit_pair_states(e).size(), 2u);
    const contact::ImplicitPairState& s = w.implicit_pair_states(e)[0];
    EXPECT_FALSE(s.reversed);
    EXPECT_NEAR(s.alpha, ColdAlpha(e, 2, false), 1e-10 * s.alpha) << e;
    EXPECT_LT(s.alpha, 1);
    EXPECT_EQ(w.implicit_pair_states(e)[1].alpha, 0) << "(A1, B) is not solved";
    EXPECT_GT(c.implicit_pair_iterations(e), 0);
    EXPECT_LT(w.implicit_pair_iterations(e), c.implicit_pair_iterations(e)) << e;
    const Eigen::Vector3f fw = w.matrix().Normal(e, 0, 0), fc = c.matrix().Normal(e, 0, 0);
    EXPECT_GT(fc.norm(), 0);
    EXPECT_NEAR((fw - fc).norm(), 0, 1e-6 * fc.norm()) << e;
  }
  // B's origin crosses to negative x: the pair is solved from B, the warm start of (A0, B) is
  // dropped and the cold answer comes back.
  Step(*warm, Poses(3), pool);
  const contact::ImplicitPairState& s = w.implicit_pair_states(0)[0];
  EXPECT_TRUE(s.reversed);
  EXPECT_NEAR(s.alpha, ColdAlpha(0, 3, true), 1e-10 * s.alpha);
}

TEST_F(ImplicitPairWarmStartTest, SameResultsForAnyThreadCountAndColdAfterReset) {
  auto one = Make(), two = Make(), cold = Make();
  ASSERT_TRUE(one && two && cold);
  server::ThreadPool pool1(1), pool2(2);
  for (int k = 1; k <= 3; ++k) {
    Step(*one, Poses(k), pool1);
    Step(*two, Poses(k), pool2);
  }
  const ContactEstimation& a = *one->contact_matrix();
  const ContactEstimation& b = *two->contact_matrix();
  for (int e = 0; e < kEnvs; ++e) {
    EXPECT_EQ(a.implicit_pair_iterations(e), b.implicit_pair_iterations(e));
    EXPECT_EQ(a.matrix().Normal(e, 0, 0), b.matrix().Normal(e, 0, 0)) << e;
  }
  // Reset env 1: its next estimate solves cold (as a new scene's); the others start from their
  // solution of the same poses.
  ASSERT_TRUE(one->Reset(std::vector<int32_t>{1}).ok());
  Step(*one, Poses(3), pool1);
  Step(*cold, Poses(3), pool1);
  const ContactEstimation& c = *cold->contact_matrix();
  EXPECT_EQ(a.implicit_pair_iterations(1), c.implicit_pair_iterations(1));
  EXPECT_EQ(a.matrix().Normal(1, 0, 0), c.matrix().Normal(1, 0, 0));
  EXPECT_NE(a.implicit_pair_iterations(0), c.implicit_pair_iterations(0));
}

TEST(SceneImplicitTest, CreationErrorsNameTheImplicitField) {
  geometry::MeshStore meshes;
  SceneSpec spec;
  spec.entities.push_back(Entity("hand", EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, 0.005})})}));
  spec.entities.push_back(Entity("soap", EntityKind::kObject, {Link("body", {SuperellipsoidShape(2.5, {1, 1, 1})})}));
  auto r = Scene::Create(spec, meshes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("entities[1].links[0].shapes[0].implicit.superellipsoid.n: expected an integer in [1, 32], "
                        "got 2.5"));
  spec.entities[1].links[0].shapes[0] = ImplicitSphereShape(-1);
  EXPECT_THAT(Scene::Create(spec, meshes).status().message(),
              HasSubstr("entities[1].links[0].shapes[0].implicit.sphere.radius"));
  ShapeSpec cone;
  cone.kind = geometry::ShapeKind::kImplicit;
  cone.implicit.kind = geometry::ImplicitKind::kTruncatedCone;
  cone.implicit.beta = 1;
  cone.implicit.bottom_radius = cone.implicit.top_radius = cone.implicit.a = cone.implicit.b = 0.01;
  spec.entities[1].links[0].shapes[0] = cone;
  EXPECT_THAT(Scene::Create(spec, meshes).status().message(),
              HasSubstr("entities[1].links[0].shapes[0].implicit.truncated_cone.beta"));
}

}  // namespace
}  // namespace taxel::scene
