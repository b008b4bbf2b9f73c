// Bytes of a remote image read ahead of need (Source::prefetch), kept in memory until a read takes them.
//
// A tree walk reads many small files whose pages follow each other in the image; over a link with tens
// of milliseconds of latency, one request per file is what makes a walk slow. The engine notices the
// reader going through the image in order and prefetches the next stretch; reads that fall inside it are
// answered from here. The image is cut into aligned chunks; a chunk is either being fetched (a reader
// that needs it waits, rather than send the same request) or held. Held chunks are dropped oldest first
// past the capacity, so memory stays bounded whatever the access pattern.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "gdfs/source.h"

namespace gdfs::remote {

class PrefetchStore {
 public:
  static constexpr uint32_t kDefaultChunk = 256 << 10;
  static constexpr uint64_t kDefaultCapacity = 64ull << 20;

  struct Chunk {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    bool tried = false;         // done after a fetch (else given up before one: see finish)
    std::vector<uint8_t> data;  // empty when done: the fetch failed or was given up
    // The prefetch that claimed it: a reader that needs the chunk runs it if nobody has yet.
    std::weak_ptr<Source::Prefetch> owner;
  };
  using Claims = std::vector<std::pair<uint64_t, std::shared_ptr<Chunk>>>;  // (chunk index, chunk)

  PrefetchStore(uint64_t image_size, uint32_t chunk = kDefaultChunk, uint64_t capacity = kDefaultCapacity);

  uint32_t chunk_size() const { return chunk_; }
  // Bytes of chunk `index` (the last one may be short).
  uint64_t chunk_length(uint64_t index) const;
  // Claims, for the caller to fetch, the chunks covering [offset, offset + length) that are neither held
  // nor being fetched, in index order. Claims nothing once the chunks held and in flight fill the
  // capacity: prefetching must not push out what readers are about to take.
  // `owner` is the prefetch that will fetch them, set before any reader can see the chunks.
  Claims claim(uint64_t offset, uint64_t length, std::weak_ptr<Source::Prefetch> owner = {});
  // Completes a claim with the chunk's bytes (chunk_length(index) of them), or null when the fetch
  // failed (`tried`) or was given up without one. Either way an empty chunk is forgotten, so later
  // readers fetch for themselves; readers already waiting fail with it after a failed fetch (kFailed),
  // and fetch for themselves after a give-up (kAbsent).
  void finish(uint64_t index, const std::shared_ptr<Chunk>& chunk, const uint8_t* data, bool tried = true);
  enum class Copied { kYes, kAbsent, kFailed };
  // Copies [offset, offset + length) into `dst` when every chunk covering it is held or being fetched
  // (waiting for the latter, after running its owner's fetch if that has not started): kYes. kAbsent, with
  // `dst` unspecified, when any of them is neither, or was given up: the caller fetches the range itself.
  // kFailed when a fetch it waited for failed: that fetch had the same retries and deadline as the caller's
  // own would, and began earlier, so the caller fails too rather than wait a second deadline.
  Copied copy(uint64_t offset, uint64_t length, uint8_t* dst);

  uint64_t held_bytes() const;
  uint64_t hits() const;  // copy() calls answered from the store

 private:
  void evict_locked();

  const uint64_t size_;
  const uint32_t chunk_;
  const uint64_t capacity_;
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<Chunk>> chunks_;
  std::deque<uint64_t> order_;  // chunk indexes, oldest first (each index at most once)
  uint64_t bytes_ = 0;          // chunk_length of every chunk in `chunks_`
  uint64_t hits_ = 0;
};

}  // namespace gdfs::remote
