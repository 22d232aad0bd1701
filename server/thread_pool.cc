#include "server/thread_pool.h"

#include <algorithm>

namespace taxel::server {

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  for (int w = 1; w < num_threads_; ++w) threads_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::RunJob(Job& job, int worker) {
  for (int64_t t = job.next.fetch_add(1, std::memory_order_relaxed); t < job.n_tasks;
       t = job.next.fetch_add(1, std::memory_order_relaxed)) {
    (*job.fn)(t, worker);
    if (job.done.fetch_add(1, std::memory_order_acq_rel) + 1 == job.n_tasks) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_all();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n_tasks, const std::function<void(int64_t, int)>& fn) {
  if (n_tasks <= 0) return;
  if (num_threads_ == 1 || n_tasks == 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
    return;
  }
  Job job;
  job.fn = &fn;
  job.n_tasks = n_tasks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(&job);
  }
  work_cv_.notify_all();
  RunJob(job, 0);
  // Unpublish the job, then wait for the tasks and the pool threads still inside it.
  std::unique_lock<std::mutex> lock(mu_);
  jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  done_cv_.wait(lock, [&] { return job.helpers == 0 && job.done.load(std::memory_order_acquire) == n_tasks; });
}

void ThreadPool::WorkerLoop(int worker) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    Job* job = nullptr;
    work_cv_.wait(lock, [&] {
      if (stop_) return true;
      for (Job* j : jobs_) {
        if (j->next.load(std::memory_order_relaxed) < j->n_tasks) {
          job = j;
          return true;
        }
      }
      return false;
    });
    if (stop_) return;
    ++job->helpers;
    lock.unlock();
    RunJob(*job, worker);
    lock.lock();
    if (--job->helpers == 0) done_cv_.notify_all();
  }
}

}  // namespace taxel::server
