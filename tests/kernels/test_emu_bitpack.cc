// The CUDA bitpack decoder's device code (kernels/src/bitpack_warp.h), run on the CPU by the warp
// emulator: on pages of our encoder (both sample types, both modes, a spread of block sizes and
// strides, page sizes from 1 byte to 64 KiB, extreme, smooth, random and all-zero data) and on corrupt
// pages it must give the CPU decoder's status, and its bytes when that is kOk. Every page runs in both
// lane orders, which must agree (a difference would mean lanes talking through memory unsynchronised).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bitpack_warp.h"
#include "emu/warp_emu.h"
#include "gdfs/bitpack.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

namespace bp = gdfs::bitpack;
using gpu::emu::Order;

std::string describe(uint16_t param, size_t usize) {
  const unsigned w = param & 1 ? 4 : 2;
  return "int" + std::to_string(8 * w) + (param & 2 ? " outlier" : " plain") +
         " B=" + std::to_string((param >> 2 & 0x3FF) + 1) + " S=" + std::to_string(param >> 12) +
         " usize=" + std::to_string(usize) + " param=" + std::to_string(param);
}

// The CPU decoder's verdict and bytes, from exact-size buffers.
PageStatus cpu_decode(const Bytes& page, uint16_t param, size_t out_size, Bytes* out) {
  const std::optional<bp::Params> p = bp::from_param(param);
  if (!p) return PageStatus::kUnsupported;
  const ExactBuf in(page);
  ExactBuf o(out_size);
  const PageStatus s =
      bp::decompress(in.data(), in.size(), *p, o.data(), o.size(), bp::DecodePath::kPortable);
  *out = o.bytes();
  return s;
}

struct EmuOut {
  PageStatus result = PageStatus::kNotRun;
  Bytes out;
};

// The warp decoder on buffers that end exactly where the page does (ASan sees any byte past them); the
// input starts `misalign` bytes into its allocation, which is 16-byte aligned, so both the byte loads
// and the aligned word loads of the decoder are exercised. The output starts as 0xEE so that a byte
// the decoder skipped shows.
EmuOut emu_decode(const Bytes& page, uint16_t param, size_t out_size, Order order, size_t misalign = 0) {
  ExactBuf in_storage(page.size() + misalign);
  std::copy(page.begin(), page.end(), in_storage.data() + misalign);
  const uint8_t* in = in_storage.data() + misalign;
  ExactBuf out(out_size);
  std::memset(out.data(), 0xEE, out_size);
  gpu::BitpackSmem sm;
  const gpu::DevicePage p{in,
                          out.data(),
                          static_cast<uint32_t>(page.size()),
                          static_cast<uint32_t>(out_size),
                          format::kCodecBitpack,
                          0,
                          param,
                          0};
  PageStatus results[32];
  const std::string err =
      gpu::emu::run_warp([&] { results[gpu::simt::lane_id()] = gpu::bitpack_decode_warp(p, sm); }, order);
  EXPECT_EQ(err, "");
  for (int l = 1; l < 32; ++l) EXPECT_EQ(results[l], results[0]) << "lanes disagree on the result";
  return {results[0], out.bytes()};
}

// The CPU's status, and its bytes when kOk, in both lane orders; the orders agree on every byte.
// Returns false (after reporting) on a mismatch, so that sweeps stop at the first one.
bool check_page(const Bytes& page, uint16_t param, size_t out_size, const std::string& what,
                bool both_orders = true, size_t misalign = 0) {
  Bytes cpu;
  const PageStatus want = cpu_decode(page, param, out_size, &cpu);
  Bytes first;
  for (Order order : {Order::kForward, Order::kReverse}) {
    if (order == Order::kReverse && !both_orders) break;
    const EmuOut got = emu_decode(page, param, out_size, order, misalign);
    const char* o = order == Order::kReverse ? " (reverse order)" : "";
    EXPECT_EQ(got.result, want) << what << o;
    if (got.result != want) return false;
    if (want == PageStatus::kOk && got.out != cpu) {
      size_t at = 0;
      while (got.out[at] == cpu[at]) ++at;
      ADD_FAILURE() << what << o << ": bytes differ first at " << at << " (gpu " << int{got.out[at]}
                    << ", cpu " << int{cpu[at]} << ")";
      return false;
    }
    if (order == Order::kForward) {
      first = got.out;
    } else if (got.out != first) {
      ADD_FAILURE() << what << ": the lane orders give different bytes";
      return false;
    }
  }
  return true;
}

