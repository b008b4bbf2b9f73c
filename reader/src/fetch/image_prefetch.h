// When to read a remote image ahead of its readers, and how far (Source::prefetch).
//
// The per-file readahead of the engine cannot help a tree walk: each file is small and read once. But
// mkfs lays files out in walk order, so a walk reads the image itself from front to back, a few KiB per
// file; over a link with tens of milliseconds of round trip, one request per file is what makes it slow.
// This watches the image offsets the engine fetches: once three fetches in a row each start near where
// the one before ended (allowing the small reordering of concurrent readers), the stretch after them is
// prefetched, and the window doubles while the reader keeps going, up to what the source says its link
// needs (latency times bandwidth). A fetch anywhere else starts over with nothing prefetched, so random
// readers rarely cost extra traffic: two random fetches in a row would both have to land within kSlack
// of their predecessors. With several walks (a reader that takes turns between two regions of the image,
// or several readers), a fetch continues whichever walk it follows, and one that follows none replaces
// the walk least recently continued.
#pragma once
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gdfs::engine {

class ImagePrefetch {
 public:
  static constexpr uint64_t kFirstWindow = 512 << 10;
  // How far behind the walk's furthest fetch, or past the prefetched stretch, a fetch may start and
  // still count as part of the same walk (concurrent readers, pages shared by small files).
  static constexpr uint64_t kSlack = 256 << 10;
  // Fetches in a row, after the first, that make a walk.
  static constexpr unsigned kWalkAfter = 2;

  struct Stretch {
    uint64_t offset = 0;
    uint64_t length = 0;  // 0: nothing to prefetch
  };

  explicit ImagePrefetch(uint64_t image_size, unsigned walks = 1)
      : size_(image_size), walks_(walks ? walks : 1) {}

  // The engine fetched [start, end) of the image for a reader; `cap` is the source's window. Returns the
  // stretch to prefetch now, which the caller must pass to the source (it counts as scheduled).
  Stretch on_fetch(uint64_t start, uint64_t end, uint64_t cap);
  // The caller could not schedule `s` (the pool was saturated): the next fetch may ask for it again.
  void dropped(const Stretch& s);
  // The window of the walk continued last.
  uint64_t window() const;

 private:
  struct Walk {
    uint64_t next = UINT64_MAX;  // end of the walk's furthest fetch; UINT64_MAX: no walk yet
    uint64_t ahead = 0;          // end of what has been scheduled for prefetch
    uint64_t window = 0;         // 0 until a walk is seen
    unsigned streak = 0;         // fetches in a row that followed their predecessor
    uint64_t last_used = 0;      // when a fetch last continued (or started) it
    bool follows(uint64_t start) const {
      return next != UINT64_MAX && start + kSlack >= next && start <= std::max(next, ahead) + kSlack;
    }
  };
  const uint64_t size_;
  mutable std::mutex mu_;
  std::vector<Walk> walks_;
  uint64_t clock_ = 0;
  size_t last_ = 0;  // the walk continued (or started) last
};

}  // namespace gdfs::engine
