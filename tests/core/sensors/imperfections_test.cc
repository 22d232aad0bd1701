// The measured-branch pipeline stage by stage (MeasuredPipeline fed with hand-made raw values),
// the Gaussian crosstalk kernel, and the validation of ImperfectionSpec.
#include "core/sensors/imperfections.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "core/common/rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::sensors {
namespace {

using ::testing::HasSubstr;

constexpr double kDt = 0.01;

ProbeLayout Layout(std::vector<Eigen::Vector3d> p, int rows = 0, int cols = 0,
                   std::vector<Eigen::Vector3d> normals = {}) {
  auto l = ProbeLayout::Create(std::move(p), {0.001}, std::move(normals), rows, cols);
  EXPECT_TRUE(l.ok()) << l.status();
  return *std::move(l);
}

// n probes 1 cm apart on the x axis (a flat list).
ProbeLayout Flat(int n) {
  std::vector<Eigen::Vector3d> p;
  for (int k = 0; k < n; ++k) p.emplace_back(0.01 * k, 0, 0);
  return Layout(std::move(p));
}

ProbeLayout Grid(int rows, int cols, double pitch, std::vector<Eigen::Vector3d> normals = {}) {
  return Layout(testing::PlanarGrid(rows, cols, pitch, 0), rows, cols, std::move(normals));
}

// Drives one MeasuredPipeline the way Scene::Step does: Prepare(dt), then Process with the env's
// step counters (1 on the first step).
class Pipe {
 public:
  Pipe(const ImperfectionSpec& spec, ProbeLayout layout, std::vector<ChannelGroup> groups = {ChannelGroup::kScalar},
       int num_envs = 1, uint64_t seed = 7)
      : layout_(std::move(layout)), steps_(num_envs, 0) {
    const absl::Status s = ValidateImperfections(spec, layout_, "sensor");
    EXPECT_TRUE(s.ok()) << s;
    pipe_ = std::make_unique<MeasuredPipeline>(spec, layout_, std::move(groups), num_envs, seed, /*sensor_id=*/3);
  }
  std::vector<float> Step(std::vector<float> raw, int env = 0, double dt = kDt) {
    ++steps_[env];
    pipe_->Prepare(dt);
    Workspace::Scope scope(ws_);
    const float* sample = pipe_->Process(env, steps_[env], steps_[env], dt, raw.data(), ws_);
    if (sample == nullptr) return std::vector<float>(raw.size(), 0.f);
    return std::vector<float>(sample, sample + raw.size());
  }
  MeasuredPipeline& pipeline() { return *pipe_; }

