#include "server/request_executor.h"

#include <algorithm>
#include <utility>

namespace taxel::server {

RequestExecutor::RequestExecutor(int num_threads, size_t max_queue, std::function<void(size_t)> on_depth)
    : max_queue_(std::max<size_t>(1, max_queue)), on_depth_(std::move(on_depth)) {
  for (int i = 0; i < std::max(1, num_threads); ++i) threads_.emplace_back([this] { Loop(); });
}

RequestExecutor::~RequestExecutor() {
  RefuseQueued();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

bool RequestExecutor::TrySubmit(std::function<void()> work, std::function<void()> refuse) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || refusing_ || queue_.size() >= max_queue_) return false;
    queue_.push_back({std::move(work), std::move(refuse)});
    DepthChanged();
  }
  cv_.notify_one();
  return true;
}

void RequestExecutor::RefuseQueued() {
  std::deque<Item> refused;
  {
    std::lock_guard<std::mutex> lock(mu_);
    refusing_ = true;
    refused.swap(queue_);
    DepthChanged();
  }
  for (Item& item : refused) {
    if (item.refuse) item.refuse();
  }
}

size_t RequestExecutor::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void RequestExecutor::Loop() {
  while (true) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      work = std::move(queue_.front().work);
      queue_.pop_front();
      DepthChanged();
    }
    work();
  }
}

}  // namespace taxel::server
