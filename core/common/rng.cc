#include "core/common/rng.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/common/avx512.h"
#include "core/common/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace taxel {
namespace {

constexpr int kLanes = 8;       // blocks generated together
constexpr int kAngleBits = 12;  // low bits of a word: the angle; high 20 bits: the radius

// The series of ln, cos and sin below, highest power first (Horner order), shared by the portable
// and the vector paths: each step is one fused multiply-add, so all paths give the same bits.
constexpr float kLnSeries[] = {1.f / 9, 1.f / 7, 1.f / 5, 1.f / 3, 1.f};               // in t²
constexpr float kCosSeries[] = {1.f / 40320, -1.f / 720, 1.f / 24, -1.f / 2, 1.f};     // in φ²
constexpr float kSinSeries[] = {1.f / 362880, -1.f / 5040, 1.f / 120, -1.f / 6, 1.f};  // in φ²

// c[0]·x^(N−1) + … + c[N − 1] by Horner's rule, every step fused.
template <size_t N>
inline float Horner(float x, const float (&c)[N]) {
  float p = c[0];
  for (size_t i = 1; i < N; ++i) p = std::fma(x, p, c[i]);
  return p;
}

// ln(x) for a normal positive float: x = 2^e·m with m in [√½, √2), ln m = 2·atanh(t) with
// t = (m − 1)/(m + 1), |t| ≤ 0.172, by its series to t^9 (next term < 3e-9 relative).
inline float FastLog(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  int e = static_cast<int>(bits >> 23) - 127;
  bits = (bits & 0x7fffffu) | 0x3f800000u;
  float m;
  std::memcpy(&m, &bits, 4);
  // (Both sides computed, then selected: the loops calling this stay free of branches.)
  const bool big = m > 1.41421356f;
  const float half = 0.5f * m;
  m = big ? half : m;
  e += static_cast<int>(big);
  const float t = (m - 1.f) / (m + 1.f), t2 = t * t;
  return static_cast<float>(e) * 0.693147180559945f + 2.f * t * Horner(t2, kLnSeries);
}

// cos and sin of 2π·u, u in [0, 1): u = q/4 + r with q the nearest quarter, |r| ≤ 1/8, so that
// φ = 2πr is in [−π/4, π/4] where the Taylor series to φ^8 / φ^9 are float-accurate (Horner steps
// fused: std::fma here, FMA instructions in the vector paths); then the rotation by q quarter turns.
inline void SinCosTurns(float u, float* c, float* s) {
  const float q = static_cast<float>(static_cast<int>(4.f * u + 0.5f));  // u ≥ 0: round half up
  const float phi = 6.28318530718f * (u - 0.25f * q), p2 = phi * phi;
  const float cp = Horner(p2, kCosSeries), sp = phi * Horner(p2, kSinSeries);
  const int quarter = static_cast<int>(q) & 3;
  // Quarter turns: 0 (c, s), 1 (−s, c), 2 (−c, −s), 3 (s, −c): odd quarters swap, quarters 1
  // and 2 negate the cosine, 2 and 3 the sine.
  const bool swap = quarter & 1;
  const float a = swap ? sp : cp, b = swap ? cp : sp;
  *c = static_cast<float>(1 - 2 * ((quarter ^ (quarter >> 1)) & 1)) * a;
  *s = static_cast<float>(1 - 2 * (quarter >> 1)) * b;
}

// Radius and angle of word w: u1 = (⌊w / 2^12⌋ + ½) / 2^20 is exact in float, and its log is
// taken directly (not as ln(k + ½) − 20 ln 2, which cancels to nothing near u1 = 1).
inline void BoxMullerParts(uint32_t w, float* r, float* c, float* s) {
  const float u1 = (static_cast<float>(static_cast<int>(w >> kAngleBits)) + 0.5f) * (1.f / (1 << (32 - kAngleBits)));
  *r = std::sqrt(-2.f * FastLog(u1));
  const float u2 =
      (static_cast<float>(static_cast<int>(w & ((1u << kAngleBits) - 1))) + 0.5f) * (1.f / (1 << kAngleBits));
  SinCosTurns(u2, c, s);
}

// 64 normals from the blocks (c0, c1, c2 … c2 + 7, c3): Philox4x32-7 on 8 counters side by side
// (lane-parallel loops), then Box–Muller per word. Output order: block l, word i → out[8l + 2i],
// out[8l + 2i + 1].
void NormalsBatchPortable(uint32_t k0_in, uint32_t k1_in, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                          float* out) {
  uint32_t x0[kLanes], x1[kLanes], x2[kLanes], x3[kLanes];
  for (int l = 0; l < kLanes; ++l) x0[l] = c0, x1[l] = c1, x2[l] = c2 + l, x3[l] = c3;
  uint32_t k0 = k0_in, k1 = k1_in;
  for (int round = 0; round < kNormalRounds; ++round) {
    for (int l = 0; l < kLanes; ++l) {
      const uint64_t p0 = static_cast<uint64_t>(Philox4x32::kM0) * x0[l];
      const uint64_t p1 = static_cast<uint64_t>(Philox4x32::kM1) * x2[l];
      const uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x1[l] ^ k0, y1 = static_cast<uint32_t>(p1);
      const uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x3[l] ^ k1, y3 = static_cast<uint32_t>(p0);
      x0[l] = y0, x1[l] = y1, x2[l] = y2, x3[l] = y3;
    }
    k0 += Philox4x32::kW0;
    k1 += Philox4x32::kW1;
  }
  const uint32_t* words[4] = {x0, x1, x2, x3};
  for (int i = 0; i < 4; ++i) {
    float c[kLanes], s[kLanes], r[kLanes];
    for (int l = 0; l < kLanes; ++l) BoxMullerParts(words[i][l], &r[l], &c[l], &s[l]);
    for (int l = 0; l < kLanes; ++l) {
      out[8 * l + 2 * i] = r[l] * c[l];
      out[8 * l + 2 * i + 1] = r[l] * s[l];
    }
  }
}

#if defined(__x86_64__)
// NormalsBatchPortable with AVX2 intrinsics, one lane per block: the same operations in the same
// order (the series' steps fused, as std::fma is there; no other contraction: -ffp-contract=off),
// so the two give bit-identical numbers.
#define TAXEL_AVX2 __attribute__((target("avx2")))
// The normals' polynomials use FMA (every AVX2 CPU of the last decade has it; checked at run time).
#define TAXEL_AVX2_FMA __attribute__((target("avx2,fma")))

TAXEL_AVX2 inline __m256i MulHiLo(__m256i a, __m256i m, __m256i* lo) {
  // 32×32 → 64-bit products of the even lanes, then of the odd lanes (shifted down).
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Horner with fused steps, as the portable Horner.
template <size_t N>
TAXEL_AVX2_FMA inline __m256 Horner8(__m256 x, const float (&c)[N]) {
  __m256 p = _mm256_set1_ps(c[0]);
  for (size_t i = 1; i < N; ++i) p = _mm256_fmadd_ps(x, p, _mm256_set1_ps(c[i]));
  return p;
}

TAXEL_AVX2_FMA inline __m256 FastLog8(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x3f800000)));
  const __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(_mm256_set1_ps(0.5f), m), big);
  e = _mm256_sub_epi32(e, _mm256_castps_si256(big));  // big lanes are all ones = −1
  const __m256 one = _mm256_set1_ps(1.f);
  const __m256 t = _mm256_div_ps(_mm256_sub_ps(m, one), _mm256_add_ps(m, one)), t2 = _mm256_mul_ps(t, t);
  return _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(e), _mm256_set1_ps(0.693147180559945f)),
                       _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(2.f), t), Horner8(t2, kLnSeries)));
}

