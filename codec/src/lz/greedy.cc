

// Greedy parsers: level 1 (one-entry hash table) and levels 2-4 (hash chains).
#include <algorithm>

#include "hash_chain.h"
#include "lz_util.h"
#include "parsers.h"

namespace gdfs::gdeflate::lz {
namespace {

// Level 1: each 4-byte hash bucket remembers its two newest positions. Empty slots hold 0, which is a
// real earlier position, so no "empty" marker is needed: the 4-byte compare rejects false candidates.
class FastestParser final : public Parser {
 public:
  static constexpr unsigned kBits = 15;
  static constexpr uint32_t kLongMatch = 32, kEdge = 8;
  FastestParser() : table_(2u << kBits) {}

  TokenSpan parse(const uint8_t* in, size_t n) override {
    std::fill(table_.begin(), table_.end(), 0);
    Token* t = buf_.begin();
    const uint32_t limit = n >= 4 ? static_cast<uint32_t>(n - 3) : 0;  // pos < limit: 4 bytes readable
    uint32_t pos = 0;
    uint16_t* tab = table_.data();
    while (pos < limit) {
      const uint32_t v = load32(in + pos);
      uint16_t* b = tab + 2 * hash4(v, kBits);
      const uint32_t c0 = b[0], c1 = b[1];
      b[1] = b[0];
      b[0] = static_cast<uint16_t>(pos);
      const bool ok0 = c0 < pos && load32(in + c0) == v;
      const bool ok1 = c1 < pos && load32(in + c1) == v;
      if (!ok0 && !ok1) {
        *t++ = Token::literal(in[pos++]);
        continue;
      }
      const uint32_t max_len = min_u32(static_cast<uint32_t>(n - pos), kMaxMatch);
      uint32_t len = ok0 ? match_len_from(in + c0, in + pos, 4, max_len) : 0, cand = c0;
      if (ok1 && len < max_len) {
        const uint32_t len1 = match_len_from(in + c1, in + pos, 4, max_len);
        if (len1 > len) len = len1, cand = c1;
      }
      *t++ = Token::match(len, pos - cand);
      // Index the covered bytes too: repeats inside the match are what the next matches need most.
      // Inside a long match only its first and last kEdge bytes: the middle of a long repeat mostly
      // pushes useful older positions out of the two-entry buckets (on pages.bin skipping it makes the
      // output slightly smaller), and in runs every insert hits the same bucket, one after another.
      const uint32_t end = min_u32(pos + len, limit);
      const bool long_match = end - pos > kLongMatch;  // not len: near the page end, end < pos + len
      const uint32_t skip_from = long_match ? pos + kEdge : end, skip_to = long_match ? end - kEdge : end;
      for (uint32_t p = pos + 1; p < end; ++p) {
        if (p == skip_from) p = skip_to;
        uint16_t* bp = tab + 2 * hash4(load32(in + p), kBits);
        bp[1] = bp[0];
        bp[0] = static_cast<uint16_t>(p);
      }
      pos += len;
    }
    while (pos < n) *t++ = Token::literal(in[pos++]);
    return buf_.finish(t);
  }

 private:
  std::vector<uint16_t> table_;
  TokenBuf buf_;
};

// Levels 2-4: take the longest match at each position, searching `depth` chain entries.
class GreedyParser final : public Parser {
 public:
  explicit GreedyParser(const ChainParams& p) : p_(p) {}

  TokenSpan parse(const uint8_t* in, size_t n) override {
    mf_.reset();
    Token* t = buf_.begin();
    const uint32_t n32 = static_cast<uint32_t>(n);
    const uint32_t limit = n >= 4 ? n32 - 3 : 0;
    const ChainParams p = p_;
    uint32_t pos = 0;
    while (pos < limit) {
      Match m = mf_.find(in, pos, min_u32(n32 - pos, kMaxMatch), p.depth, p.nice, p.max_dist3);
      if (m.dist == 0) {
        *t++ = Token::literal(in[pos++]);
        continue;
      }
      // A short match often hides a longer one a byte later (a 3-byte match cut from a word's start):
      // one look-ahead for short matches only costs little, as most matched bytes sit in long matches.
      uint32_t next_insert = pos + 1;
      if (m.len < p.peek && pos + 1 < limit) {
        const uint32_t max_len = min_u32(n32 - pos - 1, kMaxMatch);
        const Match next = m.len < max_len
                               ? mf_.find(in, pos + 1, max_len, p.depth, p.nice, p.max_dist3, m.len - 1)
                               : Match{0, 0};
        next_insert = pos + 2;
        if (m.len >= max_len) mf_.insert(in, pos + 1);
        if (next.dist != 0 && score(next) - score(m) > 2) {
          *t++ = Token::literal(in[pos++]);
          m = next;
        }
      }
      *t++ = Token::match(m.len, m.dist);
      const uint32_t end = min_u32(pos + m.len, limit);
      for (uint32_t q = next_insert; q < end; ++q) mf_.insert(in, q);
      pos += m.len;
    }
    while (pos < n) *t++ = Token::literal(in[pos++]);
    return buf_.finish(t);
  }

 private:
  ChainParams p_;
  HashChainMF mf_;
  TokenBuf buf_;
};

}  // namespace

std::unique_ptr<Parser> make_fastest_parser() {
  return std::make_unique<FastestParser>();
}

std::unique_ptr<Parser> make_greedy_parser(const ChainParams& p) {
  return std::make_unique<GreedyParser>(p);
}

}  // namespace gdfs::gdeflate::lz
