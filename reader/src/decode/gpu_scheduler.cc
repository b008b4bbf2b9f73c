// The GPU decode backend. Callers (FUSE threads, readahead tasks on the pool) queue their jobs and
// wait; one dispatcher thread takes everything queued, up to the batch caps, runs it as one device
// batch and hands each caller its results. Jobs queued while a batch runs go into the next one, so
// batches grow with load and no timer is needed. Each caller then checks its own pages' checksums,
// calls JobDone and re-decodes failures on the CPU backend: that work is spread over the callers
// instead of holding up the next batch.
//
// No deadlock: the dispatcher waits only for work and for the device, callers wait only for the
// dispatcher, and neither needs a pool worker to make progress (the CPU backend never waits for a
// task that has not started), so pool workers may call decode() as well.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "decode/decode_device.h"
#include "decode/decode_scheduler.h"
#include "gdfs/checksum.h"
#include "gdfs/log.h"

namespace gdfs::engine {
namespace {

// The jobs of one decode() call that go to the device. Lives on the caller's stack; the caller does not
// return before the dispatcher is done with it.
struct Request {
  explicit Request(std::span<DecodeJob> j) : jobs(j) {}
  std::span<DecodeJob> jobs;
  std::vector<size_t> sent;         // indices into `jobs`, in the order batches take them
  std::vector<PageStatus> results;  // per entry of `sent`
  // Under the decoder's mutex. Batches take a request's jobs in order, so both count a prefix of `sent`.
  size_t taken = 0;            // in a batch
  size_t finished = 0;         // results in
  std::condition_variable cv;  // `finished` moved
};

// One device batch: consecutive slices of requests, their pages side by side.
struct Batch {
  struct Part {
    Request* request;
    size_t begin, end;  // a range of request->sent
  };
  std::vector<Part> parts;
  std::vector<DeviceJob> pages;
  std::vector<PageStatus> results;
};

uint64_t decoded_bytes(std::span<const DecodeJob> jobs) {
  uint64_t n = 0;
  for (const DecodeJob& j : jobs) n += j.entry->usize;
  return n;
}

class GpuDecoder final : public DecodeScheduler {
 public:
  GpuDecoder(std::unique_ptr<DecodeDevice> device, DecodeScheduler& cpu, Stats& stats, GpuDecodeOptions opt);
  ~GpuDecoder() override;
  void decode(std::span<DecodeJob> jobs, const JobDone& done) override;
  // The backend actually in use: once the device is given up, every page is decoded on the CPU.
  const char* name() const override { return given_up_.load(std::memory_order_relaxed) ? "cpu" : "gpu"; }

 private:
  // The caller's side.
  void screen(Request& r, const JobDone& done);
  void enqueue(Request& r);
  void collect(Request& r, const JobDone& done);
  void leave(Request& r);
  void redecode(std::span<DecodeJob> jobs, std::span<const size_t> which, const JobDone& done);
  // The dispatcher's side.
  void dispatch();
  void take();
  void run();
  void note_outcome(bool ok, const std::string& err);
  void hand_back();

  std::unique_ptr<DecodeDevice> device_;
  DecodeScheduler& cpu_;
  Stats& stats_;
  GpuDecodeOptions opt_;
  std::atomic<bool> given_up_{false};
  unsigned failures_ = 0;  // whole-batch failures in a row; dispatcher only
  Batch batch_;            // dispatcher only

  std::mutex mu_;
  std::condition_variable cv_;  // to the dispatcher: work queued or stopping; to the destructor: callers gone
  std::deque<Request*> queue_;
  unsigned callers_ = 0;  // inside decode() with a request handed over
  bool stop_ = false;
  std::thread dispatcher_;  // last: it starts once everything it uses exists
};

GpuDecoder::GpuDecoder(std::unique_ptr<DecodeDevice> device, DecodeScheduler& cpu, Stats& stats,
                       GpuDecodeOptions opt)
    : device_(std::move(device)), cpu_(cpu), stats_(stats), opt_(opt) {
  opt_.max_batch_pages = std::max<size_t>(opt_.max_batch_pages, 1);
  // Sized once (a part holds at least one page): filling a batch under the lock never allocates, so it
  // cannot throw and leave a request half taken.
  batch_.parts.reserve(opt_.max_batch_pages);
  batch_.pages.reserve(opt_.max_batch_pages);
  batch_.results.reserve(opt_.max_batch_pages);
  dispatcher_ = std::thread([this] { dispatch(); });
}

GpuDecoder::~GpuDecoder() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  dispatcher_.join();  // it serves every request queued before it leaves
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return callers_ == 0; });  // callers still checking or re-decoding
}

void GpuDecoder::decode(std::span<DecodeJob> jobs, const JobDone& done) {
  if (given_up_.load(std::memory_order_relaxed)) return cpu_.decode(jobs, done);
  if (decoded_bytes(jobs) < opt_.min_bytes) {
    Stats::add(stats_.gpu_small_reads);
    return cpu_.decode(jobs, done);
  }
  Request r(jobs);
  screen(r, done);
  if (r.sent.empty()) return;
  enqueue(r);
  try {
    collect(r, done);
  } catch (...) {
    leave(r);  // a later batch may still hold `r`: wait for it before unwinding the caller's stack
    throw;
  }
  leave(r);
}

// Stored-bytes checksums, on the caller's thread: damage is reported as damage (kStoredChecksum, as
// PageDecoder does), and a damaged page reaches neither the device nor the CPU fallback.
void GpuDecoder::screen(Request& r, const JobDone& done) {
  r.sent.reserve(r.jobs.size());
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    DecodeJob& j = r.jobs[i];
    if (!digest_ok(j)) {
      j.status = PageStatus::kDigest;  // an altered page of a trusted image is never decoded
    } else if (j.digest || checksum32(j.stored, j.entry->csize) == j.entry->ccheck) {
      r.sent.push_back(i);
      continue;
    } else {
      j.status = PageStatus::kStoredChecksum;
    }
    if (done) done(i);
  }
}

