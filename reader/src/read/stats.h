// Counters of the read path, readable while it runs (Reader::counters; in a mount, the root directory's
// user.gdfs.stats xattr, which `gdfs-inspect counters MOUNTPOINT` prints). Relaxed atomics: each counter
// is exact, but a snapshot of several is not taken at one instant.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gdfs::engine {

struct Stats {
  // A counter striped over cache lines: threads that count at once (a cache hit counts three times)
  // each add to their own line instead of taking turns at one. Reading it sums the stripes.
  class Counter {
   public:
    explicit Counter(uint64_t start) { slots_[0].v.store(start, std::memory_order_relaxed); }
    void add(uint64_t n) { slots_[stripe()].v.fetch_add(n, std::memory_order_relaxed); }
    uint64_t get() const {
      uint64_t sum = 0;
      for (const Slot& s : slots_) sum += s.v.load(std::memory_order_relaxed);
      return sum;
    }

   private:
    static constexpr unsigned kStripes = 8;
    struct alignas(64) Slot {
      std::atomic<uint64_t> v{0};
    };
    static unsigned stripe() {
      static std::atomic<unsigned> next{0};
      thread_local const unsigned mine = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
      return mine;
    }
    Slot slots_[kStripes];
  };
  Counter reads{0};                // reads answered with data (a FUSE request, a Reader::read, a batch range)
  Counter bytes_served{0};         // bytes in those replies
  Counter read_errors{0};          // reads answered EIO
  Counter cache_hits{0};           // page lookups found decoded in the cache
  Counter cache_misses{0};         // page lookups that had to fetch and decode
  Counter inflight_joins{0};       // lookups that waited for another request's fetch of the same page
  Counter readahead_pages{0};      // pages fetched and decoded ahead of the reader
  Counter decoded_ahead_pages{0};  // of readahead_pages, those loaded ahead of a walk through the image
  Counter pages_released{0};       // cached pages let go after a read (Access::kOnce) handed them over whole
  Counter pages_decoded_cpu{0};
  Counter pages_decoded_gpu{0};   // confirmed by their checksum
  Counter gpu_batches{0};         // batches run on the device (each gathers the pages of many requests)
  Counter gpu_fallback_pages{0};  // re-decoded on the CPU after the device failed them
  Counter gpu_small_reads{0};     // decode requests too small for the device, kept on the CPU
  Counter decode_ns{0};           // time spent decoding (summed over threads; a device batch counts once)
  Counter fetch_ops{0};           // read operations issued to the image (after coalescing)
  Counter fetch_bytes{0};
  Counter coalesced_reads{0};  // fetch operations that covered more than one page
  Counter uring_submits{0};    // io_uring_submit calls
  Counter bad_pages{0};        // page loads that failed (I/O error, checksum or decode)

  static void add(Counter& c, uint64_t n = 1) { c.add(n); }
  static uint64_t get(const Counter& c) { return c.get(); }

  // fn(name, value) for each counter above: the one list of their public names.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    const std::pair<const char*, const Counter*> all[] = {
        {"reads", &reads},
        {"bytes_served", &bytes_served},
        {"read_errors", &read_errors},
        {"cache_hits", &cache_hits},
        {"cache_misses", &cache_misses},
        {"inflight_joins", &inflight_joins},
        {"readahead_pages", &readahead_pages},
        {"decoded_ahead_pages", &decoded_ahead_pages},
        {"pages_released", &pages_released},
        {"pages_decoded_cpu", &pages_decoded_cpu},
        {"pages_decoded_gpu", &pages_decoded_gpu},
        {"gpu_batches", &gpu_batches},
        {"gpu_fallback_pages", &gpu_fallback_pages},
        {"gpu_small_reads", &gpu_small_reads},
        {"decode_ns", &decode_ns},
        {"fetch_ops", &fetch_ops},
        {"fetch_bytes", &fetch_bytes},
        {"coalesced_reads", &coalesced_reads},
        {"uring_submits", &uring_submits},
        {"bad_pages", &bad_pages},
    };
    for (const auto& [name, c] : all) fn(name, get(*c));
  }
};

// What the cache and the configuration add to the counters in a snapshot.
struct StatsContext {
  uint64_t cache_bytes = 0;
  uint64_t cache_capacity = 0;
  uint64_t cache_pages = 0;
  std::string decoder;  // "cpu", "gpu"
  std::string fetcher;  // "io_uring", "pread"
  unsigned threads = 0;
  std::vector<std::pair<std::string, uint64_t>> source;  // the source's own (remote: requests, disk cache)
};

// One JSON object with every counter and the context (documented in README.md, "Statistics").
std::string stats_json(const Stats& s, const StatsContext& ctx);

}  // namespace gdfs::engine
