#include "core/common/nonzero_mask.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace taxel {
namespace {

TEST(NonzeroMaskTest, FloatsByHand) {
  // Elements 1 (1.5), 3 (−0.0: its sign bit is set, so it is kept), 7 and 8 are stored:
  // byte 0 = 2^1 + 2^3 + 2^7 = 0x8A, byte 1 = 2^0 = 0x01.
  const float a[9] = {0.0f, 1.5f, 0.0f, -0.0f, 0.0f, 0.0f, 0.0f, 2.0f, 3.0f};
  uint8_t mask[2] = {0xEE, 0xEE};
  ASSERT_EQ(NonzeroMaskBytes(9), 2u);
  EXPECT_EQ(BuildNonzeroMask(a, 9, 4, mask), 4u);
  EXPECT_EQ(mask[0], 0x8A);
  EXPECT_EQ(mask[1], 0x01);
  EXPECT_EQ(CountNonzeroMask(mask, 9), 4);
  float packed[4];
  EXPECT_EQ(PackNonzero(a, 9, 4, mask, reinterpret_cast<char*>(packed)), reinterpret_cast<char*>(packed + 4));
  EXPECT_EQ(packed[0], 1.5f);
  EXPECT_TRUE(std::signbit(packed[1]) && packed[1] == 0.0f);
  EXPECT_EQ(packed[2], 2.0f);
  EXPECT_EQ(packed[3], 3.0f);
  float back[9];
  std::memset(back, 0x7F, sizeof(back));
  UnpackNonzero(reinterpret_cast<const char*>(packed), 9, 4, mask, back);
  EXPECT_EQ(std::memcmp(back, a, sizeof(a)), 0);
}

TEST(NonzeroMaskTest, BoolsByHand) {
  // Elements 1, 2 and 10 are set: byte 0 = 2^1 + 2^2 = 0x06, byte 1 = 2^(10−8) = 0x04.
  const uint8_t a[11] = {0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1};
  uint8_t mask[2];
  EXPECT_EQ(BuildNonzeroMask(a, 11, 1, mask), 3u);
  EXPECT_EQ(mask[0], 0x06);
  EXPECT_EQ(mask[1], 0x04);
}

TEST(NonzeroMaskTest, StrayBitPastTheEndIsMalformed) {
  const uint8_t ok[2] = {0xFF, 0x07};   // n = 11: bits 8..10 of the second byte may be set
  const uint8_t bad[2] = {0xFF, 0x08};  // bit 11 is past n
  EXPECT_EQ(CountNonzeroMask(ok, 11), 11);
  EXPECT_EQ(CountNonzeroMask(bad, 11), -1);
  EXPECT_EQ(CountNonzeroMask(bad, 16), 9);
  EXPECT_EQ(CountNonzeroMask(nullptr, 0), 0);
}

// Arrays with long zero runs (the 8-byte skips), full groups, scattered elements, NaN and −0.0,
// against a bit-by-bit reference, for every item size and lengths around the group boundaries.
TEST(NonzeroMaskTest, MatchesReferenceAndRoundTrips) {
  std::mt19937 rng(7);
  for (size_t item : {1u, 2u, 4u, 8u}) {
    for (size_t n : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 63u, 64u, 65u, 127u, 1000u, 4099u}) {
      std::vector<unsigned char> data(n * item, 0);
      for (size_t i = 0; i < n; ++i) {
        const int region = static_cast<int>((i / 70) % 3);  // 70 zeros, 70 dense, 70 sparse, ...
        const bool set = region == 1 || (region == 2 && rng() % 4 == 0);
        if (!set) continue;
        // A nonzero pattern; sometimes only the top byte (the sign bit of −0.0 for floats).
        unsigned char* e = &data[i * item];
        if (rng() % 5 == 0) {
          e[item - 1] = 0x80;
        } else {
          e[rng() % item] = static_cast<unsigned char>(1 + rng() % 255);
        }
      }
      std::vector<uint8_t> ref(NonzeroMaskBytes(n), 0);
      std::vector<unsigned char> ref_packed;
      for (size_t i = 0; i < n; ++i) {
        bool nz = false;
        for (size_t k = 0; k < item; ++k) nz |= data[i * item + k] != 0;
        if (nz) {
          ref[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
          ref_packed.insert(ref_packed.end(), &data[i * item], &data[i * item] + item);
        }
      }
      SCOPED_TRACE(testing::Message() << "item " << item << " n " << n);
      std::vector<uint8_t> mask(NonzeroMaskBytes(n), 0xCD);
      const size_t count = BuildNonzeroMask(data.data(), n, item, mask.data());
      EXPECT_EQ(mask, ref);
      EXPECT_EQ(count * item, ref_packed.size());
      EXPECT_EQ(CountNonzeroMask(mask.data(), n), static_cast<int64_t>(count));
      std::vector<char> packed(count * item + 1);
      char* end = PackNonzero(data.data(), n, item, mask.data(), packed.data());
      ASSERT_EQ(static_cast<size_t>(end - packed.data()), count * item);
      // (ref_packed is empty, and its data() may be null, when nothing is nonzero.)
      if (!ref_packed.empty()) {
        EXPECT_EQ(std::memcmp(packed.data(), ref_packed.data(), ref_packed.size()), 0);
      }
      std::vector<unsigned char> back(n * item + 1, 0xAB);
      UnpackNonzero(packed.data(), n, item, mask.data(), back.data());
      if (n > 0) {  // (data.data() is null for n = 0)
        EXPECT_EQ(std::memcmp(back.data(), data.data(), n * item), 0);
      }
      EXPECT_EQ(back[n * item], 0xAB) << "wrote past the end";
      std::vector<unsigned char> zeroed(n * item, 0);
      UnpackNonzero(packed.data(), n, item, mask.data(), zeroed.data(), /*dst_is_zero=*/true);
      EXPECT_EQ(zeroed, std::vector<unsigned char>(data.begin(), data.end()));
    }
  }
}

}  // namespace
}  // namespace taxel
