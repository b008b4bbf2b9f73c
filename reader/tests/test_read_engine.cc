// The reader library's read engine (label `unit`): the page cache's claim/wait/evict rules, and the
// engine's reads, coalescing, readahead, error handling and fetchers, checked against Image::read.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "cache/page_cache.h"
#include "cli_util.h"
#include "decode/decode_device.h"
#include "decode/decode_scheduler.h"
#include "fetch/fetcher.h"
#include "gdfs/reader.h"
#include "read/decode_ahead.h"
#include "read/read_engine.h"
#include "tree_util.h"

namespace gdfs::engine {
namespace {

using test::TempDir;
using Bytes = std::vector<uint8_t>;

PagePtr make_page(uint32_t size, uint8_t fill) {
  auto p = std::make_shared<Page>();
  p->data = PageMemory::get(size);
  std::memset(p->data.get(), fill, size);
  p->size = size;
  return p;
}

TEST(PageCache, ClaimThenHit) {
  PageCache cache(1 << 20, 4);
  PageCache::Lookup a = cache.acquire(7);
  EXPECT_TRUE(a.claimed);
  PageCache::Lookup b = cache.acquire(7);  // in flight: wait, do not claim twice
  EXPECT_FALSE(b.claimed);
  ASSERT_TRUE(b.pending.valid());
  cache.complete(7, LoadedPage{make_page(100, 1), PageStatus::kOk});
  EXPECT_EQ(b.pending.get().page->data[0], 1);
  PageCache::Lookup c = cache.acquire(7);
  ASSERT_TRUE(c.hit);
  EXPECT_EQ(cache.pages(), 1u);
  EXPECT_EQ(cache.bytes(), 100u);
}

TEST(PageCache, FailureIsNotCachedAndWakesWaiters) {
  PageCache cache(1 << 20);
  ASSERT_TRUE(cache.acquire(3).claimed);
  auto waiter = cache.acquire(3).pending;
  cache.complete(3, LoadedPage{nullptr, PageStatus::kChecksum});
  EXPECT_EQ(waiter.get().status, PageStatus::kChecksum);
  EXPECT_TRUE(cache.acquire(3).claimed);  // the next request tries again
}

TEST(PageCache, EvictsLeastRecentlyUsedWithinCapacity) {
  PageCache cache(4000, 1);  // one shard: eviction order is exact
  for (uint64_t k = 0; k < 4; ++k) {
    ASSERT_TRUE(cache.acquire(k).claimed);
    cache.complete(k, LoadedPage{make_page(1000, uint8_t(k)), PageStatus::kOk});
  }
  ASSERT_TRUE(cache.acquire(0).hit);  // 0 is now the most recent; 1 is the oldest
  ASSERT_TRUE(cache.acquire(4).claimed);
  cache.complete(4, LoadedPage{make_page(1000, 4), PageStatus::kOk});
  EXPECT_LE(cache.bytes(), 4000u);
  EXPECT_TRUE(cache.acquire(0, false).hit);
  EXPECT_FALSE(cache.acquire(1, false).hit);
  EXPECT_TRUE(cache.acquire(4, false).hit);
}

// A hit marks its page; eviction passes over a marked page once (clearing the mark) before it evicts
// anything unmarked; contains() answers without marking.
TEST(PageCache, AHitGivesASecondChanceAndContainsChangesNothing) {
  PageCache cache(3000, 1);
  for (uint64_t k = 0; k < 3; ++k) {
    ASSERT_TRUE(cache.acquire(k).claimed);
    cache.complete(k, LoadedPage{make_page(1000, uint8_t(k)), PageStatus::kOk});
  }
  EXPECT_TRUE(cache.contains(0));            // no mark: 0 is still the first to go
  ASSERT_TRUE(cache.acquire(1, false).hit);  // marked
  ASSERT_TRUE(cache.acquire(3).claimed);
  EXPECT_TRUE(cache.contains(3));  // in flight counts
  cache.complete(3, LoadedPage{make_page(1000, 3), PageStatus::kOk});
  EXPECT_FALSE(cache.contains(0));
  EXPECT_TRUE(cache.contains(1));
  // Now 1 is the oldest, but marked: the next insert passes over it (clearing its mark) and takes 2.
  ASSERT_TRUE(cache.acquire(4).claimed);
  cache.complete(4, LoadedPage{make_page(1000, 4), PageStatus::kOk});
  EXPECT_FALSE(cache.contains(2));
  EXPECT_TRUE(cache.contains(1));
  EXPECT_TRUE(cache.contains(3));
  EXPECT_TRUE(cache.contains(4));
  EXPECT_FALSE(cache.contains(99));
}

TEST(PageCache, ZeroCapacityStillHandsResultsToWaiters) {
  PageCache cache(0);
  ASSERT_TRUE(cache.acquire(1).claimed);
  auto w = cache.acquire(1).pending;
  cache.complete(1, LoadedPage{make_page(10, 9), PageStatus::kOk});
  EXPECT_EQ(w.get().page->data[0], 9);
  EXPECT_EQ(cache.pages(), 0u);
}

// release() lets go of a cached page only: a page being loaded keeps its claim and its waiters.
TEST(PageCache, ReleaseDropsACachedPageAndNothingElse) {
  PageCache cache(1 << 20, 1);
  for (uint64_t k = 0; k < 2; ++k) {
    ASSERT_TRUE(cache.acquire(k).claimed);
    cache.complete(k, LoadedPage{make_page(1000, uint8_t(k)), PageStatus::kOk});
  }
  PagePtr held = cache.acquire(0).hit;
  cache.release(0);
  EXPECT_FALSE(cache.contains(0));
  EXPECT_TRUE(cache.contains(1));
  EXPECT_EQ(cache.bytes(), 1000u);
  EXPECT_EQ(held->data[999], 0);  // a holder keeps its bytes
  ASSERT_TRUE(cache.acquire(2).claimed);
  auto waiter = cache.acquire(2).pending;
  cache.release(2);  // in flight: untouched
  cache.release(99);
  cache.complete(2, LoadedPage{make_page(500, 2), PageStatus::kOk});
  EXPECT_EQ(waiter.get().page->data[0], 2);
  EXPECT_TRUE(cache.acquire(2, false).hit);
  EXPECT_EQ(cache.bytes(), 1500u);
  // Eviction still works after a release (the list and the map agree).
  PageCache small(2000, 1);
  for (uint64_t k = 0; k < 2; ++k) {
    ASSERT_TRUE(small.acquire(k).claimed);
    small.complete(k, LoadedPage{make_page(1000, 0), PageStatus::kOk});
  }
  small.release(0);
  for (uint64_t k = 2; k < 6; ++k) {
    ASSERT_TRUE(small.acquire(k).claimed);
    small.complete(k, LoadedPage{make_page(1000, 0), PageStatus::kOk});
    EXPECT_LE(small.bytes(), 2000u);
  }
  EXPECT_TRUE(small.contains(5));
}

// Whole power-of-two pages come back for reuse, up to kKeptBytes; other sizes are freed.
TEST(PageMemory, RecyclesWholePagesWithinItsBound) {
  const size_t before = PageMemory::kept();
  const uint8_t* first;
  {
    PageMemory::Ptr a = PageMemory::get(65536);
    first = a.get();
    a[65535] = 1;
  }
  EXPECT_EQ(PageMemory::kept(), before + 1);
  EXPECT_EQ(PageMemory::get(65536).get(), first);  // the same buffer, back again
  { PageMemory::Ptr odd = PageMemory::get(65535); }
  { PageMemory::Ptr tiny = PageMemory::get(2048); }
  EXPECT_EQ(PageMemory::kept(), before + 1);
  std::vector<PageMemory::Ptr> many;
  for (size_t i = 0; i < 2 * PageMemory::kKeptBytes / 65536; ++i) many.push_back(PageMemory::get(65536));
  many.clear();
  EXPECT_LE(PageMemory::kept(), PageMemory::kKeptBytes / 4096);
  EXPECT_GE(PageMemory::kept(), PageMemory::kKeptBytes / 65536 / 2);
}

// The first whole pages come from the huge-page region, and those are always kept: one coming back to a
// pool full of heap buffers takes the place of heap buffers, which are freed.
TEST(PageMemory, KeepsTheRegionsBuffersInAFullPool) {
  const size_t n = PageMemory::kKeptBytes / 65536;
  std::vector<PageMemory::Ptr> region, heap;
  for (size_t i = 0; i < 2 * n; ++i) {
    PageMemory::Ptr b = PageMemory::get(65536);
    b[0] = 1, b[65535] = 2;
    (PageMemory::in_region(b.get()) ? region : heap).push_back(std::move(b));
  }
  if (region.empty()) GTEST_SKIP() << "no huge-page region here (mmap refused)";
  ASSERT_EQ(region.size(), n);  // every region buffer, wherever it was, is ours now
  heap.clear();                 // the pool is now full of heap buffers
  EXPECT_GE(PageMemory::kept(), n);
  region.clear();
  EXPECT_LE(PageMemory::kept(), PageMemory::kKeptBytes / 4096);
  for (size_t i = 0; i < n; ++i) {
    PageMemory::Ptr b = PageMemory::get(65536);
    EXPECT_TRUE(PageMemory::in_region(b.get())) << i;
    region.push_back(std::move(b));
  }
}

class Engine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("engine");
    std::filesystem::create_directories(*dir_ / "src");
    test::write_text_file(*dir_ / "src/big", 3 * 1000 * 1000 + 17, 3);
    std::mt19937_64 rng(1);
    Bytes noise(200000);
    for (auto& b : noise) b = uint8_t(rng());
    test::write_bytes(*dir_ / "src/noise", noise);
    for (int i = 0; i < 20; ++i) test::write_text_file(*dir_ / ("src/s" + std::to_string(i)), 50 + i * 91, i);
    ASSERT_EQ(test::run_mkfs({"-q", *dir_ / "src", *dir_ / "img"}).code, 0);
  }
  static void TearDownTestSuite() { delete dir_; }