TAXEL_AVX2_FMA inline void SinCosTurns8(__m256 u, __m256* c, __m256* s) {
  const __m256i qi = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(4.f), u), _mm256_set1_ps(0.5f)));
  const __m256 q = _mm256_cvtepi32_ps(qi);
  const __m256 phi =
      _mm256_mul_ps(_mm256_set1_ps(6.28318530718f), _mm256_sub_ps(u, _mm256_mul_ps(_mm256_set1_ps(0.25f), q)));
  const __m256 p2 = _mm256_mul_ps(phi, phi);
  const __m256 cp = Horner8(p2, kCosSeries), sp = _mm256_mul_ps(phi, Horner8(p2, kSinSeries));
  const __m256i quarter = _mm256_and_si256(qi, _mm256_set1_epi32(3));
  const __m256 swap =
      _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(quarter, _mm256_set1_epi32(1)), _mm256_set1_epi32(1)));
  const __m256 a = _mm256_blendv_ps(cp, sp, swap), b = _mm256_blendv_ps(sp, cp, swap);
  // The portable code multiplies by ±1; flipping the sign bit is the same (also for ±0).
  const __m256i neg_c =
      _mm256_and_si256(_mm256_xor_si256(quarter, _mm256_srli_epi32(quarter, 1)), _mm256_set1_epi32(1));
  const __m256i neg_s = _mm256_srli_epi32(quarter, 1);
  *c = _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_slli_epi32(neg_c, 31)));
  *s = _mm256_xor_ps(b, _mm256_castsi256_ps(_mm256_slli_epi32(neg_s, 31)));
}

