// A fixed set of worker threads running queued tasks: the CPU decoder's helpers and readahead.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gdfs::engine {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();  // runs the tasks already queued, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::function<void()> task);
  unsigned size() const { return static_cast<unsigned>(workers_.size()); }
  // Tasks queued and not yet started: readahead uses it to back off when the pool is saturated.
  size_t backlog() const;

 private:
  void work();
  void stop();  // runs what is queued, then joins every worker
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace gdfs::engine