 private:
  ProbeLayout layout_;
  std::vector<uint64_t> steps_;
  std::unique_ptr<MeasuredPipeline> pipe_;
  Workspace ws_;
};

TEST(MeasuredPipelineTest, HysteresisFollowsTheExponentialMemory) {
  // ξ ← e^{−dt/τ}ξ + Δx, y = x + s·ξ with dt/τ = 0.2, s = 0.5 and x = D from step 0:
  //   step 0: Δx = D, ξ = D → y = 1.5·D;
  //   step i ≥ 1: Δx = 0, ξ = e^{−0.2 i}·D → y = D(1 + 0.5e^{−0.2 i}).
  // Release at step 5 (x → 0): ξ = e^{−1.0}·D − D → y = 0.5·D·(e^{−1} − 1) (undershoot).
  ImperfectionSpec spec;
  spec.hysteresis_strength = 0.5;
  spec.hysteresis_tau = 0.05;
  Pipe p(spec, Flat(1));
  const float D = 0.003f;
  EXPECT_NEAR(p.Step({D})[0], 1.5 * D, 1e-9);
  for (int i = 1; i <= 4; ++i) EXPECT_NEAR(p.Step({D})[0], D * (1 + 0.5 * std::exp(-0.2 * i)), 1e-9) << i;
  EXPECT_NEAR(p.Step({0.f})[0], 0.5 * D * (std::exp(-1.0) - 1), 1e-9);
}

TEST(MeasuredPipelineTest, HysteresisDecaysOverTheTimeBetweenSamples) {
  // update_period 2: samples at steps 1, 3, 5 are 2·dt apart, so ξ decays by e^{−2dt/τ} = e^{−0.4}
  // per sample: 1.5·D, (held), D(1 + 0.5e^{−0.4}), (held), D(1 + 0.5e^{−0.8}).
  ImperfectionSpec spec;
  spec.hysteresis_strength = 0.5;
  spec.hysteresis_tau = 0.05;
  spec.update_period = 2;
  Pipe p(spec, Flat(1));
  const float D = 0.003f;
  const double expected[] = {1.5 * D, 1.5 * D, D * (1 + 0.5 * std::exp(-0.4)), D * (1 + 0.5 * std::exp(-0.4)),
                             D * (1 + 0.5 * std::exp(-0.8))};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(p.Step({D})[0], expected[i], 1e-9) << "step " << i + 1;
}

TEST(MeasuredPipelineTest, WhiteNoiseHasZeroMeanAndSigma) {
  // 200 probes × 100 steps = N = 20000 draws of σ·N(0, 1), σ = 0.1. Standard error of the mean
  // σ/√N = 7.1e-4, of the standard deviation σ/√(2N) = 5e-4; tolerances are 5 of those.
  ImperfectionSpec spec;
  spec.noise = 0.1;
  Pipe p(spec, Flat(200));
  double sum = 0, sum2 = 0;
  const int steps = 100;
  for (int s = 0; s < steps; ++s) {
    for (float v : p.Step(std::vector<float>(200, 0.f))) sum += v, sum2 += double(v) * v;
  }
  const double n = 200.0 * steps, mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 5 * 0.1 / std::sqrt(n));
  EXPECT_NEAR(sd, 0.1, 5 * 0.1 / std::sqrt(2 * n));
}

TEST(MeasuredPipelineTest, RandomWalkVarianceGrowsLinearly) {
  // After t steps each channel holds a sum of t independent N(0, σ²) increments: variance t·σ².
  // Over 4000 probes the sample variance has a relative standard error √(2/4000) = 2.2%;
  // tolerance 12% (> 5σ).
  ImperfectionSpec spec;
  spec.random_walk = 0.01;
  const int n = 4000;
  Pipe p(spec, Flat(n));
  for (int t = 1; t <= 40; ++t) {
    const std::vector<float> out = p.Step(std::vector<float>(n, 0.f));
    if (t != 10 && t != 40) continue;
    double sum = 0, sum2 = 0;
    for (float v : out) sum += v, sum2 += double(v) * v;
    const double mean = sum / n, var = sum2 / n - mean * mean;
    EXPECT_NEAR(var, t * 1e-4, 0.12 * t * 1e-4) << "t = " << t;
    EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(t * 1e-4 / n)) << "t = " << t;
  }
}

TEST(MeasuredPipelineTest, BiasAddsExactly) {
  ImperfectionSpec spec;
  spec.bias = 0.125;
  Pipe p(spec, Flat(3));
  EXPECT_EQ(p.Step({0.25f, -1.f, 0.f}), (std::vector<float>{0.375f, -0.875f, 0.125f}));
}

TEST(MeasuredPipelineTest, ResolutionRoundsHalfToEven) {
  // Step 0.5: 0.25 = ½ step → 0 (even), 0.75 = 1½ → 2 steps = 1.0, 1.25 = 2½ → 2 steps = 1.0,
  // 1.75 = 3½ → 4 steps = 2.0, −0.75 → −1.0, 0.3 → 0.5 (nearest).
  ImperfectionSpec spec;
  spec.resolution = 0.5;
  Pipe p(spec, Flat(6));
  EXPECT_EQ(p.Step({0.25f, 0.75f, 1.25f, 1.75f, -0.75f, 0.3f}), (std::vector<float>{0.f, 1.f, 1.f, 2.f, -1.f, 0.5f}));
}

