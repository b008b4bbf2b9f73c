// Page decoding behind one interface. The read path hands over a batch (every page one FUSE request or
// one readahead window needs) and gets a status per page. The CPU backend spreads a batch over a thread
// pool; the GPU backend gathers the batches of concurrent requests into device batches.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "decode/thread_pool.h"
#include "gdfs/format.h"
#include "gdfs/image.h"
#include "read/stats.h"

namespace gdfs::engine {

struct DecodeJob {
  const format::PageEntry* entry = nullptr;
  const uint8_t* stored = nullptr;  // entry->csize bytes
  uint8_t* out = nullptr;           // entry->usize bytes
  PageStatus status = PageStatus::kOk;
  // Trusted images: the SHA-256 the stored bytes must have (Image::page_digest), checked before the
  // page is decoded, on the thread that decodes it; null otherwise.
  const uint8_t* digest = nullptr;
};
// False when a trusted job's stored bytes differ from their signed digest (kDigest).
bool digest_ok(const DecodeJob& job);

class DecodeScheduler {
 public:
  virtual ~DecodeScheduler() = default;
  // Called with a job's index as soon as that job is finished, from whichever thread finished it, so
  // a reader waiting for the first page of a large batch need not wait for the whole batch.
  using JobDone = std::function<void(size_t)>;
  // Decodes and verifies (both checksums) every job, setting its status. Blocks until all are done.
  // Safe to call from many threads at once.
  virtual void decode(std::span<DecodeJob> jobs, const JobDone& done = {}) = 0;
  virtual const char* name() const = 0;
};

// Decodes on the calling thread and, for batches of more than one page, on `pool` as well. The caller
// always takes part and never waits for a task that has not started, so a pool worker (readahead) may
// call decode() too without deadlock.
std::unique_ptr<DecodeScheduler> make_cpu_scheduler(ThreadPool& pool, Stats& stats);

class DecodeDevice;  // batch_device.h

struct GpuDecodeOptions {
  // Calls that decode fewer bytes than this go straight to the CPU backend: below it a device batch's
  // fixed costs (copies, launch, the wait for the batch in flight) outweigh its speed. Measured on an
  // H100 (docs/GPU.md): no request size up to 256 MiB where the GPU won, hence 1 GiB; -o gpu_min_bytes=
  // sets it.
  uint64_t min_bytes = 1ull << 30;
  // Caps on one device batch: they bound how long a caller waits behind other callers' pages.
  uint64_t max_batch_bytes = 64 << 20;
  size_t max_batch_pages = 2048;
  // Whole-batch device failures in a row after which every call goes to the CPU backend.
  unsigned max_failures = 3;
};

// Gathers the jobs of concurrent decode() calls into batches for `device`, checks both checksums of
// every page, and re-decodes on `cpu` any page the device fails (EIO only when the CPU fails too).
// Pool workers may call decode(): callers wait only for the dispatcher thread, which waits only for the
// device. `cpu` and `stats` must outlive it; its destructor waits for the callers inside decode().
std::unique_ptr<DecodeScheduler> make_gpu_scheduler(std::unique_ptr<DecodeDevice> device,
                                                    DecodeScheduler& cpu, Stats& stats,
                                                    GpuDecodeOptions options = {});

}  // namespace gdfs::engine
