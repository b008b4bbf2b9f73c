// The bitpack page codec: exact bytes of the documented layout (docs/FORMAT.md 4.1), round trips of
// every type, mode, a spread of block sizes and strides, the extremes (INT16_MIN, INT32_MIN, bit width
// 32, all-zero blocks, partial last samples), the param packing, and malformed input. Every decode runs
// on every path the CPU has (portable, AVX2, AVX-512), which must agree on bytes and status.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gdfs/bitpack.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

namespace bp = gdfs::bitpack;

Bytes encode(const Bytes& in, const bp::Params& p) {
  Bytes out(bp::compress_bound(in.size(), p));
  const size_t n = bp::compress(in.data(), in.size(), p, out.data(), out.size());
  EXPECT_TRUE(n > 0 || in.empty());
  EXPECT_EQ(n, bp::compressed_size(in.data(), in.size(), p));
  out.resize(n);
  return out;
}

// The decode paths this CPU has besides the portable one (AVX2, AVX-512).
std::vector<bp::DecodePath> vector_paths() {
  std::vector<bp::DecodePath> v;
  for (bp::DecodePath p : {bp::DecodePath::kAvx2, bp::DecodePath::kAvx512})
    if (bp::decode_path(p) == p) v.push_back(p);
  return v;
}

// Decodes with every path from exact-size buffers; they must agree. Returns the portable result.
PageStatus decode(const Bytes& page, const bp::Params& p, size_t out_size, Bytes* out) {
  static const std::vector<bp::DecodePath> paths = vector_paths();
  const ExactBuf in(page);
  ExactBuf a(out_size);
  const PageStatus s = bp::decompress(in.data(), in.size(), p, a.data(), a.size(), bp::DecodePath::kPortable);
  for (bp::DecodePath path : paths) {
    ExactBuf b(out_size);
    const PageStatus t = bp::decompress(in.data(), in.size(), p, b.data(), b.size(), path);
    EXPECT_EQ(s, t) << bp::path_name(path) << " and portable disagree on the status";
    if (s == PageStatus::kOk && t == PageStatus::kOk) {
      EXPECT_EQ(a.bytes(), b.bytes()) << bp::path_name(path) << " and portable disagree on the bytes";
    }
  }
  if (out) *out = a.bytes();
  return s;
}

void expect_round_trip(const Bytes& in, const bp::Params& p) {
  const Bytes page = encode(in, p);
  Bytes out;
  ASSERT_EQ(decode(page, p, in.size(), &out), PageStatus::kOk);
  EXPECT_EQ(out, in);
}

template <class T>
Bytes samples(const std::vector<T>& v, size_t extra_bytes = 0) {
  Bytes b(v.size() * sizeof(T) + extra_bytes, 0xA5);
  std::memcpy(b.data(), v.data(), v.size() * sizeof(T));
  return b;
}

bp::Params params(bp::Type t, bp::Mode m, unsigned block, unsigned stride) {
  return {t, m, static_cast<uint16_t>(block), static_cast<uint8_t>(stride)};
}

// Golden bytes, worked out by hand from docs/FORMAT.md 4.1.
TEST(BitpackLayout, PlainBlockIsRateSignsPlanesThenTail) {
  // Samples 1, -2, 3, 0 and one trailing byte; no prediction. Magnitudes 1, 2, 3, 0 (rate 2), sample 1
  // negative.
  const Bytes in = samples<int16_t>({1, -2, 3, 0}, 1);
  const bp::Params p = params(bp::Type::kInt16, bp::Mode::kPlain, 4, 0);
  // rate 2 | signs 0b0010 | plane 0: 1,0,1,0 -> 0b0101 | plane 1: 0,1,1,0 -> 0b0110 | tail 0xA5
  EXPECT_EQ(encode(in, p), (Bytes{0x02, 0x02, 0x05, 0x06, 0xA5}));
  expect_round_trip(in, p);
}

