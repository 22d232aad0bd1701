// ElastomerTaxel: the dilation sum (FFT = direct, hand values), and a gel pad pressed by a ball
// and a slab — radial spread, normal bulge ∝ h^p, shear only after sliding, zero out of contact.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "Eigen/Geometry"
#include "core/common/rng.h"
#include "core/scene/scene.h"
#include "core/sensors/tracked_geometry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::sensors {
namespace {

using namespace taxel::testing;  // NOLINT

ProbeLayout GridLayout(const std::vector<Eigen::Vector3d>& p, int rows, int cols, const Eigen::Vector3d& normal) {
  auto l = ProbeLayout::Create(p, {0.0}, {normal}, rows, cols);
  EXPECT_TRUE(l.ok()) << l.status();
  return *std::move(l);
}

double MaxAbs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

TEST(ElastomerDilationTest, FftEqualsTheDirectSum) {
  // Random indentation fields (about a third of the markers untouched, the rest up to 2 mm) on
  // square, non-square and single-row grids, flat (+z) and in a tilted plane with its normal.
  const Eigen::Vector3d tilted_n = Eigen::Vector3d(0, 0.6, 0.8);
  const Eigen::Vector3d tilted_v = Eigen::Vector3d(0, 0.8, -0.6);  // in-plane, ⟂ x
  int cases = 0;
  for (auto [rows, cols] : {std::pair{4, 4}, {5, 7}, {8, 3}, {1, 6}, {6, 1}, {9, 9}}) {
    for (bool tilted : {false, true}) {
      std::vector<Eigen::Vector3d> p = PlanarGrid(rows, cols, 0.003, 0);
      if (tilted) {
        for (auto& q : p) q = Eigen::Vector3d(q.x(), 0, 0) + q.y() * tilted_v + Eigen::Vector3d(0.001, 0.002, 0.003);
      }
      const ProbeLayout layout = GridLayout(p, rows, cols, tilted ? tilted_n : Eigen::Vector3d::UnitZ());
      const Philox4x32 rng(rows * 10 + cols, 3);
      std::vector<double> h(layout.size());
      for (int k = 0; k < layout.size(); ++k) {
        const auto b = rng(static_cast<uint32_t>(k), 0, 0, 0);
        h[k] = UniformFromBits(b[0]) < 0.33 ? 0.0 : 0.002 * UniformFromBits(b[1]);
      }
      for (double c : {0.0, 0.5, 1.0}) {
        ElastomerParams params;
        params.compressibility = c;
        params.normal_exponent = 1.7;
        params.dilate_scale = 0.8;
        TrackedGeometry g({}, 1, {{}});
        ASSERT_TRUE(g.PrepareFft(layout, params)) << rows << "x" << cols;
        std::vector<double> direct(3 * layout.size()), fft(3 * layout.size());
        DilationDirect(layout, params, h.data(), direct.data());
        DilationFft(g, layout, params, h.data(), fft.data());
        const double scale = MaxAbs(direct);
        ASSERT_GT(scale, 0);
        for (size_t i = 0; i < direct.size(); ++i) {
          ASSERT_NEAR(fft[i], direct[i], 1e-6 * scale) << rows << "x" << cols << " tilted " << tilted << " c " << c
                                                       << " at " << i;
        }
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 36);
}

TEST(ElastomerDilationTest, FftNeedsARegularGridWithOneNormal) {
  ElastomerParams params;
  TrackedGeometry g({}, 1, {{}});
  const auto p = PlanarGrid(3, 3, 0.003, 0);
  EXPECT_TRUE(g.PrepareFft(GridLayout(p, 3, 3, Eigen::Vector3d::UnitZ()), params));
  auto flat = ProbeLayout::Create(p, {0.0}, {}, 0, 0);
  EXPECT_FALSE(g.PrepareFft(*flat, params));
  EXPECT_FALSE(g.has_fft());
  std::vector<Eigen::Vector3d> normals(9, Eigen::Vector3d::UnitZ());
  normals[4] = Eigen::Vector3d(0.1, 0, 1);
  auto curved = ProbeLayout::Create(p, {0.0}, normals, 3, 3);
  EXPECT_FALSE(g.PrepareFft(*curved, params));
  params.use_fft = false;
  EXPECT_FALSE(g.PrepareFft(GridLayout(p, 3, 3, Eigen::Vector3d::UnitZ()), params));
}

TEST(ElastomerDilationTest, DirectSumByHandAndCompressibilityOrdersTheSpread) {
  // Markers every 5 mm on the x axis, normal +z; only marker 0 is indented, h = 2 mm. At marker
  // 8 (r = 4 cm, d = (0.04, 0, 0)):
  //   u = d·h·(c·e^{−λ r²} + (1 − c)/(r² + ε²)) + n·h^p·e^{−λ r²},  λ = 700, ε = 2 mm, p = 2.
  std::vector<Eigen::Vector3d> p;
  for (int k = 0; k < 9; ++k) p.emplace_back(0.005 * k, 0, 0);
  auto layout = ProbeLayout::Create(p, {0.0}, {}, 0, 0);
  ASSERT_TRUE(layout.ok());
  std::vector<double> h(9, 0.0);
  h[0] = 0.002;
  const double r2 = 0.04 * 0.04, gauss = std::exp(-700 * r2), incompressible = 1 / (r2 + 4e-6);
  double inplane[3];
  for (int i = 0; i < 3; ++i) {
    ElastomerParams params;
    params.compressibility = 0.5 * i;
    std::vector<double> u(27);
    DilationDirect(*layout, params, h.data(), u.data());
    const double c = params.compressibility;
    EXPECT_NEAR(u[3 * 8 + 0], 0.04 * 0.002 * (c * gauss + (1 - c) * incompressible), 1e-15) << c;
    EXPECT_EQ(u[3 * 8 + 1], 0.0);
    EXPECT_NEAR(u[3 * 8 + 2], 0.002 * 0.002 * gauss, 1e-18) << c;
    EXPECT_EQ(u[0], 0.0);  // no in-plane push on the indented marker itself (d = 0)
    inplane[i] = std::abs(u[3 * 8]);
  }
  EXPECT_GT(inplane[0], inplane[1]);  // incompressible (0) spreads farther than compressible (1)
  EXPECT_GT(inplane[1], inplane[2]);
}

// ---- A gel pad in a scene ----
//
//   ball (r = 2 cm) or slab, tracked          markers: 8 × 8, pitch 4 mm, on the top face,
//          .---.                               normal +z; the pad's box is the gel
//   ______/_____\______  z = kTop
//  |      gel pad      |
//  |___________________|  z = −kTop
constexpr double kTop = 0.005;
constexpr double kBallR = 0.02;
constexpr double kPitch = 0.004;

class GelPad : public ::testing::Test {
 protected:
  void SetUp() override { Build(1); }
  void Build(int num_envs) {
    scene::SceneSpec spec;
    spec.num_envs = num_envs;
    spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot, {Link("gel", {BoxShape({0.03, 0.03, kTop})})}));
    spec.entities.push_back(Entity("ball", scene::EntityKind::kObject, {Link("body", {SphereShape(kBallR)})}));
    spec.entities.push_back(Entity("slab", scene::EntityKind::kObject, {Link("body", {BoxShape({0.05, 0.05, 0.01})})}));
    auto s = scene::Scene::Create(spec, meshes_);
    ASSERT_TRUE(s.ok()) << s.status();
    scene_ = *std::move(s);
  }
  const Sensor* Add(const std::string& name, const std::string& track, void (*edit)(SensorSpec&) = nullptr) {
    SensorSpec s;
    s.name = name;
    s.kind = SensorKind::kElastomerTaxel;
    s.link = "gel";
    s.probe_local_pos = PlanarGrid(8, 8, kPitch, kTop);
    s.grid_rows = s.grid_cols = 8;
    s.probe_local_normal = {Eigen::Vector3d::UnitZ()};
    s.track_links = {track};
    if (edit != nullptr) edit(s);
    auto id = scene_->AddSensor(s);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? scene_->FindSensor(*id) : nullptr;
  }
  // Ball centre at (x, y) over the pad, its bottom `press` below the top face; slab likewise.
  absl::Status Step(Eigen::Vector3d ball, Eigen::Vector3d slab = Eigen::Vector3d(0, 0, 2)) {
    return StepPoses(PosesXyzw({Eigen::Vector3d::Zero(), ball, slab}));
  }
  absl::Status StepPoses(std::vector<double> poses) {
    poses_ = std::move(poses);
    scene::StepInput in;
    in.poses = poses_;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    return scene_->Step(in, pool_);
  }
  static Eigen::Vector3d BallAt(double press, double x = 0, double y = 0) {
    return {x, y, kTop + kBallR - press};
  }
  static std::vector<float> U(const Sensor* s, Branch b = Branch::kGroundTruth) { return s->outputs(b).displacement; }

  geometry::MeshStore meshes_;
  std::unique_ptr<scene::Scene> scene_;
  std::vector<double> poses_;
  InlineExecutor pool_;
};

const auto kNoShear = [](SensorSpec& s) { s.elastomer.shear_scale = 0; };

TEST_F(GelPad, PressedBallSpreadsRadiallyAndMatchesTheHandSum) {
  // Ball pressed 1 cm at the pad centre: marker j is indented h_j = max(0, r − |x_j − c|).
  // Dilation by hand (compressibility 1, p = 2, λ = 700, markers in the plane z = kTop):
  //   u_i = Σ_j (x_i − x_j)·h_j·e^{−λ r²} + ẑ·h_j²·e^{−λ r²},  r = |x_i − x_j|.
  const Sensor* s = Add("gel", "ball/body", kNoShear);
  const Sensor* direct = Add("direct", "ball/body", [](SensorSpec& sp) {
    sp.elastomer.shear_scale = 0;
    sp.elastomer.use_fft = false;
  });
  ASSERT_TRUE(s != nullptr && direct != nullptr);
  EXPECT_TRUE(s->tracked()->has_fft());
  EXPECT_FALSE(direct->tracked()->has_fft());
  const auto x = PlanarGrid(8, 8, kPitch, kTop);
  for (double press : {0.01, 0.005}) {
    const Eigen::Vector3d c = BallAt(press);
    ASSERT_TRUE(Step(c).ok());
    std::vector<double> h(64);
    for (int j = 0; j < 64; ++j) h[j] = std::max(0.0, kBallR - (x[j] - c).norm());
    const std::vector<float> u = U(s), ud = U(direct);
    double scale = 0;
    for (float v : u) scale = std::max(scale, double(std::abs(v)));
    for (int i = 0; i < 64; ++i) {
      Eigen::Vector3d expected = Eigen::Vector3d::Zero();
      for (int j = 0; j < 64; ++j) {
        const Eigen::Vector3d d = x[i] - x[j];
        const double w = std::exp(-700 * d.squaredNorm());
        expected += d * h[j] * w + Eigen::Vector3d::UnitZ() * h[j] * h[j] * w;
      }
      for (int a = 0; a < 3; ++a) {
        EXPECT_NEAR(u[3 * i + a], expected[a], 1e-5 * scale) << "press " << press << " marker " << i << " axis " << a;
        EXPECT_NEAR(ud[3 * i + a], u[3 * i + a], 1e-6 * scale) << "FFT vs direct, marker " << i;
      }
      // Radial: the in-plane displacement points away from the contact centre (the pad centre).
      const Eigen::Vector2d u_xy(u[3 * i], u[3 * i + 1]), x_xy(x[i].x(), x[i].y());
      EXPECT_GT(u_xy.dot(x_xy), 0) << "marker " << i;
      EXPECT_GT(u_xy.dot(x_xy), 0.9 * u_xy.norm() * x_xy.norm()) << "marker " << i;
    }
    // Symmetries of the centred press: the diagonal is exactly radial, mirrors flip one component.
    EXPECT_NEAR(u[3 * 9], u[3 * 9 + 1], 1e-6 * scale);       // marker (1, 1)
    EXPECT_NEAR(u[3 * 1], -u[3 * 6], 1e-6 * scale);          // (0, 1) ↔ (0, 6): u_x flips
    EXPECT_NEAR(u[3 * 1 + 1], u[3 * 6 + 1], 1e-6 * scale);   // u_y equal
  }
}

TEST_F(GelPad, NormalBulgeScalesAsIndentationToThePowerP) {
  // A slab pressing h everywhere: u_z = h^p·Σ_j e^{−λ r²} at every marker, so doubling h scales
  // u_z by exactly 2^p (p = 2 → 4, p = 1.5 → 2√2).
  const Sensor* p2 = Add("p2", "slab/body", kNoShear);
  const Sensor* p15 = Add("p15", "slab/body", [](SensorSpec& s) {
    s.elastomer.shear_scale = 0;
    s.elastomer.normal_exponent = 1.5;
  });
  auto slab = [](double h) { return Eigen::Vector3d(0, 0, kTop + 0.01 - h); };
  ASSERT_TRUE(Step(Eigen::Vector3d(0, 0, 1), slab(0.001)).ok());
  const std::vector<float> a2 = U(p2), a15 = U(p15);
  ASSERT_TRUE(Step(Eigen::Vector3d(0, 0, 1), slab(0.002)).ok());
  const std::vector<float> b2 = U(p2), b15 = U(p15);
  for (int i = 0; i < 64; ++i) {
    ASSERT_GT(a2[3 * i + 2], 0.f);
    EXPECT_NEAR(b2[3 * i + 2] / a2[3 * i + 2], 4.0, 1e-5) << i;
    EXPECT_NEAR(b15[3 * i + 2] / a15[3 * i + 2], 2 * std::sqrt(2.0), 1e-5) << i;
  }
  // Centre marker (3, 3) by hand for h = 1 mm, p = 2: 1e-6·Σ_j e^{−λ |x_j − x_c|²}.
  const auto x = PlanarGrid(8, 8, kPitch, kTop);
  double sum = 0;
  for (int j = 0; j < 64; ++j) sum += std::exp(-700 * (x[j] - x[27]).squaredNorm());
  EXPECT_NEAR(a2[3 * 27 + 2], 1e-6 * sum, 1e-6 * sum * 1e-5);
}

TEST_F(GelPad, ShearOnlyAfterSlidingAndDilationPlusShearIsTheCombinedReading) {
  const Sensor* combined = Add("combined", "ball/body");
  const Sensor* dilate = Add("dilate", "ball/body", kNoShear);
  const Sensor* shear = Add("shear", "ball/body", [](SensorSpec& s) { s.elastomer.dilate_scale = 0; });
  ASSERT_TRUE(combined && dilate && shear);
  const std::vector<float> zeros(192, 0.f);
  // Out of contact: everything is exactly 0.
  ASSERT_TRUE(Step(Eigen::Vector3d(0, 0, 1)).ok());
  for (const Sensor* s : {combined, dilate, shear}) EXPECT_EQ(U(s), zeros) << s->spec().name;
  // Pressing straight down (5 mm, then 1 cm): no tangential slip, no shear.
  for (double press : {0.005, 0.01}) {
    ASSERT_TRUE(Step(BallAt(press)).ok());
    EXPECT_EQ(U(shear), zeros) << "press " << press;
    EXPECT_EQ(U(combined), U(dilate)) << "press " << press;
    EXPECT_NE(U(dilate), zeros);
  }
  // Slide 2 mm along +x at the same depth: anchored points drag the markers along +x.
  ASSERT_TRUE(Step(BallAt(0.01, 0.002)).ok());
  const std::vector<float> us = U(shear), uc = U(combined), ud = U(dilate);
  double sum_x = 0, scale = 0;
  for (float v : uc) scale = std::max(scale, double(std::abs(v)));
  for (int k = 0; k < 64; ++k) {
    EXPECT_EQ(us[3 * k + 2], 0.f) << "shear has a normal component at marker " << k;
    sum_x += us[3 * k];
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(uc[3 * k + a], ud[3 * k + a] + us[3 * k + a], 1e-6 * scale) << k;
  }
  EXPECT_GT(sum_x, 0);
  // Withdraw: anchors release and every reading is exactly 0 again.
  ASSERT_TRUE(Step(Eigen::Vector3d(0.002, 0, 1)).ok());
  for (const Sensor* s : {combined, dilate, shear}) EXPECT_EQ(U(s), zeros) << s->spec().name;
  // Press straight down where it left: fresh anchors, no shear.
  ASSERT_TRUE(Step(BallAt(0.01, 0.002)).ok());
  EXPECT_EQ(U(shear), zeros);
}

TEST_F(GelPad, ShearMatchesTheHandSumOverAnchoredPoints) {
  // Step 1: the ball pressed 8 mm at c1; every sample point P = c1 + p_B inside the gel box deeper
  // than 1e-5 m anchors at A = P (pad at the origin: link frame = world). Step 2: the ball slides
  // by δ = (1.5, 0.5, 0) mm; an anchored point still inside the gel (depth e > 0, the distance to
  // the nearest of the box's 6 faces) drags marker k by e·T(P − A)·exp(−λ_s·|T(x_k − P)|²),
  // T the projection off the normal ẑ, λ_s = 300.
  const Sensor* s = Add("shear", "ball/body", [](SensorSpec& sp) { sp.elastomer.dilate_scale = 0; });
  ASSERT_NE(s, nullptr);
  const auto& pts = s->tracked()->links()[0].points[0];
  ASSERT_EQ(pts.size(), 500u);
  auto depth = [](const Eigen::Vector3d& P) {  // inside the box (0.03, 0.03, kTop): > 0
    return std::min({0.03 - std::abs(P.x()), 0.03 - std::abs(P.y()), kTop - std::abs(P.z())});
  };
  const Eigen::Vector3d c1 = BallAt(0.008), delta(0.0015, 0.0005, 0), c2 = c1 + delta;
  ASSERT_TRUE(Step(c1).ok());
  ASSERT_TRUE(Step(c2).ok());
  const auto x = PlanarGrid(8, 8, kPitch, kTop);
  std::vector<Eigen::Vector3d> expected(64, Eigen::Vector3d::Zero());
  int dragging = 0;
  for (const Eigen::Vector3d& p : pts) {
    const Eigen::Vector3d A = c1 + p, P = c2 + p;
    if (!(depth(A) > 1e-5) || !(depth(P) > 0)) continue;
    ++dragging;
    for (int k = 0; k < 64; ++k) {
      Eigen::Vector3d off = x[k] - P;
      off.z() = 0;
      expected[k] += depth(P) * Eigen::Vector3d(delta.x(), delta.y(), 0) * std::exp(-300 * off.squaredNorm());
    }
  }
  EXPECT_GT(dragging, 20);
  const std::vector<float> u = U(s);
  for (int k = 0; k < 64; ++k) {
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(u[3 * k + a], expected[k][a], 1e-5 * expected[k].norm() + 1e-12) << k;
  }
}

TEST_F(GelPad, AnchorsSurviveASeparationSmallerThanTheReleaseThreshold) {
  // The ball is pressed 8 mm, slid, then lifted 1 cm (its bottom 2 mm clear of the gel): every
  // anchored point is then at most 1 cm from the gel. With release_threshold −12 mm all anchors
  // survive (no shear while apart, e ≤ 0) and coming back to the same place restores exactly the
  // same shear. With the default −0.1 mm the lift releases them: back in place, no slip, no shear.
  const Sensor* keep = Add("keep", "ball/body", [](SensorSpec& s) {
    s.elastomer.dilate_scale = 0;
    s.elastomer.release_threshold = -0.012;
  });
  const Sensor* drop = Add("drop", "ball/body", [](SensorSpec& s) { s.elastomer.dilate_scale = 0; });
  const std::vector<float> zeros(192, 0.f);
  ASSERT_TRUE(Step(BallAt(0.008)).ok());
  ASSERT_TRUE(Step(BallAt(0.008, 0.002)).ok());
  const std::vector<float> before = U(keep);
  EXPECT_NE(before, zeros);
  EXPECT_EQ(U(drop), before);
  ASSERT_TRUE(Step(BallAt(-0.002, 0.002)).ok());  // bottom 2 mm above the gel
  EXPECT_EQ(U(keep), zeros);
  EXPECT_EQ(U(drop), zeros);
  ASSERT_TRUE(Step(BallAt(0.008, 0.002)).ok());
  EXPECT_EQ(U(keep), before);
  EXPECT_EQ(U(drop), zeros);
}

TEST_F(GelPad, ResetDropsTheAnchors) {
  const Sensor* shear = Add("shear", "ball/body", [](SensorSpec& s) { s.elastomer.dilate_scale = 0; });
  ASSERT_TRUE(Step(BallAt(0.008)).ok());
  ASSERT_TRUE(Step(BallAt(0.008, 0.002)).ok());
  const std::vector<float> zeros(192, 0.f);
  EXPECT_NE(U(shear), zeros);
  ASSERT_TRUE(scene_->Reset({}).ok());
  EXPECT_EQ(U(shear), zeros);
  // The first step after the reset anchors where the ball is: no slip yet.
  ASSERT_TRUE(Step(BallAt(0.008, 0.002)).ok());
  EXPECT_EQ(U(shear), zeros);
}

TEST_F(GelPad, IncompressibleGelSpreadsFartherAtTheSameIndentation) {
  // Same ball, same indentation field for both sensors; at the far corner marker (0, 0) the
  // in-plane displacement of the incompressible gel (compressibility 0) is the larger one.
  const Sensor* soft = Add("c0", "ball/body", [](SensorSpec& s) {
    s.elastomer.shear_scale = 0;
    s.elastomer.compressibility = 0;
  });
  const Sensor* hard = Add("c1", "ball/body", kNoShear);
  ASSERT_TRUE(Step(BallAt(0.004)).ok());
  const auto a = U(soft), b = U(hard);
  const double far0 = std::hypot(a[0], a[1]), far1 = std::hypot(b[0], b[1]);
  EXPECT_GT(far1, 0);
  EXPECT_GT(far0, far1);
  EXPECT_EQ(a[2], b[2]);  // the normal bulge does not depend on compressibility
}

// Pad and ball poses (xyzw) with the whole configuration moved by X = (p, q): the pad at X, the
// ball at X·(c, identity), the slab parked far away.
std::vector<double> MovedPoses(const Eigen::Vector3d& c, const Eigen::Vector3d& p, const Eigen::Quaterniond& q) {
  const Eigen::Vector3d b = p + q * c;
  return {p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w(), b.x(), b.y(), b.z(), q.x(), q.y(), q.z(), q.w(),
          0,     0,     2,     0,     0,     0,     1};
}

TEST_F(GelPad, ReadingsAreInTheLinkFrameAndInvariantUnderARigidMotion) {
  // Env 0 as usual; env 1 with pad and ball rotated 0.7 rad about (1, 2, 3) and moved: the
  // link-frame displacements (dilation and shear) must agree.
  Build(2);
  const Sensor* s = Add("gel", "ball/body");
  ASSERT_NE(s, nullptr);
  const Eigen::Quaterniond q(Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()));
  const Eigen::Vector3d p(0.3, -0.2, 0.5);
  for (const Eigen::Vector3d& c : {BallAt(0.006), BallAt(0.007, 0.0015, -0.001), BallAt(0.007, 0.003, -0.001)}) {
    std::vector<double> poses = MovedPoses(c, Eigen::Vector3d::Zero(), Eigen::Quaterniond::Identity());
    const std::vector<double> moved = MovedPoses(c, p, q);
    poses.insert(poses.end(), moved.begin(), moved.end());
    ASSERT_TRUE(StepPoses(poses).ok());
    const std::vector<float> u = U(s);
    double scale = 0;
    for (int i = 0; i < 192; ++i) scale = std::max(scale, double(std::abs(u[i])));
    ASSERT_GT(scale, 0);
    for (int i = 0; i < 192; ++i) EXPECT_NEAR(u[192 + i], u[i], 1e-5 * scale) << i;
  }
}