// Dead probes read the draws keyed by their own index, whatever their rank among the env's dead
// probes (the values are stored packed): probe k of env e is dead when the uniform of Philox
// block (sensor, e, k, reset) of the dead stream is below the probability, and channel c then
// reads lo + (hi − lo)·u with u from block (sensor, e, 8k + c, reset) of the dead-value stream.
// 150 probes span three 64-bit words of the dead mask; env 2 of 3 and a reset check the keys.
TEST(MeasuredPipelineTest, DeadProbesReadTheirOwnKeyedDraws) {
  constexpr int kProbes = 150, kEnvs = 3, kEnv = 2, kC = 2;
  constexpr uint64_t kSeed = 7;
  constexpr uint32_t kSensor = 3;
  ImperfectionSpec spec;
  spec.dead_taxel_probability = 0.3;
  spec.dead_taxel_value_range = {2.0, 3.0};
  Pipe p(spec, Flat(kProbes), {ChannelGroup::kScalar, ChannelGroup::kScalar}, kEnvs, kSeed);
  std::vector<float> raw(kProbes * kC);
  for (int i = 0; i < kProbes * kC; ++i) raw[i] = -0.001f * i;  // live probes pass through
  const Philox4x32 dead_rng(kSeed, kStreamDead), value_rng(kSeed, kStreamDeadValue);
  for (const uint32_t reset : {0u, 5u}) {
    if (reset > 0) p.pipeline().ResetEnv(kEnv, reset);
    const std::vector<float> out = p.Step(raw, kEnv);
    int dead = 0;
    for (int k = 0; k < kProbes; ++k) {
      const bool is_dead = UniformFromBits(dead_rng(kSensor, kEnv, k, reset)[0]) < 0.3;
      dead += is_dead;
      for (int c = 0; c < kC; ++c) {
        const float expected =
            is_dead ? static_cast<float>(2.0 + UniformFromBits(value_rng(kSensor, kEnv, 8 * k + c, reset)[0]))
                    : raw[k * kC + c];
        EXPECT_EQ(out[k * kC + c], expected) << "probe " << k << ", channel " << c << ", reset " << reset;
      }
    }
    EXPECT_GT(dead, 20);  // 45 expected: the packed storage holds many
  }
}

TEST(MeasuredPipelineTest, UpdatePeriodHoldsBetweenSamples) {
  // Period 3: samples at steps 1, 4, 7 (since reset) and holds them in between.
  ImperfectionSpec spec;
  spec.update_period = 3;
  Pipe p(spec, Flat(1));
  const float expected[] = {1, 1, 1, 4, 4, 4, 7};
  for (int i = 1; i <= 7; ++i) EXPECT_EQ(p.Step({float(i)})[0], expected[i - 1]) << "step " << i;
}

TEST(MeasuredPipelineTest, UpdatePeriodWithDelayAndHistoryHoldsInTheRing) {
  // Period 2 and delay dt: samples at steps 1, 3, 5 (x = step number), held in between, so the
  // reported values are 0 (not filled), then the held sample one step old: 1, 1, 3, 3, 5. The
  // history pushes the held sample every step: after step 4 it reads 3, 3, 1, 1 newest first.
  ImperfectionSpec spec;
  spec.update_period = 2;
  spec.delay = kDt;
  spec.history_length = 4;
  Pipe p(spec, Flat(1));
  const float expected[] = {0, 1, 1, 3, 3, 5};
  for (int i = 1; i <= 6; ++i) {
    EXPECT_EQ(p.Step({float(i)})[0], expected[i - 1]) << "step " << i;
    if (i == 4) {
      const float history[] = {3, 3, 1, 1};
      for (int h = 0; h < 4; ++h) {
        ASSERT_NE(p.pipeline().History(0, h), nullptr) << h;
        EXPECT_EQ(p.pipeline().History(0, h)[0], history[h]) << "history " << h;
      }
    }
  }
}

