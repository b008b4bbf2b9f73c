// Block splitting: the blocks tile the token stream in order, their statistics are their tokens', and the
// exhaustive split (levels 4-7 on estimates, 10-12 on exact costs) costs no more bits than the greedy
// merge it replaced.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "block_split.h"
#include "lz/parser.h"

namespace gdfs::gdeflate {
namespace {

using Bytes = std::vector<uint8_t>;

// A page whose halves differ (text, then noisy binary-like bytes, then text of another vocabulary), so
// the best split is not one block.
Bytes mixed_page(uint32_t seed) {
  static const char* kText[] = {"func ", "return ", "err ", "nil ", "if ", ":= ", "\n\t", "struct "};
  static const char* kProse[] = {"the ", "page ", "lane ", "of ", "and ", "block ", ". ", "\n"};
  std::mt19937 rng(seed);
  Bytes b;
  auto words = [&](const char* const* w, size_t n, size_t bytes) {
    for (const size_t end = b.size() + bytes; b.size() < end;) {
      const char* s = w[rng() % n];
      b.insert(b.end(), s, s + std::strlen(s));
    }
  };
  words(kText, std::size(kText), 20000);
  for (int i = 0; i < 16000; ++i) b.push_back(static_cast<uint8_t>(rng() % 40 + (i % 7) * 30));
  words(kProse, std::size(kProse), 65536 - b.size());
  b.resize(65536);
  return b;
}

uint64_t total_bits(const std::vector<BlockRange>& blocks) {
  uint64_t bits = 0;
  for (const BlockRange& r : blocks) {
    BlockCodes c;
    c.build_dynamic(r.stats);
    bits += 3 + c.header_bits + c.data_bits(r.stats);
  }
  return bits;
}

void expect_tiling(const std::vector<BlockRange>& blocks, const Token* t, size_t nt, size_t n) {
  ASSERT_FALSE(blocks.empty());
  EXPECT_EQ(blocks.front().tok_begin, 0u);
  EXPECT_EQ(blocks.front().byte_begin, 0u);
  EXPECT_EQ(blocks.back().tok_end, nt);
  EXPECT_EQ(blocks.back().byte_end, n);
  for (size_t k = 0; k < blocks.size(); ++k) {
    const BlockRange& r = blocks[k];
    if (k > 0) {
      EXPECT_EQ(r.tok_begin, blocks[k - 1].tok_end);
      EXPECT_EQ(r.byte_begin, blocks[k - 1].byte_end);
    }
    BlockStats want;
    size_t bytes = 0;
    for (size_t i = r.tok_begin; i < r.tok_end; ++i) {
      want.add(token_symbol(t[i]));
      bytes += t[i].is_literal() ? 1 : t[i].len;
    }
    EXPECT_EQ(bytes, r.byte_end - r.byte_begin);
    EXPECT_EQ(want.litlen, r.stats.litlen);
    EXPECT_EQ(want.extra_bits, r.stats.extra_bits);
    for (unsigned d = 0; d < kNumDistSyms; ++d) EXPECT_EQ(want.dist[d], r.stats.dist[d]) << "dist " << d;
  }
}

// One mixed page parsed at `level`, then split both ways at `segment` bytes.
struct Splits {
  Bytes page;
  TokenVec tokens;
  std::vector<Sym> syms;
  std::vector<BlockRange> greedy, best;
};

Splits split_both_ways(int level, uint32_t seed, size_t segment, bool exact) {
  Splits r;
  r.page = mixed_page(seed);
  make_parser(level)->parse(r.page.data(), r.page.size(), r.tokens);
  r.syms.resize(r.tokens.size());
  split_blocks(r.tokens.data(), r.tokens.size(), SplitParams{segment, exact, false}, r.syms.data(), r.greedy);
  split_blocks(r.tokens.data(), r.tokens.size(), SplitParams{segment, exact, true}, r.syms.data(), r.best);
  return r;
}

TEST(BlockSplit, ExhaustiveSplitTilesTheTokensAndNeverCostsMoreThanTheGreedyMerge) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Splits r = split_both_ways(9, seed, 4096, true);
    expect_tiling(r.greedy, r.tokens.data(), r.tokens.size(), r.page.size());
    expect_tiling(r.best, r.tokens.data(), r.tokens.size(), r.page.size());
    EXPECT_LE(total_bits(r.best), total_bits(r.greedy)) << "seed " << seed;
    EXPECT_GT(r.best.size(), 1u) << "seed " << seed << ": the page's three parts want blocks of their own";
    for (size_t i = 0; i < r.tokens.size(); ++i) {
      const Sym want = token_symbol(r.tokens[i]);
      ASSERT_EQ(std::memcmp(&want, &r.syms[i], sizeof want), 0) << "symbols of token " << i;
    }
  }
}

TEST(BlockSplit, LevelsFourToSevenAndTenToTwelveSplitExhaustively) {
  for (int level = 1; level <= 12; ++level) {
    const bool want = (level >= 4 && level <= 7) || level >= 10;
    EXPECT_EQ(split_params_for_level(level).optimal, want) << "level " << level;
    EXPECT_EQ(split_params_for_level(level).pairs, level == 7) << "level " << level;
  }
}

TEST(BlockSplit, ExhaustiveSplitOnEstimatesCostsNoMoreRealBitsOnAMixedPage) {
  const Splits r = split_both_ways(6, 7, 8192, false);
  expect_tiling(r.best, r.tokens.data(), r.tokens.size(), r.page.size());
  // Real bits, not the estimate both minimise: the exhaustive split should not lose on this page.
  EXPECT_LE(total_bits(r.best), total_bits(r.greedy));
}

