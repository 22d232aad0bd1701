#include "core/common/huge_page_allocator.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace taxel {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(HugePageAllocatorTest, AccountsWholeHugePagesForLargeArraysOnly) {
  // Below half a huge page (1 MiB) an array takes its own size; from there on whole 2 MiB pages.
  EXPECT_EQ(HugePageAllocatedBytes(0), 0u);
  EXPECT_EQ(HugePageAllocatedBytes(1000), 1000u);
  EXPECT_EQ(HugePageAllocatedBytes(kMiB - 1), kMiB - 1);
#if defined(__linux__)
  EXPECT_EQ(HugePageAllocatedBytes(kMiB), 2 * kMiB);
  EXPECT_EQ(HugePageAllocatedBytes(2 * kMiB), 2 * kMiB);
  EXPECT_EQ(HugePageAllocatedBytes(2 * kMiB + 1), 4 * kMiB);
  EXPECT_EQ(HugePageAllocatedBytes(5 * kMiB + 123), 6 * kMiB);
#endif
}

TEST(HugePageAllocatorTest, SmallArraysAreCacheLineAligned) {
  HugePageAllocator<float> alloc;
  for (size_t n : {1, 3, 17, 1000, 100000}) {
    float* p = alloc.allocate(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
    EXPECT_EQ(p[n - 1], static_cast<float>(n - 1));
    alloc.deallocate(p, n);
  }
}

#if defined(__linux__)
// The smaps entry of the mapping that starts at `p` (empty when there is none).
std::string SmapsEntry(const void* p) {
  std::ifstream in("/proc/self/smaps");
  std::ostringstream hex;
  hex << std::hex << reinterpret_cast<uintptr_t>(p) << "-";
  std::string line, entry;
  bool inside = false;
  while (std::getline(in, line)) {
    const bool header = line.find('-') != std::string::npos && line.find(':') > line.find(' ');
    if (header) {
      if (inside) break;
      inside = line.rfind(hex.str(), 0) == 0;
    }
    if (inside) entry += line + "\n";
  }
  return entry;
}

TEST(HugePageAllocatorTest, LargeArraysAreHugePageAlignedWholeAndAdvised) {
  // 3 MiB of doubles: mapped on their own, 2 MiB aligned, 4 MiB long, all of it usable.
  HugePageAllocator<double> alloc;
  const size_t n = 3 * kMiB / sizeof(double);
  double* p = alloc.allocate(n);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (2 * kMiB), 0u);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<double>(i);
  double sum = 0;
  for (size_t i = 0; i < n; i += 4096) sum += p[i];
  // Σ_{k=0}^{95} 4096·k = 4096 · 95·96/2 = 18677760 (n = 393216 = 96 · 4096).
  EXPECT_EQ(sum, 18677760.0);
  const std::string smaps = SmapsEntry(p);
  ASSERT_FALSE(smaps.empty()) << "no mapping starts at the array";
  // The mapping is exactly the rounded size: "Size:   4096 kB".
  const size_t size = smaps.find("\nSize:");
  ASSERT_NE(size, std::string::npos) << smaps;
  EXPECT_EQ(std::stol(smaps.substr(size + 6)), 4096) << smaps;
  // MADV_HUGEPAGE shows as the "hg" flag of VmFlags (kernels since 3.x).
  const size_t flags = smaps.find("VmFlags:");
  ASSERT_NE(flags, std::string::npos) << smaps;
  EXPECT_NE(smaps.find(" hg", flags), std::string::npos) << smaps;
  alloc.deallocate(p, n);
  EXPECT_TRUE(SmapsEntry(p).empty()) << "the mapping is gone after deallocate";
}
#endif

TEST(HugePageAllocatorTest, WorksAsAVectorAllocator) {
  // Growing through the 1 MiB threshold moves the contents from operator new to a mapping.
  std::vector<int32_t, HugePageAllocator<int32_t>> v;
  for (int32_t i = 0; i < 600000; ++i) v.push_back(i);  // 2.4 MB
  int64_t sum = 0;
  for (int32_t x : v) sum += x;
  EXPECT_EQ(sum, int64_t{599999} * 600000 / 2);
  auto copy = v;
  EXPECT_EQ(copy, v);
  v.resize(10);
  v.shrink_to_fit();
  EXPECT_EQ(v.back(), 9);
  EXPECT_EQ(copy[599999], 599999);
}

}  // namespace
}  // namespace taxel
