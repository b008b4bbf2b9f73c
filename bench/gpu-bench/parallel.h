// A parallel loop over std::threads: indices are handed out in small grains from a shared counter, so
// uneven items (pages that code or decode at different speeds) balance by themselves.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gdfs::gpubench {

inline unsigned default_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

// Calls fn(i, t) for every i in [0, n) on `threads` threads (t: 0..threads-1); rethrows the first
// exception any call threw, after all threads stopped.
template <class F>
void parallel_for(size_t n, unsigned threads, F&& fn, size_t grain = 4) {
  threads =
      static_cast<unsigned>(std::clamp<size_t>(threads, 1, std::max<size_t>(1, (n + grain - 1) / grain)));
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex mu;
  auto body = [&](unsigned t) {
    try {
      for (size_t from; (from = next.fetch_add(grain)) < n;)
        for (size_t i = from; i < std::min(n, from + grain); ++i) fn(i, t);
    } catch (...) {
      std::lock_guard lock(mu);
      if (!error) error = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (std::thread& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace gdfs::gpubench
