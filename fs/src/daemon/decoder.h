// Page decoding behind one interface. The read path hands over a batch (every page one FUSE request or
// one readahead window needs) and gets a status per page. The CPU backend spreads a batch over a thread
// pool; the GPU batch decoder (kernels/) plugs in behind the same interface.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "daemon/stats.h"
#include "daemon/thread_pool.h"
#include "gdfs/format.h"
#include "gdfs/image.h"

namespace gdfs::daemon {

struct DecodeJob {
  const format::PageEntry* entry = nullptr;
  const uint8_t* stored = nullptr;  // entry->csize bytes
  uint8_t* out = nullptr;           // entry->usize bytes
  PageStatus status = PageStatus::kOk;
};

class DecodeBackend {
 public:
  virtual ~DecodeBackend() = default;
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
std::unique_ptr<DecodeBackend> make_cpu_decoder(ThreadPool& pool, Stats& stats);

}  // namespace gdfs::daemon