Bytes encode(const Bytes& raw, uint16_t param) {
  const bp::Params p = *bp::from_param(param);
  Bytes out(bp::compress_bound(raw.size(), p));
  const size_t n = bp::compress(raw.data(), raw.size(), p, out.data(), out.size());
  EXPECT_TRUE(n > 0 || raw.empty()) << describe(param, raw.size());
  out.resize(n);
  return out;
}

uint16_t make_param(unsigned w, bool outlier, unsigned block, unsigned stride) {
  bp::Params p;
  p.type = w == 4 ? bp::Type::kInt32 : bp::Type::kInt16;
  p.mode = outlier ? bp::Mode::kOutlier : bp::Mode::kPlain;
  p.block = static_cast<uint16_t>(block);
  p.stride = static_cast<uint8_t>(stride);
  return bp::to_param(p);
}

enum class Data { kRandom, kZero, kSmooth, kExtreme, kChannels, kMixed };
constexpr Data kAllData[] = {Data::kRandom,  Data::kZero,     Data::kSmooth,
                             Data::kExtreme, Data::kChannels, Data::kMixed};

// `n` bytes of samples of `w` bytes (the last partial sample, if any, is random bytes).
Bytes make_data(Data kind, unsigned w, size_t n, std::mt19937& rng) {
  Bytes b(n);
  const size_t count = n / w;
  const int64_t lo = w == 2 ? std::numeric_limits<int16_t>::min() : std::numeric_limits<int32_t>::min();
  const int64_t hi = w == 2 ? std::numeric_limits<int16_t>::max() : std::numeric_limits<int32_t>::max();
  auto put = [&](size_t i, int64_t v) {
    for (unsigned k = 0; k < w; ++k) b[i * w + k] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * k));
  };
  int64_t level = 0;
  int64_t amp = 0;
  for (size_t i = 0; i < count; ++i) {
    switch (kind) {
      case Data::kRandom:
        put(i, static_cast<int64_t>(rng()));
        break;
      case Data::kZero:
        put(i, 0);
        break;
      case Data::kSmooth:  // a random walk: small differences, a large first value per block
        level += static_cast<int64_t>(rng() % 9) - 4;
        put(i, level + (w == 2 ? 12000 : 3000000));
        break;
      case Data::kExtreme: {  // the values whose differences reach the widest magnitudes, INT_MIN above all
        const int64_t pick[] = {lo, hi, 0, -1, lo, 1, lo + 1, hi - 1};
        put(i, pick[rng() % 8]);
        break;
      }
      case Data::kChannels:  // 3 interleaved channels of different slopes
        put(i, static_cast<int64_t>((i / 3) * (1 + i % 3) * 37 % 5000) - 2500 + (i % 3) * 20000);
        break;
      case Data::kMixed:  // stretches of different amplitude: rate 0 blocks next to wide ones
        if (i % 23 == 0) amp = rng() % 4 == 0 ? 0 : int64_t{1} << (rng() % (8 * w - 1));
        put(i, amp ? static_cast<int64_t>(rng() % static_cast<uint64_t>(amp)) - amp / 2 : 0);
        break;
    }
  }
  for (size_t i = count * w; i < n; ++i) b[i] = static_cast<uint8_t>(rng());
  return b;
}

constexpr unsigned kBlocks[] = {1, 2, 7, 31, 32, 33, 64, 255, 1024};
constexpr unsigned kStrides[] = {0, 1, 2, 3, 15};

// Every valid (type, mode, block, stride) of the sweep.
std::vector<uint16_t> sweep_params() {
  std::vector<uint16_t> out;
  for (unsigned w : {2u, 4u})
    for (bool outlier : {false, true})
      for (unsigned block : kBlocks)
        for (unsigned stride : kStrides)
          if (stride == 0 || stride < block) out.push_back(make_param(w, outlier, block, stride));
  return out;
}

