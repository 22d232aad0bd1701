// Tests for server/thread_pool.h and the core's InlineExecutor: every task runs exactly once, worker
// ids are in range, a worker never runs two tasks at once, and results equal the inline executor's.
#include "server/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace taxel::server {
namespace {

// A task's output depends only on its index (a cheap integer hash), never on the worker.
uint64_t TaskValue(int64_t t) {
  uint64_t x = static_cast<uint64_t>(t) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  return x * 0xBF58476D1CE4E5B9ull;
}

class ThreadPoolTest : public ::testing::TestWithParam<int> {};

TEST_P(ThreadPoolTest, NumWorkers) {
  ThreadPool pool(GetParam());
  EXPECT_EQ(pool.num_workers(), GetParam());
}

TEST_P(ThreadPoolTest, EveryTaskRunsExactlyOnceWithWorkerIdsInRange) {
  const int n_threads = GetParam();
  ThreadPool pool(n_threads);
  constexpr int64_t kTasks = 10007;  // prime: no task count aligned with the worker count
  std::vector<std::atomic<int>> runs(kTasks);
  std::vector<std::atomic<int>> busy(n_threads);
  std::atomic<int> bad_worker{0}, overlapping{0};
  pool.ParallelFor(kTasks, [&](int64_t t, int worker) {
    if (worker < 0 || worker >= n_threads) {
      bad_worker.fetch_add(1);
      return;
    }
    // A worker runs one task at a time: its busy flag must be clear on entry.
    if (busy[worker].exchange(1) != 0) overlapping.fetch_add(1);
    runs[t].fetch_add(1);
    busy[worker].store(0);
  });
  EXPECT_EQ(bad_worker.load(), 0);
  EXPECT_EQ(overlapping.load(), 0);
  for (int64_t t = 0; t < kTasks; ++t) ASSERT_EQ(runs[t].load(), 1) << "task " << t;
}

TEST_P(ThreadPoolTest, ResultsEqualInlineExecutorOverRepeatedCalls) {
  ThreadPool pool(GetParam());
  InlineExecutor inline_executor;
  for (int64_t n : {1, 2, 3, 7, 64, 1000}) {
    std::vector<uint64_t> expected(n), got(n);
    inline_executor.ParallelFor(n, [&](int64_t t, int worker) {
      EXPECT_EQ(worker, 0);
      expected[t] = TaskValue(t);
    });
    for (int repeat = 0; repeat < 50; ++repeat) {
      std::fill(got.begin(), got.end(), 0);
      pool.ParallelFor(n, [&](int64_t t, int) { got[t] = TaskValue(t); });
      ASSERT_EQ(got, expected) << "n = " << n << ", repeat " << repeat;
    }
  }
}

TEST_P(ThreadPoolTest, PerWorkerScratchSumsMatch) {
  // Per-worker partial sums (the scratch pattern the determinism contract allows), reduced in a
  // fixed order, equal the closed form sum_{t<n} t = n(n-1)/2.
  ThreadPool pool(GetParam());
  constexpr int64_t kTasks = 5000;
  std::vector<int64_t> partial(pool.num_workers(), 0);
  pool.ParallelFor(kTasks, [&](int64_t t, int worker) { partial[worker] += t; });
  int64_t total = 0;
  for (int64_t s : partial) total += s;
  EXPECT_EQ(total, kTasks * (kTasks - 1) / 2);
}

TEST_P(ThreadPoolTest, ZeroAndNegativeTaskCountsRunNothing) {
  ThreadPool pool(GetParam());
  std::atomic<int> calls{0};
  pool.ParallelFor(0, [&](int64_t, int) { calls.fetch_add(1); });
  pool.ParallelFor(-5, [&](int64_t, int) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 0);
  // The pool still works afterwards.
  pool.ParallelFor(3, [&](int64_t, int) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 3);
}

TEST_P(ThreadPoolTest, ConcurrentCallersEachRunAllTheirTasksOnce) {
  // Two outside threads share one pool; each must see all of its own tasks run exactly once.
  ThreadPool pool(GetParam());
  constexpr int64_t kTasks = 2000;
  constexpr int kRounds = 20;
  std::vector<std::atomic<int>> a(kTasks), b(kTasks);
  auto caller = [&pool](std::vector<std::atomic<int>>* runs) {
    for (int r = 0; r < kRounds; ++r) pool.ParallelFor(kTasks, [runs](int64_t t, int) { (*runs)[t].fetch_add(1); });
  };
  std::thread ta(caller, &a), tb(caller, &b);
  ta.join();
  tb.join();
  for (int64_t t = 0; t < kTasks; ++t) {
    ASSERT_EQ(a[t].load(), kRounds);
    ASSERT_EQ(b[t].load(), kRounds);
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, ThreadPoolTest, ::testing::Values(1, 2, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "threads" + std::to_string(info.param);
                         });

TEST(ThreadPoolInlineTest, OneThreadRunsOnTheCallingThreadInOrder) {
  ThreadPool pool(1);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int64_t> order;
  pool.ParallelFor(5, [&](int64_t t, int worker) {
    EXPECT_EQ(worker, 0);
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(t);
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(InlineExecutorTest, RunsInOrderOnWorkerZero) {
  InlineExecutor ex;
  EXPECT_EQ(ex.num_workers(), 1);
  std::vector<int64_t> order;
  ex.ParallelFor(4, [&](int64_t t, int worker) {
    EXPECT_EQ(worker, 0);
    order.push_back(t);
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3}));
  ex.ParallelFor(0, [&](int64_t, int) { ADD_FAILURE() << "no task expected"; });
}

}  // namespace
}  // namespace taxel::server
