#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "decode/decode_scheduler.h"
#include "gdfs/trust.h"

namespace gdfs::engine {

bool digest_ok(const DecodeJob& job) {
  if (!job.digest) return true;
  return trust::digest_equal(trust::sha256(job.stored, job.entry->csize).data(), job.digest);
}

namespace {

// One batch shared by the caller and its helpers: each takes the next job index until none are left.
struct Batch {
  std::span<DecodeJob> jobs;
  const DecodeScheduler::JobDone* done = nullptr;
  Stats* stats = nullptr;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  unsigned active = 0;  // helpers inside run(); guarded by mu

  void run() {
    thread_local PageDecoder dec;
    uint64_t decoded = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < jobs.size(); ++decoded) {
      DecodeJob& j = jobs[i];
      j.status = digest_ok(j)
                     ? dec.decode(*j.entry, j.stored, j.out, j.digest != nullptr)
                     : PageStatus::kDigest;
      if (*done) (*done)(i);
    }
    if (decoded == 0) return;
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    Stats::add(stats->pages_decoded_cpu, decoded);
    Stats::add(stats->decode_ns, static_cast<uint64_t>(ns.count()));
  }
};

class CpuDecoder final : public DecodeScheduler {
 public:
  CpuDecoder(ThreadPool& pool, Stats& stats) : pool_(pool), stats_(stats) {}

  void decode(std::span<DecodeJob> jobs, const JobDone& done) override {
    auto batch = std::make_shared<Batch>();
    batch->jobs = jobs;
    batch->done = &done;
    batch->stats = &stats_;
    // Helpers for all but the caller's share. A helper that starts after the caller has taken every
    // job finds nothing to do and never touches `jobs`, which may be gone by then.
    const size_t helpers = std::min<size_t>(pool_.size(), jobs.size() - std::min<size_t>(jobs.size(), 1));
    for (size_t h = 0; h < helpers; ++h) {
      pool_.submit([batch] {
        {
          std::lock_guard lock(batch->mu);
          if (batch->next.load() >= batch->jobs.size()) return;
          ++batch->active;
        }
        batch->run();
        std::lock_guard lock(batch->mu);
        if (--batch->active == 0) batch->cv.notify_all();
      });
    }
    batch->run();
    // Wait only for helpers that started (and so hold jobs); they finish without waiting on anyone.
    std::unique_lock lock(batch->mu);
    batch->next.store(jobs.size());  // late helpers, under the lock, now see nothing left
    batch->cv.wait(lock, [&] { return batch->active == 0; });
  }
  const char* name() const override { return "cpu"; }

 private:
  ThreadPool& pool_;
  Stats& stats_;
};

}  // namespace

std::unique_ptr<DecodeScheduler> make_cpu_scheduler(ThreadPool& pool, Stats& stats) {
  return std::make_unique<CpuDecoder>(pool, stats);
}

}  // namespace gdfs::engine