TEST(EmuBitpack, DocumentedExamples) {
  // docs/FORMAT.md 4.1: int16 plain B=4 S=0, and the outlier example with S=1.
  const Bytes plain = {0x02, 0x02, 0x05, 0x06, 0xA5};
  EXPECT_TRUE(check_page(plain, make_param(2, false, 4, 0), 9, "plain example"));
  const Bytes outlier = {0x02, 0x03, 0xE8, 0x03, 0x08, 0x0A, 0x04};
  EXPECT_TRUE(check_page(outlier, make_param(2, true, 4, 1), 8, "outlier example"));
  const EmuOut got = emu_decode(plain, make_param(2, false, 4, 0), 9, Order::kForward);
  EXPECT_EQ(got.out, (Bytes{0x01, 0x00, 0xFE, 0xFF, 0x03, 0x00, 0x00, 0x00, 0xA5}));
}

// The whole sweep: 148 params x 6 kinds of data x sizes from 1 byte to a few KiB, partial samples
// included. Large pages are in FullPages below.
TEST(EmuBitpack, RoundTripSweep) {
  std::mt19937 rng(1234);
  int pages = 0;
  for (const uint16_t param : sweep_params()) {
    const unsigned w = param & 1 ? 4 : 2;
    const unsigned block = (param >> 2 & 0x3FF) + 1;
    for (const Data kind : kAllData) {
      // Tiny (no samples, or one), around one block, a partial last block, and random sizes.
      const size_t sizes[] = {size_t{1} + rng() % (2 * w), size_t{block} * w + rng() % w,
                              size_t{1} + rng() % 700, size_t{700} + rng() % 4000};
      for (size_t si = 0; si < 5; ++si) {
        // One large page (up to 64 KiB) per param, with data that changes with the param.
        if (si == 4 && kind != kAllData[param % 6]) break;
        const size_t n = si < 4 ? sizes[si] : 4700 + rng() % (65536 - 4700 + 1);
        const Bytes raw = make_data(kind, w, n, rng);
        const Bytes page = encode(raw, param);
        Bytes cpu;
        ASSERT_EQ(cpu_decode(page, param, n, &cpu), PageStatus::kOk) << describe(param, n);
        ASSERT_EQ(cpu, raw);
        ASSERT_TRUE(check_page(page, param, n, describe(param, n) + " data " + std::to_string(int(kind))));
        ++pages;
      }
    }
  }
  EXPECT_GT(pages, 3000);
}

// 64 KiB pages and their neighbours (65535: a partial last sample; 65534 for int32: a partial sample
// of two bytes), on the params mkfs picks and the block-size extremes.
TEST(EmuBitpack, FullPages) {
  std::mt19937 rng(99);
  const uint16_t params[] = {make_param(2, true, 32, 1),    make_param(2, true, 32, 2),
                             make_param(4, true, 32, 1),    make_param(2, false, 1, 0),
                             make_param(4, true, 1, 0),     make_param(2, true, 1024, 15),
                             make_param(4, false, 1024, 3), make_param(2, true, 33, 2),
                             make_param(4, true, 7, 3),     make_param(2, false, 255, 15)};
  for (const uint16_t param : params) {
    const unsigned w = param & 1 ? 4 : 2;
    for (const Data kind : {Data::kSmooth, Data::kExtreme, Data::kMixed}) {
      for (const size_t n : {size_t{65536}, size_t{65535}, size_t{65534}}) {
        const Bytes raw = make_data(kind, w, n, rng);
        const Bytes page = encode(raw, param);
        ASSERT_TRUE(check_page(page, param, n, describe(param, n) + " data " + std::to_string(int(kind))));
      }
    }
  }
}

// Sizes 1..300 one by one for a handful of params: every partial last block and last sample.
TEST(EmuBitpack, EverySmallSize) {
  std::mt19937 rng(7);
  for (const uint16_t param : {make_param(2, true, 32, 1), make_param(4, false, 7, 3),
                               make_param(2, false, 33, 15), make_param(4, true, 64, 2)}) {
    const unsigned w = param & 1 ? 4 : 2;
    for (size_t n = 1; n <= 300; ++n) {
      const Bytes raw = make_data(n % 2 ? Data::kMixed : Data::kExtreme, w, n, rng);
      ASSERT_TRUE(check_page(encode(raw, param), param, n, describe(param, n), n % 3 == 0));
    }
  }
}

