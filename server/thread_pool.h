// The evaluation thread pool: the server's implementation of the core's Executor interface
// (core/common/executor.h), also used by the benchmarks and the core's multi-thread tests.
#ifndef TAXEL_SERVER_THREAD_POOL_H_
#define TAXEL_SERVER_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/common/executor.h"

namespace taxel::server {

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

}  // namespace taxel::server

#endif  // TAXEL_SERVER_THREAD_POOL_H_
