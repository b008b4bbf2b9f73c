#include "fetch/image_prefetch.h"

#include <algorithm>

namespace gdfs::engine {

ImagePrefetch::Stretch ImagePrefetch::on_fetch(uint64_t start, uint64_t end, uint64_t cap) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(walks_.begin(), walks_.end(), [&](const Walk& w) { return w.follows(start); });
  if (it == walks_.end()) {  // a first fetch or a seek: remember where it ended, prefetch nothing yet
    it = std::min_element(walks_.begin(), walks_.end(),
                          [](const Walk& a, const Walk& b) { return a.last_used < b.last_used; });
    *it = Walk{end, end, 0, 0, ++clock_};
    last_ = static_cast<size_t>(it - walks_.begin());
    return {};
  }
  Walk& w = *it;
  w.last_used = ++clock_;
  last_ = static_cast<size_t>(it - walks_.begin());
  w.next = std::max(w.next, end);
  if (w.streak < kWalkAfter && ++w.streak < kWalkAfter) return {};
  const uint64_t limit = std::max<uint64_t>(cap, kFirstWindow);
  w.window = w.window == 0 ? kFirstWindow : std::min(2 * w.window, limit);
  w.ahead = std::max(w.ahead, w.next);
  const uint64_t until = std::min(size_, w.next + w.window);
  // Refill in steps of half a window or more, so that each prefetch is one worthwhile batch of requests.
  if (w.ahead >= until || (until - w.ahead < w.window / 2 && until < size_)) return {};
  Stretch s{w.ahead, until - w.ahead};
  w.ahead = until;
  return s;
}

void ImagePrefetch::dropped(const Stretch& s) {
  std::lock_guard lock(mu_);
  for (Walk& w : walks_)  // unless later stretches were scheduled since
    if (w.ahead == s.offset + s.length) w.ahead = s.offset;
}

uint64_t ImagePrefetch::window() const {
  std::lock_guard lock(mu_);
  return walks_[last_].window;
}

}  // namespace gdfs::engine