// Philox4x32-kRounds on kSets × 8 counters (c0, c1, c2 + 8j + l, c3), set j, lane l. Independent
// sets interleaved round by round, so that their multiply chains overlap.
template <int kRounds, int kSets>
TAXEL_AVX2 inline void PhiloxSets(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                  __m256i (*words)[4]) {
  __m256i x0[kSets], x1[kSets], x2[kSets], x3[kSets];
  for (int j = 0; j < kSets; ++j) {
    x0[j] = _mm256_set1_epi32(static_cast<int>(c0));
    x1[j] = _mm256_set1_epi32(static_cast<int>(c1));
    x2[j] =
        _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(c2 + 8 * j)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    x3[j] = _mm256_set1_epi32(static_cast<int>(c3));
  }
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kM0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kM1));
  // The round keys as vectors, bumped by a vector add (wrapping like the scalar uint32 sums).
  __m256i key0 = _mm256_set1_epi32(static_cast<int>(k0)), key1 = _mm256_set1_epi32(static_cast<int>(k1));
  const __m256i w0 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kW0));
  const __m256i w1 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kW1));
  for (int round = 0; round < kRounds; ++round) {
    for (int j = 0; j < kSets; ++j) {
      __m256i lo0, lo1;
      const __m256i hi0 = MulHiLo(x0[j], m0, &lo0);
      const __m256i hi1 = MulHiLo(x2[j], m1, &lo1);
      const __m256i y0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1[j]), key0);
      const __m256i y2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3[j]), key1);
      x0[j] = y0, x1[j] = lo1, x2[j] = y2, x3[j] = lo0;
    }
    key0 = _mm256_add_epi32(key0, w0);
    key1 = _mm256_add_epi32(key1, w1);
  }
  for (int j = 0; j < kSets; ++j) words[j][0] = x0[j], words[j][1] = x1[j], words[j][2] = x2[j], words[j][3] = x3[j];
}

TAXEL_AVX2 void BlocksAvx2(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                           uint32_t* out) {
  __m256i words[1][4];
  PhiloxSets<10, 1>(k0, k1, c0, c1, c2, c3, words);
  alignas(32) uint32_t w[4][kLanes];
  for (int i = 0; i < 4; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(w[i]), words[0][i]);
  for (int l = 0; l < kLanes; ++l) {
    for (int i = 0; i < 4; ++i) out[4 * l + i] = w[i][l];
  }
}