  // Everything a daemon builds, over image `path`. With `gpu` the GPU backend decodes, over the CPU as
  // its device; requests under 128 KiB stay on the CPU.
  struct Rig {
    explicit Rig(const std::string& path, uint64_t cache_bytes = 64 << 20, bool uring = true,
                 uint64_t readahead = 1 << 20, bool gpu = false, uint64_t decode_ahead = 0) {
      image = Image::open(path);
      cache = std::make_unique<PageCache>(cache_bytes);
      pool = std::make_unique<ThreadPool>(2);
      std::string why;
      if (uring) fetcher = make_uring_fetcher(image->source(), 32, stats, why);
      if (!fetcher) fetcher = make_source_fetcher(image->source(), stats);
      decoder = make_cpu_scheduler(*pool, stats);
      GpuDecodeOptions go;
      go.min_bytes = 128 << 10;
      if (gpu) gpu_decoder = make_gpu_scheduler(make_cpu_decode_device(), *decoder, stats, go);
      EngineOptions eo;
      eo.readahead_bytes = readahead;
      eo.decode_ahead_bytes = decode_ahead;
      engine = std::make_unique<ReadEngine>(*image, *cache, *fetcher, gpu ? *gpu_decoder : *decoder, *pool,
                                            stats, eo);
    }
    // The engine's answer, flattened.
    int read(const std::string& file, uint64_t off, size_t len, Bytes& out, ReadState* st = nullptr) {
      std::vector<Slice> slices;
      const int err = engine->read(image->resolve(file), off, len, slices, st);
      out.clear();
      for (const Slice& s : slices) out.insert(out.end(), s.data, s.data + s.len);
      return err;
    }
    Bytes truth(const std::string& file, uint64_t off, size_t len) {
      Bytes b(len);
      PageDecoder dec;
      b.resize(image->read(image->resolve(file), off, len, b.data(), dec));
      return b;
    }
    Stats stats;
    std::unique_ptr<Image> image;
    std::unique_ptr<PageCache> cache;
    std::unique_ptr<ThreadPool> pool;
    std::unique_ptr<Fetcher> fetcher;
    std::unique_ptr<DecodeScheduler> decoder;
    std::unique_ptr<DecodeScheduler> gpu_decoder;
    std::unique_ptr<ReadEngine> engine;  // last: destroyed first
  };
  static TempDir* dir_;
};
TempDir* Engine::dir_ = nullptr;

