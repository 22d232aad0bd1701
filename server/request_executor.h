// The executor that runs request handlers off the gRPC threads: a fixed set of threads pulling
// closures from a bounded FIFO queue. A full queue refuses new work (RESOURCE_EXHAUSTED upstream)
// instead of letting latency grow without bound. At shutdown the work still queued is refused
// (its `refuse` runs instead of its work), so that a call answered UNAVAILABLE never runs.
#ifndef TAXEL_SERVER_REQUEST_EXECUTOR_H_
#define TAXEL_SERVER_REQUEST_EXECUTOR_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace taxel::server {

class RequestExecutor {
 public:
  /// `on_depth` (optional) is called with the new number of queued closures every time it changes
  /// (a submission, a closure taken by a thread, a refusal), under the queue's lock, so that calls
  /// arrive in order: keep it cheap (e.g. set a gauge) and never call back into the executor.
  RequestExecutor(int num_threads, size_t max_queue, std::function<void(size_t)> on_depth = nullptr);
  /// Refuses everything still queued, waits for the closures running, and joins the threads.
  ~RequestExecutor();
  RequestExecutor(const RequestExecutor&) = delete;
  RequestExecutor& operator=(const RequestExecutor&) = delete;

  /// Queues `work`; false (and both closures are dropped) when the queue is full or refusing.
  /// `refuse` (optional) runs instead of `work` if the work is refused later (RefuseQueued).
  bool TrySubmit(std::function<void()> work, std::function<void()> refuse = nullptr);
  /// From now on refuses every submission, and calls `refuse` of each closure still queued (on
  /// the calling thread, in queue order) instead of running it. Closures already running finish.
  void RefuseQueued();
  /// Closures waiting for a thread.
  size_t queue_depth() const;
  int num_threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Loop();
  void DepthChanged() const {
    if (on_depth_) on_depth_(queue_.size());
  }
  const size_t max_queue_;
  const std::function<void(size_t)> on_depth_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  struct Item {
    std::function<void()> work, refuse;
  };
  std::deque<Item> queue_;
  bool refusing_ = false, stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_REQUEST_EXECUTOR_H_
