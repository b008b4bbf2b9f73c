#include "fetch/image_prefetch.h"

#include <algorithm>

namespace gdfs::engine {

ImagePrefetch::Stretch ImagePrefetch::on_fetch(uint64_t start, uint64_t end, uint64_t cap) {
  std::lock_guard lock(mu_);
  const bool follows =
      next_ != UINT64_MAX && start + kSlack >= next_ && start <= std::max(next_, ahead_) + kSlack;
  if (!follows) {  // a first fetch or a seek: remember where it ended, prefetch nothing yet
    next_ = end;
    ahead_ = end;
    window_ = 0;
    streak_ = 0;
    return {};
  }
  next_ = std::max(next_, end);
  if (streak_ < kWalkAfter && ++streak_ < kWalkAfter) return {};
  const uint64_t limit = std::max<uint64_t>(cap, kFirstWindow);
  window_ = window_ == 0 ? kFirstWindow : std::min(2 * window_, limit);
  ahead_ = std::max(ahead_, next_);
  const uint64_t until = std::min(size_, next_ + window_);
  // Refill in steps of half a window or more, so that each prefetch is one worthwhile batch of requests.
  if (ahead_ >= until || (until - ahead_ < window_ / 2 && until < size_)) return {};
  Stretch s{ahead_, until - ahead_};
  ahead_ = until;
  return s;
}

void ImagePrefetch::dropped(const Stretch& s) {
  std::lock_guard lock(mu_);
  if (ahead_ == s.offset + s.length) ahead_ = s.offset;  // unless later stretches were scheduled since
}

uint64_t ImagePrefetch::window() const {
  std::lock_guard lock(mu_);
  return window_;
}

}  // namespace gdfs::engine