TEST_F(Engine, RandomReadsMatchTheReader) {
  for (bool uring : {true, false}) {
    Rig rig(*dir_ / "img", 256 << 10, uring);  // a small cache: hits, misses and eviction
    std::mt19937_64 rng(uring);
    for (int i = 0; i < 400; ++i) {
      const std::string file = std::vector<std::string>{"/big", "/noise", "/s3", "/s19"}[rng() % 4];
      const uint64_t off = rng() % 3100000;
      const size_t len = rng() % 2 ? rng() % 5000 : rng() % (1 << 20);
      Bytes got;
      ASSERT_EQ(rig.read(file, off, len, got), 0);
      ASSERT_EQ(got, rig.truth(file, off, len)) << file << " " << off << " " << len;
    }
    EXPECT_GT(Stats::get(rig.stats.cache_hits), 0u);
    EXPECT_GT(Stats::get(rig.stats.cache_misses), 0u);
    EXPECT_EQ(Stats::get(rig.stats.read_errors), 0u);
    EXPECT_EQ(rig.fetcher->name(), std::string(uring ? rig.fetcher->name() : "pread"));
  }
}

// Reads inside one cached page take read_cached's short path: the same bytes and the same counters as
// the general path, including in a tail pack (the file's bytes at an offset inside the page) and at the
// end of a file; reads across pages, misses and directories still go the general way.
TEST_F(Engine, ReadsInsideOneCachedPageAreHitsWithTheirBytes) {
  Rig rig(*dir_ / "img", 64 << 20, true, 0);
  struct Case {
    std::string file;
    uint64_t off;
    size_t len;
  };
  const std::vector<Case> cases = {{"/big", 100000, 4096}, {"/big", 65536, 65536}, {"/big", 3000000, 4096},
                                   {"/s3", 10, 200},       {"/s19", 0, 1 << 20},   {"/noise", 131072, 1}};
  for (const Case& c : cases) {
    const Bytes want = rig.truth(c.file, c.off, c.len);
    Bytes got;
    ASSERT_EQ(rig.read(c.file, c.off, c.len, got), 0);  // loads the page
    ASSERT_EQ(got, want) << c.file << " " << c.off;
    const uint64_t hits = Stats::get(rig.stats.cache_hits), misses = Stats::get(rig.stats.cache_misses);
    const uint64_t reads = Stats::get(rig.stats.reads), served = Stats::get(rig.stats.bytes_served);
    ASSERT_EQ(rig.read(c.file, c.off, c.len, got), 0);  // the short path
    EXPECT_EQ(got, want) << c.file << " " << c.off;
    EXPECT_EQ(Stats::get(rig.stats.cache_hits), hits + 1) << c.file;
    EXPECT_EQ(Stats::get(rig.stats.cache_misses), misses) << c.file;
    EXPECT_EQ(Stats::get(rig.stats.reads), reads + 1) << c.file;
    EXPECT_EQ(Stats::get(rig.stats.bytes_served), served + want.size()) << c.file;
  }
  EXPECT_EQ(rig.truth("/big", 3000000, 4096).size(), 17u);  // the end-of-file case was clipped
  // Across two cached pages: the general path, one hit per page.
  Bytes got;
  ASSERT_EQ(rig.read("/big", 2 * 65536, 10, got), 0);  // loads page 2 (page 1 is cached)
  const uint64_t hits = Stats::get(rig.stats.cache_hits);
  ASSERT_EQ(rig.read("/big", 100000 - 10, 40000, got), 0);
  EXPECT_EQ(got, rig.truth("/big", 100000 - 10, 40000));
  EXPECT_EQ(Stats::get(rig.stats.cache_hits), hits + 2);
  // Past the end, zero-length and a directory.
  EXPECT_EQ(rig.read("/big", 4000000, 10, got), 0);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(rig.read("/big", 100000, 0, got), 0);
  EXPECT_TRUE(got.empty());
  std::vector<Slice> slices;
  EXPECT_EQ(rig.engine->read(rig.image->resolve("/"), 0, 10, slices), EISDIR);
  EXPECT_EQ(Stats::get(rig.stats.read_errors), 0u);
}