// Stores v[j] lane l at out[8l + j] (an 8 × 8 transpose): the block-major order of the portable code.
TAXEL_AVX2 inline void StoreTransposed8x8(const __m256* v, float* out) {
  const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
  const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
  const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
  const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(out + 0, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(out + 16, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(out + 24, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(out + 32, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(out + 40, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(out + 48, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_storeu_ps(out + 56, _mm256_permute2f128_ps(s3, s7, 0x31));
}

// The 64 normals of 8 blocks' words (lane l = block l) into out, block-major like the portable code.
TAXEL_AVX2_FMA inline void NormalsFromWords(const __m256i* words, float* out) {
  __m256 v[8];  // word i: v[2i] = r·cos, v[2i + 1] = r·sin, lane l = block l
  for (int i = 0; i < 4; ++i) {
    const __m256i w = words[i];
    const __m256 u1 =
        _mm256_mul_ps(_mm256_add_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w, kAngleBits)), _mm256_set1_ps(0.5f)),
                      _mm256_set1_ps(1.f / (1 << (32 - kAngleBits))));
    const __m256 r = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.f), FastLog8(u1)));
    const __m256 u2 =
        _mm256_mul_ps(_mm256_add_ps(_mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32((1 << kAngleBits) - 1))),
                                    _mm256_set1_ps(0.5f)),
                      _mm256_set1_ps(1.f / (1 << kAngleBits)));
    __m256 c, s;
    SinCosTurns8(u2, &c, &s);
    v[2 * i] = _mm256_mul_ps(r, c);
    v[2 * i + 1] = _mm256_mul_ps(r, s);
  }
  StoreTransposed8x8(v, out);
}
TAXEL_AVX2_FMA void NormalsBatchAvx2(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                 float* out) {
  __m256i words[1][4];
  PhiloxSets<kNormalRounds, 1>(k0, k1, c0, c1, c2, c3, words);
  NormalsFromWords(words[0], out);
}

// 32 blocks (256 normals) at once: four interleaved Philox sets (about 25 % faster than one set
// at a time, whose multiply chain is latency-bound).
TAXEL_AVX2_FMA void NormalsBatch32Avx2(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                   float* out) {
  __m256i words[4][4];
  PhiloxSets<kNormalRounds, 4>(k0, k1, c0, c1, c2, c3, words);
  for (int j = 0; j < 4; ++j) NormalsFromWords(words[j], out + 64 * j);
}
#undef TAXEL_AVX2
#undef TAXEL_AVX2_FMA

// The AVX2 code on 512-bit registers (AVX-512 F), 16 blocks per register: the same operations in
// the same order (selects by mask instead of blendv; the same fused steps and no other
// contraction, see core/CMakeLists.txt), so the same bits. Lanes 0–7 and 8–15 of a register are
// two 8-block batches, stored by the AVX2 transpose.
TAXEL_AVX512_BEGIN

TAXEL_AVX512 inline __m512i MulHiLo16(__m512i a, __m512i m, __m512i* lo) {
  const __m512i even = _mm512_mul_epu32(a, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
  *lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

// Horner with fused steps, as the portable Horner.
template <size_t N>
TAXEL_AVX512 inline __m512 Horner16(__m512 x, const float (&c)[N]) {
  __m512 p = _mm512_set1_ps(c[0]);
  for (size_t i = 1; i < N; ++i) p = _mm512_fmadd_ps(x, p, _mm512_set1_ps(c[i]));
  return p;
}

TAXEL_AVX512 inline __m512 FastLog16(__m512 x) {
  const __m512i bits = _mm512_castps_si512(x);
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(127));
  __m512 m = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffff)), _mm512_set1_epi32(0x3f800000)));
  const __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm512_mask_mul_ps(m, big, _mm512_set1_ps(0.5f), m);
  e = _mm512_mask_add_epi32(e, big, e, _mm512_set1_epi32(1));
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(m, one), _mm512_add_ps(m, one)), t2 = _mm512_mul_ps(t, t);
  return _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(e), _mm512_set1_ps(0.693147180559945f)),
                       _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(2.f), t), Horner16(t2, kLnSeries)));
}

