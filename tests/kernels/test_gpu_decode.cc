// The CUDA batch decoder on a real device (label gpu): it must give the CPU decoders' bytes and
// statuses on every public vector, on our encoders' pages, on corrupt pages, and in batches of 1 to
// 100,000 pages that mix sizes and codecs. Without a usable device every test skips and says why.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "gdfs/bitpack.h"
#include "gdfs/gpu_batch.h"
#include "gdfs/x86_filter.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

using gpu::HostPage;

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    gpu::BatchOptions opt;
    opt.slot_bytes = size_t{16} << 20;  // small slots, so big batches cross slot boundaries
    dev_ = gpu::BatchDecoder::create(opt, why);
    if (!dev_) GTEST_SKIP() << "no usable GPU: " << why;
  }
  std::unique_ptr<gpu::BatchDecoder> dev_;
};

// One page to decode, with what the CPU says about it.
struct Case {
  Bytes in;
  size_t out_size = 0;
  format::Codec codec = format::kCodecGDeflate;
  uint16_t param = 0;
  PageStatus want = PageStatus::kOk;
  Bytes want_bytes;  // when want == kOk
};

Case gdeflate_case(Bytes page, size_t out_size) {
  Case c;
  c.want_bytes = decode(page, out_size, &c.want, gdeflate::DecodePath::kScalar);
  c.in = std::move(page);
  c.out_size = out_size;
  return c;
}

Case bitpack_case(const Bytes& raw, const bitpack::Params& p) {
  Case c;
  c.codec = format::kCodecBitpack;
  c.param = bitpack::to_param(p);
  c.in.resize(bitpack::compress_bound(raw.size(), p));
  c.in.resize(bitpack::compress(raw.data(), raw.size(), p, c.in.data(), c.in.size()));
  c.out_size = raw.size();
  c.want_bytes = raw;
  return c;
}

// Codec 4: `raw` after the x86 branch filter, GDeflate-coded; the device must give `raw` back.
Case x86_case(const Bytes& raw, gdeflate::Compressor& comp) {
  Bytes filtered = raw;
  x86::encode(filtered.data(), filtered.size());
  Case c;
  c.codec = format::kCodecGDeflateX86;
  c.in = encode(comp, filtered);
  c.out_size = raw.size();
  c.want_bytes = raw;
  return c;
}

// Runs all cases as one batch and checks every page.
void run_batch(gpu::BatchDecoder& dev, const std::vector<Case>& cases) {
  std::vector<Bytes> outs(cases.size());
  std::vector<HostPage> pages(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    outs[i].assign(cases[i].out_size, 0xEE);
    pages[i] = HostPage{cases[i].in.data(), static_cast<uint32_t>(cases[i].in.size()),
                        outs[i].data(),     static_cast<uint32_t>(cases[i].out_size),
                        cases[i].codec,     cases[i].param};
  }
  std::vector<PageStatus> results(cases.size(), PageStatus::kNotRun);
  std::string err;
  ASSERT_TRUE(dev.decode(pages, results, err)) << err;
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(results[i], cases[i].want) << "page " << i << " of " << cases.size();
    if (cases[i].want == PageStatus::kOk) {
      ASSERT_TRUE(outs[i] == cases[i].want_bytes) << "page " << i << ": bytes differ";
    }
  }
}

Bytes texty(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b;
  while (b.size() < n) {
    if (rng() % 13 == 0 && b.size() > 100) {
      const size_t from = rng() % b.size(), len = 3 + rng() % 300;
      for (size_t k = 0; k < len && b.size() < n; ++k) b.push_back(b[from + k % (b.size() - from)]);
    } else {
      b.push_back(static_cast<uint8_t>("etaoin shrdlu\n"[rng() % 14]));
    }
  }
  return b;
}

TEST_F(Gpu, EveryPublicVector) {
  std::vector<Case> cases;
  for (const VectorCase& v : read_manifest(vectors_dir() + "/MANIFEST.tsv")) {
    Bytes raw, gdf;
    ASSERT_TRUE(read_file(v.raw_path(), &raw));
    ASSERT_TRUE(read_file(v.gdf_path(), &gdf));
    Case c = gdeflate_case(gdf, raw.size());
    ASSERT_EQ(c.want, PageStatus::kOk) << v.name;
    cases.push_back(std::move(c));
  }
  ASSERT_GE(cases.size(), 50u);
  run_batch(*dev_, cases);
}

TEST_F(Gpu, OurPagesAtEveryLevel) {
  std::vector<Case> cases;
  uint64_t seed = 1;
  for (int level : {0, 1, 4, 6, 9, 12}) {
    gdeflate::Compressor c(level);
    for (size_t n : {1, 100, 4096, 30000, 65535, 65536}) {
      for (const Bytes& raw : {texty(n, seed), random_bytes(n, seed), Bytes(n, 'a')}) {
        cases.push_back(gdeflate_case(encode(c, raw), raw.size()));
        ++seed;
      }
    }
  }
  run_batch(*dev_, cases);
}