TEST_F(Engine, LargeReadIsOneCoalescedBatch) {
  Rig rig(*dir_ / "img", 64 << 20, true, 0);
  Bytes got;
  ASSERT_EQ(rig.read("/big", 0, 1 << 20, got), 0);
  EXPECT_EQ(got, rig.truth("/big", 0, 1 << 20));
  EXPECT_EQ(Stats::get(rig.stats.cache_misses), 16u);  // 16 pages of 64 KiB
  EXPECT_EQ(Stats::get(rig.stats.fetch_ops), 1u);      // contiguous on disk: one read
  EXPECT_EQ(Stats::get(rig.stats.coalesced_reads), 1u);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_cpu), 16u);
}

// A read `once` lets go of the pages it covers whole (the caller keeps them, as the kernel's page cache
// does for a mount) and keeps those it covers in part, and tail packs, which other reads still need.
TEST_F(Engine, AReadOnceReleasesThePagesItCoversWhole) {
  Rig rig(*dir_ / "img", 64 << 20, true, 0);
  auto read_once = [&](const std::string& file, uint64_t off, size_t len) {
    std::vector<Slice> slices;
    EXPECT_EQ(rig.engine->read(rig.image->resolve(file), off, len, slices, nullptr, nullptr, true), 0);
    Bytes got;
    for (const Slice& s : slices) got.insert(got.end(), s.data, s.data + s.len);
    EXPECT_EQ(got, rig.truth(file, off, len)) << file << " " << off;
  };
  read_once("/big", 65536 - 100, 3 * 65536);  // pages 0 and 3 in part, 1 and 2 whole
  EXPECT_EQ(rig.cache->pages(), 2u);
  EXPECT_EQ(Stats::get(rig.stats.pages_released), 2u);
  const PageRef p0 = rig.image->page_ref(rig.image->resolve("/big"), 0);
  const PageRef p3 = rig.image->page_ref(rig.image->resolve("/big"), 3);
  EXPECT_TRUE(rig.cache->contains(p0.entry));
  EXPECT_TRUE(rig.cache->contains(p3.entry));
  read_once("/big", 0, 65536);  // now whole, from the cache: released too
  EXPECT_FALSE(rig.cache->contains(p0.entry));
  read_once("/s3", 0, 1 << 20);  // a small file's tail pack stays
  EXPECT_TRUE(rig.cache->contains(rig.image->page_ref(rig.image->resolve("/s3"), 0).entry));
  // The same reads again decode again, and still give the right bytes.
  const uint64_t decoded = Stats::get(rig.stats.pages_decoded_cpu);
  read_once("/big", 65536, 65536);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_cpu), decoded + 1);
  Bytes got;
  ASSERT_EQ(rig.read("/big", 65536, 65536, got), 0);  // a plain read caches it
  EXPECT_TRUE(rig.cache->contains(rig.image->page_ref(rig.image->resolve("/big"), 1).entry));
}

TEST_F(Engine, SequentialReaderGetsReadahead) {
  Rig rig(*dir_ / "img", 64 << 20, true, 512 << 10);
  ReadState st;
  Bytes got, all;
  for (uint64_t off = 0; off < 3000017; off += 131072) {
    ASSERT_EQ(rig.read("/big", off, 131072, got, &st), 0);
    all.insert(all.end(), got.begin(), got.end());
    // A reader slower than readahead, whatever the machine's load: otherwise the reader can claim every
    // page before a busy pool runs the readahead task, and nothing below would be counted.
    rig.engine->wait_readahead();
  }
  EXPECT_EQ(all, rig.truth("/big", 0, 4 << 20));
  EXPECT_GT(Stats::get(rig.stats.readahead_pages), 0u);
  // After the first read, every page was prepared by readahead before the reader asked for it.
  EXPECT_GT(Stats::get(rig.stats.cache_hits), 0u);
  EXPECT_LE(Stats::get(rig.stats.cache_misses), 2u);
}

// The kernel's readahead sends a sequential reader's requests (up to 1 MiB each) several at once, and
// the request threads take them in any order: the second MiB may be read before the first.
TEST_F(Engine, RequestsOutOfOrderStillGetReadahead) {
  Rig rig(*dir_ / "img", 64 << 20, true, 1 << 20);
  ReadState st;
  Bytes got;
  ASSERT_EQ(rig.read("/big", 1 << 20, 1 << 20, got, &st), 0);
  EXPECT_EQ(got, rig.truth("/big", 1 << 20, 1 << 20));
  ASSERT_EQ(rig.read("/big", 0, 1 << 20, got, &st), 0);
  EXPECT_EQ(got, rig.truth("/big", 0, 1 << 20));
  rig.engine->wait_readahead();
  EXPECT_GT(Stats::get(rig.stats.readahead_pages), 0u);
  const uint64_t misses = Stats::get(rig.stats.cache_misses);
  ASSERT_EQ(rig.read("/big", 2 << 20, 1 << 20, got, &st), 0);
  EXPECT_EQ(got, rig.truth("/big", 2 << 20, 1 << 20));
  EXPECT_EQ(Stats::get(rig.stats.cache_misses), misses);  // the third MiB was there already
}

