#include "core/geometry/triangle_slab.h"

#include "core/common/avx512.h"
#include "core/common/cpu_features.h"

namespace taxel::geometry {
namespace {

uint32_t GroupsPortable(const TriangleSlabGroup* groups, uint32_t count, float px, float py, float pz, float limit,
                        float* lb2) {
  uint32_t mask = 0;
  for (uint32_t g = 0; g < count; ++g)
    mask |= TriangleSlabGroupWithin(groups[g], px, py, pz, limit, lb2 + 4 * g) << (4 * g);
  return mask;
}

#if defined(__x86_64__)
TAXEL_AVX512_BEGIN
constexpr int kRound = kAvx512RoundNearest;

// The plane values of the 16 (plane, triangle) lanes of one group, in TriangleSlabGroupWithin's
// order: ((x·px + y·py) + z·pz) − w. The explicitly rounded forms are never contracted into fused
// multiply-adds, so every lane is rounded as on the SSE path.
TAXEL_AVX512 inline __m512 Planes16(const TriangleSlabGroup& g, __m512 x, __m512 y, __m512 z) {
  const __m512 xy = _mm512_add_round_ps(_mm512_mul_round_ps(_mm512_load_ps(&g.x[0][0]), x, kRound),
                                        _mm512_mul_round_ps(_mm512_load_ps(&g.y[0][0]), y, kRound), kRound);
  return _mm512_sub_round_ps(
      _mm512_add_round_ps(xy, _mm512_mul_round_ps(_mm512_load_ps(&g.z[0][0]), z, kRound), kRound),
      _mm512_load_ps(&g.w[0][0]), kRound);
}

// Four groups per pass: their plane values v0..v3 (128-bit blocks h, e0, e1, e2) are regrouped
// so that one register holds h of the 16 triangles, and so on; absent groups are zeros.
TAXEL_AVX512 uint32_t GroupsAvx512(const TriangleSlabGroup* groups, uint32_t count, float px, float py, float pz,
                                   float limit, float* lb2) {
  const __m512 x = _mm512_set1_ps(px), y = _mm512_set1_ps(py), z = _mm512_set1_ps(pz);
  const __m512 lim = _mm512_set1_ps(limit), zero = _mm512_setzero_ps();
  uint32_t mask = 0;
  for (uint32_t g0 = 0; g0 < count; g0 += 4) {
    __m512 v[4];
    for (uint32_t k = 0; k < 4; ++k) v[k] = g0 + k < count ? Planes16(groups[g0 + k], x, y, z) : zero;
    const __m512 t0 = _mm512_shuffle_f32x4(v[0], v[1], _MM_SHUFFLE(1, 0, 1, 0));  // h0 e0_0 h1 e0_1
    const __m512 t1 = _mm512_shuffle_f32x4(v[0], v[1], _MM_SHUFFLE(3, 2, 3, 2));  // e1_0 e2_0 e1_1 e2_1
    const __m512 t2 = _mm512_shuffle_f32x4(v[2], v[3], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 t3 = _mm512_shuffle_f32x4(v[2], v[3], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 h = _mm512_shuffle_f32x4(t0, t2, _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 e0 = _mm512_shuffle_f32x4(t0, t2, _MM_SHUFFLE(3, 1, 3, 1));
    const __m512 e1 = _mm512_shuffle_f32x4(t1, t3, _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 e2 = _mm512_shuffle_f32x4(t1, t3, _MM_SHUFFLE(3, 1, 3, 1));
    // max as on the SSE path (maxps returns its second operand when either is NaN).
    const __m512 e = _mm512_max_ps(_mm512_max_ps(e0, e1), _mm512_max_ps(e2, zero));
    const __m512 d2 = _mm512_add_round_ps(_mm512_mul_round_ps(h, h, kRound), _mm512_mul_round_ps(e, e, kRound), kRound);
    const uint32_t n = count - g0 < 4 ? count - g0 : 4;
    const __mmask16 lanes = static_cast<__mmask16>((1u << (4 * n)) - 1);
    _mm512_mask_storeu_ps(lb2 + 4 * g0, lanes, d2);
    mask |= static_cast<uint32_t>(_mm512_mask_cmp_ps_mask(lanes, d2, lim, _CMP_LE_OQ)) << (4 * g0);
  }
  return mask;
}
TAXEL_AVX512_END
#endif

}  // namespace

namespace internal {
uint32_t TriangleSlabGroupsWithinWith(bool portable, const TriangleSlabGroup* groups, uint32_t count, float px,
                                      float py, float pz, float limit, float* lb2) {
#if defined(__x86_64__)
  if (!portable && CpuHasAvx512()) return GroupsAvx512(groups, count, px, py, pz, limit, lb2);
#endif
  return GroupsPortable(groups, count, px, py, pz, limit, lb2);
}
}  // namespace internal

uint32_t TriangleSlabGroupsWithin(const TriangleSlabGroup* groups, uint32_t count, float px, float py, float pz,
                                  float limit, float* lb2) {
  return internal::TriangleSlabGroupsWithinWith(false, groups, count, px, py, pz, limit, lb2);
}

}  // namespace taxel::geometry
