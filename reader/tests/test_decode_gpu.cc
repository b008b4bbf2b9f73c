// The GPU decode backend without a GPU (label `unit`): the CPU DecodeDevice behind a fault injector.
// Concurrent requests share device batches, small requests stay on the CPU, and every way a device can
// fail (a page reported bad, output bytes wrong, whole batches failing, failing for good) ends in the
// CPU's verdict, never in a wrong byte or a hang.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "cli_util.h"
#include "decode/decode_device.h"
#include "decode/decode_scheduler.h"
#include "gdfs/checksum.h"
#include "tree_util.h"

namespace gdfs::engine {
namespace {

using test::TempDir;
using Bytes = std::vector<uint8_t>;
using namespace std::chrono_literals;

// What the fault injector does, and what it saw. Pages are named by their stored offset.
struct Faults {
  std::set<uint64_t> bad;              // reported kBadData
  std::set<uint64_t> corrupt;          // decoded, then one output byte flipped; reported kOk
  std::atomic<int> fail_batches{0};    // the next this many batches fail as a whole; -1: every one
  std::chrono::milliseconds delay{0};  // each batch takes at least this long
  std::atomic<int> batches{0};
  std::atomic<size_t> pages{0};

  // While closed, batches wait at the gate.
  std::mutex mu;
  std::condition_variable cv;
  bool closed = false;
  void open() {
    std::lock_guard lock(mu);
    closed = false;
    cv.notify_all();
  }
};

class FaultyDevice final : public DecodeDevice {
 public:
  explicit FaultyDevice(Faults& f) : f_(f), inner_(make_cpu_decode_device()) {}

  bool decode(std::span<const DeviceJob> pages, std::span<PageStatus> results, std::string& err) override {
    ++f_.batches;
    f_.pages += pages.size();
    {
      std::unique_lock lock(f_.mu);
      f_.cv.wait(lock, [&] { return !f_.closed; });
    }
    std::this_thread::sleep_for(f_.delay);
    if (int n = f_.fail_batches.load(); n != 0) {
      if (n > 0) --f_.fail_batches;
      std::fill(results.begin(), results.end(), PageStatus::kNotRun);
      err = "injected failure";
      return false;
    }
    inner_->decode(pages, results, err);
    for (size_t i = 0; i < pages.size(); ++i) {
      if (f_.bad.count(pages[i].entry->offset)) results[i] = PageStatus::kBadData;
      if (f_.corrupt.count(pages[i].entry->offset)) pages[i].out[7] ^= 0x40;
    }
    return true;
  }
  std::string name() const override { return "faulty"; }

 private:
  Faults& f_;
  std::unique_ptr<DecodeDevice> inner_;
};

// Pages of the image ready to decode: a copy of each entry (tests may damage it), its stored bytes as
// the image holds them, and an output buffer.
struct Work {
  Work(const Image& image, std::span<const uint64_t> which)
      : image_(image), index(which.begin(), which.end()) {
    for (uint64_t e : index) {
      entries.push_back(image.pages()[e]);
      stored.emplace_back(entries.back().csize);
      EXPECT_TRUE(image.read_stored(entries.back(), stored.back().data()));
      out.emplace_back(entries.back().usize, 0xee);
    }
    for (size_t i = 0; i < index.size(); ++i)
      jobs.push_back(DecodeJob{&entries[i], stored[i].data(), out[i].data(), PageStatus::kOk});
  }
  Work(const Work&) = delete;

  // Every page decoded (except `failing`) and equal to the reader's bytes.
  bool good(const std::set<size_t>& failing = {}) const {
    PageDecoder dec;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (failing.count(i)) continue;
      Bytes truth(entries[i].usize);
      if (jobs[i].status != PageStatus::kOk ||
          image_.read_page(index[i], dec, truth.data()) != PageStatus::kOk || out[i] != truth)
        return false;
    }
    return true;
  }

