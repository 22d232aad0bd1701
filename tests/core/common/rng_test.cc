// Tests for core/common/rng.h: the Random123 known-answer vectors for Philox4x32-10 and -7, and
// moment checks of the uniform and normal transforms with CLT-derived tolerances.
#include "core/common/rng.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace taxel {
namespace {

// The key our constructor derives from (seed, stream 0) is (low32(seed), high32(seed)):
// k0 = low32(seed) ^ (0 * 0x9E3779B9) = low32(seed), k1 = high32(seed) + 0.
Philox4x32 FromKey(uint32_t k0, uint32_t k1) {
  return Philox4x32(static_cast<uint64_t>(k0) | (static_cast<uint64_t>(k1) << 32), 0);
}

// Random123 1.14 tests/kat_vectors, lines "philox4x32 10 CTR[4] KEY[2] -> OUT[4]".
struct Kat {
  uint32_t ctr[4];
  uint32_t key[2];
  uint32_t out[4];
};
constexpr Kat kKats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxTest, Random123KnownAnswers) {
  for (const Kat& kat : kKats) {
    const Philox4x32 rng = FromKey(kat.key[0], kat.key[1]);
    const Philox4x32::Block out = rng(kat.ctr[0], kat.ctr[1], kat.ctr[2], kat.ctr[3]);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out[i], kat.out[i]) << "word " << i << " of KAT with ctr[0]=" << std::hex << kat.ctr[0];
    }
  }
}

// The same file's lines "philox4x32 7 CTR[4] KEY[2] -> OUT[4]": the generator of the normals.
constexpr Kat kKats7[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
};

TEST(PhiloxTest, Random123KnownAnswersWithSevenRounds) {
  static_assert(kNormalRounds == 7, "the KATs below are those of Philox4x32-7");
  for (const Kat& kat : kKats7) {
    const Philox4x32 rng = FromKey(kat.key[0], kat.key[1]);
    const Philox4x32::Block out = rng.Rounds<7>(kat.ctr[0], kat.ctr[1], kat.ctr[2], kat.ctr[3]);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out[i], kat.out[i]) << "word " << i << " of KAT with ctr[0]=" << std::hex << kat.ctr[0];
    }
  }
  // operator() is the 10-round generator.
  EXPECT_EQ(FromKey(0, 0)(0, 0, 0, 0), FromKey(0, 0).Rounds<10>(0, 0, 0, 0));
}

TEST(PhiloxTest, KnownAnswerIsAConstantExpression) {
  // The generator is constexpr: the first KAT evaluated at compile time.
  constexpr Philox4x32::Block out = Philox4x32(0, 0)(0, 0, 0, 0);
  static_assert(out[0] == 0x6627e8d5u && out[3] == 0x9b00dbd8u, "Philox4x32-10 KAT");
  SUCCEED();
}

TEST(PhiloxTest, StreamKeyDerivation) {
  // (seed, stream) -> key k0 = low32(seed) ^ stream*0x9E3779B9, k1 = high32(seed) + stream.
  // seed 0, stream 1: key (0x9E3779B9, 1).
  const Philox4x32 a(0, 1);
  const Philox4x32 b = FromKey(0x9E3779B9u, 1u);
  EXPECT_EQ(a(1, 2, 3, 4), b(1, 2, 3, 4));
  // Different streams of one seed, and different counters, give different words.
  EXPECT_NE(Philox4x32(42, 0)(0, 0, 0, 0), Philox4x32(42, 1)(0, 0, 0, 0));
  EXPECT_NE(Philox4x32(42, 0)(0, 0, 0, 0), Philox4x32(42, 0)(1, 0, 0, 0));
  EXPECT_NE(Philox4x32(42, 0)(0, 0, 0, 0), Philox4x32(42, 0)(0, 0, 0, 1));
}

