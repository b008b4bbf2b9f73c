// Damaged input must never crash or touch memory outside the buffers (run under ASan/UBSan to prove it)
// and must always produce a status. Truncation is always detectable, because a page ends exactly at
// the last word the refill rule loads; a flipped bit may still form a valid page, so flips only demand
// a sane status and an undamaged decoder afterwards.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"

namespace gdfs::test {
namespace {

bool valid_status(PageStatus s) {
  return s == PageStatus::kOk || s == PageStatus::kBadData || s == PageStatus::kSizeMismatch;
}

struct Page {
  std::string name;
  Bytes raw, gdf;
};

Page vector_page(const std::string& name, int level) {
  VectorCase c;
  c.name = name;
  c.level = level;
  Page p{c.gdf_path(), {}, {}};
  EXPECT_TRUE(read_file(c.raw_path(), &p.raw)) << c.raw_path();
  EXPECT_TRUE(read_file(c.gdf_path(), &p.gdf)) << c.gdf_path();
  return p;
}

// A spread of block types: stored, fixed/dynamic Huffman, multi-block, long matches, far distances.
std::vector<Page> vector_pages() {
  return {vector_page("empty", 0),      vector_page("text_129", 1),        vector_page("text_4095", 0),
          vector_page("text_4095", 6),  vector_page("zeros_65536", 6),     vector_page("runs", 12),
          vector_page("lenbound", 1),   vector_page("far_tokens", 9),      vector_page("periodic", 2),
          vector_page("gpl3_full", 12), vector_page("random_then_text", 4)};
}

// Our own encoder's pages of a text-like input at several levels.
std::vector<Page> own_pages() {
  Bytes raw;
  for (int i = 0; raw.size() < 40000; ++i) {
    const std::string line =
        "line " + std::to_string(i * 7919 % 1000) + ": decode the lane, copy the match\n";
    raw.insert(raw.end(), line.begin(), line.end());
  }
  std::vector<Page> pages;
  for (int level : {0, 1, 6, 12}) {
    gdeflate::Compressor c(level);
    pages.push_back({"own L" + std::to_string(level), raw, encode(c, raw)});
  }
  return pages;
}

// Every decoder implementation, each reused across inputs (a failed decode must not poison the next
// one). They must agree on the status of every input, and on the bytes whenever it is kOk.
class DualDecoder {
 public:
  PageStatus run(const ExactBuf& in, size_t out_size, Bytes* out = nullptr) {
    ExactBuf a(out_size), c(out_size);
    GuardedBuf b(out_size);  // AVX-512: masked vector stores, which ASan does not check
    const PageStatus s = scalar_.decompress(in.data(), in.size(), a.data(), a.size());
    const PageStatus t = simd_.decompress(in.data(), in.size(), b.data(), b.size());
    const PageStatus u = avx2_.decompress(in.data(), in.size(), c.data(), c.size());
    EXPECT_TRUE(b.intact()) << "the AVX-512 decoder wrote outside its " << out_size << "-byte page";
    EXPECT_TRUE(valid_status(s) && valid_status(t) && valid_status(u));
    EXPECT_EQ(s, t) << "scalar and AVX-512 decoders disagree";
    EXPECT_EQ(s, u) << "scalar and AVX2 decoders disagree";
    if (s == PageStatus::kOk && t == PageStatus::kOk) {
      EXPECT_TRUE(std::equal(a.data(), a.data() + out_size, b.data()))
          << "AVX-512 decoder produces other bytes";
    }
    if (s == PageStatus::kOk && u == PageStatus::kOk) {
      EXPECT_TRUE(std::equal(a.data(), a.data() + out_size, c.data())) << "AVX2 decoder produces other bytes";
    }
    if (out) *out = a.bytes();
    return s;
  }

