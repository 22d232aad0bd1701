// The executor interface that evaluation runs on, and two implementations: inline (the calling
// thread) and a fixed-size thread pool.
//
// Determinism contract: ParallelFor may run tasks in any order on any thread; callers make every
// task write only its own outputs, so results never depend on the number of threads.
#ifndef TAXEL_CORE_COMMON_EXECUTOR_H_
#define TAXEL_CORE_COMMON_EXECUTOR_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

/// A fixed pool of `num_threads` workers; the calling thread takes part as worker 0, so
/// ThreadPool(1) spawns no thread. Tasks are handed out dynamically (an atomic counter per call).
/// ParallelFor may be called from several threads at once (e.g. two scenes stepping in parallel):
/// the calls share the pool's threads, and within one call the worker ids are distinct.
class ThreadPool final : public Executor {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_workers() const override { return num_threads_; }
  void ParallelFor(int64_t n_tasks, const std::function<void(int64_t, int)>& fn) override;

 private:
  struct Job {
    const std::function<void(int64_t, int)>* fn = nullptr;
    int64_t n_tasks = 0;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    int helpers = 0;  // pool threads inside RunJob for this job (guarded by mu_)
  };
  void WorkerLoop(int worker);
  void RunJob(Job& job, int worker);

  const int num_threads_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<Job*> jobs_;  // calls with tasks left to hand out
  bool stop_ = false;
};

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_EXECUTOR_H_
