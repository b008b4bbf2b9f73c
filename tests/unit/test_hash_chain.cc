// The hash-chain match finder of levels 2-7: links of two entries walk the same entries as links of one
// (the same match for every search), indexing a range equals indexing its positions one by one (the
// run shortcut changes nothing), and every match it returns is real and inside the page.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lz/hash_chain.h"

namespace gdfs::gdeflate::lz {
namespace {

using Bytes = std::vector<uint8_t>;

// Pages that stress the chains differently: runs of one byte (one bucket over and over), a 2-byte period
// (two buckets taking turns), text-like repeats, and random bytes (chains of hash neighbours only).
Bytes page(const std::string& kind, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b;
  while (b.size() < 65536) {
    if (kind == "runs") {
      b.insert(b.end(), 1 + rng() % 300, static_cast<uint8_t>(rng() % 3));
    } else if (kind == "period2") {
      const uint8_t x = static_cast<uint8_t>(rng()), y = static_cast<uint8_t>(rng() % 2);
      for (uint32_t k = 0, n = 2 + rng() % 200; k < n; ++k) b.push_back(k % 2 ? x : y);
    } else if (kind == "text") {
      static const char* kWords[] = {"lane ", "page ", "block ", "the ", "of ", "match ", "\n", "chain "};
      const std::string w = kWords[rng() % 8];
      b.insert(b.end(), w.begin(), w.end());
    } else {
      b.push_back(static_cast<uint8_t>(rng()));
    }
  }
  b.resize(65536);
  return b;
}

// Drives two match finders through the same searches and skipped spans, as a parser would: a search,
// then either the next position or a span of up to 40 positions indexed without searching.
template <class A, class B, class Check>
void walk_both(const Bytes& in, A& a, B& b, bool one_by_one_in_b, uint32_t seed, Check check) {
  std::mt19937 rng(seed);
  a.reset();
  b.reset();
  const uint32_t n = static_cast<uint32_t>(in.size()), limit = n - 3;
  for (uint32_t pos = 0; pos < limit;) {
    const uint32_t max_len = std::min<uint32_t>(n - pos, kMaxMatch);
    const unsigned depth = 1 + rng() % 48;
    const uint32_t min_len = rng() % 4 == 0 ? 2 + rng() % 6 : 0;
    if (min_len < max_len) {
      const Match ma = a.template find<true>(in.data(), pos, max_len, depth, 96, 2048, min_len);
      const Match mb = b.template find<true>(in.data(), pos, max_len, depth, 96, 2048, min_len);
      check(pos, ma, mb);
    } else {
      a.insert(in.data(), pos);
      b.insert(in.data(), pos);
    }
    const uint32_t span = rng() % 2 ? static_cast<uint32_t>(rng() % 40) : 0;
    const uint32_t end = std::min(limit, pos + 1 + span);
    a.insert_range(in.data(), pos + 1, end);
    if (one_by_one_in_b) {
      for (uint32_t q = pos + 1; q < end; ++q) b.insert(in.data(), q);
    } else {
      b.insert_range(in.data(), pos + 1, end);
    }
    pos = end;
  }
}

class HashChain : public ::testing::TestWithParam<std::string> {};

TEST_P(HashChain, PairLinksFindWhatSingleLinksFind) {
  HashChainMF<true> pairs;
  HashChainMF<false> singles;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Bytes in = page(GetParam(), seed);
    size_t found = 0;
    walk_both(in, pairs, singles, false, seed, [&](uint32_t pos, Match a, Match b) {
      ASSERT_EQ(a.len, b.len) << "pos " << pos;
      ASSERT_EQ(a.dist, b.dist) << "pos " << pos;
      found += a.dist != 0;
    });
    if (GetParam() != "random") {
      EXPECT_GT(found, 100u) << "seed " << seed;
    }
  }
}

TEST_P(HashChain, IndexingARangeEqualsIndexingEachPosition) {
  HashChainMF<true> ranged, stepped;
  HashChainMF<false> ranged1, stepped1;
  const Bytes in = page(GetParam(), 7);
  walk_both(in, ranged, stepped, true, 7, [&](uint32_t pos, Match a, Match b) {
    ASSERT_EQ(a.len, b.len) << "pos " << pos;
    ASSERT_EQ(a.dist, b.dist) << "pos " << pos;
  });
  walk_both(in, ranged1, stepped1, true, 7, [&](uint32_t pos, Match a, Match b) {
    ASSERT_EQ(a.len, b.len) << "pos " << pos;
    ASSERT_EQ(a.dist, b.dist) << "pos " << pos;
  });
}

// A match finder reused across pages must not reach into the last page: every match lies inside the
// page at hand, before the position, and its bytes agree.
TEST_P(HashChain, MatchesAreRealAndInsideThePage) {
  HashChainMF<true> a;
  HashChainMF<false> b;
  for (uint32_t seed = 11; seed <= 13; ++seed) {
    const Bytes in = page(GetParam(), seed);
    walk_both(in, a, b, false, seed, [&](uint32_t pos, Match m, Match) {
      if (m.dist == 0) return;
      ASSERT_GE(m.len, 3u) << "pos " << pos;
      ASSERT_LE(m.dist, pos) << "pos " << pos;
      ASSERT_LE(pos + m.len, in.size()) << "pos " << pos;
      for (uint32_t k = 0; k < m.len; ++k) ASSERT_EQ(in[pos + k], in[pos - m.dist + k]) << "pos " << pos;
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Pages, HashChain, ::testing::Values("runs", "period2", "text", "random"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gdfs::gdeflate::lz