TEST_F(Engine, ReadsFarApartGetNoReadahead) {
  Rig rig(*dir_ / "img", 64 << 20, true, 1 << 20);
  ReadState st;
  Bytes got;
  for (const uint64_t off : {uint64_t{2900000}, uint64_t{1500000}, uint64_t{300000}, uint64_t{2000000}}) {
    ASSERT_EQ(rig.read("/big", off, 4096, got, &st), 0);
    EXPECT_EQ(got, rig.truth("/big", off, 4096));
  }
  rig.engine->wait_readahead();
  EXPECT_EQ(Stats::get(rig.stats.readahead_pages), 0u);
}

TEST_F(Engine, ConcurrentReadersAgree) {
  Rig rig(*dir_ / "img", 512 << 10);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      ReadState st;
      for (int i = 0; i < 150; ++i) {
        const uint64_t off = (t % 2) ? (i * 131072) % 3000000 : rng() % 3000000;
        Bytes got;
        if (rig.read("/big", off, 131072, got, &st) != 0 || got != rig.truth("/big", off, 131072)) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(Engine, CorruptPageIsEioAndOthersStillRead) {
  Bytes img = test::read_bytes(*dir_ / "img");
  {
    auto image = Image::open(*dir_ / "img");
    const format::PageEntry& e = image->pages()[image->page_ref(image->resolve("/big"), 2).entry];
    img[e.offset + 3] ^= 0xff;
  }
  test::write_bytes(*dir_ / "bad", img);
  Rig rig(*dir_ / "bad");
  Bytes got;
  EXPECT_EQ(rig.read("/big", 2 * 65536 + 7, 10, got), EIO);
  EXPECT_EQ(rig.read("/big", 0, 1 << 20, got), EIO);  // spans the bad page
  EXPECT_EQ(rig.read("/big", 0, 2 * 65536, got), 0);  // stops just before it
  EXPECT_EQ(got, rig.truth("/big", 0, 2 * 65536));
  EXPECT_EQ(rig.read("/noise", 0, 200000, got), 0);
  EXPECT_EQ(Stats::get(rig.stats.read_errors), 2u);
  EXPECT_GE(Stats::get(rig.stats.bad_pages), 1u);
}

// The message of a failed read names the file by its path, which comes from the image: a name made to
// drive a terminal (an escape sequence, bytes that are not UTF-8) is shown escaped.
TEST_F(Engine, AFailedReadNamesItsFileEscaped) {
  const std::string evil = "evil\x1b[2J\xff.bin";
  std::filesystem::create_directories(*dir_ / "evil-src");
  test::write_text_file(*dir_ / ("evil-src/" + evil), 200000, 9);
  ASSERT_EQ(test::run_mkfs({"-q", "--force", *dir_ / "evil-src", *dir_ / "evil.img"}).code, 0);
  Bytes img = test::read_bytes(*dir_ / "evil.img");
  {
    auto image = Image::open(*dir_ / "evil.img");
    const format::PageEntry& e = image->pages()[image->page_ref(image->resolve("/" + evil), 0).entry];
    img[e.offset + 3] ^= 0xff;
  }
  test::write_bytes(*dir_ / "evil-bad.img", img);
  Rig rig(*dir_ / "evil-bad.img");
  std::vector<Slice> slices;
  std::string why;
  EXPECT_EQ(rig.engine->read(rig.image->resolve("/" + evil), 0, 4096, slices, nullptr, &why), EIO);
  EXPECT_NE(why.find("[path /evil\\x1b[2J\\xff.bin]"), std::string::npos) << why;
  EXPECT_EQ(why.find('\x1b'), std::string::npos);
}

TEST_F(Engine, BatchWithNoSuchInodeReadsTheOthers) {
  Rig rig(*dir_ / "img");
  const uint32_t big = rig.image->resolve("/big");
  const std::vector<Extent> extents{
      {big, 100, 5000}, {0, 0, 10}, {rig.image->inode_count() + 1, 0, 10}, {format::kRootIno, 0, 10}};
  std::vector<std::vector<Slice>> slices(extents.size());
  std::vector<int> errors(extents.size());
  std::vector<std::string> messages(extents.size());
  rig.engine->read_many(extents, slices, errors, messages);
  EXPECT_EQ(errors, (std::vector<int>{0, ENOENT, ENOENT, EISDIR}));
  Bytes got;
  for (const Slice& s : slices[0]) got.insert(got.end(), s.data, s.data + s.len);
  EXPECT_EQ(got, rig.truth("/big", 100, 5000));
}

TEST_F(Engine, GpuBackendReadsMatchTheReader) {
  Rig rig(*dir_ / "img", 1 << 20, true, 512 << 10, /*gpu=*/true);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      ReadState st;
      for (int i = 0; i < 100; ++i) {
        const std::string file = std::vector<std::string>{"/big", "/noise", "/s3"}[rng() % 3];
        // Sequential readers (readahead batches) and random reads of every size.
        const uint64_t off = (t % 2) ? (i * 131072) % 3000000 : rng() % 3100000;
        const size_t len = (t % 2) ? 131072 : rng() % (1 << 20);
        Bytes got;
        if (rig.read(file, off, len, got, &st) != 0 || got != rig.truth(file, off, len)) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  rig.engine.reset();  // readahead finished: the counters are final
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(Stats::get(rig.stats.pages_decoded_gpu), 0u);
  EXPECT_GT(Stats::get(rig.stats.gpu_batches), 0u);
  EXPECT_GT(Stats::get(rig.stats.gpu_small_reads), 0u);
  EXPECT_EQ(Stats::get(rig.stats.gpu_fallback_pages), 0u);
}

TEST_F(Engine, GpuBackendCorruptPageIsEio) {
  Bytes img = test::read_bytes(*dir_ / "img");
  {
    auto image = Image::open(*dir_ / "img");
    const format::PageEntry& e = image->pages()[image->page_ref(image->resolve("/big"), 5).entry];
    img[e.offset + 3] ^= 0xff;
  }
  test::write_bytes(*dir_ / "bad-gpu", img);
  Rig rig(*dir_ / "bad-gpu", 64 << 20, true, 0, /*gpu=*/true);
  Bytes got;
  EXPECT_EQ(rig.read("/big", 0, 1 << 20, got), EIO);  // a GPU-sized request spanning the bad page
  EXPECT_EQ(rig.read("/big", 0, 5 * 65536, got), 0);  // stops just before it
  EXPECT_EQ(got, rig.truth("/big", 0, 5 * 65536));
  EXPECT_EQ(rig.read("/big", 6 * 65536, 1 << 20, got), 0);
  EXPECT_EQ(got, rig.truth("/big", 6 * 65536, 1 << 20));
  EXPECT_GT(Stats::get(rig.stats.pages_decoded_gpu), 0u);
  EXPECT_GE(Stats::get(rig.stats.bad_pages), 1u);
}

// A tree walk: many small files and a few large ones, each read whole, in the image's order.
class DecodeAheadWalk : public Engine {  // its Rig, over an image of its own
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("decode-ahead");
    for (int i = 0; i < 300; ++i) {
      const std::string sub = "src/d" + std::to_string(i / 40);
      std::filesystem::create_directories(*dir_ / sub);
      const size_t size = i % 50 == 7 ? 300000 + i * 1000 : 3000 + (i * 7919) % 60000;
      test::write_text_file(*dir_ / (sub + "/f" + std::to_string(i)), size, i);
    }
    ASSERT_EQ(test::run_mkfs({"-q", *dir_ / "src", *dir_ / "img"}).code, 0);
  }
  static void TearDownTestSuite() { delete dir_; }
  // Regular files by inode number (mkfs numbers and lays them out in walk order).
  static std::vector<uint32_t> files(const Image& image) {
    std::vector<uint32_t> out;
    for (uint32_t ino = 1; ino <= image.inode_count(); ++ino)
      if (image.type(ino) == format::kTypeReg) out.push_back(ino);
    return out;
  }
  // Reads every file whole, one at a time, letting the pool finish its work ahead before the next read
  // (a reader slower than the pool, whatever the machine's load). Returns the files that failed, with
  // the message of each one's failure.
  static std::map<uint32_t, std::string> walk(Rig& rig) {
    std::map<uint32_t, std::string> failed;
    for (uint32_t ino : files(*rig.image)) {
      const std::string path = rig.image->path(ino);
      const uint64_t size = rig.image->inode(ino).size;
      std::vector<Slice> slices;
      std::string message;
      if (rig.engine->read(ino, 0, size, slices, nullptr, &message) != 0) {
        failed[ino] = message;
      } else {
        Bytes got;
        for (const Slice& x : slices) got.insert(got.end(), x.data, x.data + x.len);
        EXPECT_EQ(got, rig.truth(path, 0, size)) << path;
      }
      rig.engine->wait_readahead();
    }
    return failed;
  }
  static TempDir* dir_;
};
TempDir* DecodeAheadWalk::dir_ = nullptr;

TEST_F(DecodeAheadWalk, AWalksPagesAreDecodedAheadAndFoundInTheCache) {
  Rig rig(*dir_ / "img", 64 << 20, true, 256 << 10, false, 1 << 20);
  EXPECT_TRUE(walk(rig).empty());
  const uint64_t decoded = Stats::get(rig.stats.pages_decoded_cpu);
  const uint64_t ahead = Stats::get(rig.stats.decoded_ahead_pages);
  // All but the walk's first few pages (before it is seen as a walk) are decoded ahead of it, and its
  // reads find them cached: every page is decoded once.
  EXPECT_GT(ahead, decoded * 3 / 4) << ahead << " of " << decoded;
  EXPECT_LE(ahead, Stats::get(rig.stats.readahead_pages));
  EXPECT_EQ(decoded, rig.image->pages().size());
  EXPECT_GT(Stats::get(rig.stats.cache_hits), Stats::get(rig.stats.cache_misses));
  EXPECT_EQ(Stats::get(rig.stats.bad_pages), 0u);
  // Without it, nothing is decoded ahead of the walk, and the same bytes come back.
  Rig plain(*dir_ / "img", 64 << 20, true, 256 << 10);
  EXPECT_TRUE(walk(plain).empty());
  EXPECT_EQ(Stats::get(plain.stats.decoded_ahead_pages), 0u);
}

// A page damaged in the middle of the walk fails when decoded ahead and is not cached: the read that
// needs it loads it again and fails with EIO, and every other file still reads right.
TEST_F(DecodeAheadWalk, ADamagedPageIsNotCachedAndItsReadFails) {
  Bytes img = test::read_bytes(*dir_ / "img");
  uint32_t victim = 0;
  {
    auto image = Image::open(*dir_ / "img");
    const std::vector<uint32_t> all = files(*image);
    victim = all[all.size() / 2];
    img[image->pages()[image->page_ref(victim, 0).entry].offset + 1] ^= 0x10;
  }
  test::write_bytes(*dir_ / "bad", img);
  Rig rig(*dir_ / "bad", 64 << 20, true, 256 << 10, false, 1 << 20);
  const std::map<uint32_t, std::string> failed = walk(rig);
  ASSERT_TRUE(failed.contains(victim));
  const uint64_t bad_entry = rig.image->page_ref(victim, 0).entry;
  for (const auto& [ino, message] : failed) {
    // Only files sharing the damaged page fail (small files share tail packs)...
    EXPECT_EQ(rig.image->page_ref(ino, rig.image->inode(ino).size / 65536).entry, bad_entry);
    // ...refused for its stored bytes, before decoding.
    EXPECT_NE(message.find("stored-bytes checksum mismatch"), std::string::npos) << message;
  }
  EXPECT_GT(Stats::get(rig.stats.decoded_ahead_pages), 0u);
  // Once ahead of the walk and once for the read that needs it: not cached in between.
  EXPECT_GE(Stats::get(rig.stats.bad_pages), 2u);
}

TEST_F(Engine, ImagePathNamesFiles) {
  auto image = Image::open(*dir_ / "img");
  EXPECT_EQ(image->path(image->resolve("/s7")), "/s7");
  EXPECT_EQ(image->path(format::kRootIno), "/");
}

}  // namespace
}  // namespace gdfs::engine