// The widest values: INT16_MIN / INT32_MIN as whole samples (rate 16 and 32 with S = 0) and as
// differences (INT_MIN after 0 gives magnitude 2^(8W-1); MIN after MAX wraps), in every block shape.
TEST(EmuBitpack, Extremes) {
  for (unsigned w : {2u, 4u}) {
    const int64_t lo = w == 2 ? std::numeric_limits<int16_t>::min() : std::numeric_limits<int32_t>::min();
    const int64_t hi = w == 2 ? std::numeric_limits<int16_t>::max() : std::numeric_limits<int32_t>::max();
    for (const int64_t pattern : {lo, hi}) {
      Bytes raw(w * 100);
      for (size_t i = 0; i < 100; ++i) {
        const int64_t v = i % 2 ? pattern : (i % 4 == 0 ? 0 : (pattern == lo ? hi : lo));
        for (unsigned k = 0; k < w; ++k)
          raw[i * w + k] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * k));
      }
      for (const unsigned block : kBlocks)
        for (const unsigned stride : kStrides)
          for (const bool outlier : {false, true})
            if (stride == 0 || stride < block) {
              const uint16_t param = make_param(w, outlier, block, stride);
              ASSERT_TRUE(check_page(encode(raw, param), param, raw.size(), describe(param, raw.size())));
            }
    }
  }
}

// The input may start at any byte (the decoder loads bytes, so nothing changes, but ASan watches).
TEST(EmuBitpack, MisalignedInput) {
  std::mt19937 rng(5);
  for (size_t mis = 0; mis < 4; ++mis) {
    for (const uint16_t param :
         {make_param(2, true, 32, 1), make_param(4, true, 7, 2), make_param(4, false, 64, 0),
          make_param(2, false, 1024, 3), make_param(4, true, 33, 15)}) {
      for (const Data kind : {Data::kSmooth, Data::kRandom, Data::kExtreme}) {
        const size_t n = 1 + rng() % 9000;
        const Bytes raw = make_data(kind, param & 1 ? 4 : 2, n, rng);
        ASSERT_TRUE(check_page(encode(raw, param), param, n,
                               describe(param, n) + " misaligned by " + std::to_string(mis), true, mis));
      }
    }
  }
}

// Every one of the 65536 params on a tiny random page: the invalid ones (stride >= block) are
// kUnsupported like from_param() says, the others give the CPU's verdict on whatever the bytes say.
TEST(EmuBitpack, EveryParam) {
  std::mt19937 rng(11);
  for (uint32_t param = 0; param < 65536; ++param) {
    Bytes page(rng() % 7);
    for (auto& b : page) b = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : rng() % 3);
    const size_t out_size = rng() % 9;
    ASSERT_TRUE(check_page(page, static_cast<uint16_t>(param), out_size,
                           describe(static_cast<uint16_t>(param), out_size), param % 16 == 0));
  }
}

// Every selector and rate byte in every metadata slot of a small page: legal ones decode (if the
// sizes still add up), others are kBadData, as on the CPU.
TEST(EmuBitpack, EveryMetadataByte) {
  std::mt19937 rng(3);
  for (const uint16_t param : {make_param(2, true, 7, 1), make_param(4, true, 32, 3),
                               make_param(4, false, 2, 0), make_param(2, false, 64, 0)}) {
    const unsigned w = param & 1 ? 4 : 2;
    const unsigned block = (param >> 2 & 0x3FF) + 1;
    const size_t n = size_t{block} * w * 2 + w + 1;  // two full blocks, a one-sample block, a tail byte
    const Bytes page = encode(make_data(Data::kSmooth, w, n, rng), param);
    const size_t meta = (param & 2 ? 2 : 1) * 3;
    for (size_t at = 0; at < meta; ++at) {
      for (unsigned v = 0; v < 256; ++v) {
        Bytes bad = page;
        bad[at] = static_cast<uint8_t>(v);
        ASSERT_TRUE(check_page(bad, param, n,
                               describe(param, n) + " meta[" + std::to_string(at) + "]=" + std::to_string(v),
                               v % 8 == 0));
      }
    }
  }
}

