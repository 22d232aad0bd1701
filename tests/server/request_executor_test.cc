// Tests for server/request_executor.h: work runs off the caller's thread in FIFO order, the
// bounded queue refuses when full, and work refused at shutdown (RefuseQueued, the destructor)
// never runs while its `refuse` runs exactly once. Every wait is bounded (10 s), none is a sleep.
#include "server/request_executor.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taxel::server {
namespace {

using ::testing::ElementsAre;

constexpr auto kWait = std::chrono::seconds(10);

// A latch the tests open from one thread and wait on from others.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  /// False when the gate stayed shut for kWait.
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(RequestExecutorTest, ThreadCountIsAtLeastOne) {
  EXPECT_EQ(RequestExecutor(3, 8).num_threads(), 3);
  EXPECT_EQ(RequestExecutor(0, 8).num_threads(), 1);
  EXPECT_EQ(RequestExecutor(-2, 8).num_threads(), 1);
}

TEST(RequestExecutorTest, OneThreadRunsWorkInSubmissionOrderOffTheCallersThread) {
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  Gate done;
  {
    RequestExecutor executor(1, 16);
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(executor.TrySubmit([&, i] {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
        threads.push_back(std::this_thread::get_id());
        if (i == 4) done.Open();
      }));
    }
    ASSERT_TRUE(done.Wait());
  }
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3, 4));
  for (const std::thread::id& id : threads) EXPECT_NE(id, std::this_thread::get_id());
}

TEST(RequestExecutorTest, AFullQueueRefusesAndCountsItsDepth) {
  Gate started, release, drained;
  std::atomic<int> ran{0};
  auto executor = std::make_unique<RequestExecutor>(1, 2);
  // The only thread is held by the first closure; the queue then holds 2 and refuses a third.
  ASSERT_TRUE(executor->TrySubmit([&] {
    started.Open();
    release.Wait();
  }));
  ASSERT_TRUE(started.Wait());
  EXPECT_EQ(executor->queue_depth(), 0u);
  auto queued = [&] {
    if (++ran == 2) drained.Open();
  };
  EXPECT_TRUE(executor->TrySubmit(queued));
  EXPECT_TRUE(executor->TrySubmit(queued));
  EXPECT_EQ(executor->queue_depth(), 2u);
  EXPECT_FALSE(executor->TrySubmit([&] { ran += 100; })) << "a third queued closure exceeds max_queue = 2";
  EXPECT_EQ(executor->queue_depth(), 2u);
  release.Open();
  ASSERT_TRUE(drained.Wait());
  EXPECT_EQ(ran.load(), 2) << "the refused closure never ran";
  EXPECT_EQ(executor->queue_depth(), 0u);
}

// The depth observer sees every change, in order: the running closure takes the queue from 1 to 0;
// two more queue (1, 2); the refused third changes nothing; the thread then takes them (1, 0).
TEST(RequestExecutorTest, TheDepthObserverSeesEveryChange) {
  Gate started, release, drained;
  std::mutex mu;
  std::vector<size_t> depths;
  std::atomic<int> ran{0};
  {
    RequestExecutor executor(1, 2, [&](size_t d) {
      std::lock_guard<std::mutex> lock(mu);
      depths.push_back(d);
    });
    ASSERT_TRUE(executor.TrySubmit([&] {
      started.Open();
      release.Wait();
    }));
    ASSERT_TRUE(started.Wait());
    auto queued = [&] {
      if (++ran == 2) drained.Open();
    };
    ASSERT_TRUE(executor.TrySubmit(queued));
    ASSERT_TRUE(executor.TrySubmit(queued));
    EXPECT_FALSE(executor.TrySubmit(queued));
    release.Open();
    ASSERT_TRUE(drained.Wait());
  }
  std::lock_guard<std::mutex> lock(mu);
  // The destructor's RefuseQueued reports the (empty) queue once more: 0.
  EXPECT_THAT(depths, ElementsAre(1u, 0u, 1u, 2u, 1u, 0u, 0u));
}