TEST(BitpackLayout, OutlierBlockStoresTheFirstDifferenceWhole) {
  // Differences 1000, 1, 2, -1: plain needs rate 10 (11 bytes), the outlier form 2 + 3 bytes.
  const Bytes in = samples<int16_t>({1000, 1001, 1003, 1002});
  const bp::Params p = params(bp::Type::kInt16, bp::Mode::kOutlier, 4, 1);
  // rate 2, sel 0b011 (outlier, 2 bytes) | 1000 LE | signs 0b1000 | plane 0: 0,1,0,1 | plane 1: 0,0,1,0
  EXPECT_EQ(encode(in, p), (Bytes{0x02, 0x03, 0xE8, 0x03, 0x08, 0x0A, 0x04}));
  expect_round_trip(in, p);
}

TEST(BitpackLayout, AllZeroBlocksCostOnlyTheirMetadata) {
  for (bp::Mode m : {bp::Mode::kPlain, bp::Mode::kOutlier}) {
    const bp::Params p = params(bp::Type::kInt32, m, 32, 1);
    const Bytes in(4096, 0);
    const Bytes page = encode(in, p);
    EXPECT_EQ(page.size(), (4096 / 4 / 32) * (m == bp::Mode::kPlain ? 1u : 2u));
    EXPECT_EQ(page, Bytes(page.size(), 0));
    expect_round_trip(in, p);
  }
}

TEST(BitpackLayout, Int32MinNeedsBitWidth32) {
  const bp::Params p = params(bp::Type::kInt32, bp::Mode::kPlain, 8, 0);
  const int32_t lo = std::numeric_limits<int32_t>::min();
  const Bytes in = samples<int32_t>({lo, 0, lo, 1, -1, lo, 7, lo});
  const Bytes page = encode(in, p);
  EXPECT_EQ(page[0], 32);               // the rate byte holds 32, which cuSZp2's 5 bits cannot
  EXPECT_EQ(page.size(), 1u + 33 * 1);  // signs and 32 planes of one byte
  expect_round_trip(in, p);
}

TEST(BitpackLayout, Int16MinNeedsBitWidth16) {
  const bp::Params p = params(bp::Type::kInt16, bp::Mode::kPlain, 8, 0);
  const int16_t lo = std::numeric_limits<int16_t>::min();
  const Bytes in = samples<int16_t>({lo, lo, 0, 32767, -32767, lo, 1, -1});
  EXPECT_EQ(encode(in, p)[0], 16);
  expect_round_trip(in, p);
}

TEST(BitpackLayout, OutlierOfInt32MinTakesFourBytes) {
  const bp::Params p = params(bp::Type::kInt32, bp::Mode::kOutlier, 16, 1);
  const int32_t lo = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> v(16, lo);
  v[5] = lo + 3;
  const Bytes page = encode(samples(v), p);
  EXPECT_EQ(page[0], 2);                  // differences after the first: 0 and +-3
  EXPECT_EQ(page[1], 1u | (4 - 1) << 1);  // the outlier, 4 bytes
  expect_round_trip(samples(v), p);
}

TEST(BitpackLayout, ShortPagesAreTailOnly) {
  for (bp::Type t : {bp::Type::kInt16, bp::Type::kInt32}) {
    for (size_t n = 0; n < bp::sample_bytes(t); ++n) {
      const Bytes in(n, 0x5A);
      const bp::Params p = params(t, bp::Mode::kOutlier, 32, 1);
      EXPECT_EQ(encode(in, p), in);  // no samples, no blocks: just the raw tail
      expect_round_trip(in, p);
    }
  }
}