// Bit flips, truncation, extension, a wrong out_size and random garbage: the CPU's status, never a
// byte outside the buffers (ASan), and the CPU's bytes whenever the damage still decodes.
TEST(EmuBitpack, CorruptPages) {
  std::mt19937 rng(77);
  const std::vector<uint16_t> params = sweep_params();
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    const uint16_t param = params[rng() % params.size()];
    const unsigned w = param & 1 ? 4 : 2;
    const size_t n = 1 + rng() % 3000;
    const Bytes page = encode(make_data(kAllData[rng() % 6], w, n, rng), param);
    const std::string what = describe(param, n);
    const bool both = round % 4 == 0;
    if (!page.empty()) {
      for (int f = 0; f < 4; ++f) {  // one bit anywhere, then one in the metadata (at the front)
        Bytes bad = page;
        const size_t at = f % 2 ? rng() % std::min<size_t>(page.size(), 64) : rng() % page.size();
        bad[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        ASSERT_TRUE(check_page(bad, param, n, what + " flip at " + std::to_string(at), both));
      }
      Bytes cut(page.begin(), page.end() - 1);
      ASSERT_TRUE(check_page(cut, param, n, what + " minus 1 byte", both));
      cut.resize(rng() % page.size());
      ASSERT_TRUE(check_page(cut, param, n, what + " cut to " + std::to_string(cut.size()), both));
    }
    Bytes longer = page;
    for (size_t i = 1 + rng() % 5; i > 0; --i) longer.push_back(static_cast<uint8_t>(rng()));
    ASSERT_TRUE(check_page(longer, param, n, what + " extended", both));
    for (const size_t other : {n + 1, n - 1, n + w, n > w ? n - w : n + 2 * w}) {
      if (other == 0) continue;
      ASSERT_TRUE(check_page(page, param, other, what + " decoded to " + std::to_string(other), both));
    }
    Bytes garbage(rng() % (page.size() + 2));
    for (auto& b : garbage) b = static_cast<uint8_t>(rng() % 2 ? rng() : rng() % 8);
    ASSERT_TRUE(check_page(garbage, param, n, what + " garbage", both));
    checked += 10;
  }
  EXPECT_GT(checked, 2000);
}

// Pages above kMaxPageBytes are refused (the batch API never hands one over: HostPage caps out_size).
// An input of 2^23 bytes or more is kBadData without a look at it, as the CPU finds after its sums.
TEST(EmuBitpack, OversizedPages) {
  const Bytes page(8, 0);
  const EmuOut got = emu_decode(page, make_param(2, false, 32, 0), gpu::kMaxPageBytes + 2, Order::kForward);
  EXPECT_EQ(got.result, PageStatus::kUnsupported);
  for (const uint16_t param :
       {make_param(2, true, 1, 0), make_param(4, false, 1, 0), make_param(2, false, 1024, 0)}) {
    for (const size_t in_size : {size_t{1} << 23, (size_t{1} << 23) - 1}) {
      Bytes big(in_size, 0x10);  // rate 16 everywhere: the largest int16 blocks
      ASSERT_TRUE(check_page(big, param, gpu::kMaxPageBytes, describe(param, gpu::kMaxPageBytes), false));
    }
  }
}

// The warp transpose and the reciprocal division the decoder is built on.
TEST(EmuBitpack, Primitives) {
  for (uint32_t block = 1; block < 32; ++block) {
    const uint32_t recip = gpu::bitpack_warp::block_recip(block);
    for (uint32_t q = 0; q < 32 * block + 32; ++q)
      ASSERT_EQ(gpu::bitpack_warp::div_block(q, recip), q / block) << q << " / " << block;
  }
  std::mt19937 rng(2);
  uint32_t rows[32], cols[32];
  for (auto& r : rows) r = static_cast<uint32_t>(rng());
  ASSERT_EQ(gpu::emu::run_warp([&] {
              const unsigned lane = gpu::simt::lane_id();
              cols[lane] = gpu::bitpack_warp::transpose32(rows[lane]);
            }),
            "");
  for (unsigned j = 0; j < 32; ++j)
    for (unsigned l = 0; l < 32; ++l) ASSERT_EQ(cols[j] >> l & 1, rows[l] >> j & 1) << j << "," << l;
}

}  // namespace
}  // namespace gdfs::test
