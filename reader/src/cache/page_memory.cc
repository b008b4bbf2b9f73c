#include "cache/page_memory.h"

#include <sys/mman.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <vector>

#include "gdfs/format.h"

#if defined(__SANITIZE_ADDRESS__)
#define GDFS_PAGE_MEMORY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GDFS_PAGE_MEMORY_ASAN 1
#endif
#endif
#ifdef GDFS_PAGE_MEMORY_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

namespace gdfs::engine {
namespace {

constexpr unsigned kClasses = format::kMaxPageLog2 - format::kMinPageLog2 + 1;
constexpr uint32_t kWhole = 1u << format::kMaxPageLog2;
constexpr unsigned kWholeClass = kClasses - 1;
constexpr size_t kHuge = 2u << 20;  // an x86-64 transparent huge page
// Under ASan each region buffer is followed by a poisoned guard, as a heap buffer has its redzone, so
// that a write past a page still stops the test that makes it.
#ifdef GDFS_PAGE_MEMORY_ASAN
constexpr size_t kGuard = 4096;
#else
constexpr size_t kGuard = 0;
#endif
constexpr size_t kStride = kWhole + kGuard;
constexpr size_t kRegionBuffers = PageMemory::kKeptBytes / kWhole;
constexpr size_t kRegionBytes = kRegionBuffers * kStride;

// One free list per size class, kKeptBytes in all. Never destroyed: pages may be freed by static
// destructors that run after this one would have.
struct Pool {
  std::mutex mu;
  std::vector<uint8_t*> free[kClasses];
  size_t bytes = 0;
  // Whole pages are cut from one region of kKeptBytes first, never given back to the system, advised for
  // transparent huge pages and faulted in when a reader opens (map_region).
  uint8_t* region = nullptr;
  size_t region_used = 0;
  bool region_tried = false;

  bool in_region(const uint8_t* b) const {
    const auto a = reinterpret_cast<uintptr_t>(b), r = reinterpret_cast<uintptr_t>(region);
    return region && a >= r && a < r + kRegionBytes;
  }
  void map_region();
  uint8_t* from_region();
  void make_room(size_t size);
};

Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

// The region, mapped once and aligned to a huge page (mapped larger, the ends unmapped). Where it cannot
// be had, every buffer comes from the heap.
void Pool::map_region() {
  if (!region_tried) {
    region_tried = true;
    const size_t span = kRegionBytes + kHuge;
    void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    const auto base = reinterpret_cast<uintptr_t>(m);
    const uintptr_t start = (base + kHuge - 1) & ~(uintptr_t{kHuge} - 1);
    if (start > base) ::munmap(m, start - base);
    if (const uintptr_t end = start + kRegionBytes; end < base + span)
      ::munmap(reinterpret_cast<void*>(end), base + span - end);
    auto* r = reinterpret_cast<uint8_t*>(start);
    (void)::madvise(r, kRegionBytes, MADV_HUGEPAGE);
    // Faulted in now, at open (0.1-0.3 ms), not by the first reads: faulted in inside a cold 12 MB read
    // through the mount, it made that read 1.1 ms slower, 12.0 against 10.9 ms
    // (bench/results/2026-11-27-fuse-bigfile-hugepage-region-zen5-vm.txt).
    // Short of memory, the advice fails and the region is left to fault in as it is used, as heap memory
    // would; only a kernel that does not know the advice (before Linux 5.14) gets each page touched.
#ifdef MADV_POPULATE_WRITE
    if (::madvise(r, kRegionBytes, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
#endif
      for (size_t at = 0; at < kRegionBytes; at += 4096) reinterpret_cast<volatile uint8_t*>(r)[at] = 0;
    try {
      free[kWholeClass].reserve(kRegionBuffers);  // so a region buffer always fits
    } catch (const std::bad_alloc&) {
      ::munmap(r, kRegionBytes);
      return;
    }
    for (size_t k = 0; k < kRegionBuffers; ++k) ASAN_POISON_MEMORY_REGION(r + k * kStride, kStride);
    region = r;
  }
}

uint8_t* Pool::from_region() {
  map_region();
  if (!region || region_used == kRegionBytes) return nullptr;
  uint8_t* b = region + region_used;
  region_used += kStride;
  return b;
}

// Frees heap buffers until `size` more bytes fit. Called only for a region buffer coming back to a full
// pool: as all region buffers fit in kKeptBytes, the pool then holds heap buffers enough.
void Pool::make_room(size_t size) {
  for (auto& list : free) {
    for (size_t i = 0; i < list.size() && bytes + size > PageMemory::kKeptBytes;) {
      if (in_region(list[i])) {
        ++i;
        continue;
      }
      const size_t n = size_t{1} << (format::kMinPageLog2 + static_cast<unsigned>(&list - free));
      bytes -= n;
      ASAN_UNPOISON_MEMORY_REGION(list[i], n);
      delete[] list[i];
      list[i] = list.back();
      list.pop_back();
    }
  }
}

// The class of `size`, or -1 for a size that is not kept.
int size_class(uint32_t size) {
  if (!std::has_single_bit(size) || size < (1u << format::kMinPageLog2) || size > kWhole) return -1;
  return std::countr_zero(size) - static_cast<int>(format::kMinPageLog2);
}

}  // namespace

PageMemory::Ptr PageMemory::get(uint32_t size) {
  if (const int c = size_class(size); c >= 0) {
    Pool& p = pool();
    std::lock_guard lock(p.mu);
    if (!p.free[c].empty()) {
      uint8_t* b = p.free[c].back();
      p.free[c].pop_back();
      p.bytes -= size;
      ASAN_UNPOISON_MEMORY_REGION(b, size);
      return Ptr(b, Free{size});
    }
    if (size == kWhole)
      if (uint8_t* b = p.from_region()) {
        ASAN_UNPOISON_MEMORY_REGION(b, size);
        return Ptr(b, Free{size});
      }
  }
  return Ptr(new uint8_t[size], Free{size});
}

void PageMemory::Free::operator()(uint8_t* b) const {
  if (!b) return;
  if (const int c = size_class(size); c >= 0) {
    Pool& p = pool();
    std::lock_guard lock(p.mu);
    if (p.in_region(b)) {  // never freed: kept in place of heap buffers if need be
      if (p.bytes + size > PageMemory::kKeptBytes) p.make_room(size);
      p.free[c].push_back(b);  // does not throw: the region's list has room for all of it reserved
      p.bytes += size;
      ASAN_POISON_MEMORY_REGION(b, size);  // a kept buffer is freed memory to anyone still holding it
      return;
    }
    if (p.bytes + size <= PageMemory::kKeptBytes) {
      try {
        p.free[c].push_back(b);
        p.bytes += size;
        ASAN_POISON_MEMORY_REGION(b, size);
        return;
      } catch (const std::bad_alloc&) {  // the list could not grow: free the buffer instead
      }
    }
  }
  delete[] b;
}

void PageMemory::reserve() {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  p.map_region();
}

size_t PageMemory::kept() {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  size_t n = 0;
  for (const auto& f : p.free) n += f.size();
  return n;
}

bool PageMemory::in_region(const uint8_t* b) {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  return p.in_region(b);
}

}  // namespace gdfs::engine
