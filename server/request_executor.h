// The executor that runs request handlers off the gRPC threads: a fixed set of threads pulling
// closures from a bounded FIFO queue. A full queue refuses new work (RESOURCE_EXHAUSTED upstream)
// instead of letting latency grow without bound.
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
  RequestExecutor(int num_threads, size_t max_queue);
  /// Runs everything already queued, then joins the threads.
  ~RequestExecutor();
  RequestExecutor(const RequestExecutor&) = delete;
  RequestExecutor& operator=(const RequestExecutor&) = delete;

  /// Queues `work`; false (and `work` is dropped) when the queue is full or shut down.
  bool TrySubmit(std::function<void()> work);
  /// Closures waiting for a thread.
  size_t queue_depth() const;
  int num_threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Loop();
  const size_t max_queue_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_REQUEST_EXECUTOR_H_
