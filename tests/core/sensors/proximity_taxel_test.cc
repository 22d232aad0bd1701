// ProximityTaxel: point-cloud sphere taxels against hand sums over the tracked sample points.
#include <cmath>
#include <memory>
#include <vector>

#include "Eigen/Geometry"
#include "core/scene/scene.h"
#include "core/sensors/tracked_geometry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::sensors {
namespace {

using namespace taxel::testing;  // NOLINT

// A pad with two proximity probes (R = 1 cm, normal +z) on its top face and a small bead
// (sphere, r = 2 mm) sampled with 12 points. The bead hovers above the pad without touching it.
//
//              o  bead (r = 2 mm), centre 8 mm above the face
//          .........         probe spheres, R = 1 cm
//   ______:___*__*__:______  z = kTop   probes at (0, 0) and (4 mm, 0)
//  |         pad           |
constexpr double kTop = 0.005;
constexpr double kR = 0.01;
constexpr double kBeadR = 0.002;
constexpr int kPoints = 12;

class BeadOverPad : public ::testing::Test {
 protected:
  void SetUp() override { Build(1); }
  void Build(int num_envs) {
    scene::SceneSpec spec;
    spec.num_envs = num_envs;
    spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, kTop})})}));
    spec.entities.push_back(Entity("bead", scene::EntityKind::kObject, {Link("body", {SphereShape(kBeadR)})}));
    auto s = scene::Scene::Create(spec, meshes_);
    ASSERT_TRUE(s.ok()) << s.status();
    scene_ = *std::move(s);
  }
  const Sensor* Add(const std::string& name, void (*edit)(SensorSpec&) = nullptr) {
    SensorSpec s;
    s.name = name;
    s.kind = SensorKind::kProximityTaxel;
    s.link = "pad";
    s.probe_local_pos = {probe_[0], probe_[1]};
    s.probe_radius = {kR};
    s.probe_local_normal = {Eigen::Vector3d::UnitZ()};
    s.track_links = {"bead/body"};
    s.n_sample_points = kPoints;
    if (edit != nullptr) edit(s);
    auto id = scene_->AddSensor(s);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? scene_->FindSensor(*id) : nullptr;
  }
  // Pad at the origin (still), bead at c with an optional twist (v, ω) in world axes.
  absl::Status Step(const Eigen::Vector3d& c, const Eigen::Vector3d& v = Eigen::Vector3d::Zero(),
                    const Eigen::Vector3d& w = Eigen::Vector3d::Zero()) {
    poses_ = PosesXyzw({Eigen::Vector3d::Zero(), c});
    twists_ = {0, 0, 0, 0, 0, 0, v.x(), v.y(), v.z(), w.x(), w.y(), w.z()};
    scene::StepInput in;
    in.poses = poses_;
    in.twists = twists_;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    return scene_->Step(in, pool_);
  }
  // Σ over the bead's sample points within R of probe k of (R − |p − o|), and how many points.
  double SumP(const Sensor* s, const Eigen::Vector3d& c, int k, int* inside = nullptr) const {
    const auto& pts = s->tracked()->links()[0].points[0];
    double sum = 0;
    int n = 0;
    for (const Eigen::Vector3d& p : pts) {
      const double d = (c + p - probe_[k]).norm();  // identity orientations: p_W = c + p_B
      if (d < kR) sum += kR - d, ++n;
    }
    if (inside != nullptr) *inside = n;
    return sum;
  }

  const Eigen::Vector3d probe_[2] = {Eigen::Vector3d(0, 0, kTop), Eigen::Vector3d(0.004, 0, kTop)};
  geometry::MeshStore meshes_;
  std::unique_ptr<scene::Scene> scene_;
  std::vector<double> poses_, twists_;
  InlineExecutor pool_;
};

