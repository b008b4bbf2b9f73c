#include "cache/page_memory.h"

#include <bit>
#include <mutex>
#include <vector>

#include "gdfs/format.h"

namespace gdfs::engine {
namespace {

constexpr unsigned kClasses = format::kMaxPageLog2 - format::kMinPageLog2 + 1;

// One free list per size class, kKeptBytes in all. Never destroyed: pages may be freed by static
// destructors that run after this one would have.
struct Pool {
  std::mutex mu;
  std::vector<uint8_t*> free[kClasses];
  size_t bytes = 0;
};

Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

// The class of `size`, or -1 for a size that is not kept.
int size_class(uint32_t size) {
  if (!std::has_single_bit(size) || size < (1u << format::kMinPageLog2) ||
      size > (1u << format::kMaxPageLog2))
    return -1;
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
    if (p.bytes + size <= PageMemory::kKeptBytes) {
      try {
        p.free[c].push_back(b);
        p.bytes += size;
        return;
      } catch (const std::bad_alloc&) {  // the list could not grow: free the buffer instead
      }
    }
  }
  delete[] b;
}

size_t PageMemory::kept() {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  size_t n = 0;
  for (const auto& f : p.free) n += f.size();
  return n;
}

}  // namespace gdfs::engine