// ---- ImagePrefetch: when a remote image is read ahead of a walk --------------------------------------

namespace {
using gdfs::engine::ImagePrefetch;
constexpr uint64_t kMiB = 1 << 20;
}  // namespace

TEST(ImagePrefetch, AWalkIsPrefetchedAfterThreeFetchesInARowAndTheWindowDoublesUpToTheCap) {
  ImagePrefetch p(1000 * kMiB);
  EXPECT_EQ(p.on_fetch(0, 10000, 8 * kMiB).length, 0u);      // the first fetch: no walk yet
  EXPECT_EQ(p.on_fetch(10000, 30000, 8 * kMiB).length, 0u);  // one in a row
  const auto s = p.on_fetch(30000, 50000, 8 * kMiB);         // two in a row: a walk
  EXPECT_EQ(s.offset, 50000u);
  EXPECT_EQ(s.length, ImagePrefetch::kFirstWindow);
  // The walk goes on inside the prefetched stretch: the window doubles, refills come in half windows.
  uint64_t ahead = s.offset + s.length, at = 50000;
  std::vector<uint64_t> windows;
  for (int i = 0; i < 400; ++i) {
    const auto t = p.on_fetch(at, at + 40000, 8 * kMiB);
    at += 40000;
    if (t.length == 0) continue;
    EXPECT_EQ(t.offset, ahead) << "stretches follow each other without gaps or overlaps";
    EXPECT_GE(t.length, p.window() / 2);
    ahead = t.offset + t.length;
    windows.push_back(p.window());
  }
  ASSERT_FALSE(windows.empty());
  EXPECT_EQ(windows.back(), 8 * kMiB) << "the window grows to the source's cap and no further";
  EXPECT_LE(ahead, at + 8 * kMiB);
  EXPECT_GT(ahead, at) << "the stretch stays ahead of the reader";
}