// Data shapes that stress different parts of the coder.
Bytes make_data(int kind, size_t n, std::mt19937& rng) {
  Bytes b(n);
  switch (kind) {
    case 0:  // random bytes: full-rate blocks
      for (auto& x : b) x = static_cast<uint8_t>(rng());
      break;
    case 1:  // a random walk of 16-bit steps: smooth, far from zero, outliers pay
    {
      int32_t v = static_cast<int32_t>(rng());
      for (size_t i = 0; i + 1 < n; i += 2) {
        v += static_cast<int32_t>(rng() % 301) - 150;
        b[i] = static_cast<uint8_t>(v), b[i + 1] = static_cast<uint8_t>(v >> 8);
      }
      break;
    }
    case 2:  // sparse: mostly zero bytes, some blocks all zero
      for (auto& x : b) x = rng() % 16 == 0 ? static_cast<uint8_t>(rng()) : 0;
      break;
    case 3:  // the extremes: 0x80 00 and 0x7F FF patterns (INT_MIN, INT_MAX) and zeros
      for (size_t i = 0; i < n; ++i) b[i] = (i % 4 == 3) ? 0x80 : (rng() % 3 == 0 ? 0xFF : 0x00);
      break;
  }
  return b;
}

TEST(BitpackRoundTrip, EveryTypeModeBlockSizeAndStride) {
  std::mt19937 rng(12345);
  const unsigned blocks[] = {1, 2, 7, 8, 9, 16, 31, 32, 33, 64, 100, 128, 1023, 1024};
  for (bp::Type t : {bp::Type::kInt16, bp::Type::kInt32}) {
    for (bp::Mode m : {bp::Mode::kPlain, bp::Mode::kOutlier}) {
      for (unsigned block : blocks) {
        for (unsigned stride : {0u, 1u, 2u, 3u, 6u, 15u}) {
          if (stride != 0 && stride >= block) continue;
          const bp::Params p = params(t, m, block, stride);
          for (int kind = 0; kind < 4; ++kind) {
            // Sizes: a whole page, partial last blocks, and partial last samples.
            for (size_t n : {size_t{65536}, size_t{4097}, size_t{3 * block * 4 + 2}, size_t{1}, size_t{2}}) {
              SCOPED_TRACE(testing::Message() << "type " << int(t) << " mode " << int(m) << " block " << block
                                              << " stride " << stride << " kind " << kind << " n " << n);
              expect_round_trip(make_data(kind, n, rng), p);
            }
          }
        }
      }
    }
  }
}

// The portable decoder has a code path per count of planes in a byte lane (1..8), per count of byte
// lanes in use, and for whole 32- and 64-sample blocks; the vector paths one per vector block size
// (16, 32, 64, 128): every rate of both types, with block sizes that take each path (and 100, which
// none of the vector paths take), whole blocks and a partial last one.
TEST(BitpackRoundTrip, EveryRateOnEveryBlockPath) {
  std::mt19937 rng(99);
  for (bp::Type t : {bp::Type::kInt16, bp::Type::kInt32}) {
    const unsigned bits = 8 * bp::sample_bytes(t);
    for (unsigned block : {16u, 32u, 64u, 100u, 128u}) {
      for (unsigned rate = 1; rate <= bits; ++rate) {
        SCOPED_TRACE(testing::Message() << "type " << int(t) << " block " << block << " rate " << rate);
        // No prediction: every sample is its own difference, a magnitude below 2^rate with a random
        // sign, and the first of each block exactly 2^rate - 1 (or INT_MIN at the top rate).
        const size_t n = 5 * block + 37;
        std::vector<int64_t> v(n);
        for (size_t i = 0; i < n; ++i) {
          const uint64_t mag =
              i % block == 0 ? (uint64_t{1} << rate) - 1 : rng() & ((uint64_t{1} << rate) - 1);
          v[i] = rng() % 2 ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
          if (rate == bits && i % block == 0) v[i] = -(int64_t{1} << (bits - 1));
        }
        Bytes in;
        for (int64_t x : v)
          for (unsigned q = 0; q < bits / 8; ++q)
            in.push_back(static_cast<uint8_t>(static_cast<uint64_t>(x) >> (8 * q)));
        const bp::Params p = params(t, bp::Mode::kPlain, block, 0);
        const Bytes page = encode(in, p);
        ASSERT_FALSE(page.empty());
        EXPECT_EQ(page[0], rate);
        expect_round_trip(in, p);
      }
    }
  }
}

