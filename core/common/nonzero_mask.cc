#include "core/common/nonzero_mask.h"

#include <algorithm>
#include <cstring>

#include "core/common/check.h"
#include "core/common/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define TAXEL_HAVE_AVX2_PATH 1
#endif

namespace taxel {
namespace {

template <typename W>
W Load(const char* p) {
  W w;
  std::memcpy(&w, p, sizeof(W));
  return w;
}

// The mask bits of the `count` (≤ 8) elements at p.
template <typename W>
unsigned MaskBits(const char* p, size_t count) {
  unsigned m = 0;
  for (size_t j = 0; j < count; ++j) m |= static_cast<unsigned>(Load<W>(p + j * sizeof(W)) != 0) << j;
  return m;
}

#if defined(TAXEL_HAVE_AVX2_PATH)
// Mask bits of 16 elements of 4 or 1 bytes: SSE2 (part of x86-64) compares 16 at a time, which
// keeps this pass at memory speed.
unsigned MaskBits16x4(const char* p) {
  const __m128i zero = _mm_setzero_si128();
  const __m128i* v = reinterpret_cast<const __m128i*>(p);
  const __m128i z01 =
      _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(v), zero), _mm_cmpeq_epi32(_mm_loadu_si128(v + 1), zero));
  const __m128i z23 =
      _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(v + 2), zero), _mm_cmpeq_epi32(_mm_loadu_si128(v + 3), zero));
  return ~static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(z01, z23))) & 0xFFFFu;
}
unsigned MaskBits16x1(const char* p) {
  const __m128i z = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128());
  return ~static_cast<unsigned>(_mm_movemask_epi8(z)) & 0xFFFFu;
}
#endif

// gcc only: clang 14 cannot multiversion a function template (a hard error); its builds use the
// default popcount.
#if defined(TAXEL_HAVE_AVX2_PATH) && !defined(__clang__)
#define TAXEL_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define TAXEL_POPCNT_CLONES
#endif

template <typename W>
TAXEL_POPCNT_CLONES size_t Build(const char* p, size_t n, uint8_t* mask) {
  constexpr size_t S = sizeof(W);
  const size_t full = n / 8;
  size_t count = 0, b = 0;
#if defined(TAXEL_HAVE_AVX2_PATH)
  if constexpr (S == 4 || S == 1) {
    for (; b + 2 <= full; b += 2, p += 16 * S) {
      const unsigned m = S == 4 ? MaskBits16x4(p) : MaskBits16x1(p);
      mask[b] = static_cast<uint8_t>(m);
      mask[b + 1] = static_cast<uint8_t>(m >> 8);
      count += static_cast<size_t>(__builtin_popcount(m));
    }
  }
#endif
  for (; b < full; ++b, p += 8 * S) {
    const unsigned m = MaskBits<W>(p, 8);
    mask[b] = static_cast<uint8_t>(m);
    count += static_cast<size_t>(__builtin_popcount(m));
  }
  if (n % 8 != 0) {
    const unsigned m = MaskBits<W>(p, n % 8);
    mask[b] = static_cast<uint8_t>(m);
    count += static_cast<size_t>(__builtin_popcount(m));
  }
  return count;
}

// Mask bytes from `b` on that are all zero, counted 8 at a time (runs of untouched probes).
size_t ZeroMaskRun(const uint8_t* mask, size_t b, size_t bytes) {
  size_t run = 0;
  while (b + run + 8 <= bytes) {
    uint64_t w;
    std::memcpy(&w, mask + b + run, 8);
    if (w != 0) break;
    run += 8;
  }
  return run;
}

