// Copies that bypass the caches: for output arrays larger than the caches, written once and read
// only later (e.g. the measured branch's sample ring), where an ordinary store would first read
// each line from memory (read for ownership) only to overwrite it.
#ifndef TAXEL_CORE_COMMON_STREAM_STORE_H_
#define TAXEL_CORE_COMMON_STREAM_STORE_H_

#include <cstddef>

namespace taxel {

/// dst[i] = src[i] for i < n, the same values as std::copy, with non-temporal stores where the
/// CPU has AVX2 (the parts of dst not 32-byte aligned by ordinary stores), then a store fence, so
/// that the values are ordered before any later store of this thread (e.g. a release to another
/// thread). Plain std::copy elsewhere. src and dst must not overlap.
void StreamCopy(const float* src, size_t n, float* dst);

/// StreamCopy without the fence, for several copies in a row: this thread reads the values back
/// as usual, but other threads may see them only after a StreamFence() of this thread (a fence
/// costs about as much as streaming 3 KB, so one per batch of copies rather than one per copy).
void StreamCopyUnfenced(const float* src, size_t n, float* dst);

/// Orders every earlier StreamCopyUnfenced of this thread before its later stores.
void StreamFence();

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_STREAM_STORE_H_