TEST(BitpackRoundTrip, StrideMatchesInterleavedChannels) {
  // Two interleaved channels far apart: stride 2 differences each against its own channel, and in
  // outlier mode each block's first sample of both channels is an outlier.
  std::vector<int16_t> v;
  for (int i = 0; i < 4096; ++i) v.push_back(static_cast<int16_t>(10000 + i % 50)), v.push_back(-20000);
  const Bytes in = samples(v);
  const bp::Params p2 = params(bp::Type::kInt16, bp::Mode::kOutlier, 32, 2);
  const size_t s1 = encode(in, params(bp::Type::kInt16, bp::Mode::kOutlier, 32, 1)).size();
  const size_t s2 = encode(in, p2).size();
  EXPECT_LT(s2 * 2, s1);
  const Bytes page = encode(in, p2);
  EXPECT_EQ(page[1], 1u | (2 - 1) << 1);  // two-byte outliers
  expect_round_trip(in, p2);
}

TEST(BitpackRoundTrip, OutlierModeHelpsSmoothDataAwayFromZero) {
  std::mt19937 rng(7);
  const Bytes in = make_data(1, 65536, rng);
  const size_t plain = encode(in, params(bp::Type::kInt16, bp::Mode::kPlain, 32, 1)).size();
  const size_t outlier = encode(in, params(bp::Type::kInt16, bp::Mode::kOutlier, 32, 1)).size();
  EXPECT_LT(outlier, plain);
}

TEST(BitpackCompress, TooSmallOutputAndBadParamsGiveZero) {
  std::mt19937 rng(3);
  const Bytes in = make_data(0, 1000, rng);
  const bp::Params p = params(bp::Type::kInt16, bp::Mode::kOutlier, 32, 1);
  const size_t n = bp::compressed_size(in.data(), in.size(), p);
  ASSERT_LE(n, bp::compress_bound(in.size(), p));
  Bytes out(n);
  EXPECT_EQ(bp::compress(in.data(), in.size(), p, out.data(), n - 1), 0u);
  EXPECT_EQ(bp::compress(in.data(), in.size(), p, out.data(), n), n);
  EXPECT_EQ(
      bp::compress(in.data(), in.size(), params(bp::Type::kInt16, bp::Mode::kPlain, 4, 4), out.data(), n),
      0u);
}

TEST(BitpackParam, PackingRoundTripsAndRefusesNonCanonicalStrides) {
  size_t accepted = 0;
  for (uint32_t v = 0; v <= 0xFFFF; ++v) {
    const auto p = bp::from_param(static_cast<uint16_t>(v));
    if (!p) continue;
    ++accepted;
    EXPECT_EQ(bp::to_param(*p), v);
    EXPECT_TRUE(p->stride == 0 || p->stride < p->block);
  }
  EXPECT_GT(accepted, 60000u);
  EXPECT_LT(accepted, 65536u);
  EXPECT_EQ(bp::to_param(params(bp::Type::kInt32, bp::Mode::kOutlier, 32, 2)), 1 | 2 | 31 << 2 | 2 << 12);
  EXPECT_FALSE(bp::from_param(bp::to_param(params(bp::Type::kInt16, bp::Mode::kPlain, 1, 0)) | 1 << 12));
  EXPECT_FALSE(bp::valid(params(bp::Type::kInt16, bp::Mode::kPlain, 0, 0)));
  EXPECT_FALSE(bp::valid(params(bp::Type::kInt16, bp::Mode::kPlain, 1025, 0)));
  EXPECT_FALSE(bp::valid(params(bp::Type::kInt16, bp::Mode::kPlain, 32, 16)));
}

// Malformed input: every one is an error status, never a crash or an out-of-bounds access.
class BitpackMalformed : public testing::Test {
 protected:
  const bp::Params plain16 = params(bp::Type::kInt16, bp::Mode::kPlain, 4, 0);
  const bp::Params outlier16 = params(bp::Type::kInt16, bp::Mode::kOutlier, 4, 1);
  const Bytes good = {0x02, 0x02, 0x05, 0x06, 0xA5};  // PlainBlockIsRateSignsPlanesThenTail
  Bytes out;
};

