// Reading stored page bytes from the image's source. The read path hands a whole batch of byte ranges
// (already coalesced) to fetch(), which issues them together: one io_uring submission per batch for a
// local file, or the source's own batch read (one pread per range; concurrent requests for a remote
// image).
#pragma once
#include <memory>
#include <span>
#include <string>

#include "gdfs/source.h"
#include "read/stats.h"

namespace gdfs::engine {

class Fetcher {
 public:
  virtual ~Fetcher() = default;
  // Reads every range; sets each one's `ok`. Safe to call from many threads at once.
  virtual void fetch(std::span<ReadRange> ranges) = 0;
  virtual const char* name() const = 0;
};

// Reads through Source::read (pread for a local file), counting operations and bytes.
std::unique_ptr<Fetcher> make_source_fetcher(Source& source, Stats& stats);
// An io_uring fetcher over a local file source, with rings of `queue_depth` entries (one ring per calling
// thread, created on first use). Returns nullptr, with the reason in `why`, when io_uring is unusable
// here (kernel without it, seccomp, io_uring_disabled), this build has no liburing, or the source is
// not a local file.
std::unique_ptr<Fetcher> make_uring_fetcher(Source& source, unsigned queue_depth, Stats& stats,
                                            std::string& why);

}  // namespace gdfs::engine
