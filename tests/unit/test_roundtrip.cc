// Compress -> decompress round trips at every level on edge cases and real data, the stored-size bound
// for every page, exact-capacity behaviour, and determinism.
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "real_data.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

using gdeflate::Compressor;

struct Input {
  std::string name;
  Bytes data;
};

Bytes pseudo_text(size_t n, uint64_t seed) {
  static const char* words[] = {"the ", "page ", "decoder ", "lane ",     "block ",   "of ", "and ",
                                "GPU ", "copy ", "distance", "Huffman\n", "length, ", "to ", "a "};
  std::mt19937_64 rng(seed);
  Bytes b;
  while (b.size() < n) {
    const char* w = words[rng() % std::size(words)];
    b.insert(b.end(), w, w + std::char_traits<char>::length(w));
  }
  b.resize(n);
  return b;
}

Bytes runs(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b;
  while (b.size() < n) b.insert(b.end(), 1 + rng() % 3000, static_cast<uint8_t>(rng()));
  b.resize(n);
  return b;
}

// Random data with copies at distances beyond DEFLATE's 32 KiB window, up to the 64 KiB page.
Bytes far_repeats() {
  Bytes b = random_bytes(65536, 5);
  const struct {
    size_t dist, pos, len;
  } copies[] = {{32768, 32800, 300}, {32769, 33500, 300},  {49152, 50000, 300},
                {49153, 51000, 300}, {60000, 64000, 1500}, {65500, 65510, 26}};
  for (const auto& c : copies) {
    for (size_t i = 0; i < c.len; ++i) b[c.pos + i] = b[c.pos - c.dist + i];
  }
  return b;
}

Bytes periodic() {
  Bytes b;
  std::mt19937_64 rng(11);
  for (size_t period = 1; b.size() < 65536; period = period % 300 + 1) {
    const Bytes unit = random_bytes(period, period);
    for (int rep = 0; rep < 20; ++rep) b.insert(b.end(), unit.begin(), unit.end());
    for (int k = 0; k < 7; ++k) b.push_back(static_cast<uint8_t>(rng()));
  }
  b.resize(65536);
  return b;
}

Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes r = a;
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

std::vector<Input> edge_inputs() {
  std::vector<Input> in;
  in.push_back({"empty", {}});
  for (size_t n = 1; n <= 129; ++n) {
    in.push_back({"text_" + std::to_string(n), pseudo_text(n, n)});
    in.push_back({"random_" + std::to_string(n), random_bytes(n, n)});
    in.push_back({"zeros_" + std::to_string(n), Bytes(n, 0)});
  }
  for (size_t n : {4095u, 4096u, 65535u, 65536u}) {
    in.push_back({"text_" + std::to_string(n), pseudo_text(n, 3)});
    in.push_back({"random_" + std::to_string(n), random_bytes(n, 4)});
    in.push_back({"zeros_" + std::to_string(n), Bytes(n, 0)});
  }
  in.push_back({"runs", runs(65536, 8)});
  in.push_back({"a_then_65535_b", concat(Bytes(1, 'a'), Bytes(65535, 'b'))});
  in.push_back({"far_repeats", far_repeats()});
  in.push_back({"periodic", periodic()});
  in.push_back({"text_repeat_at_35000", concat(pseudo_text(35000, 9), Bytes(30536, 0))});
  std::copy_n(in.back().data.begin(), 30536, in.back().data.begin() + 35000);
  in.push_back({"text_then_random", concat(pseudo_text(25536, 1), random_bytes(40000, 2))});
  in.push_back({"random_then_text", concat(random_bytes(40000, 2), pseudo_text(25536, 1))});
  Bytes bytes256(65536);
  for (size_t i = 0; i < bytes256.size(); ++i) bytes256[i] = static_cast<uint8_t>(i);
  in.push_back({"byte_ramp", bytes256});
  Bytes sparse(65536, 0);
  for (size_t i = 0; i < sparse.size(); i += 100) sparse[i] = static_cast<uint8_t>(i * 7 + 1);
  in.push_back({"sparse", sparse});
  return in;
}

