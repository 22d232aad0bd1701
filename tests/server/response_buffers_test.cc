// Response slices (server/response_buffers.h): small ones are plain gRPC slices, large ones come
// back to the pool when gRPC (here: the last grpc::Slice) releases them, and are reused.
#include "server/response_buffers.h"

#include <cstring>

#include "gtest/gtest.h"

namespace taxel::server {
namespace {

TEST(ResponseBuffersTest, SlicesHaveTheRequestedSizeAndWritableBytes) {
  for (size_t size : {size_t{0}, size_t{5}, size_t{23}, size_t{24}, size_t{4096}, kMinPooledResponseBytes + 1}) {
    char* data = nullptr;
    grpc::Slice slice = NewResponseSlice(size, &data);
    ASSERT_EQ(slice.size(), size);
    if (size == 0) continue;
    std::memset(data, 0x5a, size);
    // The bytes written through `data` are the slice's, also after a copy of the slice.
    const grpc::Slice copy = slice;
    EXPECT_EQ(copy.begin()[0], 0x5a);
    EXPECT_EQ(copy.begin()[size - 1], 0x5a);
  }
}

TEST(ResponseBuffersTest, ReleasedLargeBuffersAreReusedForResponsesOfASimilarSize) {
  const size_t size = 3 * kMinPooledResponseBytes;
  char* first = nullptr;
  {
    grpc::Slice a = NewResponseSlice(size, &first);
    const grpc::Slice shared = a;  // gRPC holds its own reference while it writes
  }
  EXPECT_GE(IdleResponseBytes(), size);  // capacities are whole MiB
  char* second = nullptr;
  grpc::Slice b = NewResponseSlice(size - 100, &second);
  EXPECT_EQ(second, first);
  // Less than half of the buffer: a new one (a small response does not pin a large buffer).
  char* third = nullptr;
  grpc::Slice c = NewResponseSlice(kMinPooledResponseBytes, &third);
  EXPECT_NE(third, first);
}

}  // namespace
}  // namespace taxel::server
