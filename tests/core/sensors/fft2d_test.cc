// Fft2d against the definition of the discrete Fourier transform.
#include "core/sensors/fft2d.h"

#include <cmath>
#include <complex>
#include <vector>

#include "core/common/rng.h"
#include "gtest/gtest.h"

namespace taxel::sensors {
namespace {

using Complex = std::complex<double>;

std::vector<Complex> RandomField(int rows, int cols, uint64_t seed) {
  const Philox4x32 rng(seed, 1);
  std::vector<Complex> x(static_cast<size_t>(rows) * cols);
  for (size_t i = 0; i < x.size(); ++i) {
    const auto b = rng(static_cast<uint32_t>(i), 0, 0, 0);
    x[i] = {2 * UniformFromBits(b[0]) - 1, 2 * UniformFromBits(b[1]) - 1};
  }
  return x;
}

// The O(N²) definition X[k, l] = Σ_{m, n} x[m, n]·e^{−2πi (k m / rows + l n / cols)}.
std::vector<Complex> NaiveDft(const std::vector<Complex>& x, int rows, int cols) {
  std::vector<Complex> X(x.size());
  for (int k = 0; k < rows; ++k) {
    for (int l = 0; l < cols; ++l) {
      Complex s = 0;
      for (int m = 0; m < rows; ++m) {
        for (int n = 0; n < cols; ++n) {
          const double phase = -2 * M_PI * (static_cast<double>(k * m) / rows + static_cast<double>(l * n) / cols);
          s += x[m * cols + n] * std::polar(1.0, phase);
        }
      }
      X[k * cols + l] = s;
    }
  }
  return X;
}

TEST(Fft2dTest, DeltaAtOriginTransformsToAllOnes) {
  // x = δ[0, 0] → X[k, l] = e^0 = 1 for every (k, l).
  Fft2d fft(4, 8);
  Workspace ws;
  std::vector<Complex> x(32, 0.0);
  x[0] = 1.0;
  fft.Forward(x.data(), ws);
  for (int i = 0; i < 32; ++i) {
    EXPECT_NEAR(x[i].real(), 1.0, 1e-15) << i;
    EXPECT_NEAR(x[i].imag(), 0.0, 1e-15) << i;
  }
}

TEST(Fft2dTest, ShiftedDeltaIsAPurePhase) {
  // x = δ[1, 3] on 4 × 8 → X[k, l] = e^{−2πi (k/4 + 3l/8)}.
  Fft2d fft(4, 8);
  Workspace ws;
  std::vector<Complex> x(32, 0.0);
  x[1 * 8 + 3] = 1.0;
  fft.Forward(x.data(), ws);
  for (int k = 0; k < 4; ++k) {
    for (int l = 0; l < 8; ++l) {
      const Complex expected = std::polar(1.0, -2 * M_PI * (k / 4.0 + 3.0 * l / 8.0));
      EXPECT_NEAR(std::abs(x[k * 8 + l] - expected), 0.0, 1e-14) << k << ", " << l;
    }
  }
}

TEST(Fft2dTest, MatchesTheDefinitionAndRoundTrips) {
  for (auto [rows, cols] : {std::pair{1, 1}, {1, 16}, {8, 1}, {4, 8}, {16, 4}, {8, 8}}) {
    Fft2d fft(rows, cols);
    Workspace ws;
    const std::vector<Complex> x = RandomField(rows, cols, 11 + rows * 100 + cols);
    std::vector<Complex> y = x;
    fft.Forward(y.data(), ws);
    const std::vector<Complex> expected = NaiveDft(x, rows, cols);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(std::abs(y[i] - expected[i]), 0.0, 1e-12) << rows << "x" << cols << " at " << i;
    }
    fft.Inverse(y.data(), ws);  // includes 1/(rows·cols)
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(std::abs(y[i] - x[i]), 0.0, 1e-14) << rows << "x" << cols << " at " << i;
    }
  }
}

TEST(Fft2dTest, ZeroPaddingShortcutsMatchTheDefinition) {
  // A 3 × 8 field zero-padded to 8 × 8: Forward told that rows ≥ 3 are zero gives the full DFT;
  // Inverse told that 3 rows are wanted returns those rows of the field.
  Fft2d fft(8, 8);
  Workspace ws;
  std::vector<Complex> x = RandomField(8, 8, 5);
  for (size_t i = 3 * 8; i < x.size(); ++i) x[i] = 0.0;
  std::vector<Complex> y = x;
  fft.Forward(y.data(), ws, 3);
  const std::vector<Complex> expected = NaiveDft(x, 8, 8);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(std::abs(y[i] - expected[i]), 0.0, 1e-12) << i;
  fft.Inverse(y.data(), ws, 3);
  for (size_t i = 0; i < 3 * 8; ++i) EXPECT_NEAR(std::abs(y[i] - x[i]), 0.0, 1e-14) << i;
}

TEST(Fft2dTest, PowerOfTwoHelpers) {
  EXPECT_TRUE(Fft2d::IsPowerOfTwo(1));
  EXPECT_TRUE(Fft2d::IsPowerOfTwo(64));
  EXPECT_FALSE(Fft2d::IsPowerOfTwo(0));
  EXPECT_FALSE(Fft2d::IsPowerOfTwo(12));
  EXPECT_EQ(Fft2d::NextPowerOfTwo(1), 1);
  EXPECT_EQ(Fft2d::NextPowerOfTwo(9), 16);
  EXPECT_EQ(Fft2d::NextPowerOfTwo(16), 16);
  EXPECT_EQ(Fft2d::NextPowerOfTwo(15), 16);
}

}  // namespace
}  // namespace taxel::sensors
