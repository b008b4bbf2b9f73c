// The cache of decoded pages, keyed by page-table entry. Sharded (one mutex per shard) and bounded in
// bytes, with second-chance (CLOCK) eviction per shard: a hit only marks its page as used, and eviction
// passes over a used page once, clearing its mark, so a hit costs no list surgery while pages in use
// still outlive those that are not.
//
// It also de-duplicates work in flight: the first request to miss on a page *claims* it and must
// complete() it; requests that miss while it is being loaded get a future to wait on instead of loading
// the page a second time (readahead and a reader racing for the same page is the common case). A claimer
// completes every claim before it waits for anyone else's, so claims cannot deadlock.
#pragma once
#include <cstdint>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cache/page_memory.h"
#include "gdfs/image.h"

namespace gdfs::engine {

// One decoded page. Immutable once published; shared by the cache and the replies that use it, so
// eviction never frees bytes a reply is still sending.
struct Page {
  PageMemory::Ptr data;
  uint32_t size = 0;
};
using PagePtr = std::shared_ptr<const Page>;

struct LoadedPage {
  PagePtr page;  // set when status == kOk
  PageStatus status = PageStatus::kOk;
};

class PageCache {
 public:
  explicit PageCache(uint64_t capacity_bytes, unsigned shards = 64);

  struct Lookup {
    PagePtr hit;                             // the page was cached
    std::shared_future<LoadedPage> pending;  // another request is loading it: wait on this
    bool claimed = false;                    // the caller loads it and must call complete()
  };
  // With `claim` false a miss neither claims nor waits (all three fields empty).
  Lookup acquire(uint64_t key, bool claim = true);
  // Whether `key` is cached or being loaded; changes nothing (not even its use mark).
  bool contains(uint64_t key) const;
  // Publishes the result of a claim: caches the page if it loaded, and wakes every waiter. A failed
  // load is not cached, so the next request tries again (an I/O error may be transient).
  void complete(uint64_t key, LoadedPage result);
  // Lets go of `key` if it is cached: its reader keeps the bytes elsewhere (a FUSE daemon's reply fills
  // the kernel's page cache), and the page's memory goes back to PageMemory once its last user is done.
  // Returns whether it was cached.
  bool release(uint64_t key);

  uint64_t capacity() const { return capacity_; }
  uint64_t bytes() const;
  uint64_t pages() const;

 private:
  struct Entry {
    PagePtr page;
    std::list<uint64_t>::iterator lru;
    bool used = false;  // hit since it was inserted or last passed over by eviction
  };
  struct Loading {
    std::promise<LoadedPage> promise;
    std::shared_future<LoadedPage> future;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<uint64_t, Entry> map;
    std::list<uint64_t> lru;                        // front = most recently inserted or passed over
    std::unordered_map<uint64_t, Loading> loading;  // claimed, not yet completed
    uint64_t bytes = 0;
  };
  size_t shard_index(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull >> 32) % shards_.size(); }
  Shard& shard(uint64_t key) { return shards_[shard_index(key)]; }
  void insert_locked(Shard& s, uint64_t key, PagePtr page);

  uint64_t capacity_;
  uint64_t shard_capacity_;
  std::vector<Shard> shards_;
};

}  // namespace gdfs::engine