 private:
  gdeflate::Decompressor scalar_{gdeflate::DecodePath::kScalar}, simd_{gdeflate::DecodePath::kAvx512},
      avx2_{gdeflate::DecodePath::kAvx2};
};

void check_truncations(const Page& p, size_t step) {
  DualDecoder d;
  for (size_t len = 0; len < p.gdf.size(); len += step) {
    const PageStatus s = d.run(ExactBuf(p.gdf.data(), len), p.raw.size());
    ASSERT_NE(s, PageStatus::kOk) << p.name << " truncated to " << len;
  }
}

TEST(Corruption, TruncatedVectorsAreRejected) {
  for (const Page& p : vector_pages()) check_truncations(p, 4);
  for (const Page& p : {vector_page("text_129", 12), vector_page("text_4095", 1)}) check_truncations(p, 1);
}

TEST(Corruption, TruncatedOwnPagesAreRejected) {
  for (const Page& p : own_pages()) {
    ASSERT_FALSE(p.gdf.empty()) << p.name;
    check_truncations(p, 4);
  }
}

// Flips bits (every bit of small pages, a seeded sample of big ones). After each damaged decode the same
// Decompressor must still decode the intact page: a failed decode must not poison its state.
// Flips bits (every bit of small pages, a seeded sample of big ones). Every so often the same decoders
// must still decode the intact page correctly.
void check_bit_flips(const Page& p, size_t max_flips, uint64_t seed) {
  DualDecoder d;
  const size_t nbits = 8 * p.gdf.size();
  std::mt19937_64 rng(seed);
  size_t oks = 0;
  for (size_t k = 0; k < std::min(nbits, max_flips); ++k) {
    const size_t bit = nbits <= max_flips ? k : rng() % nbits;
    ExactBuf in(p.gdf);
    in.data()[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    oks += d.run(in, p.raw.size()) == PageStatus::kOk;
    if (k % 64 == 0) {
      Bytes out;
      ASSERT_EQ(d.run(ExactBuf(p.gdf), p.raw.size(), &out), PageStatus::kOk) << p.name;
      ASSERT_TRUE(out == p.raw) << p.name << " after flip of bit " << bit;
    }
    if (::testing::Test::HasFailure()) return;  // one report per page is enough
  }
  ::testing::Test::RecordProperty(p.name, static_cast<int>(oks));
}

TEST(Corruption, BitFlippedVectorsGiveAStatus) {
  uint64_t seed = 1;
  for (const Page& p : vector_pages()) check_bit_flips(p, 3000, seed++);
}

TEST(Corruption, BitFlippedOwnPagesGiveAStatus) {
  uint64_t seed = 100;
  for (const Page& p : own_pages()) check_bit_flips(p, 3000, seed++);
}

// The first block's dynamic header lies in the first few hundred bytes of a page: every bit there
// flipped, so that the code-length rounds (AVX-512: whole rounds side by side, the scalar code the rest)
// meet bad codes, over-long runs, repeats with nothing before them and headers that end anywhere.
TEST(Corruption, BitFlipsInTheFirstHeaderGiveTheSameStatus) {
  DualDecoder d;
  for (const Page& p : own_pages()) {
    for (size_t bit = 0; bit < std::min<size_t>(8 * p.gdf.size(), 8 * 384); ++bit) {
      ExactBuf in(p.gdf);
      in.data()[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      d.run(in, p.raw.size());
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(Corruption, OverwrittenAndSwappedWords) {
  std::mt19937_64 rng(77);
  DualDecoder d;
  for (const Page& p : vector_pages()) {
    const size_t words = p.gdf.size() / 4;
    for (int iter = 0; iter < 300; ++iter) {
      ExactBuf in(p.gdf);
      const size_t a = rng() % words, b = rng() % words;
      if (iter % 2) {
        for (int i = 0; i < 4; ++i) std::swap(in.data()[4 * a + i], in.data()[4 * b + i]);
      } else {
        for (int i = 0; i < 4; ++i) in.data()[4 * a + i] = static_cast<uint8_t>(rng());
      }
      d.run(in, p.raw.size());
    }
  }
}

TEST(Corruption, GarbageOfManySizes) {
  DualDecoder d;
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 700; ++n) sizes.push_back(n);
  for (size_t n : {4096u, 65536u, 65672u, 65744u, 70000u}) sizes.push_back(n);
  uint64_t seed = 0;
  for (size_t n : sizes) {
    for (size_t out_size : {size_t{0}, size_t{1}, size_t{100}, n, size_t{65536}, size_t{65537}}) {
      const PageStatus s = d.run(ExactBuf(random_bytes(n, ++seed)), out_size);
      // docs/GDEFLATE.md: not whole words, or too short for the first refill, is bad data.
      // (An expected size over 64 KiB is a size mismatch first; either check may win there.)
      if ((n % 4 != 0 || n < 132) && out_size <= gdeflate::kMaxPageBytes) {
        ASSERT_EQ(s, PageStatus::kBadData) << n << " bytes can't be a page";
      }
    }
  }
}

TEST(Corruption, AllZeroAndAllOnesInputs) {
  DualDecoder d;
  for (uint8_t fill : {uint8_t{0x00}, uint8_t{0xFF}}) {
    for (size_t n : {0u, 4u, 128u, 132u, 136u, 1024u, 65536u, 65672u, 70000u}) {
      for (size_t out_size : {0u, 1u, 32u, 65536u}) {
        // All zeros is an endless chain of empty non-final stored blocks; all ones is BTYPE 3.
        EXPECT_EQ(d.run(ExactBuf(Bytes(n, fill)), out_size), PageStatus::kBadData)
            << int{fill} << " x " << n << " -> " << out_size;
      }
    }
  }
}

}  // namespace
}  // namespace gdfs::test
