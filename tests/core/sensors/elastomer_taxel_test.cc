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
        ASSERT_TRUE(g.PrepareDilation(layout, params)) << rows << "x" << cols;
        std::vector<double> direct(3 * layout.size()), fft(3 * layout.size());
        Workspace ws;
        DilationDirect(layout, params, h.data(), direct.data(), &g);  // with the layer kernel (c < 1)
        EXPECT_EQ(g.layer_kernel() != nullptr, c < 1);
        DilationFft(g, layout, params, h.data(), fft.data(), ws);
        const double scale = MaxAbs(direct);
        ASSERT_GT(scale, 0);
        for (size_t i = 0; i < direct.size(); ++i) {
          ASSERT_NEAR(fft[i], direct[i], 1e-6 * scale)
              << rows << "x" << cols << " tilted " << tilted << " c " << c << " at " << i;
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
  EXPECT_TRUE(g.PrepareDilation(GridLayout(p, 3, 3, Eigen::Vector3d::UnitZ()), params));
  auto flat = ProbeLayout::Create(p, {0.0}, {}, 0, 0);
  EXPECT_FALSE(g.PrepareDilation(*flat, params));
  EXPECT_FALSE(g.has_fft());
  std::vector<Eigen::Vector3d> normals(9, Eigen::Vector3d::UnitZ());
  normals[4] = Eigen::Vector3d(0.1, 0, 1);
  auto curved = ProbeLayout::Create(p, {0.0}, normals, 3, 3);
  EXPECT_FALSE(g.PrepareDilation(*curved, params));
  params.use_fft = false;
  EXPECT_FALSE(g.PrepareDilation(GridLayout(p, 3, 3, Eigen::Vector3d::UnitZ()), params));
}

TEST(ElastomerDilationTest, DirectSumByHandWithPeakNormalisedBlend) {
  // Markers every 5 mm on the x axis, normal +z; only marker 0 is indented, h = 2 mm. At marker
  // 8 (r = 4 cm, d = (0.04, 0, 0)), λ = 700, ε = 2 mm, p = 2:
  //   u = d·h·w + n·h^p·e^{−λ r²},
  //   w = e^{−λ r²} for c = 1, else c·e^{−λ r²}/N_g + (1 − c)/((r² + ε²)·N_i),
  //   N_g = e^{−1/2}/√(2λ) = 0.0162102 (peak of r·e^{−λ r²}), N_i = 1/(2ε) = 250 (peak of r/(r² + ε²)).
  std::vector<Eigen::Vector3d> p;
  for (int k = 0; k < 9; ++k) p.emplace_back(0.005 * k, 0, 0);
  auto layout = ProbeLayout::Create(p, {0.0}, {}, 0, 0);
  ASSERT_TRUE(layout.ok());
  std::vector<double> h(9, 0.0);
  h[0] = 0.002;
  const double r2 = 0.04 * 0.04, gauss = std::exp(-700 * r2), incompressible = 1 / (r2 + 4e-6);
  const double Ng = std::exp(-0.5) / std::sqrt(1400.0), Ni = 250;
  ASSERT_NEAR(Ng, 0.0162102, 1e-7);
  for (double c : {0.0, 0.5, 1.0}) {
    ElastomerParams params;
    params.compressibility = c;
    std::vector<double> u(27);
    DilationDirect(*layout, params, h.data(), u.data());
    const double w = c == 1 ? gauss : c * gauss / Ng + (1 - c) * incompressible / Ni;
    EXPECT_NEAR(u[3 * 8 + 0], 0.04 * 0.002 * w, 1e-12 * 0.04 * 0.002 * w) << c;
    EXPECT_EQ(u[3 * 8 + 1], 0.0);
    EXPECT_NEAR(u[3 * 8 + 2], 0.002 * 0.002 * gauss, 1e-18) << c;
    EXPECT_EQ(u[0], 0.0);  // no in-plane push on the indented marker itself (d = 0)
  }
}

