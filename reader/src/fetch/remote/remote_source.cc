// A Source over an object on an HTTP(S) server or an S3-compatible store (docs/REMOTE.md).
//
// Opening costs one request: a ranged GET of the first kProbeBytes learns the size and identity and
// brings the superblock, which Image::open then reads from memory; its second read, the metadata region,
// is the second request. After that, each Source::read call turns its ranges (already coalesced by the
// engine) into concurrent ranged GETs, or, with a disk cache, into the aligned blocks that cover them:
// blocks on disk are read from there, the missing ones fetched (consecutive ones in one request) and
// stored. A block another thread is fetching is waited for, not fetched twice.
//
// Prefetch: the engine claims the stretch of image after a walk (start_prefetch()) and has it fetched
// on its pool; it is read the same way into a bounded PrefetchStore in memory, and read() takes ranges
// from there first, waiting for chunks still in flight.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "fetch/remote/disk_cache.h"
#include "fetch/remote/http_object.h"
#include "fetch/remote/prefetch_store.h"
#include "fetch/remote/remote.h"
#include "fetch/remote/s3_config.h"
#include "testing.h"

namespace gdfs {
namespace {

using remote::DiskCache;
using remote::HttpConfig;
using remote::HttpObject;
using remote::ObjectIdentity;
using remote::PrefetchStore;
using remote::RangeGet;

constexpr uint32_t kProbeBytes = 64 << 10;    // the superblock (512 bytes) and the first pages
constexpr uint64_t kMaxRequest = 4ull << 20;  // larger ranges (the metadata) go as parallel requests
// Prefetch windows: at least this much (a request costs its round trip whatever its size), at most half
// the store (so that a window being read never pushes out the one being consumed).
constexpr uint64_t kMinWindow = 1ull << 20;
constexpr uint64_t kMaxWindow = PrefetchStore::kDefaultCapacity / 2;
// The rate assumed until a large enough body has been timed.
constexpr double kAssumedRate = 100e6;

using Bytes = std::vector<uint8_t>;

// Consecutive units of the object (prefetch chunks, disk-cache blocks) fetched as one range.
struct Run {
  size_t first = 0;    // index of its first unit in the list it was planned from
  size_t count = 0;    // units
  uint64_t start = 0;  // byte offset in the object
  Bytes buf;           // its bytes: `count` units of `unit` bytes, the last clipped at the object's end
};

// Runs over `units` (pairs whose .first is a unit index, sorted), at most `max_units` units each.
template <typename Units>
std::vector<Run> plan_runs(const Units& units, uint64_t unit, uint64_t object_size, uint64_t max_units) {
  std::vector<Run> runs;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!runs.empty() && units[i].first == units[i - 1].first + 1 && runs.back().count < max_units)
      ++runs.back().count;
    else
      runs.push_back(Run{i, 1, 0, {}});
  }
  for (Run& r : runs) {
    r.start = units[r.first].first * unit;
    r.buf.resize(std::min(object_size, (units[r.first].first + r.count) * unit) - r.start);
  }
  return runs;
}

class RemoteSource final : public Source {
 public:
  RemoteSource(HttpConfig cfg, const char* kind, const SourceOptions& opt) : kind_(kind) {
    name_ = cfg.name;
    const std::string identity_url = url_for_messages(cfg.url);
    auto warn = cfg.warn;
    http_ = std::make_unique<HttpObject>(std::move(cfg));
    id_ = http_->probe(head_, kProbeBytes);
    store_ = std::make_unique<PrefetchStore>(id_.size);
    if (opt.cache_dir.empty()) return;
    const std::string version = id_.version();
    if (version.empty()) {
      warn(name_ +
           ": the server sends neither ETag nor Last-Modified, so a changed image cannot be told from "
           "the cached one; the disk cache is not used for this image");
      return;
    }
    cache_ = std::make_unique<DiskCache>(opt.cache_dir, opt.disk_cache_size,
                                         identity_url + "\n" + version + "\nsize " + std::to_string(id_.size),
                                         id_.size, DiskCache::kDefaultBlockSize, warn);
  }

  const std::string& name() const override { return name_; }
  uint64_t size() const override { return id_.size; }
  const char* kind() const override { return kind_; }