TEST(PhiloxTest, PureFunctionOfKeyAndCounter) {
  const Philox4x32 a(0x0123456789abcdefull, 7), b(0x0123456789abcdefull, 7);
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(a(i, 5, 6, 7), b(i, 5, 6, 7));
}

TEST(UniformTest, Endpoints) {
  EXPECT_EQ(UniformFromBits(0), 0.0);
  EXPECT_EQ(UniformFromBits(0xffffffffu), 1.0 - std::ldexp(1.0, -32));
  EXPECT_LT(UniformFromBits(0xffffffffu), 1.0);
  EXPECT_EQ(UniformOpenZero(0), std::ldexp(1.0, -32));
  EXPECT_EQ(UniformOpenZero(0xffffffffu), 1.0);
  EXPECT_EQ(UniformFromBits(0x80000000u), 0.5);
}

constexpr int kDraws = 100000;

TEST(UniformTest, MeanAndVarianceOf1e5Draws) {
  // U(0,1): mean 1/2, variance 1/12, fourth central moment 1/80.
  // Std of the sample mean: sqrt(1/12 / n) = 9.13e-4 for n = 1e5; tolerance 5 sigma = 4.6e-3.
  // Std of the sample variance: sqrt((mu4 - sigma^4) / n) = sqrt((1/80 - 1/144) / 1e5) = 2.36e-4;
  // tolerance 5 sigma = 1.2e-3.
  const Philox4x32 rng(20240611, 3);
  double sum = 0, sum2 = 0;
  for (int i = 0; i < kDraws / 4; ++i) {
    for (uint32_t word : rng(static_cast<uint32_t>(i), 0, 0, 0)) {
      const double u = UniformFromBits(word);
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      sum += u;
      sum2 += u * u;
    }
  }
  const double mean = sum / kDraws;
  const double var = sum2 / kDraws - mean * mean;
  EXPECT_NEAR(mean, 0.5, 4.6e-3);
  EXPECT_NEAR(var, 1.0 / 12.0, 1.2e-3);
}

TEST(UniformTest, EveryBitIsSetHalfTheTime) {
  // Each of the 32 bit positions over n = 1e5 words: Binomial(n, 1/2) / n has std 0.5/sqrt(n) =
  // 1.58e-3; tolerance 5 sigma = 7.9e-3.
  const Philox4x32 rng(99, 0);
  int ones[32] = {};
  for (int i = 0; i < kDraws / 4; ++i) {
    for (uint32_t word : rng(0, static_cast<uint32_t>(i), 0, 0)) {
      for (int b = 0; b < 32; ++b) ones[b] += (word >> b) & 1u;
    }
  }
  for (int b = 0; b < 32; ++b) EXPECT_NEAR(ones[b] / static_cast<double>(kDraws), 0.5, 7.9e-3) << "bit " << b;
}

TEST(NormalTest, MeanAndVarianceOf1e5Draws) {
  // N(0,1): std of the sample mean 1/sqrt(n) = 3.16e-3 -> 5 sigma = 1.6e-2; the sample variance
  // has std sqrt((mu4 - 1)/n) = sqrt(2/n) = 4.47e-3 -> 5 sigma = 2.3e-2.
  const Philox4x32 rng(12345, 11);
  double sum = 0, sum2 = 0;
  int beyond_two_sigma = 0;
  for (int i = 0; i < kDraws / 2; ++i) {
    const auto b = rng(static_cast<uint32_t>(i), 1, 0, 0);
    for (int k = 0; k < 2; ++k) {
      const double z = NormalFromBits(b[2 * k], b[2 * k + 1]);
      ASSERT_TRUE(std::isfinite(z));
      sum += z;
      sum2 += z * z;
      beyond_two_sigma += std::abs(z) > 2.0;
    }
  }
  const double mean = sum / kDraws;
  const double var = sum2 / kDraws - mean * mean;
  EXPECT_NEAR(mean, 0.0, 1.6e-2);
  EXPECT_NEAR(var, 1.0, 2.3e-2);
  // P(|Z| > 2) = erfc(2/sqrt 2) = 0.0455; binomial std sqrt(p(1-p)/n) = 6.6e-4 -> 5 sigma 3.3e-3.
  EXPECT_NEAR(beyond_two_sigma / static_cast<double>(kDraws), std::erfc(2.0 / std::sqrt(2.0)), 3.3e-3);
}

