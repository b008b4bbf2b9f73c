#include "read/decode_ahead.h"

#include <algorithm>

namespace gdfs::engine {

DecodeAhead::DecodeAhead(std::span<const format::PageEntry> pages, uint64_t image_size, uint64_t window)
    : pages_(pages), window_(window), walk_(image_size, kWalks) {
  const bool sorted = std::is_sorted(pages.begin(), pages.end(),
                                     [](const auto& a, const auto& b) { return a.offset < b.offset; });
  if (sorted) return;
  by_offset_.resize(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) by_offset_[i] = i;
  std::stable_sort(by_offset_.begin(), by_offset_.end(),
                   [&](uint64_t a, uint64_t b) { return pages[a].offset < pages[b].offset; });
}

std::vector<uint64_t> DecodeAhead::entries_in(uint64_t offset, uint64_t length) const {
  size_t lo = 0, hi = pages_.size();
  while (lo < hi) {  // first entry at or after `offset`
    const size_t mid = lo + (hi - lo) / 2;
    if (offset_at(mid) < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  std::vector<uint64_t> out;
  for (size_t i = lo; i < pages_.size() && offset_at(i) - offset < length; ++i)
    out.push_back(by_offset_.empty() ? i : by_offset_[i]);
  return out;
}

}  // namespace gdfs::engine