TEST(RequestExecutorTest, AZeroQueueLimitStillQueuesOne) {
  Gate started, release;
  RequestExecutor executor(1, 0);
  ASSERT_TRUE(executor.TrySubmit([&] {
    started.Open();
    release.Wait();
  }));
  ASSERT_TRUE(started.Wait());
  EXPECT_TRUE(executor.TrySubmit([] {}));
  EXPECT_FALSE(executor.TrySubmit([] {}));
  release.Open();
}

TEST(RequestExecutorTest, ThreadsRunClosuresAtTheSameTime) {
  // Three closures that each wait until all three have started: only three threads running at
  // once let any of them finish.
  constexpr int kThreads = 3;
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  std::atomic<int> met{0};
  Gate all_done;
  RequestExecutor executor(kThreads, 8);
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(executor.TrySubmit([&] {
      std::unique_lock<std::mutex> lock(mu);
      ++started;
      cv.notify_all();
      if (cv.wait_for(lock, kWait, [&] { return started == kThreads; })) ++met;
      if (met.load() == kThreads) all_done.Open();
    }));
  }
  ASSERT_TRUE(all_done.Wait());
  EXPECT_EQ(met.load(), kThreads);
}

// Moved from security_test.cc: work refused at shutdown never runs.
TEST(RequestExecutorTest, RefusedWorkNeverRuns) {
  // Declared before the executor, so that they outlive its threads (the destructor joins them).
  std::mutex mu;
  std::condition_variable cv;
  bool release = false, started = false;
  std::atomic<int> ran{0}, refused{0};
  auto owned = std::make_unique<server::RequestExecutor>(1, 16);
  server::RequestExecutor& executor = *owned;
  // The only thread is held by the first closure, so the next three stay queued.
  ASSERT_TRUE(executor.TrySubmit([&] {
    std::unique_lock<std::mutex> lock(mu);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  }));
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started; });
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(executor.TrySubmit([&] { ++ran; }, [&] { ++refused; }));
  }
  executor.RefuseQueued();
  EXPECT_EQ(refused.load(), 3);
  EXPECT_FALSE(executor.TrySubmit([&] { ++ran; }, [&] { ++refused; })) << "refusing from now on";
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  owned.reset();  // joins the thread: whatever could still run has run by now
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(refused.load(), 3);
}

TEST(RequestExecutorTest, RefusedWorkWithoutARefuseClosureIsDropped) {
  Gate started, release;
  std::atomic<int> ran{0};
  auto executor = std::make_unique<RequestExecutor>(1, 4);
  ASSERT_TRUE(executor->TrySubmit([&] {
    started.Open();
    release.Wait();
  }));
  ASSERT_TRUE(started.Wait());
  ASSERT_TRUE(executor->TrySubmit([&] { ++ran; }));  // no refuse closure
  executor->RefuseQueued();
  EXPECT_EQ(executor->queue_depth(), 0u);
  release.Open();
  executor.reset();
  EXPECT_EQ(ran.load(), 0);
}

TEST(RequestExecutorTest, TheDestructorRefusesWhatIsQueuedAndLetsTheRunningClosureFinish) {
  // The running closure waits until both queued closures have been refused: the destructor must
  // refuse them (on this thread) before it joins, or it would wait for the closure forever.
  std::mutex mu;
  std::condition_variable cv;
  int refused = 0;
  std::atomic<int> ran{0};
  std::atomic<bool> running_saw_refusals{false}, running_finished{false};
  Gate started;
  {
    RequestExecutor executor(1, 4);
    ASSERT_TRUE(executor.TrySubmit([&] {
      started.Open();
      std::unique_lock<std::mutex> lock(mu);
      running_saw_refusals = cv.wait_for(lock, kWait, [&] { return refused == 2; });
      running_finished = true;
    }));
    ASSERT_TRUE(started.Wait());
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(executor.TrySubmit([&] { ++ran; },
                                     [&] {
                                       std::lock_guard<std::mutex> lock(mu);
                                       ++refused;
                                       cv.notify_all();
                                     }));
    }
  }
  EXPECT_TRUE(running_finished.load());
  EXPECT_TRUE(running_saw_refusals.load());
  EXPECT_EQ(refused, 2);
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace taxel::server
