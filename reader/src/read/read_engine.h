// The read path, without FUSE: a byte range of a file -> its pages -> cache hits, waits on pages in
// flight, and misses -> one coalesced fetch -> one decode batch -> the cache -> slices of decoded pages
// that a reply can send without copying them. Sequential readers get readahead.
#pragma once
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "cache/page_cache.h"
#include "decode/decode_scheduler.h"
#include "decode/thread_pool.h"
#include "fetch/fetcher.h"
#include "fetch/image_prefetch.h"
#include "gdfs/image.h"
#include "read/decode_ahead.h"
#include "read/stats.h"

namespace gdfs::engine {

struct EngineOptions {
  uint64_t readahead_bytes = 4 << 20;    // how far ahead of a sequential reader pages are prepared
  uint32_t max_gap = 4096;               // coalesce two stored pages when at most this many bytes apart
  uint32_t max_fetch = 4 << 20;          // but never into one read larger than this
  uint32_t image_readahead = 256 << 10;  // after each fetch, hint the kernel to read this much further
  bool image_prefetch = false;           // sources that keep prefetched bytes: read ahead of tree walks
  // Stored bytes decoded ahead of a walk through the image at a time (DecodeAhead); 0: none.
  uint64_t decode_ahead_bytes = 0;
};

// Per open file: where the last read ended and how far readahead has been scheduled.
struct ReadState {
  std::atomic<uint64_t> next_offset{0};
  std::atomic<uint64_t> ahead_until{0};  // first logical page not yet scheduled for readahead
};

// ReadStates by inode. The kernel may send no open at all (zero-message opens, which save two round
// trips per file), so sequential tracking cannot hang off a file handle. A direct-mapped table: two files
// that share a slot only restart each other's readahead; nothing is ever wrong.
class ReadStateTable {
 public:
  ReadState& get(uint32_t ino) {
    Slot& s = slots_[ino % slots_.size()];
    // A load first: readers of one file (the common case) then share the slot's line without writing it.
    if (s.ino.load(std::memory_order_relaxed) != ino &&
        s.ino.exchange(ino, std::memory_order_relaxed) != ino) {
      s.state.next_offset.store(0, std::memory_order_relaxed);
      s.state.ahead_until.store(0, std::memory_order_relaxed);
    }
    return s.state;
  }

 private:
  struct Slot {
    std::atomic<uint32_t> ino{0};
    ReadState state;
  };
  std::array<Slot, 4096> slots_;
};

// A piece of a reply: `len` bytes at `data`, kept alive by `page` (null for holes: static zeros).
struct Slice {
  PagePtr page;
  const uint8_t* data = nullptr;
  size_t len = 0;
};

// One byte range of one file.
struct Extent {
  uint32_t ino = 0;
  uint64_t offset = 0;
  size_t length = 0;
};

// Stored (compressed) bytes of some pages, fetched in one coalesced batch.
struct StoredPages {
  std::vector<uint8_t> staging;
  std::vector<uint64_t> at;  // per page: where its bytes begin in `staging`
  std::vector<uint8_t> ok;   // per page: fetched, and its stored-bytes checksum matches
};

class ReadEngine {
 public:
  ReadEngine(const Image& image, PageCache& cache, Fetcher& fetcher, DecodeScheduler& decoder,
             ThreadPool& pool, Stats& stats, EngineOptions options);
  ~ReadEngine();  // waits for readahead in flight

  // Appends slices covering [offset, offset + len) of regular file `ino`, clipped at end of file.
  // Returns 0, EISDIR, or EIO after logging one line per bad page (image, inode, path, page).
  // With `message`, a failure's first bad page is described there too. With `once`, the pages that the
  // range covers whole leave the cache (PageCache::release): the caller keeps their bytes.
  int read(uint32_t ino, uint64_t offset, size_t len, std::vector<Slice>& out, ReadState* state = nullptr,
           std::string* message = nullptr, bool once = false);
  // The same for many extents at once: every page they need is resolved together (one fetch batch, one
  // decode batch). out[i] and errors[i] belong to extents[i]; a bad page fails only the extents that
  // need it. `messages`, when given, receives each failed extent's first bad page, described.
  void read_many(std::span<const Extent> extents, std::span<std::vector<Slice>> out, std::span<int> errors,
                 std::span<std::string> messages = {});
  // read_many into memory: extent i's bytes go to dsts[i] (bytes[i] of them; short only at end of file).
  // With `once` (the caller reads these bytes once: a data loader's epoch), a page that lies whole inside
  // its extent and is neither cached nor being loaded is decoded straight into dsts[i] and not cached,
  // which saves a copy and the page's allocation. After an error, dsts[i] holds unspecified bytes.
  void read_many_into(std::span<const Extent> extents, std::span<uint8_t* const> dsts,
                      std::span<size_t> bytes, std::span<int> errors, std::span<std::string> messages,
                      bool once);
  // Fetches the stored bytes of page entries (no cache, no decode: device reads decode them elsewhere)
  // and checks each one's stored-bytes checksum.
  void fetch_stored(std::span<const uint64_t> entries, StoredPages& out);
  // "IMAGE: inode N (page P): what [path /a/b]", logged once per bad page entry; returns the line.
  std::string report(uint32_t ino, uint64_t index, uint64_t entry, std::string_view what);
  const Image& image() const { return image_; }
  Stats& stats() { return stats_; }
  // Returns once no readahead is in flight (tests use it to take scheduling out of their counts).
  void wait_readahead();