template <typename W>
char* Pack(const char* p, size_t n, const uint8_t* mask, char* dst) {
  constexpr size_t S = sizeof(W);
  const size_t bytes = NonzeroMaskBytes(n);
  for (size_t b = 0; b < bytes;) {
    if (const size_t run = ZeroMaskRun(mask, b, bytes); run > 0) {
      b += run;
      continue;
    }
    unsigned m = mask[b];
    const char* src = p + b * 8 * S;
    if (m == 0xFF) {  // (never the last byte of a partial group: its high bits are 0)
      std::memcpy(dst, src, 8 * S);
      dst += 8 * S;
    } else {
      for (; m != 0; m &= m - 1) {
        std::memcpy(dst, src + static_cast<size_t>(__builtin_ctz(m)) * S, S);
        dst += S;
      }
    }
    ++b;
  }
  return dst;
}

template <typename W>
void Unpack(const char* packed, size_t n, const uint8_t* mask, char* dst, bool dst_is_zero) {
  constexpr size_t S = sizeof(W);
  const size_t bytes = NonzeroMaskBytes(n);
  for (size_t b = 0; b < bytes;) {
    const size_t count = std::min<size_t>(8, n - b * 8);
    if (const size_t run = ZeroMaskRun(mask, b, bytes); run > 0) {
      if (!dst_is_zero) std::memset(dst + b * 8 * S, 0, std::min(run * 8, n - b * 8) * S);
      b += run;
      continue;
    }
    const unsigned m = mask[b];
    char* out = dst + b * 8 * S;
    if (m == 0xFF) {
      std::memcpy(out, packed, 8 * S);
      packed += 8 * S;
    } else {
      for (size_t j = 0; j < count; ++j, out += S) {
        if ((m >> j) & 1u) {
          std::memcpy(out, packed, S);
          packed += S;
        } else {
          std::memset(out, 0, S);
        }
      }
    }
    ++b;
  }
}

#if defined(TAXEL_HAVE_AVX2_PATH)
// 4-byte elements with AVX2: a group of 8 whose mask byte is m is compacted (expanded) by one
// lane permutation from a 256-entry table. Vector loads and stores cover 8 whole elements, so
// they are used only while 8 elements remain on both sides; the rest goes element by element.
struct PermuteTables {
  alignas(32) int32_t compress[256][8];  // lane k <- the k-th set bit's lane
  alignas(32) int32_t expand[256][8];    // lane j <- the rank of bit j among the set bits
  constexpr PermuteTables() : compress(), expand() {
    for (int m = 0; m < 256; ++m) {
      int k = 0;
      for (int j = 0; j < 8; ++j) {
        expand[m][j] = k;  // (masked to zero when bit j is clear)
        if ((m >> j) & 1) compress[m][k++] = j;
      }
    }
  }
};
constexpr PermuteTables kPermute;

#define TAXEL_AVX2 __attribute__((target("avx2,popcnt")))

TAXEL_AVX2 char* Pack4Avx2(const char* p, size_t n, const uint8_t* mask, char* dst) {
  const size_t bytes = NonzeroMaskBytes(n);
  size_t left = static_cast<size_t>(CountNonzeroMask(mask, n));  // elements still to write
  for (size_t b = 0; b < bytes;) {
    if (const size_t run = ZeroMaskRun(mask, b, bytes); run > 0) {
      b += run;
      continue;
    }
    const unsigned m = mask[b];
    const char* src = p + b * 32;
    const unsigned count = static_cast<unsigned>(_mm_popcnt_u32(m));
    if (left >= 8) {  // a whole group is in the input too: only the last byte may be partial
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
      const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(kPermute.compress[m]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permutevar8x32_epi32(v, idx));
    } else {
      for (unsigned bits = m, k = 0; bits != 0; bits &= bits - 1, ++k) {
        std::memcpy(dst + 4 * k, src + 4 * static_cast<size_t>(__builtin_ctz(bits)), 4);
      }
    }
    dst += 4 * count;
    left -= count;
    ++b;
  }
  return dst;
}