TEST(MeasuredPipelineTest, DelayIsAZeroOrderHoldThatReadsZeroUntilFilled) {
  // delay = 2·dt → the sample 2 steps old: 0, 0, x1, x2, ...; the history is not delayed.
  ImperfectionSpec spec;
  spec.delay = 2 * kDt;
  spec.history_length = 3;
  Pipe p(spec, Flat(1));
  EXPECT_EQ(p.pipeline().History(0, 0), nullptr);
  const float x[] = {1.5f, 3.f, 4.5f, 6.f, 7.5f};
  const float expected[] = {0.f, 0.f, 1.5f, 3.f, 4.5f};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(p.Step({x[i]})[0], expected[i]) << "step " << i + 1;
    ASSERT_NE(p.pipeline().History(0, 0), nullptr);
    EXPECT_EQ(p.pipeline().History(0, 0)[0], x[i]);  // newest = this step's sample
    if (i >= 1) {
      EXPECT_EQ(p.pipeline().History(0, 1)[0], x[i - 1]);
    }
    if (i < 2) {
      EXPECT_EQ(p.pipeline().History(0, 2), nullptr);  // not yet that many samples
    }
  }
  // Reset: the ring reads empty again.
  p.pipeline().ResetEnv(0, 1);
  EXPECT_EQ(p.pipeline().History(0, 0), nullptr);
}

TEST(MeasuredPipelineTest, JitterNeverReturnsUndelayedData) {
  // delay 2·dt, jitter dt: d = 2 + U(−1, 1) steps with probabilistic rounding → the age is 1, 2
  // or 3 with probabilities ¼, ½, ¼ (for d ∈ [1, 2) the chance of age 1 is 2 − d, mean ½ over
  // that half). With x_i = i the read value tells its age. Over 2000 steps the binomial
  // standard deviations are ≤ 22 counts; tolerance 5σ.
  ImperfectionSpec spec;
  spec.delay = 2 * kDt;
  spec.jitter = kDt;
  Pipe p(spec, Flat(1));
  int count[4] = {0, 0, 0, 0};
  const int steps = 2000;
  for (int i = 1; i <= steps; ++i) {
    const float v = p.Step({float(i)})[0];
    if (i <= 3) {
      EXPECT_TRUE(v == 0.f || (v >= i - 3 && v <= i - 1)) << "step " << i << " read " << v;
      continue;
    }
    const int age = i - static_cast<int>(v);
    ASSERT_GE(age, 1) << "step " << i << " returned undelayed data";
    ASSERT_LE(age, 3) << "step " << i;
    ++count[age];
  }
  const double n = steps - 3;
  EXPECT_NEAR(count[1], 0.25 * n, 5 * std::sqrt(n * 0.25 * 0.75));
  EXPECT_NEAR(count[2], 0.50 * n, 5 * std::sqrt(n * 0.25));
  EXPECT_NEAR(count[3], 0.25 * n, 5 * std::sqrt(n * 0.25 * 0.75));
}

TEST(MeasuredPipelineTest, SetGainsLastsUntilAResetRedrawsThem) {
  // Without a resample range a reset keeps the gains set at run time; with one it redraws them.
  ImperfectionSpec fixed;
  fixed.probe_gain = {1.5};
  Pipe a(fixed, Flat(2), {ChannelGroup::kScalar}, /*num_envs=*/2);
  EXPECT_EQ(a.pipeline().gain(1, 0), 1.5);
  const double g[2] = {2.0, 3.0};
  a.pipeline().SetGains(1, g);
  a.pipeline().ResetEnv(1, 1);
  EXPECT_EQ(a.pipeline().gain(1, 0), 2.0);
  EXPECT_EQ(a.pipeline().gain(1, 1), 3.0);
  EXPECT_EQ(a.pipeline().gain(0, 1), 1.5);
  ImperfectionSpec drawn;
  drawn.probe_gain_resample_range = {{0.5, 0.75}};
  Pipe b(drawn, Flat(2));
  b.pipeline().SetGains(0, g);
  b.pipeline().ResetEnv(0, 1);
  EXPECT_GE(b.pipeline().gain(0, 0), 0.5);
  EXPECT_LE(b.pipeline().gain(0, 1), 0.75);
}

