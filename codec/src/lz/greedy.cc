// Greedy parsers: level 1 (one-entry hash table) and levels 2-4 (hash chains).
#include <algorithm>

#include "chain_parser.h"

namespace gdfs::gdeflate::lz {
namespace {

// Level 1: each 4-byte hash bucket remembers its two newest positions. Empty slots hold 0, which is a
// real earlier position, so no "empty" marker is needed: the 4-byte compare rejects false candidates.
class FastestParser final : public WriterParser<FastestParser> {
 public:
  static constexpr unsigned kBits = 15;
  static constexpr uint32_t kLongMatch = 32, kEdge = 8;
  FastestParser() : table_(1u << kBits) {}

 private:
  friend class WriterParser;
  template <class Out>
  void run(const uint8_t* in, size_t n, Out& out) {
    std::fill(table_.begin(), table_.end(), 0);
    const uint32_t limit = n >= 4 ? static_cast<uint32_t>(n - 3) : 0;  // pos < limit: 4 bytes readable
    uint32_t pos = 0;
    uint32_t* tab = table_.data();
    // Position 0 has nothing before it; indexing it would store 0 where the table already holds 0. From
    // position 1 on, every slot names an earlier position (0 included), so no "c < pos" test is needed.
    if (limit > 0) out.literal(pos++, in[0]);
    while (pos < limit) {
      const uint32_t v = load32(in + pos);
      uint32_t* b = tab + hash4(v, kBits);
      const uint32_t e = *b, c0 = e & 0xFFFF, c1 = e >> 16;
      *b = e << 16 | pos;
      const bool ok0 = load32(in + c0) == v;
      const bool ok1 = load32(in + c1) == v;
      if (!(ok0 | ok1)) {
        out.literal(pos, in[pos]);
        ++pos;
        continue;
      }
      const uint32_t max_len = min_u32(static_cast<uint32_t>(n - pos), kMaxMatch);
      uint32_t len = ok0 ? match_len_from(in + c0, in + pos, 4, max_len) : 0, cand = c0;
      if (ok1 && len < max_len) {
        const uint32_t len1 = match_len_from(in + c1, in + pos, 4, max_len);
        if (len1 > len) len = len1, cand = c1;
      }
      out.match(pos, len, pos - cand);
      // Index the covered bytes too: repeats inside the match are what the next matches need most.
      // Inside a long match only its first and last kEdge bytes: the middle of a long repeat mostly
      // pushes useful older positions out of the two-entry buckets, and in runs every insert hits the
      // same bucket, one after another.
      const uint32_t end = min_u32(pos + len, limit);
      const bool long_match = end - pos > kLongMatch;  // not len: near the page end, end < pos + len
      const uint32_t skip_from = long_match ? pos + kEdge : end, skip_to = long_match ? end - kEdge : end;
      for (uint32_t p = pos + 1; p < end; ++p) {
        if (p == skip_from) p = skip_to;
        uint32_t* bp = tab + hash4(load32(in + p), kBits);
        *bp = *bp << 16 | p;
      }
      pos += len;
    }
    for (; pos < n; ++pos) out.literal(pos, in[pos]);
    out.finish(static_cast<uint32_t>(n));
  }

  // Per bucket, one uint32: the newest position in the low half, the one before it above. Read and
  // written whole: two 16-bit stores followed by a 32-bit load of the same bucket (a run revisits its
  // bucket at once) would defeat store-to-load forwarding.
  std::vector<uint32_t> table_;
};

// Levels 2-4: take the longest match at each position, searching `depth` chain entries. One entry a
// chain link (HashChainMF<false>): these levels insert much and walk little.
struct GreedyLoop {
  template <class Out>
  static uint32_t scan(const uint8_t* in, uint32_t n32, uint32_t limit, const ChainParams p,
                       HashChainMF<false>& mf, Out& out) {
    uint32_t pos = 0;
    while (pos < limit) {
      Match m = mf.find(in, pos, min_u32(n32 - pos, kMaxMatch), p.depth, p.nice, p.max_dist3);
      if (m.dist == 0) {
        out.literal(pos, in[pos]);
        ++pos;
        continue;
      }
      // A short match often hides a longer one a byte later (a 3-byte match cut from a word's start):
      // one look-ahead for short matches only costs little, as most matched bytes sit in long matches.
      uint32_t next_insert = pos + 1;
      if (m.len < p.peek && pos + 1 < limit) {
        const uint32_t max_len = min_u32(n32 - pos - 1, kMaxMatch);
        const Match next = m.len < max_len
                               ? mf.find(in, pos + 1, max_len, p.depth, p.nice, p.max_dist3, m.len - 1)
                               : Match{0, 0};
        next_insert = pos + 2;
        if (m.len >= max_len) mf.insert(in, pos + 1);
        if (next.dist != 0 && score(next) - score(m) > 2) {
          out.literal(pos, in[pos]);
          ++pos;
          m = next;
        }
      }
      out.match(pos, m.len, m.dist);
      mf.insert_range(in, next_insert, min_u32(pos + m.len, limit));
      pos += m.len;
    }
    return pos;
  }
};

}  // namespace

std::unique_ptr<Parser> make_fastest_parser() {
  return std::make_unique<FastestParser>();
}

std::unique_ptr<Parser> make_greedy_parser(const ChainParams& p) {
  return std::make_unique<ChainParser<GreedyLoop, false>>(p);
}

}  // namespace gdfs::gdeflate::lz
