// The two outputs a parser's loop can write to: plain tokens (TokenWriter), or each token's symbols with
// per-segment statistics (SegmentWriter), which spares the encoder a second pass over the tokens before
// block splitting: at the fast levels that pass would be a large share of the time.
#pragma once

#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "../block_split.h"
#include "lz_util.h"
#include "parser.h"

namespace gdfs::gdeflate::lz {
// Internal linkage: each parser's file gets its own copy, which the compiler inlines into that parser's
// loop; one copy with external linkage, shared by every parser, is not inlined alike and slows level 1.
namespace {

// Where a parse goes: plain tokens, or symbols counted into segments (SegmentWriter).
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

// A parser whose loop is one template, run(in, n, out), written once for both outputs: Derived gets
// parse() and parse_segments() from it (Derived befriends this base, which calls its private run).
template <class Derived>
class WriterParser : public Parser {
 public:
  TokenSpan parse(const uint8_t* in, size_t n) final {
    TokenWriter w(buf_.begin());
    static_cast<Derived*>(this)->run(in, n, w);
    return buf_.finish(w.end());
  }

  size_t parse_segments(const uint8_t* in, size_t n, size_t segment_bytes, Sym* s,
                        std::vector<BlockRange>& segs) final {
    SegmentWriter w(s, segment_bytes, segs);
    static_cast<Derived*>(this)->run(in, n, w);
    return w.count();
  }

 private:
  TokenBuf buf_;
};

}  // namespace
}  // namespace gdfs::gdeflate::lz
