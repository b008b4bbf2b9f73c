// Memory for decoded pages, recycled. A cache that fills with fresh memory pays a page fault on the first
// touch of every 4 KiB, a large part of a cold sequential read through the mount (profile in
// bench/results/2026-11-27-fuse-bigfile-zen5-vm.txt); a buffer the cache let go of is handed out again
// instead, still mapped and often still in the CPU's caches.
//
// Only buffers of a power-of-two size from 4 to 64 KiB are kept (a full page; a file's last page and tail
// packs are mostly other sizes), each handed out again for exactly its size, so the cache's byte bound
// stays true. What is kept is bounded by kKeptBytes for the process, the constant above the caches'
// capacities in its memory. The first kKeptBytes of whole pages come from one region, advised for
// transparent huge pages and faulted in when a reader opens, so that the first reads do not wait on the
// kernel providing fresh memory; its buffers are always kept.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gdfs::engine {

class PageMemory {
 public:
  static constexpr size_t kKeptBytes = 4u << 20;

  struct Free {
    uint32_t size = 0;
    void operator()(uint8_t* p) const;
  };
  using Ptr = std::unique_ptr<uint8_t[], Free>;

  // Maps the huge-page region and faults it in, if not done yet: a reader calls it when it opens.
  static void reserve();
  // `size` bytes, uninitialised.
  static Ptr get(uint32_t size);
  // Buffers kept for reuse now (tests).
  static size_t kept();
  // Whether `b` was cut from the huge-page region (tests).
  static bool in_region(const uint8_t* b);
};

}  // namespace gdfs::engine