TEST(ImagePrefetch, RandomFetchesPrefetchNothing) {
  ImagePrefetch p(1000 * kMiB);
  // Each fetch at least a MiB from where the one before ended, backwards and forwards.
  const uint64_t at[] = {0, 200, 5, 400, 100, 300, 7, 250, 60, 600, 30, 900};
  for (uint64_t m : at) EXPECT_EQ(p.on_fetch(m * kMiB, m * kMiB + 65536, 32 * kMiB).length, 0u) << m;
  EXPECT_EQ(p.window(), 0u);
}

TEST(ImagePrefetch, ASeekStartsOverAndTheImageEndBoundsTheStretch) {
  ImagePrefetch p(3 * kMiB);
  p.on_fetch(0, 4096, 32 * kMiB);
  p.on_fetch(4096, 8192, 32 * kMiB);
  EXPECT_GT(p.on_fetch(8192, 12288, 32 * kMiB).length, 0u);
  // A seek to elsewhere: nothing until that reader has followed itself twice.
  EXPECT_EQ(p.on_fetch(2 * kMiB, 2 * kMiB + 4096, 32 * kMiB).length, 0u);
  EXPECT_EQ(p.window(), 0u);
  EXPECT_EQ(p.on_fetch(2 * kMiB + 4096, 2 * kMiB + 8192, 32 * kMiB).length, 0u);
  const auto s = p.on_fetch(2 * kMiB + 8192, 2 * kMiB + 12288, 32 * kMiB);
  EXPECT_EQ(s.offset, 2 * kMiB + 12288);
  EXPECT_EQ(s.offset + s.length, std::min<uint64_t>(3 * kMiB, s.offset + ImagePrefetch::kFirstWindow));
  // Reaching the end of the image: never past it.
  for (uint64_t at = s.offset; at < 3 * kMiB; at += 65536) {
    const auto t = p.on_fetch(at, std::min<uint64_t>(3 * kMiB, at + 65536), 32 * kMiB);
    EXPECT_LE(t.offset + t.length, 3 * kMiB);
  }
}