  void read(std::span<ReadRange> ranges) override {
    std::vector<ReadRange*> rest;
    for (ReadRange& r : ranges) {
      r.ok = false;
      if (r.offset > id_.size || r.length > id_.size - r.offset) continue;
      if (r.offset + r.length <= head_.size()) {  // the superblock read at open, and tiny images
        std::memcpy(r.dst, head_.data() + r.offset, r.length);
        r.ok = true;
      } else if (auto c = store_->copy(r.offset, r.length, r.dst); c != PrefetchStore::Copied::kAbsent) {
        r.ok = c == PrefetchStore::Copied::kYes;
      } else {
        rest.push_back(&r);
      }
    }
    if (!rest.empty()) fetch(rest);
  }

  std::shared_ptr<Prefetch> start_prefetch(uint64_t offset, uint64_t length) override {
    auto fetch = std::make_shared<StoreFetch>(*this);
    if (!fetch->claim(offset, length)) return nullptr;
    return fetch;
  }

  void cancel() override { http_->cancel(); }

  uint64_t prefetch_window() const override {
    const double latency = http_->link().latency_s();
    double rate = http_->link().bytes_per_s();
    if (rate <= 0) rate = kAssumedRate;
    // Four round trips' worth of bytes: the window is refilled when half of it is consumed, so the next
    // stretch is asked for about two round trips before a reader at link speed would reach its end.
    const double window = 4 * latency * rate;
    return std::clamp<uint64_t>(static_cast<uint64_t>(window), kMinWindow, kMaxWindow);
  }

  std::vector<std::pair<std::string, uint64_t>> counters() const override {
    const auto& h = http_->counters();
    std::vector<std::pair<std::string, uint64_t>> out = {
        {"remote_requests", h.requests.load()},
        {"remote_bytes", h.bytes.load()},
        {"remote_retries", h.retries.load()},
        {"remote_failures", h.failures.load()},
        {"remote_changed", h.changed.load()},
        {"prefetch_bytes", prefetched_.load()},
        {"prefetch_hits", store_->hits()},
        {"link_latency_us", static_cast<uint64_t>(http_->link().latency_s() * 1e6)},
    };
    if (cache_) {
      const auto& c = cache_->counters();
      out.insert(out.end(), {{"disk_cache_hits", c.hits.load()},
                             {"disk_cache_misses", c.misses.load()},
                             {"disk_cache_corrupt", c.corrupt.load()},
                             {"disk_cache_writes", c.writes.load()},
                             {"disk_cache_write_errors", c.write_errors.load()},
                             {"disk_cache_evictions", c.evictions.load()},
                             {"disk_cache_bytes", cache_->bytes()}});
    }
    return out;
  }

 private:
  // Claimed chunks of the prefetch store, fetched by run() (runs of consecutive chunks, one range each:
  // read_direct splits long ones into parallel requests). Whatever happens, every claim is finished:
  // with its bytes, as failed after a fetch, or given up when run() never came.
  class StoreFetch final : public Prefetch, public std::enable_shared_from_this<StoreFetch> {
   public:
    explicit StoreFetch(RemoteSource& src) : src_(src) {}
    ~StoreFetch() override {
      for (const auto& [index, chunk] : claims_) src_.store_->finish(index, chunk, nullptr, ran_.load());
    }
    // Claims what is free of the stretch, with this as the chunks' owner; false when nothing was.
    bool claim(uint64_t offset, uint64_t length) {
      // Under mu_: the store shows the chunks to readers, who may run() this, before claim() returns;
      // run() must not read claims_ until they are recorded here.
      std::lock_guard lock(mu_);
      PrefetchStore::Claims claimed = src_.store_->claim(offset, length, weak_from_this());
      if (auto hook = testing::after_prefetch_claim.load()) hook();
      claims_ = std::move(claimed);
      return !claims_.empty();
    }
    void run() override {
      if (ran_.exchange(true)) return;  // the pool task and a reader that needed a chunk first
      std::lock_guard lock(mu_);        // claim() may still be recording claims_
      try {
        fetch();
      } catch (...) {
        // Out of memory, say: the destructor fails what is left; readers then fail or fetch themselves.
      }
    }