TEST_F(BeadOverPad, ReadsBeforeTouchAndMatchesTheHandSum) {
  // F = k·ρ·ΣP·a with ρ = density_scalar / (number of points), a = +z; T = p_L × F.
  const Sensor* s = Add("prox");
  ASSERT_NE(s, nullptr);
  const auto& pts = s->tracked()->links()[0].points[0];
  ASSERT_EQ(pts.size(), static_cast<size_t>(kPoints));
  for (const auto& p : pts) EXPECT_NEAR(p.norm(), kBeadR, 1e-12);  // on the bead's surface
  const double rho = 100.0 / kPoints;
  // The bead's lowest point is 6 mm above the pad: no contact, but within R of both probes.
  const Eigen::Vector3d c(0.002, 0.001, kTop + 0.008);
  ASSERT_TRUE(Step(c).ok());
  const auto& out = s->outputs(Branch::kGroundTruth);
  for (int k = 0; k < 2; ++k) {
    int inside = 0;
    const double sum = SumP(s, c, k, &inside);
    EXPECT_GT(inside, 0) << k;
    const double Fz = 100 * rho * sum;
    EXPECT_GT(Fz, 0) << k;
    EXPECT_EQ(out.force[3 * k + 0], 0.f);
    EXPECT_EQ(out.force[3 * k + 1], 0.f);
    EXPECT_NEAR(out.force[3 * k + 2], Fz, 1e-5 * Fz) << k;
    // p × (0, 0, Fz) = (p_y·Fz, −p_x·Fz, 0).
    EXPECT_NEAR(out.torque[3 * k + 0], probe_[k].y() * Fz, 1e-9) << k;
    EXPECT_NEAR(out.torque[3 * k + 1], -probe_[k].x() * Fz, 1e-5 * Fz * 0.004 + 1e-12) << k;
    EXPECT_EQ(out.torque[3 * k + 2], 0.f);
  }
  // Some points of the bead are outside probe 0's sphere at this height: the sum is partial.
  int inside0 = 0;
  SumP(s, c, 0, &inside0);
  EXPECT_LT(inside0, kPoints);
  // Farther than R + r: nothing.
  ASSERT_TRUE(Step(Eigen::Vector3d(0, 0, kTop + kR + kBeadR + 1e-4)).ok());
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out.force[i], 0.f) << i;
    EXPECT_EQ(out.torque[i], 0.f) << i;
  }
}

TEST_F(BeadOverPad, TwistTermIsLinearInTwistScalar) {
  // Bead spinning at ω = 3 rad/s about +z, pad still: ω_a = 3 for every point, so the twist term
  // is −k_tw·3·a: T_z = −3 (k_tw = 1) and −6 (k_tw = 2); p × F has no z component.
  const Sensor* one = Add("tw1", [](SensorSpec& s) { s.proximity.twist_scalar = 1; });
  const Sensor* two = Add("tw2", [](SensorSpec& s) { s.proximity.twist_scalar = 2; });
  ASSERT_TRUE(one != nullptr && two != nullptr);
  ASSERT_TRUE(Step(Eigen::Vector3d(0.001, 0, kTop + 0.007), Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 3)).ok());
  const auto& a = one->outputs(Branch::kGroundTruth);
  const auto& b = two->outputs(Branch::kGroundTruth);
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(a.torque[3 * k + 2], -3.0, 1e-6) << k;
    EXPECT_NEAR(b.torque[3 * k + 2], -6.0, 1e-6) << k;
    EXPECT_EQ(b.torque[3 * k + 2], 2 * a.torque[3 * k + 2]) << k;
    EXPECT_EQ(a.force[3 * k + 2], b.force[3 * k + 2]) << k;
  }
}

TEST_F(BeadOverPad, ShearCouplingAddsTheTangentialVelocity) {
  // Bead translating at v = (0.1, −0.05, 0.3) m/s: every point has that velocity; its tangential
  // part (⟂ a = +z) is (0.1, −0.05, 0). F_t = k_sh·ρ·ΣP·v_t with k_sh = 2.
  const Sensor* s = Add("shear", [](SensorSpec& sp) { sp.proximity.shear_coupling = 2; });
  ASSERT_NE(s, nullptr);
  const Eigen::Vector3d c(-0.001, 0.002, kTop + 0.0075);
  ASSERT_TRUE(Step(c, Eigen::Vector3d(0.1, -0.05, 0.3)).ok());
  const auto& out = s->outputs(Branch::kGroundTruth);
  const double rho = 100.0 / kPoints;
  for (int k = 0; k < 2; ++k) {
    const double sum = SumP(s, c, k);
    ASSERT_GT(sum, 0);
    EXPECT_NEAR(out.force[3 * k + 0], 2 * rho * sum * 0.1, 1e-6 * rho * sum) << k;
    EXPECT_NEAR(out.force[3 * k + 1], 2 * rho * sum * -0.05, 1e-6 * rho * sum) << k;
    EXPECT_NEAR(out.force[3 * k + 2], 100 * rho * sum, 1e-5 * 100 * rho * sum) << k;
  }
}

