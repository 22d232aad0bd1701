// Tests for core/common/sha256.h against the FIPS 180-4 example vectors (NIST CSRC "Example
// Algorithms", SHA-256) and padding-boundary lengths hashed with GNU coreutils sha256sum.
#include "core/common/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace taxel {
namespace {

std::string HexOf(const std::string& message) {
  Sha256 h;
  h.Update(message.data(), message.size());
  return h.FinishHex();
}

// FIPS 180-4 / NIST example vectors.
constexpr char kEmpty[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr char kAbc[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr char k448Bit[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
constexpr char k448BitDigest[] = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr char k896Bit[] =
    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
    "mnopqrstnopqrstu";
constexpr char k896BitDigest[] = "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
constexpr char kMillionA[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

TEST(Sha256Test, EmptyMessage) { EXPECT_EQ(HexOf(""), kEmpty); }

TEST(Sha256Test, Abc) { EXPECT_EQ(HexOf("abc"), kAbc); }

TEST(Sha256Test, TwoBlockMessage448Bits) {
  // 56 bytes: the length field no longer fits in the first block, so padding spills into a second.
  ASSERT_EQ(std::string(k448Bit).size(), 56u);
  EXPECT_EQ(HexOf(k448Bit), k448BitDigest);
}

TEST(Sha256Test, Message896Bits) { EXPECT_EQ(HexOf(k896Bit), k896BitDigest); }

TEST(Sha256Test, OneMillionA) { EXPECT_EQ(HexOf(std::string(1000000, 'a')), kMillionA); }

TEST(Sha256Test, OneMillionAInUnevenChunks) {
  // Same message fed in chunks of 1, 2, ..., 997 bytes (cycling): block boundaries fall everywhere.
  Sha256 h;
  const std::string chunk(997, 'a');
  size_t fed = 0, step = 1;
  while (fed < 1000000) {
    const size_t take = std::min(step, 1000000 - fed);
    h.Update(chunk.data(), take);
    fed += take;
    step = step % 997 + 1;
  }
  EXPECT_EQ(h.FinishHex(), kMillionA);
}

TEST(Sha256Test, SplitAtEveryPosition) {
  // The 448-bit message split at every byte position must give the published digest.
  const std::string m = k448Bit;
  for (size_t split = 0; split <= m.size(); ++split) {
    Sha256 h;
    h.Update(m.data(), split);
    h.Update(m.data() + split, m.size() - split);
    EXPECT_EQ(h.FinishHex(), k448BitDigest) << "split at " << split;
  }
}

TEST(Sha256Test, PaddingBoundaryLengths) {
  // Messages of n 'a' bytes around the 55/56/64-byte padding boundaries; digests from
  // `printf 'a%.0s' $(seq 1 n) | sha256sum` (GNU coreutils 9.1).
  struct Case {
    size_t n;
    const char* digest;
  };
  const Case cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const Case& c : cases) EXPECT_EQ(HexOf(std::string(c.n, 'a')), c.digest) << c.n << " bytes";
}

TEST(Sha256Test, FinishReturnsTheBytesOfTheHexDigest) {
  Sha256 h;
  h.Update("abc", 3);
  const auto digest = h.Finish();
  // First and last bytes of the "abc" digest: ba ... ad.
  EXPECT_EQ(digest[0], 0xba);
  EXPECT_EQ(digest[1], 0x78);
  EXPECT_EQ(digest[31], 0xad);
}

}  // namespace
}  // namespace taxel