TAXEL_AVX512 inline void SinCosTurns16(__m512 u, __m512* c, __m512* s) {
  const __m512i qi = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(4.f), u), _mm512_set1_ps(0.5f)));
  const __m512 q = _mm512_cvtepi32_ps(qi);
  const __m512 phi =
      _mm512_mul_ps(_mm512_set1_ps(6.28318530718f), _mm512_sub_ps(u, _mm512_mul_ps(_mm512_set1_ps(0.25f), q)));
  const __m512 p2 = _mm512_mul_ps(phi, phi);
  const __m512 cp = Horner16(p2, kCosSeries), sp = _mm512_mul_ps(phi, Horner16(p2, kSinSeries));
  const __m512i quarter = _mm512_and_si512(qi, _mm512_set1_epi32(3));
  const __mmask16 swap = _mm512_test_epi32_mask(quarter, _mm512_set1_epi32(1));
  const __m512 a = _mm512_mask_blend_ps(swap, cp, sp), b = _mm512_mask_blend_ps(swap, sp, cp);
  const __m512i neg_c =
      _mm512_and_si512(_mm512_xor_si512(quarter, _mm512_srli_epi32(quarter, 1)), _mm512_set1_epi32(1));
  const __m512i neg_s = _mm512_srli_epi32(quarter, 1);
  *c = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_slli_epi32(neg_c, 31)));
  *s = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(b), _mm512_slli_epi32(neg_s, 31)));
}

// Philox4x32-kRounds on kSets × 16 counters (c0, c1, c2 + 16j + l, c3), set j, lane l.
template <int kRounds, int kSets>
TAXEL_AVX512 inline void PhiloxSets16(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                      __m512i (*words)[4]) {
  __m512i x0[kSets], x1[kSets], x2[kSets], x3[kSets];
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int j = 0; j < kSets; ++j) {
    x0[j] = _mm512_set1_epi32(static_cast<int>(c0));
    x1[j] = _mm512_set1_epi32(static_cast<int>(c1));
    x2[j] = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(c2 + 16 * j)), lane);
    x3[j] = _mm512_set1_epi32(static_cast<int>(c3));
  }
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kM0));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kM1));
  __m512i key0 = _mm512_set1_epi32(static_cast<int>(k0)), key1 = _mm512_set1_epi32(static_cast<int>(k1));
  const __m512i w0 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kW0));
  const __m512i w1 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kW1));
  for (int round = 0; round < kRounds; ++round) {
    for (int j = 0; j < kSets; ++j) {
      __m512i lo0, lo1;
      const __m512i hi0 = MulHiLo16(x0[j], m0, &lo0);
      const __m512i hi1 = MulHiLo16(x2[j], m1, &lo1);
      const __m512i y0 = _mm512_xor_si512(_mm512_xor_si512(hi1, x1[j]), key0);
      const __m512i y2 = _mm512_xor_si512(_mm512_xor_si512(hi0, x3[j]), key1);
      x0[j] = y0, x1[j] = lo1, x2[j] = y2, x3[j] = lo0;
    }
    key0 = _mm512_add_epi32(key0, w0);
    key1 = _mm512_add_epi32(key1, w1);
  }
  for (int j = 0; j < kSets; ++j) words[j][0] = x0[j], words[j][1] = x1[j], words[j][2] = x2[j], words[j][3] = x3[j];
}