TEST(ElastomerDilationTest, CompressibilityOrdersTheMeanInPlaneRadius) {
  // 31 × 31 markers at 1 mm given as a flat list (no grid: the 1/(r² + ε²) kernel), only the
  // centre one indented (h = 1 mm), λ_d = 5e4 m⁻² (a local Gaussian, σ ≈ 3.2 mm), ε = 2 mm. Mean
  // in-plane radius ρ̄ = Σ r_k·|u_k| / Σ |u_k| over the markers. Hand sums (numpy) of the
  // peak-normalised blend: ρ̄ = 9.967 mm (c = 0), 8.675 mm (0.5), 5.051 mm (1). Without the
  // normalisation 1/(r² + ε²) outweighs the Gaussian ~100× at these spacings and c = 0.5 gave the
  // c = 0 radius to 1e-6: the option had no useful range.
  const int n = 31;
  const auto pos = PlanarGrid(n, n, 0.001, 0);
  auto layout = ProbeLayout::Create(pos, {0.0}, {}, 0, 0);
  ASSERT_TRUE(layout.ok());
  std::vector<double> h(n * n, 0.0);
  const int centre = (n / 2) * n + n / 2;
  h[centre] = 0.001;
  double mean_radius[3];
  const double cs[3] = {0.0, 0.5, 1.0};
  for (int i = 0; i < 3; ++i) {
    ElastomerParams params;
    params.lambda_d = 5e4;
    params.compressibility = cs[i];
    std::vector<double> u(3 * n * n);
    DilationDirect(*layout, params, h.data(), u.data());
    double num = 0, den = 0;
    for (int k = 0; k < n * n; ++k) {
      const double r = (pos[k] - pos[centre]).norm(), m = std::hypot(u[3 * k], u[3 * k + 1]);
      num += r * m, den += m;
    }
    mean_radius[i] = num / den;
  }
  EXPECT_NEAR(mean_radius[0], 9.967e-3, 1e-5);
  EXPECT_NEAR(mean_radius[1], 8.675e-3, 1e-5);
  EXPECT_NEAR(mean_radius[2], 5.051e-3, 1e-5);
  EXPECT_GT(mean_radius[0], mean_radius[1] + 1e-3);
  EXPECT_GT(mean_radius[1], mean_radius[2] + 3e-3);
}

TEST(ElastomerDilationTest, BondedLayerTransferMatchesItsClosedFormSeriesAndLimits) {
  // S(q) = 2q²/(sinh 2q − 2q). The series branch (2q < 1) against the closed form in long double
  // (cancellation costs ~3 of its 19 digits at q = 0.05); the closed form above.
  auto closed = [](long double q) { return 2 * q * q / (std::sinh(2 * q) - 2 * q); };
  for (double q : {0.05, 0.2, 0.45, 0.4999999}) {
    EXPECT_NEAR(BondedLayerTransfer(q), static_cast<double>(closed(q)), 1e-12 * static_cast<double>(closed(q))) << q;
  }
  for (double q : {0.5, 0.8, 2.0, 7.0}) EXPECT_DOUBLE_EQ(BondedLayerTransfer(q), static_cast<double>(closed(q))) << q;
  // Continuous where the branches meet (S' ≈ −7 there: 2e-12 apart moves S by ~1.4e-11).
  EXPECT_NEAR(BondedLayerTransfer(0.5 - 1e-12), BondedLayerTransfer(0.5 + 1e-12), 1e-10);
  // q → 0: S·q → 3/2 (S = (3/(2q))/(1 + (2q)²/20 + …): at q = 1e-3, S·q = 1.5·(1 − 2e-7)).
  EXPECT_NEAR(BondedLayerTransfer(1e-3) * 1e-3, 1.5 * (1 - 2e-7), 1e-12);
  // q → ∞: S → 4q²·e^(−2q) (the sinh's e^(−2q) half and the 2q are below 1e-15 relative at q = 20).
  EXPECT_NEAR(BondedLayerTransfer(20) / (4 * 400 * std::exp(-40.0)), 1.0, 1e-12);
  // Clamped to [1e-3, 30]; decreasing in q (a thinner layer transfers more at every k).
  EXPECT_EQ(BondedLayerTransfer(1e-7), BondedLayerTransfer(1e-3));
  EXPECT_EQ(BondedLayerTransfer(100), BondedLayerTransfer(30));
  for (double q = 1e-3; q < 30; q *= 1.1) EXPECT_GT(BondedLayerTransfer(q), BondedLayerTransfer(q * 1.1)) << q;
}