TEST(MeasuredPipelineTest, IdentityCrosstalkIsAnExactNoOp) {
  // A 3 × 4 grid of force+torque probes with tilted normals; identity kernels (1 and 3 layers,
  // both border modes) must return the input bit for bit, −0 included.
  const int rows = 3, cols = 4, n = rows * cols;
  std::vector<Eigen::Vector3d> normals;
  for (int k = 0; k < n; ++k) normals.push_back(Eigen::Vector3d(0.3 + 0.1 * k, -0.7, 1.1).normalized());
  std::vector<float> raw(6 * n);
  const Philox4x32 rng(5, 1);
  for (size_t i = 0; i < raw.size(); ++i) {
    raw[i] = static_cast<float>(2 * UniformFromBits(rng(static_cast<uint32_t>(i), 0, 0, 0)[0]) - 1);
  }
  raw[7] = -0.f;
  const std::vector<double> delta = {0, 0, 0, 0, 1, 0, 0, 0, 0};
  for (int layers : {1, 3}) {
    for (CrosstalkBorder border : {CrosstalkBorder::kZero, CrosstalkBorder::kRenormalize}) {
      ImperfectionSpec spec;
      spec.crosstalk_kernel_layers = layers;
      spec.crosstalk_kernel_rows = spec.crosstalk_kernel_cols = 3;
      for (int l = 0; l < layers; ++l) {
        spec.crosstalk_kernel.insert(spec.crosstalk_kernel.end(), delta.begin(), delta.end());
      }
      spec.crosstalk_border = border;
      Pipe p(spec, Grid(rows, cols, 0.01, normals), {ChannelGroup::kForceLike, ChannelGroup::kTorque});
      const std::vector<float> out = p.Step(raw);
      EXPECT_EQ(std::memcmp(out.data(), raw.data(), raw.size() * sizeof(float)), 0)
          << layers << " layers, border " << static_cast<int>(border);
    }
  }
}

// Per-axis Gaussian weights g_m = exp(−m²·pitch²/(2σ²)) with pitch = σ: exp(−m²/2).
double G(int m) { return std::exp(-0.5 * m * m); }

TEST(MeasuredPipelineTest, GaussianCrosstalkMatchesHandValues) {
  // 5 × 5 grid, pitch = σ = 1 cm: the kernel covers ±3σ → 7 × 7, K[a][b] = g_a·g_b / S², with
  // S = Σ_{m=−3..3} g_m. A unit source at the centre with strength s = 0.5 gives
  //   centre: (1 − s) + s·g_0²/S², edge neighbour: s·g_0·g_1/S², corner (2, 2) away: s·g_2²/S².
  ImperfectionSpec spec;
  spec.crosstalk_strength = 0.5;
  spec.crosstalk_sigma = 0.01;
  Pipe p(spec, Grid(5, 5, 0.01));
  std::vector<float> raw(25, 0.f);
  raw[12] = 1.f;
  const std::vector<float> y = p.Step(raw);
  double S = 0;
  for (int m = -3; m <= 3; ++m) S += G(m);
  EXPECT_NEAR(y[12], 0.5 + 0.5 / (S * S), 1e-7);
  EXPECT_NEAR(y[13], 0.5 * G(1) / (S * S), 1e-7);
  EXPECT_NEAR(y[7], 0.5 * G(1) / (S * S), 1e-7);
  EXPECT_NEAR(y[0], 0.5 * G(2) * G(2) / (S * S), 1e-7);
  EXPECT_NEAR(y[24], 0.5 * G(2) * G(2) / (S * S), 1e-7);
}