// The 128 normals of 16 blocks' words (lane l = block l) into out, block-major.
TAXEL_AVX512 inline void NormalsFromWords16(const __m512i* words, float* out) {
  __m512 v[8];
  for (int i = 0; i < 4; ++i) {
    const __m512i w = words[i];
    const __m512 u1 =
        _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(w, kAngleBits)), _mm512_set1_ps(0.5f)),
                      _mm512_set1_ps(1.f / (1 << (32 - kAngleBits))));
    const __m512 r = _mm512_sqrt_ps(_mm512_mul_ps(_mm512_set1_ps(-2.f), FastLog16(u1)));
    const __m512 u2 =
        _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_and_si512(w, _mm512_set1_epi32((1 << kAngleBits) - 1))),
                                    _mm512_set1_ps(0.5f)),
                      _mm512_set1_ps(1.f / (1 << kAngleBits)));
    __m512 c, s;
    SinCosTurns16(u2, &c, &s);
    v[2 * i] = _mm512_mul_ps(r, c);
    v[2 * i + 1] = _mm512_mul_ps(r, s);
  }
  __m256 low[8], high[8];
  for (int j = 0; j < 8; ++j) {
    low[j] = _mm512_castps512_ps256(v[j]);
    high[j] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v[j]), 1));
  }
  StoreTransposed8x8(low, out);
  StoreTransposed8x8(high, out + 64);
}