// Every property a page of ours must have, for one input at one level.
void check_roundtrip(Compressor& c, const Bytes& raw, const std::string& what) {
  SCOPED_TRACE(what + " at level " + std::to_string(c.level()));
  const Bytes page = encode(c, raw);
  ASSERT_GT(page.size(), 0u) << "compress failed with a compress_bound() buffer";
  EXPECT_EQ(page.size() % 4, 0u);
  EXPECT_GE(page.size(), 132u);
  EXPECT_LE(page.size(), gdeflate::stored_size(raw.size())) << "page larger than its stored form";
  if (c.level() == 0) {
    EXPECT_EQ(page.size(), gdeflate::stored_size(raw.size()));
  }
  PageStatus s;
  const Bytes back = decode_both(page, raw.size(), &s);
  ASSERT_EQ(s, PageStatus::kOk) << page_status_message(s);
  ASSERT_TRUE(back == raw) << "decoded bytes differ";

  // An output buffer of exactly the page size suffices; one byte less yields 0 (or a smaller valid page).
  ExactBuf in(raw), exact(page.size()), short_buf(page.size() - 1);
  ASSERT_EQ(c.compress(in.data(), in.size(), exact.data(), exact.size()), page.size());
  EXPECT_TRUE(exact.bytes() == page);
  const size_t n = c.compress(in.data(), in.size(), short_buf.data(), short_buf.size());
  if (n != 0) {
    EXPECT_LE(n, short_buf.size());
    decode(Bytes(short_buf.data(), short_buf.data() + n), raw.size(), &s);
    EXPECT_EQ(s, PageStatus::kOk);
  }
}

class RoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(RoundTrip, EdgeCases) {
  Compressor c(GetParam());
  for (const Input& in : edge_inputs()) check_roundtrip(c, in.data, in.name);
}

TEST_P(RoundTrip, RealFileFirstPages) {
  const auto samples = real_samples(gdeflate::kMaxPageBytes);
  ASSERT_GE(samples.size(), 3u) << "found too little real data on this machine";
  Compressor c(GetParam());
  for (const Sample& s : samples) check_roundtrip(c, s.data, s.name);
}

TEST_P(RoundTrip, DeterministicAcrossObjectsAndHistory) {
  const int level = GetParam();
  const std::vector<Bytes> inputs = {pseudo_text(65536, 21), far_repeats(), runs(30000, 3),
                                     pseudo_text(77, 4)};
  Compressor first(level);
  std::vector<Bytes> pages;
  for (const Bytes& in : inputs) pages.push_back(encode(first, in));
  // Same object again, in reverse order (so each page follows different history).
  for (size_t i = inputs.size(); i-- > 0;) EXPECT_TRUE(encode(first, inputs[i]) == pages[i]) << i;
  Compressor fresh(level);
  for (size_t i = 0; i < inputs.size(); ++i) EXPECT_TRUE(encode(fresh, inputs[i]) == pages[i]) << i;
  Compressor moved(std::move(fresh));
  EXPECT_EQ(moved.level(), level);
  EXPECT_TRUE(encode(moved, inputs[0]) == pages[0]);
}

// Not just correct but useful: DEFLATE64's 64 KiB window and long matches must actually be used.
TEST_P(RoundTrip, UsesFarMatchesAndLongRuns) {
  if (GetParam() == 0) GTEST_SKIP() << "level 0 stores";
  Compressor c(GetParam());
  Bytes far = random_bytes(40000, 17);  // incompressible, then repeated at distance 40000
  far.insert(far.end(), far.begin(), far.begin() + 25536);
  EXPECT_LT(encode(c, far).size(), 41000u) << "the repeat at distance 40000 was not found";
  EXPECT_LE(encode(c, Bytes(65536, 0)).size(), 256u) << "65536 zeros";
  EXPECT_LE(encode(c, runs(65536, 8)).size(), 2048u) << "runs of 1..3000 bytes";
}

