// Reader::read_device and read_batch_device on a real CUDA device (label gpu): file ranges read straight
// into cudaMalloc'ed memory equal the bytes the host path reads, for ranges that start and end inside
// pages, whole pages, tails in tail packs, holes, deduplicated pages, bitpack pages and data past 4 GiB;
// in batches, on a stream of the caller's, with the GPU decoder and with the CPU decoder copying to the
// device; nothing is written past a range; a corrupt page fails only the ranges that need it. Without a
// CUDA device every test skips, saying why. The same paths over a stand-in device are in test_reader.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "cli_util.h"
#include "gdfs/reader.h"
#include "tree_util.h"

namespace gdfs {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using test::TempDir;

constexpr uint8_t kGuard = 0xEE;
constexpr size_t kGuardBytes = 256;

std::string no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device";
  return "";
}

// Device memory filled with kGuard, read back whole: the guard band after a range must stay untouched.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(&p_, n_ ? n_ : 1), cudaSuccess);
    EXPECT_EQ(cudaMemset(p_, kGuard, n_), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() { return p_; }
  Bytes host() const {
    Bytes b(n_);
    EXPECT_EQ(cudaMemcpy(b.data(), p_, n_, cudaMemcpyDeviceToHost), cudaSuccess);
    return b;
  }

 private:
  void* p_ = nullptr;
  size_t n_;
};

// 16-bit stereo samples: smooth, so mkfs --codec auto stores them as bitpack pages.
Bytes pcm(size_t frames, uint32_t seed) {
  Bytes b;
  uint32_t x = seed;
  for (size_t i = 0; i < frames; ++i) {
    for (int c = 0; c < 2; ++c) {
      x = x * 1664525u + 1013904223u;
      const double t = static_cast<double>(i) / (25.0 + 9 * c);
      const auto v = static_cast<int16_t>(8000 * std::sin(t) + 2500 * std::sin(t * 2.7) + (x >> 28) - 8);
      b.push_back(static_cast<uint8_t>(v));
      b.push_back(static_cast<uint8_t>(static_cast<uint16_t>(v) >> 8));
    }
  }
  return b;
}

struct Range {
  std::string path;
  uint64_t offset;
  size_t length;
};

class ReadDeviceGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = new std::string(no_device_reason());
    if (!skip_->empty()) return;
    dir_ = new TempDir("read-device-gpu");
    const std::string src = *dir_ / "src";
    fs::create_directories(src);
    test::make_edge_tree(src);  // tail packs, holes, a 5 GiB sparse file, empty files
    test::write_text_file(src + "/multi", 5 * 65536 + 1234, 7);
    fs::copy_file(src + "/multi", src + "/multi-copy");  // dedupe pages
    test::write_text_file(src + "/big", 24u << 20, 11);  // hundreds of pages: batches of many pages
    const Bytes samples = pcm(300000, 5);
    test::write_file(src + "/samples.pcm", std::string(samples.begin(), samples.end()));
    ASSERT_EQ(test::run_mkfs({"-q", "--codec", "auto", src, *dir_ / "img"}).code, 0);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete skip_;
  }
  void SetUp() override {
    if (!skip_->empty()) GTEST_SKIP() << *skip_;
  }

  static std::unique_ptr<Reader> open(DecoderChoice decoder, const std::string& img = *dir_ / "img") {
    ReaderOptions o;
    o.threads = 4;
    o.decoder = decoder;
    o.gpu_min_bytes = 0;  // host reads (the comparisons) decode on the GPU too
    return Reader::open(img, o);
  }

  // Ranges of every kind: edges inside pages, whole pages, tails, dedupe, holes, bitpack, past 4 GiB.
  static std::vector<Range> ranges(Reader& r) {
    std::vector<Range> out = {
        {"/multi", 0, 5 * 65536 + 1234},
        {"/multi", 65536, 2 * 65536},
        {"/multi", 100, 3 * 65536},
        {"/multi", 5 * 65536 + 1000, 10000},
        {"/multi-copy", 70000, 130000},
        {"/big", 0, 24u << 20},
        {"/big", 12345, 7u << 20},
        {"/samples.pcm", 0, 1200000},
        {"/samples.pcm", 65536 * 3 + 17, 99999},
        {"/multi", 0, 0},
    };
    r.walk([&](const std::string& path, const FileStat& st) {
      if (!S_ISREG(st.mode)) return;
      if (st.size > (4ull << 30)) {
        out.push_back({path, 1 << 20, 200000});           // a hole
        out.push_back({path, st.size - 100000, 100000});  // data past 4 GiB
      } else if (st.size > 0 && st.size < 65536 && out.size() < 60) {
        out.push_back({path, st.size / 3, size_t(st.size)});  // small files live in tail packs
      }
    });
    std::mt19937_64 rng(42);
    const uint64_t big = r.stat("/big").size;
    for (int i = 0; i < 40; ++i) {
      const uint64_t off = rng() % big;
      out.push_back({"/big", off, size_t(1 + rng() % (600000))});
    }
    return out;
  }

  static void expect_matches(Reader& r, const Range& g, size_t got, const Bytes& dev) {
    Bytes want(g.length);
    const size_t n = r.read(g.path, g.offset, g.length, want.data());
    const std::string where = g.path + " @" + std::to_string(g.offset) + "+" + std::to_string(g.length);
    ASSERT_EQ(got, n) << where;
    EXPECT_TRUE(std::equal(want.begin(), want.begin() + static_cast<long>(n), dev.begin())) << where;
    EXPECT_TRUE(
        std::all_of(dev.begin() + static_cast<long>(n), dev.end(), [](uint8_t b) { return b == kGuard; }))
        << where << ": wrote past the range";
  }

  static void expect_single_reads_match(Reader& r, void* stream) {
    for (const Range& g : ranges(r)) {
      DeviceBuffer d(g.length + kGuardBytes);
      const size_t got = r.read_device(r.lookup(g.path), g.offset, g.length, d.get(), stream);
      if (stream) {
        ASSERT_EQ(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), cudaSuccess);
      }
      expect_matches(r, g, got, d.host());
    }
  }

  static TempDir* dir_;
  static std::string* skip_;
};
TempDir* ReadDeviceGpu::dir_ = nullptr;
std::string* ReadDeviceGpu::skip_ = nullptr;