 private:
  struct Want {
    uint64_t entry;
    uint64_t index;  // logical page of `ino`, for messages
    LoadedPage result;
    // read_many_into: where the whole decoded page goes, bypassing the cache (result.page stays null
    // when it lands there); null: through the cache.
    uint8_t* direct = nullptr;
  };
  // Resolves every want: cache hit, wait for the request loading it, or load it here. With `ahead`
  // (readahead) pages cached or in flight are skipped, never waited for. Returns how many it loaded
  // itself (its claims).
  size_t resolve(std::span<Want> wants, bool ahead);
  struct FetchPlan {
    std::vector<ReadRange> ranges;                   // coalesced reads (dst set by load)
    std::vector<uint64_t> base;                      // each range's offset in the staging area
    std::vector<uint32_t> pages;                     // pages each range covers
    std::vector<std::pair<size_t, uint64_t>> where;  // per claim: (range, offset in staging)
    uint64_t staging_size = 0;
  };
  // `entries` sorted by stored offset.
  FetchPlan plan_fetch(std::span<const uint64_t> entries) const;
  // Releases the pages of `slices` (the slices of `ino` from `offset`, one per logical page) that they
  // hold whole.
  void release_whole(uint32_t ino, uint64_t offset, std::span<const Slice> slices);
  // A read inside one cached page, as slices; false for any other read (see the definition).
  bool read_cached(uint32_t ino, uint64_t offset, size_t len, std::vector<Slice>& out);
  // Pages of one extent: refs of its logical pages, wants of those that are not holes. EISDIR or 0.
  int plan_extent(const Extent& x, std::vector<PageRef>& refs, std::vector<Want>& wants) const;
  // Slices of one extent from its resolved wants; 0 or EIO (with `message` set).
  int slices_of(const Extent& x, std::span<const PageRef> refs, std::span<const Want> wants,
                std::vector<Slice>& out, std::string& message);
  // read_many, and read_many_into's pages: `direct` empty, or per extent where its bytes go (whole pages
  // are then decoded there, their slices' data null).
  void read_wants(std::span<const Extent> extents, std::span<std::vector<Slice>> out, std::span<int> errors,
                  std::span<std::string> messages, std::span<uint8_t* const> direct);
  // Sets Want::direct for the wants of extent `x` whose decoded page is exactly its bytes there.
  void mark_direct(const Extent& x, std::span<const PageRef> refs, std::span<Want> wants, uint8_t* dst) const;
  void hint_following(const FetchPlan& plan) const;
  // Remote sources: has the source read the stretch after a walk through the image (ImagePrefetch).
  // [start, end): the stored bytes a load needed.
  void prefetch_following(uint64_t start, uint64_t end);
  // Has the pool load the stretch after a walk through the image into the cache (DecodeAhead).
  void decode_following(uint64_t start, uint64_t end);
  void decode_stretch(ImagePrefetch::Stretch s);
  // Runs `task` on the pool as readahead (wait_readahead and the destructor wait for it); false when the
  // pool is saturated and it was dropped.
  template <typename F>
  bool submit_ahead(F task);
  // Fetches and decodes claimed pages (sorted by stored offset in place) and completes their claims.
  // `ahead`: for readahead, not for a reader.
  void load(std::span<Want*> claimed, bool ahead);
  void maybe_readahead(uint32_t ino, uint64_t offset, uint64_t end, ReadState& state);

  const Image& image_;
  PageCache& cache_;
  Fetcher& fetcher_;
  DecodeScheduler& decoder_;
  ThreadPool& pool_;
  Stats& stats_;
  EngineOptions opt_;

  std::mutex report_mu_;
  std::set<uint64_t> reported_;  // page entries already logged, so a bad page logs once
  // The line for (page entry, inode, what), so that reads retrying a bad page do not scan the directories
  // for its path each time (a page shared by several files names each file; a transient read error and
  // a later checksum error are told apart).
  std::map<std::tuple<uint64_t, uint32_t, std::string>, std::string> lines_;

  std::unique_ptr<ImagePrefetch> prefetch_;    // null unless options and source call for it
  std::unique_ptr<DecodeAhead> decode_ahead_;  // null unless options call for it

  std::mutex ahead_mu_;
  std::condition_variable ahead_cv_;
  unsigned ahead_tasks_ = 0;
};

}  // namespace gdfs::engine