TEST(NormalTest, ExtremeWordsStayFinite) {
  // u1 = UniformOpenZero(0) = 2^-32 > 0, so log never sees 0: |z| <= sqrt(-2 ln 2^-32) = 6.66.
  const double z = NormalFromBits(0, 0);
  EXPECT_NEAR(z, std::sqrt(64.0 * std::log(2.0)), 1e-12);  // cos(0) = 1
  EXPECT_EQ(NormalFromBits(0xffffffffu, 0), 0.0);          // u1 = 1: radius 0
}

// FillStandardNormals against its documented formula, evaluated here in double with libm: block
// b = Philox4x32-7 of (c0, c1, b, c3) (its words checked by the KATs above), word i → r = √(−2 ln((⌊w/4096⌋ +
// ½)/2^20)), θ = 2π((w mod 4096) + ½)/4096, out[8b + 2i] = r cos θ, out[8b + 2i + 1] = r sin θ. Float series: |error| ≤
// 2e-6·max(1, r).
TEST(FillStandardNormalsTest, MatchesTheBoxMullerFormulaWordByWord) {
  const Philox4x32 rng(99, 5);
  std::vector<float> z(8 * 20 + 5);  // 20 full blocks and a partial one
  FillStandardNormals(rng, 3, 4, 6, z.data(), z.size());
  for (size_t b = 0; 8 * b < z.size(); ++b) {
    const auto w = rng.Rounds<kNormalRounds>(3, 4, static_cast<uint32_t>(b), 6);
    for (int i = 0; i < 4; ++i) {
      const double r = std::sqrt(-2 * std::log(((w[i] >> 12) + 0.5) / 1048576.0));
      const double theta = 2 * M_PI * ((w[i] & 4095u) + 0.5) / 4096.0;
      const double tol = 2e-6 * std::max(1.0, r);
      if (8 * b + 2 * i < z.size()) {
        EXPECT_NEAR(z[8 * b + 2 * i], r * std::cos(theta), tol) << b << "/" << i;
      }
      if (8 * b + 2 * i + 1 < z.size()) {
        EXPECT_NEAR(z[8 * b + 2 * i + 1], r * std::sin(theta), tol) << b << "/" << i;
      }
    }
  }
  // A shorter fill is a prefix of a longer one (the tail block is cut, not redrawn).
  std::vector<float> shorter(13);
  FillStandardNormals(rng, 3, 4, 6, shorter.data(), shorter.size());
  for (size_t i = 0; i < shorter.size(); ++i) EXPECT_EQ(shorter[i], z[i]) << i;
  // Piece by piece from offsets (multiples of 8) gives the same sequence.
  std::vector<float> pieces(z.size());
  for (size_t first : {size_t{0}, size_t{64}, size_t{72}, size_t{160}}) {
    const size_t end = first == 0 ? 64 : first == 64 ? 72 : first == 72 ? 160 : z.size();
    FillStandardNormals(rng, 3, 4, 6, pieces.data() + first, end - first, first);
  }
  for (size_t i = 0; i < z.size(); ++i) EXPECT_EQ(pieces[i], z[i]) << i;
}

