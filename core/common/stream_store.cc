#include "core/common/stream_store.h"

#include <algorithm>
#include <cstdint>

#include "core/common/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace taxel {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx2"))) void StreamCopyAvx2(const float* src, size_t n, float* dst) {
  size_t i = 0;
  // Ordinary stores up to the first 32-byte boundary of dst, streaming ones from there.
  for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 31) != 0; ++i) dst[i] = src[i];
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}
#endif

}  // namespace

void StreamCopyUnfenced(const float* src, size_t n, float* dst) {
#if defined(__x86_64__)
  if (CpuHasAvx2()) return StreamCopyAvx2(src, n, dst);
#endif
  std::copy(src, src + n, dst);
}

void StreamFence() {
#if defined(__x86_64__)
  if (CpuHasAvx2()) _mm_sfence();
#endif
}

}  // namespace taxel
