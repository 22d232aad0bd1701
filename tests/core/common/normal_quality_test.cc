// Statistical quality of FillStandardNormals (core/common/rng.h), drawn the way the measured
// pipeline draws its white noise: stream kStreamNoise's key, counters (sensor, env, block, step),
// one 3072-value sample (512 probes × 6 channels) per (env, step).
//
// Every bound is a multiple of the statistic's standard error under H0 "independent N(0, 1)":
//   mean √(1/N), variance √(2/N), skewness √(6/N), excess kurtosis √(24/N) (×4);
//   Kolmogorov–Smirnov against Φ: p > 0.001 (asymptotic Kolmogorov distribution);
//   tail counts beyond 3σ, 4σ, 5σ: expectation N·erfc(t/√2), within 5 Poisson SE √expectation;
//   lag-1 correlations along the step axis and across neighbouring probes: |r| < 4/√pairs.
// The generator is discrete (20-bit radius, 12-bit angle; docs/reference.md#measured-branch): its
// exact tail masses beyond 3σ, 4σ and 5σ, summed over its 2^32 words by hand (a short script over
// the radius levels with r > t), differ from the Gaussian's by < 0.1 Poisson SE at 10^8 draws.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/common/rng.h"
#include "core/sensors/imperfections.h"
#include "gtest/gtest.h"

namespace taxel {
namespace {

constexpr uint32_t kSensor = 3;
constexpr size_t kSample = 512 * 6;

// Draws z[(e·steps + s)·kSample + i] = value i of env e at step s + 1.
std::vector<float> PipelineDraws(uint64_t seed, int envs, int steps) {
  const Philox4x32 rng(seed, sensors::kStreamNoise);
  std::vector<float> z(static_cast<size_t>(envs) * steps * kSample);
  for (int e = 0; e < envs; ++e) {
    for (int s = 0; s < steps; ++s) {
      float* out = &z[(static_cast<size_t>(e) * steps + s) * kSample];
      // In 512-value pieces from offsets, as MeasuredPipeline::ApplyStages fills them.
      for (size_t c0 = 0; c0 < kSample; c0 += 512) {
        FillStandardNormals(rng, kSensor, static_cast<uint32_t>(e), static_cast<uint32_t>(s + 1), out + c0, 512, c0);
      }
    }
  }
  return z;
}

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// P(√N·D > λ) for the Kolmogorov distribution, with Stephens' finite-N correction of λ.
double KolmogorovPValue(double d, double n) {
  const double lambda = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * d;
  double p = 0;
  for (int k = 1; k <= 100; ++k) p += 2 * ((k % 2) ? 1 : -1) * std::exp(-2.0 * k * k * lambda * lambda);
  return std::clamp(p, 0.0, 1.0);
}

// Pearson correlation of the pairs (z[a], z[a + lag]) for every a that `take(a)` accepts.
template <typename Take>
double LagCorrelation(const std::vector<float>& z, size_t lag, Take take, double* pairs) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, n = 0;
  for (size_t a = 0; a + lag < z.size(); ++a) {
    if (!take(a)) continue;
    const double x = z[a], y = z[a + lag];
    sa += x, sb += y, saa += x * x, sbb += y * y, sab += x * y, n += 1;
  }
  *pairs = n;
  const double cov = sab / n - (sa / n) * (sb / n);
  return cov / std::sqrt((saa / n - (sa / n) * (sa / n)) * (sbb / n - (sb / n) * (sb / n)));
}

class NormalQualityTest : public ::testing::Test {
 protected:
  // 32 envs × 102 steps × 3072 values = 10,027,008 draws, made once for the suite.
  static constexpr int kEnvs = 32, kSteps = 102;
  static void SetUpTestSuite() { draws_ = new std::vector<float>(PipelineDraws(20261202, kEnvs, kSteps)); }
  static void TearDownTestSuite() {
    delete draws_;
    draws_ = nullptr;
  }
  static const std::vector<float>& z() { return *draws_; }
  static std::vector<float>* draws_;
};
std::vector<float>* NormalQualityTest::draws_ = nullptr;

TEST_F(NormalQualityTest, MomentsWithinFourStandardErrors) {
  const double n = static_cast<double>(z().size());
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  for (float v : z()) {
    const double x = v, x2 = x * x;
    s1 += x, s2 += x2, s3 += x2 * x, s4 += x2 * x2;
  }
  const double mean = s1 / n;
  // Central moments from the raw ones.
  const double m2 = s2 / n - mean * mean;
  const double m3 = s3 / n - 3 * mean * s2 / n + 2 * mean * mean * mean;
  const double m4 = s4 / n - 4 * mean * s3 / n + 6 * mean * mean * s2 / n - 3 * std::pow(mean, 4);
  const double skew = m3 / std::pow(m2, 1.5), excess_kurtosis = m4 / (m2 * m2) - 3;
  EXPECT_NEAR(mean, 0.0, 4 * std::sqrt(1 / n));              // 4 × 3.16e-4
  EXPECT_NEAR(m2, 1.0, 4 * std::sqrt(2 / n));                // 4 × 4.47e-4
  EXPECT_NEAR(skew, 0.0, 4 * std::sqrt(6 / n));              // 4 × 7.74e-4
  EXPECT_NEAR(excess_kurtosis, 0.0, 4 * std::sqrt(24 / n));  // 4 × 1.55e-3
}

TEST_F(NormalQualityTest, KolmogorovSmirnovAgainstTheStandardNormal) {
  std::vector<float> sorted = z();
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  double d = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const double f = Phi(sorted[i]);
    d = std::max({d, (i + 1) / n - f, f - i / n});
  }
  const double p = KolmogorovPValue(d, n);
  EXPECT_GT(p, 0.001) << "D = " << d << " over " << n << " draws";
  // The test can fail: the same draws as if σ were 1/1.005 move Φ by 0.005·x·φ(x), up to
  // 0.005·φ(1) = 1.2e-3 at x = 1, twice the critical D = 1.95/√N = 6.2e-4 (p ≈ 1e-12).
  double d_scaled = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const double f = Phi(1.005 * sorted[i]);
    d_scaled = std::max({d_scaled, (i + 1) / n - f, f - i / n});
  }
  EXPECT_LT(KolmogorovPValue(d_scaled, n), 0.001) << "σ 0.5 % off must be detected, D = " << d_scaled;
}