TEST_F(GelPad, GainScalesTheMeasuredDisplacement) {
  const Sensor* s = Add("gain", "ball/body", [](SensorSpec& sp) { sp.imperfections.probe_gain = {2.0}; });
  ASSERT_TRUE(Step(BallAt(0.006, 0.001)).ok());
  const auto t = U(s, Branch::kGroundTruth), m = U(s, Branch::kMeasured);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(m[i], 2 * t[i]) << i;
}

TEST_F(GelPad, OptionsAreValidated) {
  SensorSpec s;
  s.name = "bad";
  s.kind = SensorKind::kElastomerTaxel;
  s.link = "gel";
  s.probe_local_pos = PlanarGrid(2, 2, kPitch, kTop);
  s.track_links = {"ball/body"};
  s.elastomer.compressibility = 1.5;
  auto id = scene_->AddSensor(s);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), ::testing::HasSubstr("sensor.elastomer.compressibility"));
  s.elastomer.compressibility = 1;
  s.track_links = {};
  EXPECT_THAT(scene_->AddSensor(s).status().message(), ::testing::HasSubstr("sensor.track_links"));
  s.track_links = {"gel"};
  EXPECT_THAT(scene_->AddSensor(s).status().message(), ::testing::HasSubstr("cannot track its own link"));
}

}  // namespace
}  // namespace taxel::sensors