   private:
    void fetch() {
      const uint64_t cs = src_.store_->chunk_size();
      std::vector<Run> runs = plan_runs(claims_, cs, src_.id_.size, UINT64_MAX);
      std::vector<ReadRange> ranges;
      for (Run& run : runs)
        ranges.push_back(ReadRange{run.start, static_cast<uint32_t>(run.buf.size()), run.buf.data(), false});
      std::vector<ReadRange*> ptrs;
      for (ReadRange& r : ranges) ptrs.push_back(&r);
      src_.fetch(ptrs);
      for (size_t r = 0; r < runs.size(); ++r) {
        for (size_t k = 0; k < runs[r].count; ++k) {
          const auto& [index, chunk] = claims_[runs[r].first + k];
          src_.store_->finish(index, chunk, ranges[r].ok ? runs[r].buf.data() + k * cs : nullptr);
        }
        if (ranges[r].ok) src_.prefetched_.fetch_add(ranges[r].length, std::memory_order_relaxed);
      }
    }

    RemoteSource& src_;
    std::mutex mu_;  // claim() against run()
    PrefetchStore::Claims claims_;
    std::atomic<bool> ran_{false};
  };

  // Ranges not held in memory: through the disk cache when there is one, else straight from the server.
  void fetch(std::span<ReadRange*> ranges) {
    if (cache_)
      read_blocks(ranges);
    else
      read_direct(ranges);
  }

  // No disk cache: the ranges as asked, large ones split into parallel requests.
  void read_direct(std::span<ReadRange*> ranges) {
    std::vector<RangeGet> gets;
    std::vector<size_t> first(ranges.size() + 1);
    for (size_t i = 0; i < ranges.size(); ++i) {
      first[i] = gets.size();
      const ReadRange& r = *ranges[i];
      for (uint64_t at = 0; at < r.length; at += kMaxRequest)
        gets.push_back(
            RangeGet{r.offset + at, std::min<uint64_t>(kMaxRequest, r.length - at), r.dst + at, false});
    }
    first[ranges.size()] = gets.size();
    http_->fetch(gets);
    for (size_t i = 0; i < ranges.size(); ++i)
      ranges[i]->ok = std::all_of(gets.begin() + first[i], gets.begin() + first[i + 1],
                                  [](const RangeGet& g) { return g.ok; });
  }

  // A block being fetched by one thread, waited for by others.
  struct InFlight {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::shared_ptr<const Bytes> data;  // null: the fetch failed
  };

  // Publishes a claimed block (null: its fetch failed) to whoever waits for it. A second call for the
  // same claim does nothing.
  void finish(uint64_t index, const std::shared_ptr<InFlight>& f, std::shared_ptr<const Bytes> data) {
    {
      std::lock_guard lock(inflight_mu_);
      auto it = inflight_.find(index);
      if (it != inflight_.end() && it->second == f) inflight_.erase(it);
    }
    std::lock_guard lock(f->mu);
    if (f->done) return;
    f->data = std::move(data);
    f->done = true;
    f->cv.notify_all();
  }

  using Claims = std::vector<std::pair<uint64_t, std::shared_ptr<InFlight>>>;
  using Blocks = std::map<uint64_t, std::shared_ptr<const Bytes>>;

  // Our claimed blocks: from disk, else from the server (runs of consecutive blocks as one request each),
  // stored on disk, published to waiters and put in `have`.
  void load_blocks(const Claims& mine, Blocks& have) {
    const uint64_t bs = cache_->block_size();
    Claims missing;
    for (auto& [b, f] : mine) {
      auto bytes = std::make_shared<Bytes>(cache_->block_length(b));
      if (cache_->get(b, bytes->data())) {
        have[b] = bytes;
        finish(b, f, std::move(bytes));
      } else {
        missing.emplace_back(b, f);
      }
    }
    if (!missing.empty()) {
      std::vector<Run> runs = plan_runs(missing, bs, id_.size, kMaxRequest / bs);
      std::vector<RangeGet> gets;
      for (Run& run : runs) gets.push_back(RangeGet{run.start, run.buf.size(), run.buf.data(), false});
      http_->fetch(gets);
      for (size_t r = 0; r < runs.size(); ++r) {
        for (size_t k = 0; k < runs[r].count; ++k) {
          const auto& [b, f] = missing[runs[r].first + k];
          std::shared_ptr<Bytes> bytes;
          if (gets[r].ok) {
            const uint8_t* p = runs[r].buf.data() + k * bs;
            bytes = std::make_shared<Bytes>(p, p + cache_->block_length(b));
            cache_->put(b, bytes->data());
            have[b] = bytes;
          }
          finish(b, f, std::move(bytes));
        }
      }
    }
  }