TEST(MeasuredPipelineTest, GaussianCrosstalkOfWideRowsMatchesHandValues) {
  // A 9 × 23 grid of 3-channel (force-like) probes, so that a row holds 69 values: the blur sums
  // the first 48 as three 16-value vectors, the next 16 as one and the last 5 one by one. Pitch
  // 1 cm (7 × 7 kernel, zero border, strength s = 0.5). Unit sources, one channel each, far
  // enough apart that their kernels do not overlap: (4, 2) channel 0, (4, 11) channel 1,
  // (4, 20) channel 2 — the last reaches columns 17–22, values 51–68 of the row (the single vector
  // and the tail). Every value is the closed form of GaussianCrosstalkMatchesHandValues:
  // (1 − s)·[centre] + s·g_a·g_b / S² within the kernel of its source, 0 elsewhere, with
  // g_m = exp(−½(m·pitch/σ)²). σ = 0.99 pitch, so that the kernel's half-width ⌈3σ/pitch⌉ is 3
  // whatever the rounding of the pitch measured from the grid (at σ = pitch it may come out as 4).
  constexpr int kRows = 9, kCols = 23, kC = 3;
  ImperfectionSpec spec;
  spec.crosstalk_strength = 0.5;
  spec.crosstalk_sigma = 0.0099;
  spec.crosstalk_border = CrosstalkBorder::kZero;
  const auto g = [](int m) { return std::exp(-0.5 * (m / 0.99) * (m / 0.99)); };
  Pipe p(spec, Grid(kRows, kCols, 0.01), {ChannelGroup::kForceLike});
  const int source_col[3] = {2, 11, 20};
  std::vector<float> raw(kRows * kCols * kC, 0.f);
  for (int c = 0; c < 3; ++c) raw[(4 * kCols + source_col[c]) * kC + c] = 1.f;
  const std::vector<float> y = p.Step(raw);
  double S = 0;
  for (int m = -3; m <= 3; ++m) S += g(m);
  int nonzero = 0;
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) {
      for (int c = 0; c < kC; ++c) {
        const int a = i - 4, b = j - source_col[c];
        double expected = 0;
        if (std::abs(a) <= 3 && std::abs(b) <= 3) expected = 0.5 * g(a) * g(b) / (S * S) + (a == 0 && b == 0 ? 0.5 : 0);
        const float got = y[(i * kCols + j) * kC + c];
        EXPECT_NEAR(got, expected, 1e-7) << "row " << i << " col " << j << " channel " << c;
        nonzero += got != 0;
      }
    }
  }
  // Each source spreads over its 7 × 7 kernel and nowhere else; the first and the last lose one
  // column of it past the border (columns −1 and 23).
  EXPECT_EQ(nonzero, (6 + 7 + 6) * 7);
}

TEST(MeasuredPipelineTest, RenormalizeConservesTheTotalAndZeroLeaksAtTheBorder) {
  // Force-like channels (normal +z) with a source F = (0.3, −0.2, 1) at corner (0, 0) and
  // (0, 0, 2) at (2, 3) of a 5 × 5 grid, Gaussian σ = pitch, strength 1.
  //  - renormalize: every source keeps its whole value → totals (0.3, −0.2, 3).
  //  - zero: the corner source keeps the kernel mass on the grid, (Σ_{m=0..3} g_m / S)² of it;
  //    the (2, 3) source reaches rows 2 − m for m ∈ [−2, 2] and columns 3 − m for m ∈ [−1, 3]:
  //    (Σ_{m=−2..2} g_m / S)·(Σ_{m=−1..3} g_m / S) of it.
  std::vector<float> raw(75, 0.f);
  raw[0] = 0.3f, raw[1] = -0.2f, raw[2] = 1.f;
  raw[3 * 13 + 2] = 2.f;
  double S = 0, half = 0, rows_in = 0, cols_in = 0;
  for (int m = -3; m <= 3; ++m) S += G(m);
  for (int m = 0; m <= 3; ++m) half += G(m);
  for (int m = -2; m <= 2; ++m) rows_in += G(m);
  for (int m = -1; m <= 3; ++m) cols_in += G(m);
  for (CrosstalkBorder border : {CrosstalkBorder::kRenormalize, CrosstalkBorder::kZero}) {
    ImperfectionSpec spec;
    spec.crosstalk_strength = 1;
    spec.crosstalk_sigma = 0.01;
    spec.crosstalk_border = border;
    Pipe p(spec, Grid(5, 5, 0.01), {ChannelGroup::kForceLike});
    const std::vector<float> y = p.Step(raw);
    double total[3] = {0, 0, 0};
    for (int k = 0; k < 25; ++k) {
      for (int a = 0; a < 3; ++a) total[a] += y[3 * k + a];
    }
    if (border == CrosstalkBorder::kRenormalize) {
      EXPECT_NEAR(total[0], 0.3, 1e-6);
      EXPECT_NEAR(total[1], -0.2, 1e-6);
      EXPECT_NEAR(total[2], 3.0, 1e-6);
    } else {
      const double corner = (half / S) * (half / S);
      EXPECT_NEAR(total[0], 0.3 * corner, 1e-6);
      EXPECT_NEAR(total[1], -0.2 * corner, 1e-6);
      EXPECT_NEAR(total[2], corner + 2 * (rows_in / S) * (cols_in / S), 1e-6);
      EXPECT_LT(total[2], 3.0 - 0.5);
    }
  }
}