TEST(ElastomerDilationTest, GridGelsUseTheBondedLayerKernelNormalisedToItsPeak) {
  // 15 × 15 markers at 1 mm, c = 0, a paraboloid indentation h = max(0, 0.5 mm − r²/(2·1 cm)). The
  // layer kernel and the in-plane energy Σ|u_in-plane|² from an independent numpy implementation
  // of the same definition (numpy.fft.ifft2 of −i·k̂·S(|k|h) on the 32 × 32 padded grid, Nyquist
  // lines 0, divided by its largest magnitude over the offsets |di|, |dj| ≤ 14):
  //   thickness  K(0,1)_x     K(0,3)_x     K(2,0)_y     energy
  //   0.5 mm     1            0.35453505   0.31883813   3.443703854e-4
  //   1 mm       1            0.4661044    0.64565846   8.152533110e-4
  //   2 mm       0.79078736   0.8535697    1            2.809945023e-3
  //   4 mm       0.45985336   0.97141905   0.80111646   6.931847026e-3
  // The kernel points away from the indentation and has unit peak; once normalised so, a thicker
  // layer spreads farther (its kernel peaks at r ~ h and falls as h/r), while the transfer before
  // the normalisation is larger for a thinner one (S decreasing, test above).
  const int n = 15;
  const double s = 0.001;
  const auto pos = PlanarGrid(n, n, s, 0);
  const ProbeLayout layout = GridLayout(pos, n, n, Eigen::Vector3d::UnitZ());
  std::vector<double> h(n * n);
  for (int k = 0; k < n * n; ++k) h[k] = std::max(0.0, 0.5e-3 - pos[k].squaredNorm() / (2 * 0.01));
  const struct {
    double thickness, k01, k03, k20, energy;
  } rows[] = {{0.5e-3, 1, 0.35453505, 0.31883813, 3.443703854e-4},
              {1e-3, 1, 0.4661044, 0.64565846, 8.152533110e-4},
              {2e-3, 0.79078736, 0.8535697, 1, 2.809945023e-3},
              {4e-3, 0.45985336, 0.97141905, 0.80111646, 6.931847026e-3}};
  double previous = 0;
  for (const auto& r : rows) {
    ElastomerParams params;
    params.compressibility = 0;
    params.elastomer_thickness = r.thickness;
    TrackedGeometry g({}, 1, {{}});
    ASSERT_TRUE(g.PrepareDilation(layout, params));
    const auto* K = g.layer_kernel();
    ASSERT_NE(K, nullptr);
    EXPECT_NEAR(K->at(0, 1).x(), r.k01, 1e-7) << r.thickness;
    EXPECT_NEAR(K->at(0, -1).x(), -r.k01, 1e-7) << r.thickness;  // odd
    EXPECT_NEAR(K->at(0, 3).x(), r.k03, 1e-7) << r.thickness;
    EXPECT_NEAR(K->at(2, 0).y(), r.k20, 1e-7) << r.thickness;
    EXPECT_NEAR(K->at(2, 0).x(), 0, 1e-12) << r.thickness;
    EXPECT_NEAR(K->at(0, 3).z(), 0, 1e-12) << r.thickness;
    std::vector<double> direct(3 * n * n), fft(3 * n * n);
    Workspace ws;
    DilationDirect(layout, params, h.data(), direct.data(), &g);
    DilationFft(g, layout, params, h.data(), fft.data(), ws);
    double energy = 0;
    for (int k = 0; k < n * n; ++k) energy += direct[3 * k] * direct[3 * k] + direct[3 * k + 1] * direct[3 * k + 1];
    EXPECT_NEAR(energy, r.energy, 1e-8 * r.energy) << r.thickness;
    EXPECT_GT(energy, previous) << r.thickness;
    previous = energy;
    const double scale = MaxAbs(direct);
    for (size_t k = 0; k < direct.size(); ++k)
      ASSERT_NEAR(fft[k], direct[k], 1e-6 * scale) << r.thickness << " at " << k;
    // The same pad given as a flat list has no lattice: it keeps the 1/(r² + ε²) kernel.
    auto flat = ProbeLayout::Create(pos, {0.0}, {}, 0, 0);
    TrackedGeometry gf({}, 1, {{}});
    EXPECT_FALSE(gf.PrepareDilation(*flat, params));
    EXPECT_EQ(gf.layer_kernel(), nullptr);
  }
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
  static Eigen::Vector3d BallAt(double press, double x = 0, double y = 0) { return {x, y, kTop + kBallR - press}; }
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
    EXPECT_NEAR(u[3 * 9], u[3 * 9 + 1], 1e-6 * scale);      // marker (1, 1)
    EXPECT_NEAR(u[3 * 1], -u[3 * 6], 1e-6 * scale);         // (0, 1) ↔ (0, 6): u_x flips
    EXPECT_NEAR(u[3 * 1 + 1], u[3 * 6 + 1], 1e-6 * scale);  // u_y equal
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
  return {p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w(), b.x(), b.y(), b.z(), q.x(),
          q.y(), q.z(), q.w(), 0,     0,     2,     0,     0,     0,     1};
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
