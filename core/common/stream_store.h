// Copies that bypass the caches: for output arrays larger than the caches, written once and read
// only later (e.g. the measured branch's sample ring), where an ordinary store would first read
// each line from memory (read for ownership) only to overwrite it.
#ifndef TAXEL_CORE_COMMON_STREAM_STORE_H_
#define TAXEL_CORE_COMMON_STREAM_STORE_H_

#include <cstddef>

namespace taxel {

/// dst[i] = src[i] for i < n, the same values as std::copy, with non-temporal stores where the
/// CPU has AVX2 (the parts of dst not 32-byte aligned by ordinary stores); plain std::copy
/// elsewhere. src and dst must not overlap. This thread reads the values back as usual; other
/// threads may see them only after a StreamFence() of this thread. A fence costs about as much as
/// streaming 3 KB, so batch the copies and fence once (Sensor::FinishMeasured: once per env).
void StreamCopyUnfenced(const float* src, size_t n, float* dst);

/// Orders every earlier StreamCopyUnfenced of this thread before its later stores (e.g. a release
/// to another thread).
void StreamFence();

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_STREAM_STORE_H_