TEST_F(Gpu, CorruptPagesGiveTheCpuStatus) {
  std::mt19937_64 rng(5);
  gdeflate::Compressor c(6);
  std::vector<Case> cases;
  for (int i = 0; i < 3000; ++i) {
    Bytes page = encode(c, texty(1000 + rng() % 64536, rng()));
    const size_t out = rng() % 4 ? 1000 : rng() % 65537;
    for (int f = 0, flips = 1 + static_cast<int>(rng() % 6); f < flips; ++f)
      page[rng() % page.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (i % 10 == 0) page.resize(page.size() - 4 * (1 + rng() % 8));
    if (i % 17 == 0) page = random_bytes(128 + 4 * (rng() % 2000), rng());
    cases.push_back(gdeflate_case(std::move(page), out));
  }
  run_batch(*dev_, cases);
}

// A mixed batch of `n` pages: GDeflate, stored, zero and bitpack pages of many sizes.
std::vector<Case> mixed(size_t n, size_t max_page, uint64_t seed) {
  std::mt19937_64 rng(seed);
  gdeflate::Compressor c(1);
  std::vector<Case> cases;
  for (size_t i = 0; i < n; ++i) {
    const size_t size = 1 + rng() % max_page;
    Case k;
    switch (i % 4) {
      case 0:
        k = gdeflate_case(encode(c, texty(size, rng())), size);
        break;
      case 1:
        k.codec = format::kCodecStored;
        k.in = random_bytes(size, rng());
        k.out_size = size;
        k.want_bytes = k.in;
        break;
      case 2:
        k.codec = gpu::kZeroFill;
        k.out_size = size;
        k.want_bytes.assign(size, 0);
        break;
      default: {
        Bytes raw(size);
        int16_t v = 0;
        for (size_t j = 0; j + 1 < size; j += 2) {
          v = static_cast<int16_t>(v + static_cast<int>(rng() % 64) - 32);
          std::memcpy(&raw[j], &v, 2);
        }
        bitpack::Params p;
        p.block = static_cast<uint16_t>(i % 8 == 3 ? 32 : 1 + rng() % 1024);
        p.stride = static_cast<uint8_t>(p.block > 1 ? 1 : 0);
        p.mode = i % 8 == 7 ? bitpack::Mode::kOutlier : bitpack::Mode::kPlain;
        k = bitpack_case(raw, p);
      }
    }
    cases.push_back(std::move(k));
  }
  return cases;
}

// x86-filtered pages among plain ones: bytes dense in E8/E9 and 00/FF (sites chained, barred and across
// every 32-position step) and code-like pages, at sizes around the step.
TEST_F(Gpu, X86FilteredPagesAmongOthers) {
  gdeflate::Compressor comp(6);
  std::vector<Case> cases;
  uint64_t seed = 5;
  static constexpr uint8_t kPick[] = {0xE8, 0xE9, 0x00, 0xFF};
  for (size_t n : {1, 5, 37, 100, 4096, 65535, 65536}) {
    Bytes dense = random_bytes(n, seed++);
    for (uint8_t& b : dense)
      if (b % 3) b = kPick[b % 4];
    cases.push_back(x86_case(dense, comp));
    cases.push_back(gdeflate_case(encode(comp, texty(n, seed)), n));
    Bytes code = texty(n, seed++);
    for (size_t i = 0; i + 5 <= n; i += 23) code[i] = 0xE8, code[i + 4] = 0x00;
    cases.push_back(x86_case(code, comp));
  }
  run_batch(*dev_, cases);
}

TEST_F(Gpu, BatchesOfOneToThousands) {
  for (size_t n : {1, 2, 31, 32, 33, 1000}) run_batch(*dev_, mixed(n, 65536, n));
}

TEST_F(Gpu, HundredThousandSmallPages) {
  run_batch(*dev_, mixed(100000, 2048, 77));
}

TEST_F(Gpu, UnknownCodecAndOversizedPages) {
  std::vector<Case> cases(3);
  cases[0].codec = static_cast<format::Codec>(9);
  cases[0].in = Bytes(128, 0);
  cases[0].out_size = 10;
  cases[0].want = PageStatus::kUnsupported;
  cases[1].codec = format::kCodecStored;
  cases[1].in = Bytes(10, 1);
  cases[1].out_size = 11;
  cases[1].want = PageStatus::kSizeMismatch;
  cases[2] = mixed(1, 1000, 3)[0];
  run_batch(*dev_, cases);
}

}  // namespace
}  // namespace gdfs::test