TEST_F(BeadOverPad, ReadingsAreInTheLinkFrameAndInvariantUnderARigidMotion) {
  // Env 1 is env 0 with pad and bead rotated 1.1 rad about (−2, 1, 0.5) and moved (nothing moves
  // relative to the pad): the link-frame force and torque of the two envs agree.
  Build(2);
  const Sensor* s = Add("prox", [](SensorSpec& sp) { sp.proximity.twist_scalar = 1; });
  ASSERT_NE(s, nullptr);
  const Eigen::Quaterniond q(Eigen::AngleAxisd(1.1, Eigen::Vector3d(-2, 1, 0.5).normalized()));
  const Eigen::Vector3d p(-0.4, 0.1, 0.25), c(0.002, -0.001, kTop + 0.007);
  const Eigen::Vector3d b = p + q * c;
  poses_ = {0,     0,     0,     0,     0,     0,     1,     c.x(), c.y(), c.z(), 0,     0,     0,     1,
            p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w(), b.x(), b.y(), b.z(), q.x(), q.y(), q.z(), q.w()};
  const std::vector<double> twists(24, 0.0);
  scene::StepInput in;
  in.poses = poses_;
  in.twists = twists;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  ASSERT_TRUE(scene_->Step(in, pool_).ok());
  const auto& out = s->outputs(Branch::kGroundTruth);
  ASSERT_GT(out.force[2], 0.f);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(out.force[6 + i], out.force[i], 1e-5 * out.force[2]) << i;
    EXPECT_NEAR(out.torque[6 + i], out.torque[i], 1e-5 * out.force[2] * 0.01) << i;
  }
}

TEST_F(BeadOverPad, GainScalesTheMeasuredForceExactly) {
  const Sensor* s = Add("gain", [](SensorSpec& sp) { sp.imperfections.probe_gain = {2.0}; });
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(
      Step(Eigen::Vector3d(0.003, -0.001, kTop + 0.006), Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 1)).ok());
  const auto& t = s->outputs(Branch::kGroundTruth);
  const auto& m = s->outputs(Branch::kMeasured);
  ASSERT_GT(t.force[2], 0.f);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(m.force[i], 2 * t.force[i]) << i;
    EXPECT_EQ(m.torque[i], 2 * t.torque[i]) << i;
  }
}

TEST_F(BeadOverPad, GainLeavesTheTwistTermUnchanged) {
  // Bead spinning at ω = 3 rad/s about +z beside the probes, gain 1.5. The gain multiplies ΣP (the
  // force and its moment p × F, which has no z component here) but not the spin average
  // ΣP·ω_a/ΣP = 3: measured T_z = truth T_z = −3·k_tw (−3 for k_tw = 1, −6 for 2, 0 for 0), while
  // F and T_x, T_y read 1.5× the truth.
  const Sensor* tw[3] = {
      Add("tw0", [](SensorSpec& s) { s.imperfections.probe_gain = {1.5}; }),
      Add("tw1", [](SensorSpec& s) { s.imperfections.probe_gain = {1.5}, s.proximity.twist_scalar = 1; }),
      Add("tw2", [](SensorSpec& s) { s.imperfections.probe_gain = {1.5}, s.proximity.twist_scalar = 2; })};
  for (const Sensor* s : tw) ASSERT_NE(s, nullptr);
  ASSERT_TRUE(
      Step(Eigen::Vector3d(0.003, -0.001, kTop + 0.006), Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 3)).ok());
  for (int j = 0; j < 3; ++j) {
    const auto& t = tw[j]->outputs(Branch::kGroundTruth);
    const auto& m = tw[j]->outputs(Branch::kMeasured);
    ASSERT_GT(t.force[2], 0.f);
    for (int k = 0; k < 2; ++k) {
      EXPECT_NEAR(t.torque[3 * k + 2], -3.0 * j, 1e-6) << j << " " << k;
      EXPECT_NEAR(m.torque[3 * k + 2], -3.0 * j, 1e-6) << j << " " << k;
      for (int a = 0; a < 3; ++a) EXPECT_FLOAT_EQ(m.force[3 * k + a], 1.5f * t.force[3 * k + a]) << j << " " << k;
      for (int a = 0; a < 2; ++a) {
        EXPECT_NEAR(m.torque[3 * k + a], 1.5 * t.torque[3 * k + a], 1e-6 * std::abs(t.torque[3 * k + a]) + 1e-12)
            << j << " " << k;
      }
    }
  }
}

TEST_F(BeadOverPad, OptionsAreValidated) {
  SensorSpec s;
  s.name = "bad";
  s.kind = SensorKind::kProximityTaxel;
  s.link = "pad";
  s.probe_local_pos = {Eigen::Vector3d::Zero()};
  s.probe_radius = {kR};
  s.track_links = {"bead/body"};
  s.proximity.density_scalar = -1;
  auto id = scene_->AddSensor(s);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), ::testing::HasSubstr("sensor.proximity.density_scalar"));
  s.proximity.density_scalar = 100;
  s.n_sample_points = 0;
  EXPECT_THAT(scene_->AddSensor(s).status().message(), ::testing::HasSubstr("sensor.n_sample_points"));
  s.n_sample_points = 10;
  s.track_links = {"nope"};
  EXPECT_EQ(scene_->AddSensor(s).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace taxel::sensors