TEST(ImagePrefetch, ADroppedStretchIsAskedForAgain) {
  ImagePrefetch p(1000 * kMiB);
  p.on_fetch(0, 4096, 8 * kMiB);
  p.on_fetch(4096, 8192, 8 * kMiB);
  const auto s = p.on_fetch(8192, 12288, 8 * kMiB);
  ASSERT_GT(s.length, 0u);
  p.dropped(s);  // the pool was saturated
  const auto again = p.on_fetch(12288, 16384, 8 * kMiB);
  // Asked for again, from where the reader now is (it fetched 12288..16384 itself) to past the
  // dropped stretch's end.
  EXPECT_EQ(again.offset, 16384u);
  EXPECT_GE(again.offset + again.length, s.offset + s.length);
}

// A reader that takes turns between two regions (whole files, tail packs) is two walks, each read
// ahead, when the prefetcher follows more than one; with one, each turn starts over.
TEST(ImagePrefetch, SeveralWalksAreFollowedAtOnce) {
  for (unsigned walks : {1u, 2u}) {
    ImagePrefetch p(1000 * kMiB, walks);
    uint64_t a = 0, b = 500 * kMiB, got = 0;
    for (int i = 0; i < 40; ++i) {
      got += p.on_fetch(a, a + 20000, 8 * kMiB).length;
      a += 20000;
      got += p.on_fetch(b, b + 5000, 8 * kMiB).length;
      b += 5000;
    }
    if (walks == 1)
      EXPECT_EQ(got, 0u);
    else
      EXPECT_GE(got, 2 * ImagePrefetch::kFirstWindow);
  }
}

TEST(ImagePrefetch, ConcurrentReadersSlightlyOutOfOrderStillMakeAWalk) {
  ImagePrefetch p(1000 * kMiB);
  // Two threads' fetches interleaved: each starts up to a page behind the furthest end seen.
  uint64_t got = 0;
  for (uint64_t i = 0; i < 40; ++i) {
    const uint64_t start = i * 65536 - (i % 2 ? 65536 : 0);
    got += p.on_fetch(i % 2 ? start : i * 65536, i * 65536 + 65536, 32 * kMiB).length;
  }
  EXPECT_GT(got, 4 * kMiB);
}

// ---- DecodeAhead: the stretch after a walk ---------------------------------------------------------

#if defined(__has_feature)
#define GDFS_CLANG_SANITIZER (__has_feature(address_sanitizer) || __has_feature(thread_sanitizer))
#else
#define GDFS_CLANG_SANITIZER 0
#endif

// Threads the system will not start (EAGAIN) fail the pool's construction with that error; the workers
// already started are joined, not left to std::terminate the process.
TEST(ThreadPoolStart, ThreadsThatCannotStartAreAnErrorNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || GDFS_CLANG_SANITIZER
  GTEST_SKIP() << "an address-space limit cannot be set under a sanitizer's shadow memory";
#else
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Room for a few thread stacks (8 MiB each by default), not for thousands.
    rlimit as{};
    std::ifstream statm("/proc/self/statm");
    size_t pages = 0;
    statm >> pages;
    as.rlim_cur = as.rlim_max = pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) + (256u << 20);
    if (setrlimit(RLIMIT_AS, &as) != 0) _exit(3);
    try {
      gdfs::engine::ThreadPool pool(4000);
      _exit(2);  // every thread started: the limit did not bite
    } catch (const std::system_error&) {
      _exit(0);
    } catch (...) {
      _exit(1);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "4000 threads started under a 256 MiB address-space limit";
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

TEST(DecodeAhead, EntriesInAStretchFollowTheImageOrderEvenWhenTheTableDoesNot) {
  using gdfs::format::PageEntry;
  std::vector<PageEntry> pages(5);
  const uint64_t at[] = {4096, 65536, 8192, 200000, 100000};  // not sorted by offset
  for (size_t i = 0; i < pages.size(); ++i) {
    pages[i].offset = at[i];
    pages[i].csize = 1000;
  }
  gdfs::engine::DecodeAhead c(pages, 300000, 1 << 20);
  EXPECT_EQ(c.entries_in(0, 70000), (std::vector<uint64_t>{0, 2, 1}));
  EXPECT_EQ(c.entries_in(65537, 200000 - 65537), (std::vector<uint64_t>{4}));
  EXPECT_EQ(c.entries_in(100000, 100001), (std::vector<uint64_t>{4, 3}));
  EXPECT_TRUE(c.entries_in(250000, 50000).empty());
}