  const Image& image_;
  std::vector<uint64_t> index;
  std::vector<format::PageEntry> entries;
  std::vector<Bytes> stored, out;
  std::vector<DecodeJob> jobs;
};

// A CPU backend and a GPU backend over the fault injector.
struct Rig {
  explicit Rig(GpuDecodeOptions opt = {}) : pool(2) {
    cpu = make_cpu_scheduler(pool, stats);
    gpu = make_gpu_scheduler(std::make_unique<FaultyDevice>(faults), *cpu, stats, opt);
  }
  static GpuDecodeOptions no_threshold() {
    GpuDecodeOptions o;
    o.min_bytes = 0;
    return o;
  }

  Stats stats;
  Faults faults;
  ThreadPool pool;
  std::unique_ptr<DecodeScheduler> cpu;
  std::unique_ptr<DecodeScheduler> gpu;  // last: destroyed first
};

// 16-bit samples (a sine and a little noise): pages that `--codec auto` stores as bitpack.
Bytes pcm(size_t frames) {
  Bytes b;
  uint32_t x = 1;
  for (size_t i = 0; i < frames; ++i) {
    x = x * 1664525u + 1013904223u;
    const auto v = static_cast<int16_t>(9000 * std::sin(double(i) / 30.0) + (x >> 28) - 8);
    b.push_back(static_cast<uint8_t>(v));
    b.push_back(static_cast<uint8_t>(static_cast<uint16_t>(v) >> 8));
  }
  return b;
}

class GpuDecode : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("gpu-decode");
    const std::string src = *dir_ / "src";
    std::filesystem::create_directories(src);
    test::write_text_file(src + "/text", 40 * 65536, 5);
    Bytes noise(6 * 65536);
    uint64_t x = 7;
    for (auto& b : noise) b = static_cast<uint8_t>((x = x * 6364136223846793005ull + 1) >> 56);
    test::write_bytes(src + "/noise", noise);
    test::write_bytes(src + "/samples.pcm", pcm(8 * 32768));
    // A call every 16 bytes to one of 8 functions, between other bytes: x86-filtered pages, no two alike.
    Bytes calls(4 * 65536);
    for (size_t i = 0; i < calls.size(); ++i)
      calls[i] = static_cast<uint8_t>((x = x * 6364136223846793005ull + 1) >> 60);
    for (size_t i = 0; i + 5 <= calls.size(); i += 16) {
      const uint32_t rel = static_cast<uint32_t>(0x1000 * (x >> 61)) - static_cast<uint32_t>(i % 65536 + 5);
      x = x * 6364136223846793005ull + 1;
      calls[i] = 0xE8;
      std::memcpy(&calls[i + 1], &rel, 4);
    }
    test::write_bytes(src + "/calls.bin", calls);
    ASSERT_EQ(test::run_mkfs({"-q", "--codec-for", "*.pcm=auto", src, *dir_ / "img"}).code, 0);
    image_ = Image::open(*dir_ / "img").release();
    for (uint64_t e = 0; e < image_->pages().size(); ++e)
      if (image_->pages()[e].usize == image_->page_size()) full_.push_back(e);
  }
  static void TearDownTestSuite() {
    delete image_;
    delete dir_;
  }
  // `n` full pages (64 KiB decoded each) starting at the `from`-th.
  static std::span<const uint64_t> pages(size_t from, size_t n) { return std::span(full_).subspan(from, n); }

  static inline TempDir* dir_ = nullptr;
  static inline Image* image_ = nullptr;
  static inline std::vector<uint64_t> full_;
};

TEST_F(GpuDecode, ImageHasEveryCodec) {
  std::set<uint8_t> codecs;
  for (uint64_t e : full_) codecs.insert(image_->pages()[e].codec);
  EXPECT_EQ(codecs, (std::set<uint8_t>{format::kCodecStored, format::kCodecGDeflate, format::kCodecBitpack,
                                       format::kCodecGDeflateX86}));
}

