// An allocator for the large, read-mostly arrays a mesh query walks at random (the 4-wide BVH's
// nodes, the leaves' triangle planes and vertices), backed by transparent huge pages on Linux.
//
// A closest-point query touches a few dozen cache lines scattered over arrays of several
// megabytes; with 4 KiB pages many of them also miss the TLB, and under virtualisation each TLB
// miss is a two-level page walk. One 2 MiB page covers what 512 small pages do (measured gain:
// docs/performance.md, "Exact mesh signed distance"). Arrays of at least kHugePageMinBytes are mapped on their own, aligned to 2 MiB and
// rounded up to whole huge pages, with madvise(MADV_HUGEPAGE): that works when the kernel's THP
// mode is `always` or `madvise` (the Debian and Ubuntu default) and is harmless otherwise (the
// pages stay small). Smaller arrays come from operator new, aligned to a cache line.
// HugePageAllocatedBytes() gives the bytes an array really occupies, for memory accounting.
#ifndef TAXEL_CORE_COMMON_HUGE_PAGE_ALLOCATOR_H_
#define TAXEL_CORE_COMMON_HUGE_PAGE_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace taxel {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
/// Arrays at least this large get huge pages (so at most half of their last page is unused).
inline constexpr size_t kHugePageMinBytes = kHugePageBytes / 2;
/// Alignment of the smaller arrays: one cache line.
inline constexpr size_t kCacheLineBytes = 64;

/// Bytes taken by an array of `bytes` bytes from HugePageAllocator.
inline size_t HugePageAllocatedBytes(size_t bytes) {
#if defined(__linux__)
  if (bytes >= kHugePageMinBytes) return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
#endif
  return bytes;
}

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: converting, as std::allocator

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
#if defined(__linux__)
    if (bytes >= kHugePageMinBytes) {
      const size_t rounded = HugePageAllocatedBytes(bytes);
      // Map one huge page more than needed and trim both ends to a 2 MiB boundary.
      void* raw = mmap(nullptr, rounded + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) throw std::bad_alloc();
      const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
      const uintptr_t aligned = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
      const uintptr_t end = begin + rounded + kHugePageBytes;
      if (aligned > begin) munmap(raw, aligned - begin);
      if (end > aligned + rounded) munmap(reinterpret_cast<void*>(aligned + rounded), end - (aligned + rounded));
      madvise(reinterpret_cast<void*>(aligned), rounded, MADV_HUGEPAGE);  // advice: failure is harmless
      return reinterpret_cast<T*>(aligned);
    }
#endif
    return static_cast<T*>(::operator new(bytes, std::align_val_t{kAlignment}));
  }

  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
#if defined(__linux__)
    if (bytes >= kHugePageMinBytes) {
      munmap(p, HugePageAllocatedBytes(bytes));
      return;
    }
#endif
    ::operator delete(p, std::align_val_t{kAlignment});
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const noexcept {
    return false;
  }

 private:
  static constexpr size_t kAlignment = alignof(T) > kCacheLineBytes ? alignof(T) : kCacheLineBytes;
};

/// A vector on huge pages when large.
template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

/// Bytes a HugePageVector's storage really occupies (its capacity, rounded to whole huge pages).
template <typename T>
size_t HugePageVectorBytes(const HugePageVector<T>& v) {
  return HugePageAllocatedBytes(v.capacity() * sizeof(T));
}

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_HUGE_PAGE_ALLOCATOR_H_