TEST(GaussianCrosstalkKernelTest, OddSizedNormalisedAndGaussianByHand) {
  // 3 × 5 kernel, σ = 1 cm, row spacing 1 cm, column spacing 2 cm; centre (1, 2).
  //   K[0][2] / K[1][2] = exp(−(1 cm)²/(2σ²)) = e^{−0.5}
  //   K[1][3] / K[1][2] = exp(−(2 cm)²/(2σ²)) = e^{−2}
  //   K[0][4] / K[1][2] = exp(−((1 cm)² + (4 cm)²)/(2σ²)) = e^{−8.5}
  // Separable: Σ K / K_centre = (1 + 2e^{−0.5})·(1 + 2e^{−2} + 2e^{−8}) = 1 / K_centre.
  auto k = GaussianCrosstalkKernel(3, 5, 0.01, 0.01, 0.02);
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_EQ(k->size(), 15u);
  const auto& K = *k;
  EXPECT_NEAR(std::accumulate(K.begin(), K.end(), 0.0), 1.0, 1e-15);
  const double c = K[1 * 5 + 2];
  EXPECT_NEAR(K[0 * 5 + 2] / c, std::exp(-0.5), 1e-14);
  EXPECT_NEAR(K[1 * 5 + 3] / c, std::exp(-2.0), 1e-14);
  EXPECT_NEAR(K[0 * 5 + 4] / c, std::exp(-8.5), 1e-14);
  EXPECT_NEAR(c, 1 / ((1 + 2 * std::exp(-0.5)) * (1 + 2 * std::exp(-2.0) + 2 * std::exp(-8.0))), 1e-15);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 5; ++b) EXPECT_DOUBLE_EQ(K[a * 5 + b], K[(2 - a) * 5 + (4 - b)]);  // symmetric
  }
  for (auto [r, cc] : {std::pair{4, 3}, {3, 0}, {-1, 3}}) {
    auto bad = GaussianCrosstalkKernel(r, cc, 0.01, 0.01, 0.01);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(bad.status().message(), HasSubstr("odd"));
  }
  EXPECT_THAT(GaussianCrosstalkKernel(3, 3, 0, 0.01, 0.01).status().message(), HasSubstr("sigma"));
  EXPECT_THAT(GaussianCrosstalkKernel(3, 3, 0.01, 0, 0.01).status().message(), HasSubstr("spacing"));
}

struct BadSpec {
  const char* what;
  std::function<void(ImperfectionSpec&)> apply;
  const char* message;
};

