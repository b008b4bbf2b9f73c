#include "cache/page_cache.h"

#include <algorithm>
#include <new>

namespace gdfs::engine {

// Every shard must hold a fair number of the largest pages, or a small cache would cache nothing: shards
// are capped at capacity / (16 pages of 64 KiB).
PageCache::PageCache(uint64_t capacity_bytes, unsigned shards)
    : capacity_(capacity_bytes),
      shards_(std::clamp<uint64_t>(capacity_bytes / (16u << 16), 1, std::max(1u, shards))) {
  shard_capacity_ = capacity_ / shards_.size();
}

PageCache::Lookup PageCache::acquire(uint64_t key, bool claim) {
  Shard& s = shard(key);
  Lookup out;
  std::lock_guard lock(s.mu);
  if (auto it = s.map.find(key); it != s.map.end()) {
    it->second.used = true;
    out.hit = it->second.page;
    return out;
  }
  if (auto it = s.loading.find(key); it != s.loading.end()) {
    out.pending = it->second.future;
    return out;
  }
  if (!claim) return out;
  Loading& l = s.loading[key];
  l.future = l.promise.get_future().share();
  out.claimed = true;
  return out;
}

bool PageCache::contains(uint64_t key) const {
  const Shard& s = shards_[shard_index(key)];
  std::lock_guard lock(s.mu);
  return s.map.contains(key) || s.loading.contains(key);
}

void PageCache::complete(uint64_t key, LoadedPage result) {
  Shard& s = shard(key);
  std::promise<LoadedPage> promise;
  {
    std::lock_guard lock(s.mu);
    auto it = s.loading.find(key);
    if (it == s.loading.end()) return;  // not claimed: a caller bug, but never a crash
    promise = std::move(it->second.promise);
    s.loading.erase(it);
    // Published before the waiters wake, so a request arriving now hits instead of reloading.
    // Out of memory for the cache's own bookkeeping only costs the caching; the waiters must still
    // get their page, or they would wait forever.
    try {
      if (result.status == PageStatus::kOk && result.page) insert_locked(s, key, result.page);
    } catch (const std::bad_alloc&) {
    }
  }
  promise.set_value(std::move(result));
}

bool PageCache::release(uint64_t key) {
  Shard& s = shard(key);
  PagePtr page;  // freed after the lock is dropped
  std::lock_guard lock(s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end()) return false;
  page = std::move(it->second.page);
  s.bytes -= page->size;
  s.lru.erase(it->second.lru);
  s.map.erase(it);
  return true;
}

void PageCache::insert_locked(Shard& s, uint64_t key, PagePtr page) {
  const uint64_t size = page->size;
  if (size > shard_capacity_) return;  // a cache too small to hold it: serve it uncached
  // The list node first: if the map insert then throws (out of memory), undo it, so the list and the
  // map always name the same pages.
  s.lru.push_front(key);
  try {
    s.map.emplace(key, Entry{std::move(page), s.lru.begin()});
  } catch (...) {
    s.lru.pop_front();
    throw;
  }
  s.bytes += size;
  while (s.bytes > shard_capacity_) {
    auto victim = s.map.find(s.lru.back());
    if (victim->second.used && victim->first != key) {  // a second chance: to the front, unmarked
      victim->second.used = false;
      s.lru.splice(s.lru.begin(), s.lru, victim->second.lru);
      continue;
    }
    s.bytes -= victim->second.page->size;
    s.map.erase(victim);
    s.lru.pop_back();
  }
}

uint64_t PageCache::bytes() const {
  uint64_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.bytes;
  }
  return n;
}

uint64_t PageCache::pages() const {
  uint64_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.map.size();
  }
  return n;
}

}  // namespace gdfs::engine
