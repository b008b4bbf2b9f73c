#include "fetch/remote/prefetch_store.h"

#include <algorithm>
#include <cstring>

namespace gdfs::remote {

PrefetchStore::PrefetchStore(uint64_t image_size, uint32_t chunk, uint64_t capacity)
    : size_(image_size), chunk_(std::max<uint32_t>(chunk, 1)), capacity_(capacity) {}

uint64_t PrefetchStore::chunk_length(uint64_t index) const {
  const uint64_t start = index * chunk_;
  return start >= size_ ? 0 : std::min<uint64_t>(chunk_, size_ - start);
}

namespace {
bool is_done(PrefetchStore::Chunk& c) {
  std::lock_guard lock(c.mu);
  return c.done;
}
}  // namespace

// Drops held chunks, oldest first, while over the capacity; stops at one still being fetched (it is
// about to be read: that is why it was fetched).
void PrefetchStore::evict_locked() {
  while (bytes_ > capacity_ && !order_.empty()) {
    const uint64_t index = order_.front();
    auto it = chunks_.find(index);
    if (it != chunks_.end()) {
      if (!is_done(*it->second)) return;
      bytes_ -= chunk_length(index);
      chunks_.erase(it);
    }
    order_.pop_front();
  }
}

PrefetchStore::Claims PrefetchStore::claim(uint64_t offset, uint64_t length,
                                           std::weak_ptr<Source::Prefetch> owner) {
  Claims out;
  if (length == 0 || offset >= size_) return out;
  const uint64_t first = offset / chunk_, last = (std::min(size_, offset + length) - 1) / chunk_;
  std::lock_guard lock(mu_);
  for (uint64_t i = first; i <= last; ++i) {
    if (chunks_.count(i)) continue;
    const uint64_t len = chunk_length(i);
    bytes_ += len;
    evict_locked();
    if (bytes_ > capacity_) {  // everything held is still in flight: no room
      bytes_ -= len;
      break;
    }
    auto c = std::make_shared<Chunk>();
    c->owner = owner;
    chunks_.emplace(i, c);
    order_.push_back(i);
    out.emplace_back(i, std::move(c));
  }
  return out;
}

void PrefetchStore::finish(uint64_t index, const std::shared_ptr<Chunk>& chunk, const uint8_t* data,
                           bool tried) {
  {
    std::lock_guard lock(chunk->mu);
    if (chunk->done) return;  // a second call for the same claim
    if (data) chunk->data.assign(data, data + chunk_length(index));
    chunk->done = true;
    chunk->tried = tried;
    chunk->cv.notify_all();
  }
  if (data) return;
  std::lock_guard lock(mu_);
  auto it = chunks_.find(index);
  if (it == chunks_.end() || it->second != chunk) return;  // evicted meanwhile (and maybe claimed anew)
  chunks_.erase(it);
  bytes_ -= chunk_length(index);
  if (auto o = std::find(order_.begin(), order_.end(), index); o != order_.end()) order_.erase(o);
}

PrefetchStore::Copied PrefetchStore::copy(uint64_t offset, uint64_t length, uint8_t* dst) {
  if (length == 0 || offset >= size_ || length > size_ - offset) return Copied::kAbsent;
  const uint64_t first = offset / chunk_, last = (offset + length - 1) / chunk_;
  std::vector<std::shared_ptr<Chunk>> need;
  need.reserve(last - first + 1);
  {
    std::lock_guard lock(mu_);
    for (uint64_t i = first; i <= last; ++i) {
      auto it = chunks_.find(i);
      if (it == chunks_.end()) return Copied::kAbsent;
      need.push_back(it->second);
    }
  }
  // Held chunks stay alive through `need` even if evicted meanwhile.
  uint64_t pos = offset;
  for (const auto& c : need) {
    std::shared_ptr<Source::Prefetch> owner;
    {
      std::lock_guard lock(c->mu);
      if (!c->done) owner = c->owner.lock();
    }
    if (owner) owner->run();  // returns at once when it has started elsewhere: then wait for it
    // Not held while waiting: a claim its run left open (it threw) is finished by its destructor.
    owner.reset();
    std::unique_lock lock(c->mu);
    c->cv.wait(lock, [&] { return c->done; });
    if (c->data.empty()) return c->tried ? Copied::kFailed : Copied::kAbsent;
    const uint64_t in = pos % chunk_;
    const uint64_t n = std::min<uint64_t>(offset + length - pos, c->data.size() - in);
    std::memcpy(dst + (pos - offset), c->data.data() + in, n);
    pos += n;
  }
  std::lock_guard lock(mu_);
  ++hits_;
  return Copied::kYes;
}

uint64_t PrefetchStore::held_bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

uint64_t PrefetchStore::hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}

}  // namespace gdfs::remote