TEST_F(GpuDecode, ConcurrentCallersShareBatches) {
  Rig rig(Rig::no_threshold());
  rig.faults.delay = 20ms;  // while one batch runs, the other callers queue for the next
  constexpr int kThreads = 8, kCalls = 3, kPages = 8;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        Work w(*image_, pages((t * 5 + c) % (full_.size() - kPages), kPages));
        rig.gpu->decode(w.jobs);
        if (!w.good()) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LT(rig.faults.batches.load(), kThreads * kCalls);
  EXPECT_EQ(Stats::get(rig.stats.gpu_batches), uint64_t(rig.faults.batches.load()));
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_gpu), uint64_t(kThreads * kCalls * kPages));
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_cpu), 0u);
  EXPECT_EQ(Stats::get(rig.stats.gpu_fallback_pages), 0u);
}

TEST_F(GpuDecode, EveryPageOfTheImageMatchesTheReader) {
  GpuDecodeOptions opt = Rig::no_threshold();
  opt.max_batch_pages = 5;  // one request spans several batches
  Rig rig(opt);
  std::vector<uint64_t> all(image_->pages().size());
  for (uint64_t e = 0; e < all.size(); ++e) all[e] = e;
  Work w(*image_, all);
  std::vector<int> done(all.size(), 0);
  rig.gpu->decode(w.jobs, [&](size_t i) { ++done[i]; });
  EXPECT_TRUE(w.good());
  EXPECT_EQ(done, std::vector<int>(all.size(), 1));  // each job reported once
  EXPECT_EQ(Stats::get(rig.stats.gpu_batches), (all.size() + 4) / 5);
}

TEST_F(GpuDecode, SmallRequestsStayOnTheCpu) {
  GpuDecodeOptions opt;
  opt.min_bytes = 256 << 10;  // two 64 KiB pages fall under it, four do not
  Rig rig(opt);
  Work small(*image_, pages(0, 2));
  rig.gpu->decode(small.jobs);
  EXPECT_TRUE(small.good());
  EXPECT_EQ(rig.faults.batches.load(), 0);
  EXPECT_EQ(Stats::get(rig.stats.gpu_small_reads), 1u);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_cpu), 2u);
  Work large(*image_, pages(2, 4));
  rig.gpu->decode(large.jobs);
  EXPECT_TRUE(large.good());
  EXPECT_EQ(rig.faults.batches.load(), 1);
  EXPECT_EQ(Stats::get(rig.stats.gpu_small_reads), 1u);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_gpu), 4u);
}

TEST_F(GpuDecode, PageTheDeviceCallsBadIsDecodedOnTheCpu) {
  Rig rig(Rig::no_threshold());
  Work w(*image_, pages(0, 8));
  rig.faults.bad.insert(w.entries[3].offset);
  rig.gpu->decode(w.jobs);
  EXPECT_TRUE(w.good());
  EXPECT_EQ(Stats::get(rig.stats.gpu_fallback_pages), 1u);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_gpu), 7u);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_cpu), 1u);
}

TEST_F(GpuDecode, WrongDeviceOutputIsCaughtByTheChecksum) {
  Rig rig(Rig::no_threshold());
  Work w(*image_, pages(4, 8));
  rig.faults.corrupt.insert(w.entries[0].offset);
  rig.faults.corrupt.insert(w.entries[7].offset);
  rig.gpu->decode(w.jobs);
  EXPECT_TRUE(w.good());
  EXPECT_EQ(Stats::get(rig.stats.gpu_fallback_pages), 2u);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_gpu), 6u);
}