TEST_F(ReadDeviceGpu, GpuDecoderReadsEveryKindOfRange) {
  auto r = open(DecoderChoice::kGpu);
  std::string how;
  ASSERT_TRUE(r->device_reads(how)) << how;
  EXPECT_NE(how.find("GPU decode"), std::string::npos) << how;
  expect_single_reads_match(*r, nullptr);
  EXPECT_GT(r->counters().at("pages_decoded_gpu"), 100u);
}

TEST_F(ReadDeviceGpu, ReadsOnTheCallersStream) {
  auto r = open(DecoderChoice::kGpu);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  expect_single_reads_match(*r, s);
  cudaStreamDestroy(s);
}

TEST_F(ReadDeviceGpu, CpuDecoderCopiesToTheDevice) {
  auto r = open(DecoderChoice::kCpu);
  std::string how;
  ASSERT_TRUE(r->device_reads(how)) << how;
  EXPECT_NE(how.find("CPU decode"), std::string::npos) << how;
  expect_single_reads_match(*r, nullptr);
  EXPECT_EQ(r->counters().at("pages_decoded_gpu"), 0u);
}

TEST_F(ReadDeviceGpu, BatchOfEveryRangeMatches) {
  auto r = open(DecoderChoice::kGpu);
  const std::vector<Range> rs = ranges(*r);
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  std::vector<ReadRequest> reqs(rs.size());
  for (size_t i = 0; i < rs.size(); ++i) {
    bufs.push_back(std::make_unique<DeviceBuffer>(rs[i].length + kGuardBytes));
    reqs[i].ino = r->lookup(rs[i].path);
    reqs[i].offset = rs[i].offset;
    reqs[i].length = rs[i].length;
    reqs[i].dst = bufs[i]->get();
  }
  r->read_batch_device(reqs);
  for (size_t i = 0; i < rs.size(); ++i) {
    ASSERT_EQ(reqs[i].error, 0) << reqs[i].message;
    expect_matches(*r, rs[i], reqs[i].bytes, bufs[i]->host());
  }
}

TEST_F(ReadDeviceGpu, ManyThreadsShareOneReader) {
  auto r = open(DecoderChoice::kGpu);
  const std::vector<Range> rs = ranges(*r);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      cudaStream_t s = nullptr;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        ++failures;
        return;
      }
      for (size_t i = static_cast<size_t>(t); i < rs.size(); i += 4) {
        const Range& g = rs[i];
        DeviceBuffer d(g.length);
        Bytes want(g.length);
        const size_t n = r->read(g.path, g.offset, g.length, want.data());
        const size_t got = r->read_device(r->lookup(g.path), g.offset, g.length, d.get(), s);
        const Bytes dev = d.host();
        if (got != n || !std::equal(want.begin(), want.begin() + static_cast<long>(n), dev.begin()))
          ++failures;
      }
      cudaStreamDestroy(s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ReadDeviceGpu, CorruptPageFailsOnlyTheRangesThatNeedIt) {
  Bytes img = test::read_bytes(*dir_ / "img");
  {
    auto image = Image::open(*dir_ / "img");
    img[image->pages()[image->page_ref(image->resolve("/multi"), 1).entry].offset + 9] ^= 0x01;
  }
  test::write_bytes(*dir_ / "bad", img);
  auto r = open(DecoderChoice::kGpu, *dir_ / "bad");
  DeviceBuffer a(1000), b(1000);
  std::vector<ReadRequest> reqs(2);
  reqs[0].ino = reqs[1].ino = r->lookup("/multi");
  reqs[0].offset = 65536 + 5;
  reqs[1].offset = 3 * 65536;
  reqs[0].length = reqs[1].length = 1000;
  reqs[0].dst = a.get();
  reqs[1].dst = b.get();
  r->read_batch_device(reqs);
  EXPECT_EQ(reqs[0].error, EIO);
  EXPECT_NE(reqs[0].message.find("(page 1)"), std::string::npos) << reqs[0].message;
  ASSERT_EQ(reqs[1].error, 0) << reqs[1].message;
  Bytes want(1000);
  ASSERT_EQ(r->read("/multi", 3 * 65536, 1000, want.data()), 1000u);
  EXPECT_EQ(b.host(), want);
}

}  // namespace
}  // namespace gdfs