  // With the disk cache: whole aligned blocks.
  void read_blocks(std::span<ReadRange*> ranges) {
    const uint64_t bs = cache_->block_size();
    Blocks have;
    for (const ReadRange* r : ranges)
      for (uint64_t b = r->offset / bs; b <= (r->offset + r->length - 1) / bs; ++b) have[b];
    // Claim the blocks nobody is fetching and note the others; then ours, from disk, else from the
    // server. Whatever happens (out of memory), every claim is finished, so that no other reader waits
    // for it forever.
    Claims mine, theirs;
    mine.reserve(have.size());
    theirs.reserve(have.size());
    try {
      {
        std::lock_guard lock(inflight_mu_);
        for (auto& [b, data] : have) {
          auto it = inflight_.find(b);
          if (it != inflight_.end()) {
            theirs.emplace_back(b, it->second);
          } else {
            auto f = std::make_shared<InFlight>();
            inflight_.emplace(b, f);
            mine.emplace_back(b, std::move(f));  // reserved: cannot throw
          }
        }
      }
      load_blocks(mine, have);
    } catch (...) {
      for (auto& [b, f] : mine) finish(b, f, nullptr);
      throw;
    }
    // Theirs: we have finished all of ours, so nobody waits on us while we wait.
    for (auto& [b, fetch] : theirs) {
      auto* f = fetch.get();  // a plain local: lambdas may not capture structured bindings (clang 14)
      std::unique_lock lock(f->mu);
      f->cv.wait(lock, [f] { return f->done; });
      have[b] = f->data;
    }
    for (ReadRange* r : ranges) {
      bool ok = true;
      for (uint64_t pos = r->offset, end = r->offset + r->length; pos < end && ok;) {
        const auto& data = have[pos / bs];
        ok = data != nullptr;
        if (!ok) break;
        const uint64_t in = pos % bs;
        const uint64_t n = std::min<uint64_t>(end - pos, data->size() - in);
        std::memcpy(r->dst + (pos - r->offset), data->data() + in, n);
        pos += n;
      }
      r->ok = ok;
    }
  }

  std::string name_;
  const char* kind_;
  std::unique_ptr<HttpObject> http_;
  ObjectIdentity id_;
  Bytes head_;
  std::unique_ptr<DiskCache> cache_;
  std::unique_ptr<PrefetchStore> store_;
  std::atomic<uint64_t> prefetched_{0};
  std::mutex inflight_mu_;
  std::map<uint64_t, std::shared_ptr<InFlight>> inflight_;
};

}  // namespace

std::unique_ptr<Source> open_remote_source(const std::string& url, const SourceOptions& options) {
  HttpConfig cfg;
  cfg.warn = options.warn;
  if (!cfg.warn)
    cfg.warn = [](std::string_view line) {
      std::fprintf(stderr, "gdfs: %.*s\n", int(line.size()), line.data());
    };
  cfg.ca_file = options.ca_file;
  if (cfg.ca_file.empty())
    if (const char* ca = std::getenv("GDFS_CA_FILE")) cfg.ca_file = ca;
  // The timeout becomes a deadline in integer milliseconds: NaN or infinity would make it undefined.
  if (!SourceOptions::remote_timeout_ok(options.remote_timeout_s))
    throw ImageError(url_for_messages(url) + ": remote_timeout is " +
                         std::to_string(options.remote_timeout_s) +
                         " s: it must be more than 0 and at most " +
                         std::to_string(static_cast<int>(SourceOptions::kMaxRemoteTimeout)),
                     EINVAL);
  cfg.timeout_s = options.remote_timeout_s;
  const char* kind = "http";
  if (url.starts_with("s3://")) {
    kind = "s3";
    remote::S3Target t;
    try {
      t = remote::resolve_s3(url, options.s3_addressing, [&options](const char* v) -> const char* {
        const auto it = options.aws.find(v);
        if (it == options.aws.end()) return std::getenv(v);
        return it->second.empty() ? nullptr : it->second.c_str();
      });
    } catch (const std::invalid_argument& e) {
      throw ImageError(e.what());
    }
    cfg.url = t.url;
    cfg.name = url_for_messages(url);
    cfg.s3 = true;
    cfg.region = t.region;
    cfg.access_key = t.access_key;
    cfg.secret_key = t.secret_key;
    cfg.session_token = t.session_token;
  } else {
    cfg.url = url;
    cfg.name = url_for_messages(url);
  }
  return std::make_unique<RemoteSource>(std::move(cfg), kind, options);
}

}  // namespace gdfs

namespace gdfs::testing {
std::atomic<void (*)()> after_prefetch_claim{nullptr};
}  // namespace gdfs::testing
