#include "decode/thread_pool.h"

namespace gdfs::engine {

ThreadPool::ThreadPool(unsigned threads) {
  workers_.reserve(threads);
  try {
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  } catch (...) {
    stop();  // a thread the system would not start (EAGAIN): the started ones must not outlive the throw
    throw;
  }
}

ThreadPool::~ThreadPool() {
  stop();
}

void ThreadPool::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

size_t ThreadPool::backlog() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void ThreadPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    // Tasks handle their own failures (readahead, decode helpers); an escaped exception must not
    // take the whole daemon down with std::terminate.
    try {
      task();
    } catch (...) {
    }
  }
}

}  // namespace gdfs::engine