// Levels 1-7 hand the encoder symbols and segments counted while parsing; they must be exactly what
// parsing to tokens and scanning them would give, or blocks (and so pages) would differ.
TEST(BlockSplit, SegmentsCountedWhileParsingMatchTheTokenScan) {
  for (int level = 1; level <= 7; ++level) {
    for (uint32_t seed = 1; seed <= 2; ++seed) {
      const Bytes page = mixed_page(seed);
      const SplitParams p = split_params_for_level(level);
      auto parser = make_parser(level);
      std::vector<Sym> fused(page.size()), scanned(page.size());
      std::vector<BlockRange> segs, from_fused, from_scan;
      const size_t nt = parser->parse_segments(page.data(), page.size(), p.segment_bytes, fused.data(), segs);
      ASSERT_NE(nt, SIZE_MAX) << "level " << level << " should count its own segments";
      merge_segments(segs, p, from_fused);
      TokenVec tokens;
      parser->parse(page.data(), page.size(), tokens);
      ASSERT_EQ(nt, tokens.size()) << "level " << level;
      split_blocks(tokens.data(), tokens.size(), p, scanned.data(), from_scan);
      ASSERT_EQ(std::memcmp(fused.data(), scanned.data(), nt * sizeof(Sym)), 0) << "level " << level;
      ASSERT_EQ(from_fused.size(), from_scan.size()) << "level " << level;
      for (size_t k = 0; k < from_scan.size(); ++k) {
        EXPECT_EQ(from_fused[k].tok_end, from_scan[k].tok_end) << "level " << level << " block " << k;
        EXPECT_EQ(from_fused[k].byte_end, from_scan[k].byte_end) << "level " << level << " block " << k;
        EXPECT_EQ(from_fused[k].stats.litlen, from_scan[k].stats.litlen) << "level " << level;
        EXPECT_EQ(from_fused[k].stats.dist, from_scan[k].stats.dist) << "level " << level;
        EXPECT_EQ(from_fused[k].stats.extra_bits, from_scan[k].stats.extra_bits) << "level " << level;
      }
    }
  }
}

// Level 7's split: optimal over 4 KiB, then each cut moved by 2 KiB where the estimate says so. A page
// whose parts change 11 segments in (22,528 bytes) gets a cut there, which 4 KiB segments cannot give.
TEST(BlockSplit, PairedSplitMovesACutToAnOddSegment) {
  static const char* kText[] = {"func ", "return ", "err ", "nil ", "if ", ":= ", "\n\t", "struct "};
  std::mt19937 rng(3);
  Bytes page;
  while (page.size() < 22528) {
    const char* s = kText[rng() % std::size(kText)];
    page.insert(page.end(), s, s + std::strlen(s));
  }
  page.resize(22528);
  while (page.size() < 65536) page.push_back(static_cast<uint8_t>(rng() % 40 + (page.size() % 7) * 30));
  const SplitParams p = split_params_for_level(7);
  ASSERT_TRUE(p.optimal && p.pairs);
  TokenVec tokens;
  make_parser(7)->parse(page.data(), page.size(), tokens);
  std::vector<Sym> syms(tokens.size());
  std::vector<BlockRange> paired, coarse;
  split_blocks(tokens.data(), tokens.size(), p, syms.data(), paired);
  split_blocks(tokens.data(), tokens.size(), SplitParams{2 * p.segment_bytes, false, true}, syms.data(),
               coarse);
  expect_tiling(paired, tokens.data(), tokens.size(), page.size());
  // Segments end at the first token past their 2 KiB, so a cut lands a match's length past a boundary.
  const auto cut_near_text_end = [](const std::vector<BlockRange>& blocks) {
    bool near = false;
    for (const BlockRange& r : blocks) near |= r.byte_end + 512 > 22528 && r.byte_end < 22528 + 512;
    return near;
  };
  EXPECT_TRUE(cut_near_text_end(paired));
  EXPECT_FALSE(cut_near_text_end(coarse));
  EXPECT_LT(total_bits(paired), total_bits(coarse));
}

// The estimate is fixed point, so the AVX-512 and the scalar sums are the same number (and pick the same
// blocks on any CPU).
TEST(BlockSplit, EstimateIsTheSameWithAndWithoutSimd) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Bytes page = mixed_page(seed);
    TokenVec tokens;
    make_parser(7)->parse(page.data(), page.size(), tokens);
    BlockStats s;
    for (size_t i = 0; i < tokens.size(); ++i) {
      s.add(token_symbol(tokens[i]));
      if (i % 997 != 0 && i + 1 != tokens.size()) continue;
      ASSERT_EQ(estimate_block_bits(s, true), estimate_block_bits(s, false))
          << "seed " << seed << " token " << i;
    }
    EXPECT_GT(estimate_block_bits(s, false), 8.0 * page.size() / 8);  // a mixed page: over a bit a byte
    EXPECT_LT(estimate_block_bits(s, false), 8.0 * page.size());
  }
}

TEST(BlockSplit, EmptyAndTinyTokenStreamsMakeOneBlock) {
  for (const SplitParams& p : {SplitParams{4096, true, true}, split_params_for_level(7)}) {
    std::vector<BlockRange> out;
    std::vector<Sym> syms(1);
    split_blocks(nullptr, 0, p, syms.data(), out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].tok_end, 0u);
    const Token one = Token::literal('x');
    split_blocks(&one, 1, p, syms.data(), out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].byte_end, 1u);
  }
}

}  // namespace
}  // namespace gdfs::gdeflate
