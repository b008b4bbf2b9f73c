// Stored bytes fetched and checked ahead of a walk through the image, so that the walking reader's own
// thread only decodes.
//
// Before a page may be decoded its stored bytes are fetched and checked: the stored checksum, or on a
// signed image the SHA-256 its signature covers (about 1.5 GB/s of stored bytes on one core). On a tree
// walk by one reader (tar, a data loader's worker) that work sits between every fetch and its decode, on
// the one thread doing both, while the machine's other cores wait. The pages a walk needs next are,
// almost always, the next ones in the image (mkfs lays files out in walk order). So once a walk is seen
// (ImagePrefetch's rule: three fetches in a row, each starting near where the last ended), the stretch
// after it is fetched and checked on the pool, and each page that passes is copied here, in process
// memory, until the walk's own load takes it and decodes it without fetching or checking it again. The
// check is the one a load makes, done on bytes that nothing changes afterwards, so a page taken from
// here is exactly as trusted as one fetched on the spot. A page that fails is not kept: its load fetches
// it again and reports it.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "fetch/image_prefetch.h"
#include "gdfs/format.h"

namespace gdfs::engine {

class CheckAhead {
 public:
  // `pages`: the image's page table; `capacity`: stored bytes kept at most (oldest dropped first).
  CheckAhead(std::span<const format::PageEntry> pages, uint64_t image_size, uint64_t capacity);

  // Walks followed at once: a tree walk takes turns between the pages of whole files and the tail
  // packs holding small files, which lie elsewhere in the image.
  static constexpr unsigned kWalks = 4;
  // The walk detector: the caller reports each load's stored range and checks the stretch it returns,
  // of at most window() bytes (every walk's stretch, and the one before it, fit in the capacity).
  ImagePrefetch& walk() { return walk_; }
  uint64_t window() const { return capacity_ / (2 * kWalks); }
  uint64_t capacity() const { return capacity_; }
  // Page entries whose stored bytes begin in [offset, offset + length), in image order.
  std::vector<uint64_t> entries_in(uint64_t offset, uint64_t length) const;

  // Keeps `stored` (entry's csize bytes, already checked) for one take().
  void put(uint64_t entry, std::shared_ptr<const uint8_t> stored);
  // The checked stored bytes of `entry`, removed from here; null when none are kept.
  std::shared_ptr<const uint8_t> take(uint64_t entry);
  bool holds(uint64_t entry) const;
  uint64_t bytes() const;

 private:
  uint64_t offset_at(size_t i) const { return pages_[by_offset_.empty() ? i : by_offset_[i]].offset; }

  std::span<const format::PageEntry> pages_;
  std::vector<uint64_t> by_offset_;  // entries in offset order; empty when the table is in that order
  const uint64_t capacity_;
  ImagePrefetch walk_;

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<const uint8_t>> kept_;
  std::deque<uint64_t> order_;  // put order; may name entries taken since (skipped when dropping)
  uint64_t bytes_ = 0;          // csize of the entries in kept_
};

}  // namespace gdfs::engine
