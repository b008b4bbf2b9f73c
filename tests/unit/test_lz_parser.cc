// LZ77 parsers, every level: tokens rebuild the page exactly, stay within DEFLATE64's bounds, never reach
// before the page start, are deterministic across reuse of one parser, and find the long and far matches
// a 64 KiB DEFLATE64 window allows.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lz/parser.h"

using gdfs::gdeflate::kMaxDist;
using gdfs::gdeflate::kMaxMatch;
using gdfs::gdeflate::kMinMatch;
using gdfs::gdeflate::make_parser;
using gdfs::gdeflate::Parser;
using gdfs::gdeflate::Token;
using gdfs::gdeflate::TokenVec;

namespace {

using Bytes = std::vector<uint8_t>;

// Reference LZ77 expander: byte-by-byte copy, so overlapping matches (dist < len) behave as in DEFLATE.
// Returns false on any token a decoder would reject.
bool expand(const TokenVec& toks, Bytes& out) {
  out.clear();
  for (const Token& t : toks) {
    if (t.is_literal()) {
      if (t.len > 255) return false;
      out.push_back(static_cast<uint8_t>(t.len));
      continue;
    }
    if (t.len < kMinMatch || t.len > kMaxMatch || t.dist > kMaxDist || t.dist > out.size()) return false;
    const size_t from = out.size() - t.dist;
    for (uint32_t i = 0; i < t.len; ++i) out.push_back(out[from + i]);
  }
  return true;
}

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// Text-like data: words from a small vocabulary, so there are many short and medium matches.
Bytes wordy(size_t n, uint32_t seed) {
  static const char* kWords[] = {"the ",     "quick ",   "brown ", "fox ",  "jumps ",
                                 "over ",    "lazy ",    "dog ",   "page ", "lane ",
                                 "huffman ", "deflate ", "\n",     "gpu ",  "kernel "};
  std::mt19937 rng(seed);
  Bytes b;
  while (b.size() < n) {
    const char* w = kWords[rng() % std::size(kWords)];
    b.insert(b.end(), w, w + std::strlen(w));
  }
  b.resize(n);
  return b;
}

// Parses and checks validity; returns the tokens.
TokenVec parse_checked(Parser& p, const Bytes& in, int level) {
  TokenVec toks;
  p.parse(in.data(), in.size(), toks);
  Bytes back;
  EXPECT_TRUE(expand(toks, back)) << "level " << level << " n " << in.size();
  EXPECT_EQ(back.size(), in.size()) << "level " << level;
  EXPECT_TRUE(back == in) << "level " << level << " n " << in.size();
  return toks;
}

bool same(const TokenVec& a, const TokenVec& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].len != b[i].len || a[i].dist != b[i].dist) return false;
  return true;
}

std::vector<Bytes> corpus() {
  std::vector<Bytes> c;
  for (size_t n : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 100, 4095, 4096, 65535, 65536}) {
    c.push_back(random_bytes(n, static_cast<uint32_t>(n)));
    c.push_back(Bytes(n, 0));
    c.push_back(wordy(n, static_cast<uint32_t>(n) + 7));
  }
  // Long runs between random stretches, and a run that ends exactly at the page end.
  Bytes runs = random_bytes(65536, 99);
  std::memset(runs.data() + 1000, 'a', 30000);
  std::memset(runs.data() + 40000, 0, 25536);
  c.push_back(runs);
  // Period-3 and period-1 patterns of awkward sizes (matches that overlap themselves).
  for (size_t n : {3, 4, 5, 6, 7, 65536}) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = "abc"[i % 3];
    c.push_back(b);
  }
  return c;
}

class LzLevel : public ::testing::TestWithParam<int> {};

TEST_P(LzLevel, RebuildsEveryInput) {
  const int level = GetParam();
  auto p = make_parser(level);
  for (const Bytes& in : corpus()) parse_checked(*p, in, level);
}

TEST_P(LzLevel, DeterministicAcrossReuse) {
  const int level = GetParam();
  auto p = make_parser(level);
  const Bytes a = wordy(65536, 1), b = random_bytes(65536, 2), c = wordy(30000, 3);
  const TokenVec first = parse_checked(*p, a, level);
  EXPECT_TRUE(same(first, parse_checked(*p, a, level)));
  parse_checked(*p, b, level);
  parse_checked(*p, c, level);
  EXPECT_TRUE(same(first, parse_checked(*p, a, level))) << "level " << level;
  auto fresh = make_parser(level);
  EXPECT_TRUE(same(first, parse_checked(*fresh, a, level))) << "level " << level;
}

TEST_P(LzLevel, ZerosBecomeOneLiteralAndOneMatch) {
  const int level = GetParam();
  auto p = make_parser(level);
  const TokenVec t = parse_checked(*p, Bytes(65536, 0), level);
  ASSERT_EQ(t.size(), 2u) << "level " << level;
  EXPECT_TRUE(t[0].is_literal());
  EXPECT_EQ(t[1].len, 65535u);
  EXPECT_EQ(t[1].dist, 1u);
}

TEST_P(LzLevel, RandomDataStaysMostlyLiterals) {
  const int level = GetParam();
  auto p = make_parser(level);
  const TokenVec t = parse_checked(*p, random_bytes(65536, 5), level);
  EXPECT_GT(t.size(), 60000u) << "level " << level;
}

// 20 KiB of random data repeated at distance 40000: only a window past 32 KiB can see it.
TEST_P(LzLevel, FindsRepeatsBeyond32KiB) {
  const int level = GetParam();
  if (level < 2) GTEST_SKIP() << "level 1 keeps one or two candidates per hash; not required";
  Bytes in = random_bytes(65536, 11);
  std::memcpy(in.data() + 40000, in.data(), 20000);
  auto p = make_parser(level);
  const TokenVec t = parse_checked(*p, in, level);
  uint64_t far_bytes = 0;
  for (const Token& k : t)
    if (!k.is_literal() && k.dist > 32768) far_bytes += k.len;
  EXPECT_GE(far_bytes, 19990u) << "level " << level;
}

TEST_P(LzLevel, ParsesMisalignedAndShortBuffersInPlace) {
  // The parser must not read past in[n-1]: parse from the tail of an exactly sized heap buffer, so
  // AddressSanitizer (when enabled) catches any over-read.
  const int level = GetParam();
  auto p = make_parser(level);
  for (size_t n = 0; n <= 40; ++n) {
    const Bytes src = wordy(n, 3);
    std::unique_ptr<uint8_t[]> exact(new uint8_t[n ? n : 1]);
    if (n) std::memcpy(exact.get(), src.data(), n);
    TokenVec toks;
    p->parse(exact.get(), n, toks);
    Bytes back;
    ASSERT_TRUE(expand(toks, back));
    EXPECT_TRUE(back == src) << "level " << level << " n " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevels, LzLevel, ::testing::Range(1, 13));

TEST(LzParser, RejectsBadLevels) {
  EXPECT_THROW(make_parser(0), std::invalid_argument);
  EXPECT_THROW(make_parser(13), std::invalid_argument);
}

}  // namespace
