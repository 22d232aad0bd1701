// The executor interface that evaluation runs on, and the inline implementation (the calling
// thread). The thread pool is the server's (server/thread_pool.h): the core creates no threads.
//
// Determinism contract: ParallelFor may run tasks in any order on any thread; callers make every
// task write only its own outputs, so results never depend on the number of threads.
#ifndef TAXEL_CORE_COMMON_EXECUTOR_H_
#define TAXEL_CORE_COMMON_EXECUTOR_H_

#include <cstdint>
#include <functional>

namespace taxel {

class Executor {
 public:
  virtual ~Executor() = default;
  /// Number of workers; `worker` arguments below are in [0, num_workers()).
  virtual int num_workers() const = 0;
  /// Runs fn(task, worker) for every task in [0, n_tasks) and returns when all have finished.
  /// A worker runs one task at a time, so per-worker scratch indexed by `worker` is safe.
  virtual void ParallelFor(int64_t n_tasks, const std::function<void(int64_t task, int worker)>& fn) = 0;
};

/// Runs every task on the calling thread, in order.
class InlineExecutor final : public Executor {
 public:
  int num_workers() const override { return 1; }
  void ParallelFor(int64_t n_tasks, const std::function<void(int64_t, int)>& fn) override {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
  }
};

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_EXECUTOR_H_
