#include "read/check_ahead.h"

#include <algorithm>

namespace gdfs::engine {

CheckAhead::CheckAhead(std::span<const format::PageEntry> pages, uint64_t image_size, uint64_t capacity)
    : pages_(pages), capacity_(capacity), walk_(image_size, kWalks) {
  const bool sorted = std::is_sorted(pages.begin(), pages.end(),
                                     [](const auto& a, const auto& b) { return a.offset < b.offset; });
  if (sorted) return;
  by_offset_.resize(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) by_offset_[i] = i;
  std::stable_sort(by_offset_.begin(), by_offset_.end(),
                   [&](uint64_t a, uint64_t b) { return pages[a].offset < pages[b].offset; });
}

std::vector<uint64_t> CheckAhead::entries_in(uint64_t offset, uint64_t length) const {
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

void CheckAhead::put(uint64_t entry, std::shared_ptr<const uint8_t> stored) {
  const uint64_t size = pages_[entry].csize;
  if (size > capacity_) return;
  std::lock_guard lock(mu_);
  auto [it, fresh] = kept_.try_emplace(entry, std::move(stored));
  if (!fresh) return;
  order_.push_back(entry);
  bytes_ += size;
  while (bytes_ > capacity_ && !order_.empty()) {
    const uint64_t old = order_.front();
    order_.pop_front();
    if (kept_.erase(old)) bytes_ -= pages_[old].csize;
  }
  // Taken entries leave their names behind in order_; keep it from growing past the live ones.
  if (order_.size() > 2 * kept_.size() + 64)
    std::erase_if(order_, [&](uint64_t e) { return !kept_.contains(e); });
}

std::shared_ptr<const uint8_t> CheckAhead::take(uint64_t entry) {
  std::lock_guard lock(mu_);
  auto it = kept_.find(entry);
  if (it == kept_.end()) return nullptr;
  std::shared_ptr<const uint8_t> out = std::move(it->second);
  kept_.erase(it);
  bytes_ -= pages_[entry].csize;
  return out;
}

bool CheckAhead::holds(uint64_t entry) const {
  std::lock_guard lock(mu_);
  return kept_.contains(entry);
}

uint64_t CheckAhead::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace gdfs::engine