// Box–Muller of single words at the ends of both uniforms, against the formula in double: the
// radius uniform u1 = (k + ½)/2^20 from k = 0 (the 5.4σ tail) to k = 2^20 − 1 (u1 = 1 − 2^-21,
// r = √(−2 ln u1) ≈ 9.8e-4, where ln(k + ½) − 20 ln 2 would cancel to nothing in float).
TEST(FillStandardNormalsTest, ExtremeWordsMatchTheFormula) {
  for (uint32_t k : {0u, 1u, 1u << 19, (1u << 20) - 2, (1u << 20) - 1}) {
    for (uint32_t a : {0u, 511u, 1024u, 2047u, 3000u, 4095u}) {
      const uint32_t w = (k << 12) | a;
      float z0, z1;
      internal::NormalPairFromWord(w, &z0, &z1);
      const double r = std::sqrt(-2 * std::log((k + 0.5) / 1048576.0));
      const double theta = 2 * M_PI * (a + 0.5) / 4096.0;
      const double tol = 2e-6 * std::max(1.0, r);
      EXPECT_NEAR(z0, r * std::cos(theta), tol) << "k " << k << " a " << a;
      EXPECT_NEAR(z1, r * std::sin(theta), tol) << "k " << k << " a " << a;
    }
  }
}

// The vectorised path this CPU takes (AVX-512 or AVX2 intrinsics where available: 32-block batches,
// then 8-block AVX2 ones) and the portable loop give the same bits, including the tail of a fill
// that is not a multiple of 64.
TEST(FillStandardNormalsTest, FastPathIsBitIdenticalToThePortableOne) {
  for (uint32_t key : {0u, 7u, 0xdeadbeefu}) {
    const Philox4x32 rng(key, 106);
    std::vector<float> fast(4096 + 37), portable(fast.size());
    internal::FillStandardNormalsWith(false, rng, key, 9, 11, fast.data(), fast.size(), 8);
    internal::FillStandardNormalsWith(true, rng, key, 9, 11, portable.data(), portable.size(), 8);
    for (size_t i = 0; i < fast.size(); ++i) {
      uint32_t a, b;
      std::memcpy(&a, &fast[i], 4);
      std::memcpy(&b, &portable[i], 4);
      ASSERT_EQ(a, b) << "key " << key << " index " << i << ": " << fast[i] << " vs " << portable[i];
    }
  }
}

TEST(FillBlocksTest, EqualsTheScalarGeneratorBlockByBlock) {
  const Philox4x32 rng(2024, 101);
  // Two groups of 32 blocks (the AVX-512 path, where the CPU has it), one of 8 and a partial one.
  std::vector<uint32_t> words(4 * (32 * 2 + 8 + 3));
  FillBlocks(rng, 1, 2, 1000, 4, words.data(), words.size() / 4);
  for (size_t b = 0; b < words.size() / 4; ++b) {
    const auto expected = rng(1, 2, static_cast<uint32_t>(1000 + b), 4);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(words[4 * b + w], expected[w]) << b << "/" << w;
  }
}

TEST(FillStandardNormalsTest, MeanVarianceAndTailsOf1e5Draws) {
  // Same 5σ bounds as NormalTest.MeanAndVarianceOf1e5Draws.
  const Philox4x32 rng(12345, 12);
  std::vector<float> z(kDraws);
  FillStandardNormals(rng, 1, 2, 3, z.data(), z.size());
  double sum = 0, sum2 = 0;
  int beyond_two_sigma = 0;
  for (float v : z) {
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_LE(std::abs(v), 5.5f);  // √(2 ln 2^21) = 5.39: the radius cut
    sum += v, sum2 += double{v} * v;
    beyond_two_sigma += std::abs(v) > 2.0f;
  }
  const double mean = sum / kDraws, var = sum2 / kDraws - mean * mean;
  EXPECT_NEAR(mean, 0.0, 1.6e-2);
  EXPECT_NEAR(var, 1.0, 2.3e-2);
  EXPECT_NEAR(beyond_two_sigma / static_cast<double>(kDraws), std::erfc(2.0 / std::sqrt(2.0)), 3.3e-3);
}

}  // namespace
}  // namespace taxel
