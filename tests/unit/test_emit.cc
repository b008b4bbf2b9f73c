// The encoder's lane emitter: the AVX-512 full-round loop must lay out exactly the bytes the scalar
// loop does, for any mix of literals and matches (which decides which lanes owe distances) and any
// starting lane state. Pages from it must also decode to the tokens' data.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "block_split.h"
#include "block_writer.h"
#include "cpu.h"
#include "gdfs/gdeflate.h"
#include "lane_writer.h"
#include "lz/parser.h"
#include "real_data.h"

namespace gdfs::gdeflate {
namespace {

using Bytes = std::vector<uint8_t>;

// Emits the tokens of `data` as one final dynamic block (after `lead` bits of stored header on lane 0,
// to start from an unaligned lane state), with or without SIMD, and returns the page.
Bytes emit_page(const Bytes& data, const TokenVec& tokens, bool simd, unsigned lead) {
  std::vector<Sym> syms(tokens.size());
  encode_symbols(tokens.data(), tokens.size(), syms.data());
  BlockStats stats;
  for (const Sym& s : syms) stats.add(s);
  BlockCodes codes;
  codes.build_dynamic(stats);
  Steps steps;
  steps.resize(tokens.size());
  encode_steps(syms.data(), syms.size(), codes, steps);
  LaneWriter writer(simd);
  LaneWriter::Sink sink = writer.sink();
  if (lead) emit_stored(sink, data.data(), lead, false);  // a non-final stored block shifts the lanes
  emit_block(sink, BlockType::kDynamic, steps, tokens.size(), data.data(), data.size(), codes, true);
  writer.commit(sink);
  Bytes page(writer.size_bytes());
  EXPECT_EQ(writer.finish(page.data(), page.size()), page.size());
  return page;
}

TokenVec random_tokens(std::mt19937_64& rng, Bytes& data, size_t n_tokens, unsigned match_percent) {
  TokenVec t;
  data.clear();
  while (t.size() < n_tokens && data.size() < 60000) {
    if (data.size() >= 3 && rng() % 100 < match_percent) {
      const uint32_t dist = 1 + static_cast<uint32_t>(rng() % data.size());
      const uint32_t len = 3 + static_cast<uint32_t>(rng() % (rng() % 8 == 0 ? 300 : 20));
      if (data.size() + len > 65000) break;
      for (uint32_t k = 0; k < len; ++k) data.push_back(data[data.size() - dist]);
      t.push_back(Token::match(len, dist));
    } else {
      data.push_back(static_cast<uint8_t>(rng()));
      t.push_back(Token::literal(data.back()));
    }
  }
  return t;
}

// Tokens of every kind the encoder meets, without data: literals, short and DEFLATE64 lengths
// (258..65535), near and far (32769..65535) distances.
TokenVec symbol_mix(std::mt19937_64& rng, size_t n) {
  TokenVec t;
  for (size_t k = 0; k < n; ++k) {
    switch (rng() % 4) {
      case 0:
      case 1:
        t.push_back(Token::literal(static_cast<uint8_t>(rng())));
        break;
      case 2:
        t.push_back(
            Token::match(3 + static_cast<uint32_t>(rng() % 300), 1 + static_cast<uint32_t>(rng() % 65535)));
        break;
      default:
        t.push_back(Token::match(3 + static_cast<uint32_t>(rng() % 65533),
                                 32769 + static_cast<uint32_t>(rng() % 32767)));
    }
  }
  return t;
}

// encode_steps (AVX-512 for whole groups of 16 tokens) must give the portable loop's steps exactly,
// under dynamic and fixed codes, at every length around the group size.
TEST(Emit, EncodeStepsSimdMatchesScalar) {
  std::mt19937_64 rng(7);
  BlockCodes fixed;
  fixed.build_fixed();
  for (size_t n : {0ul, 1ul, 15ul, 16ul, 17ul, 33ul, 1000ul, 40000ul}) {
    const TokenVec t = symbol_mix(rng, n);
    std::vector<Sym> syms(n);
    encode_symbols(t.data(), n, syms.data());
    BlockStats stats;
    for (const Sym& s : syms) stats.add(s);
    BlockCodes dyn;
    dyn.build_dynamic(stats);
    for (const BlockCodes* c : {&dyn, &fixed}) {
      Steps a, b;
      a.resize(n);
      b.resize(n);
      encode_steps(syms.data(), n, *c, a);
      encode_steps_scalar(syms.data(), 0, n, *c, b);
      ASSERT_EQ(a.lv, b.lv) << n;
      ASSERT_EQ(a.ln, b.ln) << n;
      ASSERT_EQ(a.dv, b.dv) << n;
      ASSERT_EQ(a.dn, b.dn) << n;
    }
  }
}

// split_blocks writes the tokens' symbols as encode_symbols does, its blocks tile the tokens and the
// input, and their statistics add up to the whole stream's.
TEST(Emit, SplitBlocksWritesSymbolsAndTilesTheTokens) {
  std::mt19937_64 rng(11);
  for (int level : {1, 4, 6, 9}) {
    for (size_t n : {1ul, 2ul, 100ul, 5000ul, 30000ul}) {
      Bytes data;
      const TokenVec t = random_tokens(rng, data, n, 30);
      std::vector<Sym> want(t.size()), got(t.size());
      encode_symbols(t.data(), t.size(), want.data());
      std::vector<BlockRange> blocks;
      split_blocks(t.data(), t.size(), split_params_for_level(level), got.data(), blocks);
      for (size_t k = 0; k < t.size(); ++k) {
        ASSERT_EQ(got[k].lsym, want[k].lsym);
        ASSERT_EQ(got[k].lextra, want[k].lextra);
        ASSERT_EQ(got[k].dsym, want[k].dsym);
        ASSERT_EQ(got[k].dextra, want[k].dextra);
      }
      BlockStats total, sum;
      for (const Sym& s : want) total.add(s);
      size_t tok = 0, byte = 0;
      for (const BlockRange& b : blocks) {
        ASSERT_EQ(b.tok_begin, tok);
        ASSERT_EQ(b.byte_begin, byte);
        tok = b.tok_end;
        byte = b.byte_end;
        sum.add(b.stats);
      }
      EXPECT_EQ(tok, t.size());
      EXPECT_EQ(byte, data.size());
      EXPECT_EQ(sum.litlen, total.litlen);
      EXPECT_EQ(sum.dist, total.dist);
      EXPECT_EQ(sum.extra_bits, total.extra_bits);
    }
  }
}

TEST(Emit, SimdAndScalarLayOutTheSameBytes) {
  if (!avx512_usable()) std::printf("note: no AVX-512 here: both runs use the scalar emitter\n");
  std::mt19937_64 rng(42);
  Decompressor d;
  for (unsigned match_percent : {0u, 10u, 50u, 90u, 100u}) {
    for (size_t n_tokens : {0ul, 1ul, 31ul, 32ul, 33ul, 64ul, 1000ul, 20000ul}) {
      for (unsigned lead : {0u, 5u, 37u}) {
        Bytes data;
        const TokenVec t = random_tokens(rng, data, n_tokens, match_percent);
        Bytes full = data;
        full.insert(full.begin(), data.begin(), data.begin() + std::min<size_t>(lead, data.size()));
        if (lead > data.size()) continue;
        const Bytes a = emit_page(data, t, true, lead), b = emit_page(data, t, false, lead);
        ASSERT_EQ(a, b) << match_percent << "% matches, " << n_tokens << " tokens, lead " << lead;
        Bytes back(full.size());
        ASSERT_EQ(d.decompress(a.data(), a.size(), back.data(), back.size()), PageStatus::kOk);
        ASSERT_EQ(back, full);
      }
    }
  }
}

TEST(Emit, SimdAndScalarAgreeOnRealPages) {
  const auto pages = test::pages_of(test::real_samples(256 * 1024));
  ASSERT_FALSE(pages.empty());
  auto parser = make_parser(6);
  for (const Bytes& page : pages) {
    TokenVec t;
    parser->parse(page.data(), page.size(), t);
    ASSERT_EQ(emit_page(page, t, true, 0), emit_page(page, t, false, 0));
  }
}

}  // namespace
}  // namespace gdfs::gdeflate