// Philox4x32-10 for 32 consecutive blocks (two interleaved sets of 16), stored block-major: the
// four words of lane l of set j are transposed (4 × 16, by unpacks within the 128-bit lanes and a
// 4 × 4 shuffle of those lanes) to out[4(16j + l) + i].
TAXEL_AVX512 void Blocks32Avx512(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                 uint32_t* out) {
  __m512i words[2][4];
  PhiloxSets16<10, 2>(k0, k1, c0, c1, c2, c3, words);
  for (int j = 0; j < 2; ++j) {
    const __m512i* w = words[j];
    const __m512i t0 = _mm512_unpacklo_epi32(w[0], w[1]), t1 = _mm512_unpackhi_epi32(w[0], w[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(w[2], w[3]), t3 = _mm512_unpackhi_epi32(w[2], w[3]);
    // u_k, 128-bit lane q: the four words of block 4q + k.
    const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
    const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
    const __m512i v0 = _mm512_shuffle_i32x4(u0, u1, 0x44), v1 = _mm512_shuffle_i32x4(u2, u3, 0x44);
    const __m512i v2 = _mm512_shuffle_i32x4(u0, u1, 0xEE), v3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
    __m512i* o = reinterpret_cast<__m512i*>(out + 64 * j);
    _mm512_storeu_si512(o + 0, _mm512_shuffle_i32x4(v0, v1, 0x88));
    _mm512_storeu_si512(o + 1, _mm512_shuffle_i32x4(v0, v1, 0xDD));
    _mm512_storeu_si512(o + 2, _mm512_shuffle_i32x4(v2, v3, 0x88));
    _mm512_storeu_si512(o + 3, _mm512_shuffle_i32x4(v2, v3, 0xDD));
  }
}

// 32 blocks (256 normals): two interleaved sets of 16.
TAXEL_AVX512 void NormalsBatch32Avx512(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                       float* out) {
  __m512i words[2][4];
  PhiloxSets16<kNormalRounds, 2>(k0, k1, c0, c1, c2, c3, words);
  for (int j = 0; j < 2; ++j) NormalsFromWords16(words[j], out + 128 * j);
}
TAXEL_AVX512_END
#endif

using BatchFn = void (*)(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, float*);
using WordsFn = void (*)(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t*);

void BlocksPortable(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t* out) {
  const Philox4x32 rng = Philox4x32::FromKey(k0, k1);
  for (uint32_t l = 0; l < kLanes; ++l) {
    const Philox4x32::Block b = rng(c0, c1, c2 + l, c3);
    std::copy(b.begin(), b.end(), out + 4 * l);
  }
}

#if defined(__x86_64__)
constexpr BatchFn kNormals8Avx2 = NormalsBatchAvx2, kNormals32Avx2 = NormalsBatch32Avx2;
constexpr BatchFn kNormals32Avx512 = NormalsBatch32Avx512;
constexpr WordsFn kBlocksAvx2 = BlocksAvx2, kBlocks32Avx512 = Blocks32Avx512;
#else
constexpr BatchFn kNormals8Avx2 = nullptr, kNormals32Avx2 = nullptr, kNormals32Avx512 = nullptr;
constexpr WordsFn kBlocksAvx2 = nullptr, kBlocks32Avx512 = nullptr;
#endif

// `avx2` when the CPU has AVX2, else `fallback`.
template <typename Fn>
Fn Pick(Fn avx2, Fn fallback) {
  return CpuHasAvx2() ? avx2 : fallback;
}

}  // namespace

namespace internal {
void FillStandardNormalsWith(bool portable, const Philox4x32& rng, uint32_t c0, uint32_t c1, uint32_t c3, float* out,
                             size_t count, size_t first) {
  // 32 blocks at a time where the CPU allows it (nullptr: 8-block batches only).
  const bool avx2 = !portable && CpuHasAvx2Fma();
  const BatchFn batch = avx2 ? kNormals8Avx2 : NormalsBatchPortable;
  const BatchFn batch32 = portable ? nullptr : CpuHasAvx512() ? kNormals32Avx512 : avx2 ? kNormals32Avx2 : nullptr;
  constexpr size_t kBatch = 8 * kLanes;
  const uint32_t first_block = static_cast<uint32_t>(first / 8);
  size_t done = 0;
  uint32_t block = first_block;
  if (batch32 != nullptr) {
    for (; done + 4 * kBatch <= count; block += 4 * kLanes, done += 4 * kBatch) {
      batch32(rng.key0(), rng.key1(), c0, c1, block, c3, out + done);
    }
  }
  for (; done + kBatch <= count; block += kLanes, done += kBatch) {
    batch(rng.key0(), rng.key1(), c0, c1, block, c3, out + done);
  }
  if (done < count) {
    float tail[kBatch];
    batch(rng.key0(), rng.key1(), c0, c1, first_block + static_cast<uint32_t>(done / 8), c3, tail);
    std::copy(tail, tail + (count - done), out + done);
  }
}
void NormalPairFromWord(uint32_t w, float* z0, float* z1) {
  float r, c, s;
  BoxMullerParts(w, &r, &c, &s);
  *z0 = r * c;
  *z1 = r * s;
}
}  // namespace internal

void FillBlocks(const Philox4x32& rng, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t* out,
                size_t blocks) {
  static const WordsFn kBlocks = Pick(kBlocksAvx2, BlocksPortable);
  static const WordsFn kBlocks32 = CpuHasAvx512() ? kBlocks32Avx512 : nullptr;
  size_t done = 0;
  if (kBlocks32 != nullptr) {
    for (; done + 4 * kLanes <= blocks; done += 4 * kLanes) {
      kBlocks32(rng.key0(), rng.key1(), c0, c1, c2 + static_cast<uint32_t>(done), c3, out + 4 * done);
    }
  }
  for (; done + kLanes <= blocks; done += kLanes) {
    kBlocks(rng.key0(), rng.key1(), c0, c1, c2 + static_cast<uint32_t>(done), c3, out + 4 * done);
  }
  if (done < blocks) {
    uint32_t tail[4 * kLanes];
    kBlocks(rng.key0(), rng.key1(), c0, c1, c2 + static_cast<uint32_t>(done), c3, tail);
    std::copy(tail, tail + 4 * (blocks - done), out + 4 * done);
  }
}

void FillStandardNormals(const Philox4x32& rng, uint32_t c0, uint32_t c1, uint32_t c3, float* out, size_t count,
                         size_t first) {
  internal::FillStandardNormalsWith(false, rng, c0, c1, c3, out, count, first);
}

}  // namespace taxel
