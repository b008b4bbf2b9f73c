// Block splitting: the blocks tile the token stream in order, their statistics are their tokens', and the
// exhaustive split (levels 4-7 on estimates, 10-12 on exact costs) costs no more bits than the greedy
// merge it replaced.
#include <gtest/gtest.h>

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

TEST(BlockSplit, ExhaustiveSplitTilesTheTokensAndNeverCostsMoreThanTheGreedyMerge) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Bytes page = mixed_page(seed);
    TokenVec tokens;
    make_parser(9)->parse(page.data(), page.size(), tokens);
    std::vector<Sym> syms(tokens.size());
    std::vector<BlockRange> greedy, best;
    split_blocks(tokens.data(), tokens.size(), SplitParams{4096, true, false}, syms.data(), greedy);
    split_blocks(tokens.data(), tokens.size(), SplitParams{4096, true, true}, syms.data(), best);
    expect_tiling(greedy, tokens.data(), tokens.size(), page.size());
    expect_tiling(best, tokens.data(), tokens.size(), page.size());
    EXPECT_LE(total_bits(best), total_bits(greedy)) << "seed " << seed;
    EXPECT_GT(best.size(), 1u) << "seed " << seed << ": the page's three parts want blocks of their own";
    for (size_t i = 0; i < tokens.size(); ++i) {
      const Sym want = token_symbol(tokens[i]);
      ASSERT_EQ(std::memcmp(&want, &syms[i], sizeof want), 0) << "symbols of token " << i;
    }
  }
}

TEST(BlockSplit, LevelsFourToSevenAndTenToTwelveSplitExhaustively) {
  for (int level = 1; level <= 12; ++level) {
    const bool want = (level >= 4 && level <= 7) || level >= 10;
    EXPECT_EQ(split_params_for_level(level).optimal, want) << "level " << level;
  }
}

TEST(BlockSplit, ExhaustiveSplitOnEstimatesNeverEstimatesMoreThanTheGreedyMerge) {
  const Bytes page = mixed_page(7);
  TokenVec tokens;
  make_parser(6)->parse(page.data(), page.size(), tokens);
  std::vector<Sym> syms(tokens.size());
  std::vector<BlockRange> greedy, best;
  split_blocks(tokens.data(), tokens.size(), SplitParams{8192, false, false}, syms.data(), greedy);
  split_blocks(tokens.data(), tokens.size(), SplitParams{8192, false, true}, syms.data(), best);
  expect_tiling(best, tokens.data(), tokens.size(), page.size());
  // Real bits, not the estimate both minimise: the exhaustive split should not lose on this page.
  EXPECT_LE(total_bits(best), total_bits(greedy));
}

TEST(BlockSplit, EmptyAndTinyTokenStreamsMakeOneBlock) {
  std::vector<BlockRange> out;
  std::vector<Sym> syms(1);
  split_blocks(nullptr, 0, SplitParams{4096, true, true}, syms.data(), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tok_end, 0u);
  const Token one = Token::literal('x');
  split_blocks(&one, 1, SplitParams{4096, true, true}, syms.data(), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].byte_end, 1u);
}

}  // namespace
}  // namespace gdfs::gdeflate