void GpuDecoder::enqueue(Request& r) {
  r.results.assign(r.sent.size(), PageStatus::kNotRun);
  std::lock_guard lock(mu_);
  if (stop_) {
    r.finished = r.sent.size();  // the dispatcher may be gone: as if the device had not run them
  } else {
    queue_.push_back(&r);
    cv_.notify_one();
  }
  ++callers_;
}

// Takes the results as batches finish (a large request may span several), keeps the pages whose
// checksum confirms the device, and has the CPU decode the rest again.
void GpuDecoder::collect(Request& r, const JobDone& done) {
  std::vector<size_t> redo;
  for (size_t seen = 0; seen < r.sent.size();) {
    size_t upto;
    {
      std::unique_lock lock(mu_);
      r.cv.wait(lock, [&] { return r.finished > seen; });
      upto = r.finished;
    }
    uint64_t accepted = 0;
    for (; seen < upto; ++seen) {
      DecodeJob& j = r.jobs[r.sent[seen]];
      if (r.results[seen] != PageStatus::kOk || checksum32(j.out, j.entry->usize) != j.entry->ucheck) {
        redo.push_back(r.sent[seen]);
        continue;
      }
      j.status = PageStatus::kOk;
      ++accepted;
      if (done) done(r.sent[seen]);
    }
    Stats::add(stats_.pages_decoded_gpu, accepted);
  }
  redecode(r.jobs, redo, done);
}

void GpuDecoder::leave(Request& r) {
  std::unique_lock lock(mu_);
  r.cv.wait(lock, [&] { return r.finished == r.sent.size(); });
  if (--callers_ == 0 && stop_) cv_.notify_all();
}

// The CPU backend decodes and checks the pages again; its verdict is final, so a reader sees EIO only
// when the page is bad on the CPU too.
void GpuDecoder::redecode(std::span<DecodeJob> jobs, std::span<const size_t> which, const JobDone& done) {
  if (which.empty()) return;
  Stats::add(stats_.gpu_fallback_pages, which.size());
  std::vector<DecodeJob> again;
  again.reserve(which.size());
  for (size_t i : which) again.push_back(jobs[i]);
  cpu_.decode(again, [&](size_t k) {
    jobs[which[k]].status = again[k].status;
    if (done) done(which[k]);
  });
}

void GpuDecoder::dispatch() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every request queued has been served
    take();
    lock.unlock();
    run();
    lock.lock();
    hand_back();
  }
}

// Under the lock: everything queued, oldest first, up to the caps (but at least one page).
void GpuDecoder::take() {
  uint64_t bytes = 0;
  while (!queue_.empty()) {
    Request& r = *queue_.front();
    const size_t begin = r.taken;
    for (; r.taken < r.sent.size() && batch_.pages.size() < opt_.max_batch_pages; ++r.taken) {
      const DecodeJob& j = r.jobs[r.sent[r.taken]];
      if (!batch_.pages.empty() && bytes + j.entry->usize > opt_.max_batch_bytes) break;
      bytes += j.entry->usize;
      batch_.pages.push_back(DeviceJob{j.entry, j.stored, j.out});
    }
    if (r.taken > begin) batch_.parts.push_back(Batch::Part{&r, begin, r.taken});
    if (r.taken < r.sent.size()) return;  // the batch is full; the rest of `r` goes in the next one
    queue_.pop_front();
  }
}

void GpuDecoder::run() {
  batch_.results.assign(batch_.pages.size(), PageStatus::kNotRun);
  if (given_up_.load(std::memory_order_relaxed)) return;  // all kNotRun: the callers use the CPU
  std::string err;
  bool ok = false;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    ok = device_->decode(batch_.pages, batch_.results, err);
  } catch (const std::exception& e) {  // the device's own bookkeeping ran out of memory, say
    err = e.what();
  }
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  Stats::add(stats_.gpu_batches);
  Stats::add(stats_.decode_ns, static_cast<uint64_t>(ns));
  note_outcome(ok, err);
}

// A device that fails whole batches again and again is broken, not busy: give it up, and say so once.
void GpuDecoder::note_outcome(bool ok, const std::string& err) {
  if (ok) {
    failures_ = 0;
    return;
  }
  if (++failures_ < opt_.max_failures) return;
  given_up_.store(true, std::memory_order_relaxed);
  log_line(LogLevel::kWarning, "GPU decoder (" + device_->name() + "): " + std::to_string(failures_) +
                                   " batches failed in a row (" + err + "); decoding on the CPU from now on");
}

// Under the lock, so a caller cannot see its request finished, return and free it while we notify.
void GpuDecoder::hand_back() {
  size_t at = 0;
  for (const Batch::Part& p : batch_.parts) {
    Request& r = *p.request;
    std::copy_n(batch_.results.begin() + static_cast<ptrdiff_t>(at), p.end - p.begin,
                r.results.begin() + static_cast<ptrdiff_t>(p.begin));
    at += p.end - p.begin;
    r.finished = p.end;
    r.cv.notify_one();
  }
  batch_.parts.clear();
  batch_.pages.clear();
}

}  // namespace

std::unique_ptr<DecodeScheduler> make_gpu_scheduler(std::unique_ptr<DecodeDevice> device,
                                                    DecodeScheduler& cpu, Stats& stats,
                                                    GpuDecodeOptions options) {
  return std::make_unique<GpuDecoder>(std::move(device), cpu, stats, options);
}

}  // namespace gdfs::engine
