#include "core/common/rng.h"

#include <algorithm>
#include <cstring>

namespace taxel {
namespace {

constexpr int kLanes = 8;        // blocks generated together
constexpr int kAngleBits = 12;   // low bits of a word: the angle; high 20 bits: the radius

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
  const float series = 1.f + t2 * (1.f / 3 + t2 * (1.f / 5 + t2 * (1.f / 7 + t2 * (1.f / 9))));
  return static_cast<float>(e) * 0.693147180559945f + 2.f * t * series;
}

// cos and sin of 2π·u, u in [0, 1): u = q/4 + r with q the nearest quarter, |r| ≤ 1/8, so that
// φ = 2πr is in [−π/4, π/4] where the Taylor series to φ^8 / φ^9 are float-accurate; then the
// rotation by q quarter turns.
inline void SinCosTurns(float u, float* c, float* s) {
  const float q = static_cast<float>(static_cast<int>(4.f * u + 0.5f));  // u ≥ 0: round half up
  const float phi = 6.28318530718f * (u - 0.25f * q), p2 = phi * phi;
  const float cp = 1.f + p2 * (-1.f / 2 + p2 * (1.f / 24 + p2 * (-1.f / 720 + p2 * (1.f / 40320))));
  const float sp = phi * (1.f + p2 * (-1.f / 6 + p2 * (1.f / 120 + p2 * (-1.f / 5040 + p2 * (1.f / 362880)))));
  const int quarter = static_cast<int>(q) & 3;
  // Quarter turns: 0 (c, s), 1 (−s, c), 2 (−c, −s), 3 (s, −c): odd quarters swap, quarters 1
  // and 2 negate the cosine, 2 and 3 the sine.
  const bool swap = quarter & 1;
  const float a = swap ? sp : cp, b = swap ? cp : sp;
  *c = static_cast<float>(1 - 2 * ((quarter ^ (quarter >> 1)) & 1)) * a;
  *s = static_cast<float>(1 - 2 * (quarter >> 1)) * b;
}

// 64 normals from the blocks (c0, c1, c2 … c2 + 7, c3): Philox4x32-10 on 8 counters side by side
// (lane-parallel loops), then Box–Muller per word. Output order: block l, word i → out[8l + 2i],
// out[8l + 2i + 1].
__attribute__((target_clones("avx2", "default"))) void NormalsBatch(uint32_t k0_in, uint32_t k1_in, uint32_t c0,
                                                                     uint32_t c1, uint32_t c2, uint32_t c3,
                                                                     float* out) {
  uint32_t x0[kLanes], x1[kLanes], x2[kLanes], x3[kLanes];
  for (int l = 0; l < kLanes; ++l) x0[l] = c0, x1[l] = c1, x2[l] = c2 + l, x3[l] = c3;
  uint32_t k0 = k0_in, k1 = k1_in;
  for (int round = 0; round < 10; ++round) {
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
  const float kLn2To20 = 20 * 0.693147180559945f;
  for (int i = 0; i < 4; ++i) {
    float c[kLanes], s[kLanes], r[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const uint32_t w = words[i][l];
      // u1 = (k + ½)/2^20: ln u1 = ln(k + ½) − 20 ln 2 (k + ½ is exact in float).
      const float k = static_cast<float>(static_cast<int>(w >> kAngleBits)) + 0.5f;
      r[l] = std::sqrt(-2.f * (FastLog(k) - kLn2To20));
      const float u2 = (static_cast<float>(static_cast<int>(w & ((1u << kAngleBits) - 1))) + 0.5f) *
                       (1.f / (1 << kAngleBits));
      SinCosTurns(u2, &c[l], &s[l]);
    }
    for (int l = 0; l < kLanes; ++l) {
      out[8 * l + 2 * i] = r[l] * c[l];
      out[8 * l + 2 * i + 1] = r[l] * s[l];
    }
  }
}

}  // namespace

void FillStandardNormals(const Philox4x32& rng, uint32_t c0, uint32_t c1, uint32_t c3, float* out, size_t count) {
  constexpr size_t kBatch = 8 * kLanes;
  size_t done = 0;
  for (uint32_t block = 0; done + kBatch <= count; block += kLanes, done += kBatch) {
    NormalsBatch(rng.key0(), rng.key1(), c0, c1, block, c3, out + done);
  }
  if (done < count) {
    float tail[kBatch];
    NormalsBatch(rng.key0(), rng.key1(), c0, c1, static_cast<uint32_t>(done / 8), c3, tail);
    std::copy(tail, tail + (count - done), out + done);
  }
}

}  // namespace taxel