TEST(ValidateImperfectionsTest, RefusesEachBadOptionByName) {
  const std::vector<BadSpec> cases = {
      {"negative radius noise", [](auto& s) { s.probe_radius_noise = -1; }, "sensor.imperfections.probe_radius_noise"},
      {"gain count",
       [](auto& s) {
         s.probe_gain = {1, 2};
       },
       "probe_gain: expected 1 or 9 values, got 2"},
      {"gain range",
       [](auto& s) {
         s.probe_gain_resample_range = {{2.0, 1.0}};
       },
       "probe_gain_resample_range"},
      {"strength > 1", [](auto& s) { s.crosstalk_strength = 1.5; }, "crosstalk_strength: expected a value in [0, 1]"},
      {"no sigma", [](auto& s) { s.crosstalk_strength = 0.5; }, "crosstalk_sigma: expected a value > 0"},
      {"even kernel",
       [](auto& s) {
         s.crosstalk_kernel.assign(4, 0.25);
         s.crosstalk_kernel_layers = 1, s.crosstalk_kernel_rows = 2, s.crosstalk_kernel_cols = 2;
       },
       "crosstalk_kernel: expected an odd-sized kernel"},
      {"kernel count",
       [](auto& s) {
         s.crosstalk_kernel.assign(8, 0.1);
         s.crosstalk_kernel_layers = 1, s.crosstalk_kernel_rows = 3, s.crosstalk_kernel_cols = 3;
       },
       "crosstalk_kernel: value count"},
      {"hysteresis without tau", [](auto& s) { s.hysteresis_strength = 0.3; }, "hysteresis_tau: expected a value > 0"},
      {"negative noise", [](auto& s) { s.noise = -0.1; }, "sensor.imperfections.noise"},
      {"nan walk", [](auto& s) { s.random_walk = NAN; }, "sensor.imperfections.random_walk"},
      {"inf bias", [](auto& s) { s.bias = INFINITY; }, "sensor.imperfections.bias"},
      {"negative resolution", [](auto& s) { s.resolution = -0.5; }, "sensor.imperfections.resolution"},
      {"dead probability", [](auto& s) { s.dead_taxel_probability = 1.5; }, "dead_taxel_probability"},
      {"dead range",
       [](auto& s) {
         s.dead_taxel_value_range = {1.0, 0.0};
       },
       "dead_taxel_value_range"},
      {"jitter > delay",
       [](auto& s) {
         s.delay = 0.01;
         s.jitter = 0.02;
       },
       "jitter: expected jitter <= delay"},
      {"history", [](auto& s) { s.history_length = -1; }, "history_length"},
      {"update period", [](auto& s) { s.update_period = 0; }, "update_period: expected a value >= 1, got 0"},
  };
  const ProbeLayout grid = Grid(3, 3, 0.01);
  for (const BadSpec& c : cases) {
    ImperfectionSpec spec;
    c.apply(spec);
    const absl::Status s = ValidateImperfections(spec, grid, "sensor");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.what;
  }
  // The valid limits are accepted: jitter = delay, strength 1, probability 1, an odd kernel.
  ImperfectionSpec ok;
  ok.delay = ok.jitter = 0.01;
  ok.crosstalk_strength = 1;
  ok.crosstalk_sigma = 0.01;
  ok.dead_taxel_probability = 1;
  ok.hysteresis_strength = 0.5;
  ok.hysteresis_tau = 0.1;
  EXPECT_TRUE(ValidateImperfections(ok, grid, "sensor").ok());
  ok.crosstalk_kernel.assign(3 * 5, 1.0 / 15);
  ok.crosstalk_kernel_layers = 1, ok.crosstalk_kernel_rows = 3, ok.crosstalk_kernel_cols = 5;
  EXPECT_TRUE(ValidateImperfections(ok, grid, "sensor").ok());
}

TEST(ValidateImperfectionsTest, CrosstalkNeedsARegularGrid) {
  ImperfectionSpec spec;
  spec.crosstalk_strength = 0.2;
  spec.crosstalk_sigma = 0.01;
  absl::Status s = ValidateImperfections(spec, Flat(9), "sensor");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sensor.imperfections.crosstalk: crosstalk needs a grid layout"));
  // A 3 × 3 "grid" whose probe [1, 2] is 1 mm off the lattice.
  auto p = testing::PlanarGrid(3, 3, 0.01, 0);
  p[5].y() += 0.001;
  s = ValidateImperfections(spec, Layout(p, 3, 3), "sensor");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("crosstalk needs a regular grid; probe [1, 2]"));
  // Without crosstalk a flat or irregular layout is fine.
  spec.crosstalk_strength = 0;
  EXPECT_TRUE(ValidateImperfections(spec, Layout(p, 3, 3), "sensor").ok());
}

}  // namespace
}  // namespace taxel::sensors
