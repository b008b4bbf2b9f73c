// Reading stored page bytes from the image file. The read path hands a whole batch of byte ranges
// (already coalesced) to fetch(), which issues them together: one io_uring submission per batch, or one
// pread per range where io_uring is unavailable.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "daemon/stats.h"

namespace gdfs::daemon {

struct FetchRange {
  uint64_t offset = 0;
  uint32_t length = 0;
  uint8_t* dst = nullptr;
  bool ok = false;  // set by fetch(): all `length` bytes were read
};

class Fetcher {
 public:
  virtual ~Fetcher() = default;
  // Reads every range; sets each one's `ok`. Safe to call from many threads at once.
  virtual void fetch(std::span<FetchRange> ranges) = 0;
  virtual const char* name() const = 0;
};

std::unique_ptr<Fetcher> make_pread_fetcher(int fd, Stats& stats);
// An io_uring fetcher with rings of `queue_depth` entries (one ring per calling thread, created on
// first use). Returns nullptr, with the reason in `why`, when io_uring is unusable here (kernel
// without it, seccomp, io_uring_disabled) or this build has no liburing.
std::unique_ptr<Fetcher> make_uring_fetcher(int fd, unsigned queue_depth, Stats& stats, std::string& why);

// pread until `len` bytes or EOF/error; true when all were read. Shared by both fetchers.
bool pread_full(int fd, uint8_t* dst, size_t len, uint64_t offset);

}  // namespace gdfs::daemon
