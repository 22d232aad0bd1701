#include "core/common/workspace.h"

#include <cstdint>
#include <set>

#include "gtest/gtest.h"

namespace taxel {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % Workspace::kAlignment == 0; }

TEST(WorkspaceTest, TakesAreAlignedDisjointAndGivenBackWhenTheScopeEnds) {
  Workspace ws;
  {
    Workspace::Scope scope(ws);
    // 3 floats round up to one 64-byte slot; 10 doubles (80 bytes) to two.
    float* a = ws.Take<float>(3);
    double* b = ws.Take<double>(10);
    EXPECT_TRUE(Aligned(a));
    EXPECT_TRUE(Aligned(b));
    EXPECT_EQ(reinterpret_cast<char*>(b) - reinterpret_cast<char*>(a), 64);
    EXPECT_EQ(ws.used_bytes(), 64u + 128u);
    {
      Workspace::Scope inner(ws);
      ws.Take<char>(1);
      EXPECT_EQ(ws.used_bytes(), 64u + 128u + 64u);
    }
    EXPECT_EQ(ws.used_bytes(), 64u + 128u);  // the inner scope gave its slot back
  }
  EXPECT_EQ(ws.used_bytes(), 0u);
}

TEST(WorkspaceTest, TakeZeroedZeroesEvenReusedMemory) {
  Workspace ws;
  {
    Workspace::Scope scope(ws);
    double* d = ws.Take<double>(100);
    for (int i = 0; i < 100; ++i) d[i] = 1.5;
  }
  Workspace::Scope scope(ws);
  const double* z = ws.TakeZeroed<double>(100);  // the same bytes as before
  for (int i = 0; i < 100; ++i) EXPECT_EQ(z[i], 0.0) << i;
}

TEST(WorkspaceTest, PointersStayValidWhenLaterTakesAddBlocks) {
  // The first block is 64 KiB; a 1 MiB take overflows it. Values written before must survive.
  Workspace ws;
  Workspace::Scope scope(ws);
  int* small = ws.Take<int>(16);
  for (int i = 0; i < 16; ++i) small[i] = 7 * i;
  char* big = ws.Take<char>(size_t{1} << 20);
  big[(size_t{1} << 20) - 1] = 42;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(small[i], 7 * i) << i;
  EXPECT_GE(ws.capacity_bytes(), (size_t{64} << 10) + (size_t{1} << 20));
}

TEST(WorkspaceTest, AfterAnOverflowTheOutermostScopeMergesBlocksSoTheNextStepAllocatesNothing) {
  Workspace ws;
  const void* first = nullptr;
  for (int step = 0; step < 3; ++step) {
    Workspace::Scope scope(ws);
    // 100 KiB + 100 KiB: step 0 takes a block of 100 KiB (the first request, above the 64 KiB
    // minimum) and then a second one of max(100 KiB, capacity 100 KiB).
    char* a = ws.Take<char>(100 << 10);
    char* b = ws.Take<char>(100 << 10);
    EXPECT_NE(a, b);
    if (step == 1) first = a;
    // From step 1 on, one block holds both takes (no new block): the same address every step
    // and a capacity that no longer grows.
    if (step == 2) {
      EXPECT_EQ(a, first);
    }
  }
  const size_t capacity = ws.capacity_bytes();
  {
    Workspace::Scope scope(ws);
    ws.Take<char>(100 << 10);
    ws.Take<char>(100 << 10);
  }
  EXPECT_EQ(ws.capacity_bytes(), capacity);
  // 100 KiB + 100 KiB, merged into one block of 200 KiB when step 0's scope closed.
  EXPECT_EQ(capacity, size_t{200} << 10);
}

TEST(WorkspacePoolTest, ReserveKeepsExistingWorkspacesAndSumsTheirCapacity) {
  WorkspacePool pool;
  pool.Reserve(2);
  ASSERT_EQ(pool.size(), 2);
  Workspace* w0 = &pool[0];
  {
    Workspace::Scope scope(pool[0]);
    pool[0].Take<char>(10);
  }
  pool.Reserve(4);
  EXPECT_EQ(pool.size(), 4);
  EXPECT_EQ(&pool[0], w0);  // stable address while the pool grows
  EXPECT_EQ(pool.capacity_bytes(), size_t{64} << 10);  // only workspace 0 took memory
  pool.Reserve(1);
  EXPECT_EQ(pool.size(), 4);
}

}  // namespace
}  // namespace taxel