// Count of |z| > t, against N·erfc(t/√2) within 5 Poisson standard errors.
void ExpectTailCount(const std::vector<float>& z, double t) {
  const double n = static_cast<double>(z.size());
  const double expected = n * std::erfc(t / std::sqrt(2.0));
  double count = 0;
  for (float v : z) count += std::fabs(v) > t;
  EXPECT_NEAR(count, expected, 5 * std::sqrt(expected)) << "beyond " << t << " sigma over " << n << " draws";
}

TEST_F(NormalQualityTest, TailsBeyondThreeAndFourSigma) {
  // 10^7 draws: 3σ expects 27,070 (SE 165), 4σ 635 (SE 25).
  ExpectTailCount(z(), 3.0);
  ExpectTailCount(z(), 4.0);
}

TEST(NormalQualityTailTest, TailBeyondFiveSigmaOver1e8Draws) {
  // 1024 envs × 32 steps × 3072 = 100,663,296 draws: 5σ expects 57.7 (SE 7.6). Beyond the
  // radius cut √(2 ln 2^21) = 5.39σ there is nothing, by construction.
  const std::vector<float> z = PipelineDraws(7, 1024, 32);
  ExpectTailCount(z, 5.0);
  float largest = 0;
  for (float v : z) largest = std::max(largest, std::fabs(v));
  EXPECT_LE(largest, 5.4f);
}

TEST_F(NormalQualityTest, NoLagOneCorrelationAlongStepsOrAcrossProbes) {
  double pairs = 0;
  // Along the step axis: value i of (env, step s) with value i of (env, s + 1).
  const size_t per_env = static_cast<size_t>(kSteps) * kSample;
  const double r_step = LagCorrelation(
      z(), kSample, [&](size_t a) { return a % per_env < per_env - kSample; }, &pairs);
  EXPECT_LT(std::fabs(r_step), 4 / std::sqrt(pairs)) << "along steps, " << pairs << " pairs";
  // Across neighbouring probes: channel c of probe k with channel c of probe k + 1 (6 channels).
  const double r_probe = LagCorrelation(
      z(), 6, [&](size_t a) { return a % kSample < kSample - 6; }, &pairs);
  EXPECT_LT(std::fabs(r_probe), 4 / std::sqrt(pairs)) << "across probes, " << pairs << " pairs";
  // Neighbouring channels of one probe (for even positions the two normals of one Box–Muller word).
  const double r_channel = LagCorrelation(
      z(), 1, [&](size_t a) { return a % kSample < kSample - 1; }, &pairs);
  EXPECT_LT(std::fabs(r_channel), 4 / std::sqrt(pairs)) << "across channels, " << pairs << " pairs";
  // Across neighbouring envs at the same step and value.
  const double r_env = LagCorrelation(
      z(), per_env, [](size_t) { return true; }, &pairs);
  EXPECT_LT(std::fabs(r_env), 4 / std::sqrt(pairs)) << "across envs, " << pairs << " pairs";
}

}  // namespace
}  // namespace taxel
