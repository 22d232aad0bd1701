// Counter-based random numbers: Philox4x32 (Salmon, Moraes, Dror, Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011), 10 rounds for uniforms and 7 for the Gaussian noise.
//
// A draw is a pure function of (key, counter): the same (scene seed, purpose, sensor, env, probe,
// step or reset count) always gives the same numbers, whichever thread computes them and in
// whatever order. There is no generator state to share between threads.
#ifndef TAXEL_CORE_COMMON_RNG_H_
#define TAXEL_CORE_COMMON_RNG_H_

#include <array>
#include <cmath>
#include <cstdint>

namespace taxel {

/// Rounds of Philox4x32 behind FillStandardNormals. Salmon et al. (Table 2) find Philox4x32-7 the
/// fewest rounds that pass TestU01 BigCrush (10 is their default, with a safety margin); the
/// normals' own quality is tested in tests/core/common/normal_quality_test.cc.
inline constexpr int kNormalRounds = 7;

/// Philox4x32: maps a 128-bit counter and a 64-bit key to 128 random bits, by 10 rounds
/// (operator()) or another round count (Rounds<R>, e.g. the 7 of kNormalRounds).
class Philox4x32 {
 public:
  using Block = std::array<uint32_t, 4>;

  /// `seed` is the scene seed; `stream` separates independent purposes (gain, noise, ...).
  constexpr Philox4x32(uint64_t seed, uint32_t stream)
      : k0_(static_cast<uint32_t>(seed) ^ (stream * 0x9E3779B9u)), k1_(static_cast<uint32_t>(seed >> 32) + stream) {}

  /// The 4 random words of Philox4x32-10 for counter (c0, c1, c2, c3).
  constexpr Block operator()(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) const {
    return Rounds<10>(c0, c1, c2, c3);
  }

  /// The 4 random words of Philox4x32-R (R rounds, the same key schedule) for (c0, c1, c2, c3).
  template <int R>
  constexpr Block Rounds(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) const {
    static_assert(R >= 1 && R <= 16, "Philox4x32 is defined for 1 to 16 rounds");
    Block c{c0, c1, c2, c3};
    uint32_t k0 = k0_, k1 = k1_;
    for (int round = 0; round < R; ++round) {
      const uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
      const uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
      c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
      k0 += kW0;
      k1 += kW1;
    }
    return c;
  }

  static constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  static constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  /// The generator with key (k0, k1) as returned by key0() and key1().
  static constexpr Philox4x32 FromKey(uint32_t k0, uint32_t k1) {
    Philox4x32 p(0, 0);
    p.k0_ = k0;
    p.k1_ = k1;
    return p;
  }
  uint32_t key0() const { return k0_; }
  uint32_t key1() const { return k1_; }

 private:
  uint32_t k0_, k1_;
};

/// Uniform double in [0, 1) from 32 random bits (resolution 2^-32).
constexpr double UniformFromBits(uint32_t bits) { return bits * (1.0 / 4294967296.0); }

/// Uniform double in (0, 1] (never 0, safe for log).
constexpr double UniformOpenZero(uint32_t bits) { return (bits + 1.0) * (1.0 / 4294967296.0); }

/// Standard normal from two words (Box–Muller, first output).
inline double NormalFromBits(uint32_t a, uint32_t b) {
  const double u1 = UniformOpenZero(a);
  const double u2 = UniformFromBits(b);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// Fills out[0, count) with standard normals (float) for the counters (c0, c1, b, c3) of `rng`,
/// b = 0, 1, …: block b = rng.Rounds<kNormalRounds>(c0, c1, b, c3) (Philox4x32-7, the key of
/// `rng`) gives out[8b, 8b + 8), two per 32-bit word w by Box–Muller, from the radius
/// uniform u1 = (⌊w / 2^12⌋ + ½) / 2^20 and the angle uniform u2 = (w mod 2^12 + ½) / 2^12:
/// out[2i] = √(−2 ln u1)·cos 2πu2, out[2i + 1] = √(−2 ln u1)·sin 2πu2. The tails are cut at
/// √(2 ln 2^21) ≈ 5.4σ and the angle has 4096 levels — ample for sensor noise. Branch-free float
/// arithmetic (series for ln, sin and cos; no libm) over 8 or 32 blocks at a time, vectorised
/// (AVX-512 or AVX2 intrinsics when the CPU has them, a portable loop otherwise; bit-identical
/// results: the same operations in the same order, the Horner steps of the series fused — FMA
/// instructions, or std::fma on the portable path).
/// Absolute accuracy 2e-6·max(1, |z|), down to the smallest radius (ln u1 is taken of u1 itself,
/// which is exact in float). `first` (a multiple of 8) skips the normals before it: out[i] is
/// normal number first + i of the sequence, so a long sequence can be produced piece by piece.
void FillStandardNormals(const Philox4x32& rng, uint32_t c0, uint32_t c1, uint32_t c3, float* out, size_t count,
                         size_t first = 0);

/// out[4i + w] = rng(c0, c1, c2 + i, c3)[w] (Philox4x32-10) for i < blocks: consecutive blocks, 8
/// at a time (AVX2 when the CPU has it).
void FillBlocks(const Philox4x32& rng, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t* out,
                size_t blocks);

namespace internal {
/// The two normals of word w (out[2i], out[2i + 1] above), by the portable code.
void NormalPairFromWord(uint32_t w, float* z0, float* z1);
/// FillStandardNormals on the portable path (`portable`) or the fastest one this CPU has (what
/// FillStandardNormals uses). For tests: the two are bit-identical.
void FillStandardNormalsWith(bool portable, const Philox4x32& rng, uint32_t c0, uint32_t c1, uint32_t c3, float* out,
                             size_t count, size_t first);
}  // namespace internal

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_RNG_H_
