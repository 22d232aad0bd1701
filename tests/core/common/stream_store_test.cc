// StreamCopyUnfenced against std::copy, and the fenced hand-over of streamed values to another
// thread.
#include "core/common/stream_store.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace taxel {
namespace {

// Every destination alignment (0–7 floats past a 32-byte boundary) and lengths around the 8-float
// vector width: the scalar head, the streamed body and the scalar tail each give the source's
// values, and nothing outside dst[0, n) is written.
TEST(StreamCopyTest, EqualsStdCopyForEveryAlignmentAndLength) {
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n <= 40; ++n) {
      std::vector<float> src(n);
      for (size_t i = 0; i < n; ++i) src[i] = 0.5f * static_cast<float>(i) - 3.f;
      alignas(32) float dst[64];
      std::fill(std::begin(dst), std::end(dst), -1.f);
      StreamCopyUnfenced(src.data(), n, dst + offset);
      StreamFence();
      for (size_t i = 0; i < 64; ++i) {
        const float expected = i >= offset && i < offset + n ? src[i - offset] : -1.f;
        ASSERT_EQ(dst[i], expected) << "offset " << offset << " n " << n << " i " << i;
      }
    }
  }
}

// A writer streams rounds of values unfenced, fences once per round and then releases the round
// number; the reader, after acquiring it, must see that round's values, not older ones. (This
// checks the documented protocol end to end; a missing fence shows only rarely, as non-temporal
// stores are seldom held back long enough.)
TEST(StreamCopyTest, AFenceThenAReleasePublishesUnfencedCopies) {
  constexpr size_t kN = 4096;
  constexpr int kRounds = 200;
  std::vector<float> dst(kN, 0.f);
  std::atomic<int> published{0};
  std::atomic<int> consumed{0};
  std::thread writer([&] {
    std::vector<float> src(kN);
    for (int r = 1; r <= kRounds; ++r) {
      while (consumed.load(std::memory_order_acquire) != r - 1) std::this_thread::yield();
      for (size_t i = 0; i < kN; ++i) src[i] = static_cast<float>(r);
      StreamCopyUnfenced(src.data(), kN / 2, dst.data());
      StreamCopyUnfenced(src.data() + kN / 2, kN / 2, dst.data() + kN / 2);
      StreamFence();
      published.store(r, std::memory_order_release);
    }
  });
  int mismatches = 0;
  for (int r = 1; r <= kRounds; ++r) {
    while (published.load(std::memory_order_acquire) != r) std::this_thread::yield();
    for (size_t i = 0; i < kN; ++i) mismatches += dst[i] != static_cast<float>(r);
    consumed.store(r, std::memory_order_release);
  }
  writer.join();
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace taxel