TEST_F(GpuDecode, DamagedPagesStillFailWithTheCpuVerdict) {
  Rig rig(Rig::no_threshold());
  Work w(*image_, pages(0, 8));
  w.stored[1][w.stored[1].size() / 2] ^= 0x20;  // damaged in the image: the stored checksum says so
  // Damage the stored checksum does not see (its checksum updated too): only decoding can tell.
  w.stored[2][w.stored[2].size() / 2] ^= 0x20;
  w.entries[2].ccheck = checksum32(w.stored[2].data(), w.stored[2].size());
  w.entries[3].ucheck ^= 1;  // decodes, but not to what the image says it holds
  rig.gpu->decode(w.jobs);
  EXPECT_EQ(w.jobs[1].status, PageStatus::kStoredChecksum);
  EXPECT_NE(w.jobs[2].status, PageStatus::kOk);
  EXPECT_EQ(w.jobs[3].status, PageStatus::kChecksum);
  EXPECT_TRUE(w.good({1, 2, 3}));
  EXPECT_EQ(rig.faults.pages.load(), 7u);  // the damaged page never reached the device
  EXPECT_EQ(Stats::get(rig.stats.gpu_fallback_pages), 2u);
}

TEST_F(GpuDecode, FailedBatchIsDecodedOnTheCpu) {
  Rig rig(Rig::no_threshold());
  rig.faults.fail_batches = 1;
  Work first(*image_, pages(0, 6));
  rig.gpu->decode(first.jobs);
  EXPECT_TRUE(first.good());
  EXPECT_EQ(Stats::get(rig.stats.gpu_fallback_pages), 6u);
  Work second(*image_, pages(6, 6));  // one failure is not enough to give the device up
  rig.gpu->decode(second.jobs);
  EXPECT_TRUE(second.good());
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_gpu), 6u);
  EXPECT_STREQ(rig.gpu->name(), "gpu");
}

TEST_F(GpuDecode, RepeatedBatchFailuresSwitchToTheCpu) {
  Rig rig(Rig::no_threshold());
  rig.faults.fail_batches = -1;
  for (size_t call = 0; call < 5; ++call) {
    Work w(*image_, pages(call, 4));
    rig.gpu->decode(w.jobs);
    EXPECT_TRUE(w.good()) << call;
  }
  EXPECT_EQ(rig.faults.batches.load(), 3);  // GpuDecodeOptions::max_failures
  EXPECT_EQ(Stats::get(rig.stats.gpu_fallback_pages), 12u);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_cpu), 20u);
  EXPECT_STREQ(rig.gpu->name(), "cpu");
}

TEST_F(GpuDecode, PoolWorkersMayDecode) {
  // Both workers wait on the dispatcher while the CPU fallback wants the pool as well.
  Rig rig(Rig::no_threshold());
  rig.faults.delay = 2ms;
  rig.faults.bad.insert(image_->pages()[full_[5]].offset);
  constexpr int kTasks = 12;
  std::mutex mu;
  std::condition_variable cv;
  int finished = 0, wrong = 0;
  for (int t = 0; t < kTasks; ++t) {
    rig.pool.submit([&, t] {
      Work w(*image_, pages(t % 8, 6));
      rig.gpu->decode(w.jobs);
      std::lock_guard lock(mu);
      wrong += !w.good();
      ++finished;
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 60s, [&] { return finished == kTasks; })) << "deadlock";
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(Stats::get(rig.stats.gpu_fallback_pages), 0u);
}

TEST_F(GpuDecode, DestructionLetsCallersInFlightFinish) {
  Rig rig(Rig::no_threshold());
  rig.faults.closed = true;  // every batch waits at the gate
  constexpr int kThreads = 8;
  std::atomic<int> entered{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Work w(*image_, pages(t, 4));
      ++entered;
      rig.gpu->decode(w.jobs);
      if (!w.good()) ++wrong;
    });
  }
  while (entered.load() < kThreads || rig.faults.batches.load() == 0) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(50ms);  // the last callers get from `entered` into the queue
  std::thread opener([&] {
    std::this_thread::sleep_for(100ms);  // the destructor is waiting by then
    rig.faults.open();
  });
  rig.gpu.reset();  // joins the dispatcher once it has served every queued caller
  for (auto& t : threads) t.join();
  opener.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(Stats::get(rig.stats.pages_decoded_gpu), uint64_t(kThreads * 4));
}

}  // namespace
}  // namespace gdfs::engine