// Repeats of every period from 1 to 40 bytes, in runs of every length class (shorter than the period,
// up to several DEFLATE64 maximum matches), between literals: the match copies of the SIMD decoders
// take a different route for distance 1, below 16, below 32 and from 32 up, and literals between
// matches are placed with masked stores. decode_both checks every path against the scalar one.
TEST_P(RoundTrip, EveryShortDistanceAndRunLength) {
  if (GetParam() == 0) GTEST_SKIP() << "level 0 stores";
  Compressor c(GetParam());
  std::mt19937_64 rng(GetParam());
  Bytes raw;
  for (uint32_t period = 1; period <= 40; ++period) {
    for (uint32_t run : {1u, 3u, 7u, 15u, 31u, 64u, 100u, 258u, 700u}) {
      const size_t start = raw.size();
      for (uint32_t i = 0; i < period; ++i) raw.push_back(static_cast<uint8_t>(rng() >> 56));
      for (uint32_t i = 0; i < run; ++i) raw.push_back(raw[start + i % period]);
      for (int i = 0; i < 5; ++i) raw.push_back(static_cast<uint8_t>(rng() >> 56));  // literals between
    }
  }
  for (size_t at = 0; at < raw.size(); at += gdeflate::kMaxPageBytes) {
    const size_t n = std::min<size_t>(gdeflate::kMaxPageBytes, raw.size() - at);
    check_roundtrip(
        c, Bytes(raw.begin() + static_cast<ptrdiff_t>(at), raw.begin() + static_cast<ptrdiff_t>(at + n)),
        "short distances, page at " + std::to_string(at));
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevels, RoundTrip,
                         ::testing::Range(gdeflate::kMinLevel, gdeflate::kMaxLevel + 1));

// One object per thread is the documented model; hidden shared state (lazily built global tables,
// static scratch buffers) would show up here as different bytes.
TEST(CompressorApi, ThreadsWithOwnObjectsAgree) {
  std::vector<Bytes> inputs;
  for (uint64_t i = 0; i < 6; ++i) inputs.push_back(i % 2 ? runs(65536, i) : pseudo_text(65536, i));
  Compressor serial(6);
  std::vector<Bytes> expect;
  for (const Bytes& in : inputs) expect.push_back(encode(serial, in));
  std::vector<std::vector<Bytes>> pages(2), decoded(2);
  auto work = [&](size_t t) {
    Compressor c(6);
    gdeflate::Decompressor d;
    for (int rep = 0; rep < 3; ++rep) {
      for (const Bytes& in : inputs) {
        pages[t].push_back(encode(c, in));
        ExactBuf page(pages[t].back()), out(in.size());
        d.decompress(page.data(), page.size(), out.data(), out.size());
        decoded[t].push_back(out.bytes());
      }
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  for (size_t t = 0; t < 2; ++t) {
    for (size_t k = 0; k < pages[t].size(); ++k) {
      EXPECT_TRUE(pages[t][k] == expect[k % inputs.size()]) << "thread " << t << " page " << k;
      EXPECT_TRUE(decoded[t][k] == inputs[k % inputs.size()]) << "thread " << t << " page " << k;
    }
  }
}

TEST(CompressorApi, LevelIsValidated) {
  EXPECT_THROW(Compressor(-1), std::invalid_argument);
  EXPECT_THROW(Compressor(13), std::invalid_argument);
  for (int l = 0; l <= 12; ++l) EXPECT_EQ(Compressor(l).level(), l);
  EXPECT_EQ(Compressor().level(), gdeflate::kDefaultLevel);
}

TEST(CompressorApi, BoundsAreConsistent) {
  EXPECT_EQ(gdeflate::stored_size(0), 132u);  // documented examples
  EXPECT_EQ(gdeflate::stored_size(65536), 65672u);
  for (size_t n = 0; n <= gdeflate::kMaxPageBytes; ++n) {
    const size_t st = gdeflate::stored_size(n);
    ASSERT_EQ(st % 4, 0u) << n;
    ASSERT_GE(gdeflate::compress_bound(n), st) << n;
    if (n) {
      ASSERT_GE(st, gdeflate::stored_size(n - 1)) << n;
    }
  }
}

TEST(CompressorApi, TinyOutputBufferGivesZero) {
  const Bytes raw = pseudo_text(1000, 1);
  for (int level : {0, 1, 6, 12}) {
    Compressor c(level);
    for (size_t cap : {0u, 1u, 4u, 100u, 131u}) {
      ExactBuf in(raw), out(cap);
      EXPECT_EQ(c.compress(in.data(), in.size(), out.data(), out.size()), 0u) << level << " cap " << cap;
    }
  }
}

}  // namespace
}  // namespace gdfs::test