TAXEL_AVX2 void Unpack4Avx2(const char* packed, size_t n, const uint8_t* mask, char* dst, bool dst_is_zero) {
  const size_t bytes = NonzeroMaskBytes(n);
  size_t left = static_cast<size_t>(CountNonzeroMask(mask, n));  // packed elements still to read
  const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  for (size_t b = 0; b < bytes;) {
    if (const size_t run = ZeroMaskRun(mask, b, bytes); run > 0) {
      if (!dst_is_zero) std::memset(dst + b * 32, 0, std::min(run * 8, n - b * 8) * 4);
      b += run;
      continue;
    }
    const unsigned m = mask[b];
    char* out = dst + b * 32;
    const unsigned count = static_cast<unsigned>(_mm_popcnt_u32(m));
    if (left >= 8 && b * 8 + 8 <= n) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(packed));
      const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(kPermute.expand[m]));
      const __m256i keep =
          _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(m)), lane_bit), lane_bit);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_and_si256(_mm256_permutevar8x32_epi32(v, idx), keep));
    } else {
      const size_t group = std::min<size_t>(8, n - b * 8);
      for (size_t j = 0, k = 0; j < group; ++j) {
        if ((m >> j) & 1u) {
          std::memcpy(out + 4 * j, packed + 4 * k++, 4);
        } else {
          std::memset(out + 4 * j, 0, 4);
        }
      }
    }
    packed += 4 * count;
    left -= count;
    ++b;
  }
}

#endif

}  // namespace

size_t BuildNonzeroMask(const void* data, size_t n, size_t item_size, uint8_t* mask) {
  const char* p = static_cast<const char*>(data);
  switch (item_size) {
    case 1: return Build<uint8_t>(p, n, mask);
    case 2: return Build<uint16_t>(p, n, mask);
    case 4: return Build<uint32_t>(p, n, mask);
    case 8: return Build<uint64_t>(p, n, mask);
  }
  TAXEL_CHECK(false && "item_size must be 1, 2, 4 or 8");
  return 0;
}

char* PackNonzero(const void* data, size_t n, size_t item_size, const uint8_t* mask, char* dst) {
  const char* p = static_cast<const char*>(data);
  switch (item_size) {
    case 1: return Pack<uint8_t>(p, n, mask, dst);
    case 2: return Pack<uint16_t>(p, n, mask, dst);
    case 4:
#if defined(TAXEL_HAVE_AVX2_PATH)
      if (CpuHasAvx2()) return Pack4Avx2(p, n, mask, dst);
#endif
      return Pack<uint32_t>(p, n, mask, dst);
    case 8: return Pack<uint64_t>(p, n, mask, dst);
  }
  TAXEL_CHECK(false && "item_size must be 1, 2, 4 or 8");
  return dst;
}

void UnpackNonzero(const char* packed, size_t n, size_t item_size, const uint8_t* mask, void* dst, bool dst_is_zero) {
  char* d = static_cast<char*>(dst);
  switch (item_size) {
    case 1: return Unpack<uint8_t>(packed, n, mask, d, dst_is_zero);
    case 2: return Unpack<uint16_t>(packed, n, mask, d, dst_is_zero);
    case 4:
#if defined(TAXEL_HAVE_AVX2_PATH)
      if (CpuHasAvx2()) return Unpack4Avx2(packed, n, mask, d, dst_is_zero);
#endif
      return Unpack<uint32_t>(packed, n, mask, d, dst_is_zero);
    case 8: return Unpack<uint64_t>(packed, n, mask, d, dst_is_zero);
  }
  TAXEL_CHECK(false && "item_size must be 1, 2, 4 or 8");
}

TAXEL_POPCNT_CLONES int64_t CountNonzeroMask(const uint8_t* mask, size_t n) {
  const size_t full = n / 8;
  int64_t count = 0;
  size_t b = 0;
  for (; b + 8 <= full; b += 8) {
    uint64_t w;
    std::memcpy(&w, mask + b, 8);
    count += __builtin_popcountll(w);
  }
  for (; b < full; ++b) count += __builtin_popcount(mask[b]);
  if (n % 8 != 0) {
    const unsigned last = mask[full];
    if ((last >> (n % 8)) != 0) return -1;
    count += __builtin_popcount(last);
  }
  return count;
}

}  // namespace taxel