TEST_F(BitpackMalformed, TruncatedOrTrailingBytes) {
  ASSERT_EQ(decode(good, plain16, 9, &out), PageStatus::kOk);
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_EQ(decode(Bytes(good.begin(), good.begin() + n), plain16, 9, nullptr), PageStatus::kBadData) << n;
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_EQ(decode(longer, plain16, 9, nullptr), PageStatus::kBadData);
}

TEST_F(BitpackMalformed, WrongOutputSizeDoesNotAddUp) {
  EXPECT_EQ(decode(good, plain16, 8, nullptr), PageStatus::kBadData);
  EXPECT_EQ(decode(good, plain16, 10, nullptr), PageStatus::kBadData);
  EXPECT_EQ(decode(good, plain16, 0, nullptr), PageStatus::kBadData);
}

TEST_F(BitpackMalformed, RateAboveTheSampleWidth) {
  // Rate 17 for int16, with its 18 bytes present: sizes add up, the rate is what is wrong.
  Bytes page(1 + 18, 0);
  page[0] = 17;
  EXPECT_EQ(decode(page, plain16, 8, nullptr), PageStatus::kBadData);
  page[0] = 16;
  page.pop_back();
  EXPECT_EQ(decode(page, plain16, 8, nullptr), PageStatus::kOk);
  const bp::Params p32 = params(bp::Type::kInt32, bp::Mode::kPlain, 4, 0);
  Bytes page32(1 + 34, 0);
  page32[0] = 33;
  EXPECT_EQ(decode(page32, p32, 16, nullptr), PageStatus::kBadData);
}

TEST_F(BitpackMalformed, BadSelectors) {
  // A block with rate 0 and an outlier of 1 byte is 2 + 1 bytes; each broken selector must be refused.
  EXPECT_EQ(decode(Bytes{0x00, 0x01, 0x7F}, outlier16, 8, &out), PageStatus::kOk);
  EXPECT_EQ(out, samples<int16_t>({127, 127, 127, 127}));
  EXPECT_EQ(decode(Bytes{0x00, 0x02, 0x7F}, outlier16, 8, nullptr), PageStatus::kBadData);  // size, no flag
  EXPECT_EQ(decode(Bytes{0x00, 0x09, 0x7F}, outlier16, 8, nullptr), PageStatus::kBadData);  // high bits
  EXPECT_EQ(decode(Bytes{0x00, 0x05, 0x7F, 0, 0}, outlier16, 8, nullptr),
            PageStatus::kBadData);  // 3 bytes for int16
}

TEST_F(BitpackMalformed, InvalidParams) {
  EXPECT_EQ(decode(good, params(bp::Type::kInt16, bp::Mode::kPlain, 0, 0), 9, nullptr),
            PageStatus::kUnsupported);
  EXPECT_EQ(decode(good, params(bp::Type::kInt16, bp::Mode::kPlain, 4, 4), 9, nullptr),
            PageStatus::kUnsupported);
}

TEST(BitpackCorruption, RandomDamageNeverCrashesAndPathsAgree) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 3000; ++iter) {
    const bp::Params p = params(rng() % 2 ? bp::Type::kInt32 : bp::Type::kInt16,
                                rng() % 2 ? bp::Mode::kOutlier : bp::Mode::kPlain,
                                rng() % 3 ? 16u << rng() % 4 : 1 + rng() % 64, rng() % 4);
    if (!bp::valid(p)) continue;
    const size_t n = rng() % 2000;
    Bytes page = encode(make_data(static_cast<int>(rng() % 4), n, rng), p);
    if (page.empty()) continue;
    switch (rng() % 3) {
      case 0:
        page[rng() % page.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        page.resize(rng() % page.size());
        break;
      default:
        page[rng() % page.size()] = static_cast<uint8_t>(rng());
    }
    // Status checked inside: both paths must agree, on exact-size buffers.
    const PageStatus s = decode(page, p, n, nullptr);
    EXPECT_TRUE(s == PageStatus::kOk || s == PageStatus::kBadData);
  }
}

}  // namespace
}  // namespace gdfs::test
