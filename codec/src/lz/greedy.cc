

// Greedy parsers: level 1 (one-entry hash table) and levels 2-4 (hash chains).
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "../block_split.h"
#include "hash_chain.h"
#include "lz_util.h"
#include "parsers.h"

namespace gdfs::gdeflate::lz {
namespace {

// Where the level-1 parse goes: plain tokens, or symbols counted into segments (SegmentWriter).
class TokenWriter {
 public:
  explicit TokenWriter(Token* t) : t_(t) {}
  void literal(uint32_t, uint8_t b) { *t_++ = Token::literal(b); }
  void match(uint32_t, uint32_t len, uint32_t dist) { *t_++ = Token::match(len, dist); }
  void finish(uint32_t) {}
  Token* end() const { return t_; }

 private:
  Token* t_;
};

// Symbols by table rather than by length_symbol / dist_symbol, whose range tests are branches that
// mispredict on every other match. kDistSym: distance - 1 below 256, else 256 + ((distance - 1) >> 7)
// (from 256 on, the bits below the top two no longer pick the symbol).
constexpr auto kLenSym = [] {
  std::array<uint16_t, 259> t{};
  for (uint32_t len = kMinMatch; len <= 258; ++len) t[len] = static_cast<uint16_t>(length_symbol(len));
  return t;
}();
constexpr auto kDistSym = [] {
  std::array<uint8_t, 256 + 512> t{};
  for (uint32_t d = 0; d < 256; ++d) t[d] = static_cast<uint8_t>(dist_symbol(d + 1));
  for (uint32_t k = 2; k < 512; ++k) t[256 + k] = static_cast<uint8_t>(dist_symbol((k << 7) + 1));
  return t;
}();

// Symbols and segment statistics as split_blocks' scan makes them: a segment ends before the first token
// that starts at or past segment_bytes from the segment's first byte. Literals are not counted into
// dist[kNoDist] one by one: a segment's literal count is its token count less its matches.
class SegmentWriter {
 public:
  SegmentWriter(Sym* s, size_t segment_bytes, std::vector<BlockRange>& segs)
      : s0_(s), s_(s), seg_bytes_(static_cast<uint32_t>(segment_bytes)), segs_(segs) {
    segs_.clear();
    open(0);
  }
  void literal(uint32_t pos, uint8_t b) {
    if (pos >= limit_) [[unlikely]]
      next(pos);
    put(b | uint64_t{kNoDist} << 32);
    ++litlen_[b];
  }
  void match(uint32_t pos, uint32_t len, uint32_t dist) {
    if (pos >= limit_) [[unlikely]]
      next(pos);
    const unsigned ls = kLenSym[len < 258 ? len : 258],
                   ds = kDistSym[dist <= 256 ? dist - 1 : 256 + ((dist - 1) >> 7)];
    put(ls | uint64_t{len - kLenBase[ls - 257]} << 16 | uint64_t{ds} << 32 |
        uint64_t{dist - kDistBase[ds]} << 48);
    ++litlen_[ls];
    ++dist_[ds];
  }
  void finish(uint32_t n) { close(n); }
  size_t count() const { return static_cast<size_t>(s_ - s0_); }

 private:
  void open(uint32_t pos) {
    segs_.emplace_back();
    BlockRange& seg = segs_.back();
    seg.tok_begin = count();
    seg.byte_begin = pos;
    litlen_ = seg.stats.litlen.data();
    dist_ = seg.stats.dist.data();
    limit_ = pos + seg_bytes_;
  }
  void close(uint32_t pos) {
    BlockRange& seg = segs_.back();
    seg.tok_end = count();
    seg.byte_end = pos;
    uint32_t matches = 0;
    for (unsigned k = 0; k < kNumDistSyms; ++k) matches += seg.stats.dist[k];
    seg.stats.dist[kNoDist] = static_cast<uint32_t>(seg.tok_end - seg.tok_begin) - matches;
    // Extra bits follow from the counts: cheaper once per segment than once per match.
    uint64_t extra = 0;
    for (unsigned k = 257; k < kNumUsableLitlen; ++k)
      extra += uint64_t{seg.stats.litlen[k]} * kLitlenExtraBySym[k];
    for (unsigned k = 0; k < kNumDistSyms; ++k) extra += uint64_t{seg.stats.dist[k]} * kDistExtraBySym[k];
    seg.stats.extra_bits = extra;
  }
  // One Sym as one 8-byte store (lsym, lextra, dsym, dextra from the low end), not four 2-byte ones.
  void put(uint64_t sym) {
    static_assert(sizeof(Sym) == 8 && std::endian::native == std::endian::little);
    std::memcpy(s_++, &sym, 8);
  }
  void next(uint32_t pos) {
    close(pos);
    open(pos);
  }

  Sym *s0_, *s_;
  uint32_t seg_bytes_, limit_ = 0;
  std::vector<BlockRange>& segs_;
  uint32_t *litlen_ = nullptr, *dist_ = nullptr;
};

// Level 1: each 4-byte hash bucket remembers its two newest positions. Empty slots hold 0, which is a
// real earlier position, so no "empty" marker is needed: the 4-byte compare rejects false candidates.
class FastestParser final : public Parser {
 public:
  static constexpr unsigned kBits = 15;
  static constexpr uint32_t kLongMatch = 32, kEdge = 8;
  FastestParser() : table_(1u << kBits) {}

  TokenSpan parse(const uint8_t* in, size_t n) override {
    TokenWriter w(buf_.begin());
    run(in, n, w);
    return buf_.finish(w.end());
  }

  size_t parse_segments(const uint8_t* in, size_t n, size_t segment_bytes, Sym* s,
                        std::vector<BlockRange>& segs) override {
    SegmentWriter w(s, segment_bytes, segs);
    run(in, n, w);
    return w.count();
  }

 private:
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
      // pushes useful older positions out of the two-entry buckets (on pages.bin skipping it makes the
      // output slightly smaller), and in runs every insert hits the same bucket, one after another.
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
  // bucket at once) defeat store-to-load forwarding, which cost about an eighth of the parse.
  std::vector<uint32_t> table_;
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
