// Pages decoded ahead of a walk through the image, so that the walking reader finds them in the cache.
//
// A tree walk by one reader (tar, a data loader's worker) reads file after file, each costing it a fetch,
// the check of the stored bytes (the stored checksum, or on a signed image the SHA-256 its signature
// covers) and the decode, on the one thread doing all three, while the machine's other cores wait. The
// pages a walk needs next are, almost always, the next ones in the image (mkfs lays files out in walk
// order). So once a walk is seen (ImagePrefetch's rule: three fetches in a row, each starting near where
// the last ended), the stretch after it is loaded on the pool as readahead is: fetched, checked, decoded
// and published in the cache, where the walker's reads find it. A page that fails is not cached; the
// read that needs it loads it again and reports it.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "fetch/image_prefetch.h"
#include "gdfs/format.h"

namespace gdfs::engine {

class DecodeAhead {
 public:
  // `pages`: the image's page table; `window`: stored bytes decoded ahead of each walk at a time.
  DecodeAhead(std::span<const format::PageEntry> pages, uint64_t image_size, uint64_t window);

  // Walks followed at once: a tree walk takes turns between the pages of whole files and the tail
  // packs holding small files, which lie elsewhere in the image.
  static constexpr unsigned kWalks = 4;
  // The walk detector: the caller reports each load's stored range and decodes the stretch it returns,
  // of at most window() bytes.
  ImagePrefetch& walk() { return walk_; }
  uint64_t window() const { return window_; }
  // Page entries whose stored bytes begin in [offset, offset + length), in image order.
  std::vector<uint64_t> entries_in(uint64_t offset, uint64_t length) const;

 private:
  uint64_t offset_at(size_t i) const { return pages_[by_offset_.empty() ? i : by_offset_[i]].offset; }

  std::span<const format::PageEntry> pages_;
  std::vector<uint64_t> by_offset_;  // entries in offset order; empty when the table is in that order
  const uint64_t window_;
  ImagePrefetch walk_;
};

}  // namespace gdfs::engine
