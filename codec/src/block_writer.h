// Writing GDeflate blocks: stored, fixed-Huffman and dynamic-Huffman, in the decoder's round order.
//
// The emitters are templates over the writer so that the same code that writes a block can also
// count, lane by lane, what it would cost (LaneCounter), which is how block types are chosen with the
// per-lane word padding taken into account.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gdfs/deflate64.h"
#include "lane_writer.h"
#include "tokens.h"

namespace gdfs::gdeflate {

// Counts the bits each lane consumes; a page's size follows from them alone (docs/GDEFLATE.md, "The page
// bitstream, in one page": Page size).
struct LaneCounter {
  std::array<uint32_t, 32> bits{};
  void put(unsigned lane, uint32_t, unsigned n) { bits[lane] += n; }
  void put_stored_body(const uint8_t*, size_t len) {
    for (unsigned lane = 0; lane < 32; ++lane)
      bits[lane] += 8 * static_cast<uint32_t>(len / 32 + (lane < len % 32));
  }
  // Page size in 32-bit words: every lane holds ceil(bits/32) words plus the one loaded after its
  // final step.
  size_t page_words() const {
    size_t w = 0;
    for (uint32_t b : bits) w += (b + 31) / 32 + 1;
    return w;
  }
};

// A token as DEFLATE symbols: its litlen symbol and, for a match, its distance symbol, each with its
// extra-bit value. Literals have dsym == kNoDist. Computed once per page, without branches.
inline constexpr uint16_t kNoDist = kNumDistSyms;
struct Sym {
  uint16_t lsym, lextra, dsym, dextra;
};

// Extra-bit counts indexed by full symbol (0 for literals and for kNoDist), so lookups need no branch.
inline constexpr auto kLitlenExtraBySym = [] {
  std::array<uint8_t, kNumLitlenSyms> t{};
  for (unsigned s = 257; s < 286; ++s) t[s] = kLenExtra[s - 257];
  return t;
}();
inline constexpr auto kDistExtraBySym = [] {
  std::array<uint8_t, kNumDistSyms + 1> t{};
  for (unsigned s = 0; s < kNumDistSyms; ++s) t[s] = kDistExtra[s];
  return t;
}();

// One token's symbols, without branches.
inline Sym token_symbol(const Token& t) {
  const bool lit = t.is_literal();
  const uint32_t len = lit ? kMinMatch : t.len, dist = lit ? 1 : t.dist;
  const unsigned ls = length_symbol(len), ds = dist_symbol(dist);
  return {static_cast<uint16_t>(lit ? t.len : ls), static_cast<uint16_t>(lit ? 0 : len - kLenBase[ls - 257]),
          static_cast<uint16_t>(lit ? kNoDist : ds), static_cast<uint16_t>(lit ? 0 : dist - kDistBase[ds])};
}
inline uint32_t sym_extra_bits(const Sym& s) {
  return kLitlenExtraBySym[s.lsym] + kDistExtraBySym[s.dsym];
}

void encode_symbols(const Token* t, size_t nt, Sym* out);

// Symbol statistics of one block.
struct BlockStats {
  std::array<uint32_t, kNumLitlenSyms> litlen{};
  std::array<uint32_t, kNumDistSyms + 1> dist{};  // [kNoDist] counts literals; never coded
  uint64_t extra_bits = 0;  // length and distance extra bits, which no code choice changes
  void add(const Sym& t);
  void add(const BlockStats& o);
};

// Huffman codes for one block, and for dynamic blocks, the encoded code-length header.
struct BlockCodes {
  std::array<uint8_t, kNumLitlenSyms> litlen_len{};
  std::array<uint16_t, kNumLitlenSyms> litlen_code{};
  std::array<uint8_t, kNumDistSyms> dist_len{};
  std::array<uint16_t, kNumDistSyms> dist_code{};
  // Dynamic header.
  unsigned hlit = 0, hdist = 0, hclen = 0;
  std::array<uint8_t, kNumPrecodeSyms> pre_len{};
  std::array<uint16_t, kNumPrecodeSyms> pre_code{};
  std::array<uint16_t, 288 + 32> rle{};  // precode symbol | extra value << 5
  unsigned nrle = 0;
  uint32_t header_bits = 0;  // bits of the dynamic header after BFINAL/BTYPE

  void build_dynamic(const BlockStats& s);  // optimal lengths for `s` (EOB counted once)
  // The code lengths and header_bits of build_dynamic, without the codes themselves: enough to price a
  // candidate block, which block splitting does far more often than it emits one.
  void build_dynamic_lengths(const BlockStats& s);
  void build_fixed();
  uint64_t data_bits(const BlockStats& s) const;  // symbols + extra bits + EOB
};

// The tokens' steps as put() arguments under one block's codes, one array per field (so SIMD code can
// load them): token i's litlen code with its extra bits (lv, ln bits), and its distance code with its
// extra bits (dv, dn bits; dn == 0 for a literal).
struct Steps {
  std::vector<uint32_t> lv, ln, dv, dn;
  void resize(size_t n) {
    lv.resize(n);
    ln.resize(n);
    dv.resize(n);
    dn.resize(n);
  }
};
void encode_steps(const Sym* s, size_t n, const BlockCodes& c, Steps& out);  // fills [0, n)
// The portable loop behind encode_steps, from token `first` on (the tests compare the two paths).
void encode_steps_scalar(const Sym* s, size_t first, size_t n, const BlockCodes& c, Steps& out);
// The AVX-512 part of encode_steps (emit_avx512.cc): whole groups of 16 tokens from the start; returns
// how many tokens it filled. Only called when the CPU has AVX-512.
size_t encode_steps_avx512(const Sym* s, size_t n, const BlockCodes& c, Steps& out);

// The full data rounds of emit_tokens with AVX-512 (emit_avx512.cc), from token i and the owed
// distances given; stops when fewer than 32 tokens remain. Advances i and the owed state.
void emit_full_rounds_avx512(LaneWriter::Sink& w, const Steps& s, size_t nt, size_t& i, uint32_t& pending,
                             uint32_t* owed_v, uint32_t* owed_n);

// Total bits of a stored encoding of n bytes, headers included.
uint64_t stored_bits(size_t n);

// Stored blocks: BFINAL/BTYPE and LEN on lane 0, then byte k of the block on lane k mod 32.
template <class W>
void emit_stored(W& w, const uint8_t* data, size_t n, bool final_block) {
  do {
    const size_t len = n < 65535 ? n : 65535;
    n -= len;
    w.put(0, (final_block && n == 0) ? 1 : 0, 3);
    w.put(0, static_cast<uint32_t>(len), 16);
    w.put_stored_body(data, len);
    data += len;
  } while (n > 0);
}

// What stored blocks of n bytes add to each lane (the same steps as emit_stored, without data).
inline void count_stored(LaneCounter& c, size_t n) {
  do {
    const size_t len = n < 65535 ? n : 65535;
    n -= len;
    c.put(0, 0, 3);
    c.put(0, 0, 16);
    c.put_stored_body(nullptr, len);
  } while (n > 0);
}

template <class W>
void emit_dynamic_header(W& w, const BlockCodes& c) {
  w.put(0, (c.hlit - 257) | ((c.hdist - 1) << 5) | ((c.hclen - 4) << 10), 14);
  for (unsigned i = 0; i < c.hclen; ++i) w.put(i, c.pre_len[kPrecodePerm[i]], 3);
  static constexpr uint8_t kRleExtra[3] = {2, 3, 7};
  for (unsigned j = 0; j < c.nrle; ++j) {
    const unsigned sym = c.rle[j] & 31, x = c.rle[j] >> 5, len = c.pre_len[sym];
    const unsigned nx = sym >= 16 ? kRleExtra[sym - 16] : 0;
    w.put(j & 31, c.pre_code[sym] | (x << len), len + nx);
  }
}

// Data rounds: tokens go to free lanes in order; a lane that sends a length sends its distance on the
// next round; after EOB only owed distances follow (docs/GDEFLATE.md, "The page bitstream, in one page":
// Data rounds).
//
// While a whole round's worth of tokens remains no round can hold the EOB, so those rounds run without
// data-dependent branches (literal or match is a select, not a jump); the last rounds take the
// general path.
template <class W>
void emit_tokens(W& w, const Steps& s, size_t nt, const BlockCodes& c) {
  uint32_t pending = 0;
  std::array<uint32_t, 32> owed_v{};
  std::array<uint32_t, 32> owed_n{};  // not uint8_t: char stores would alias the writer
  size_t i = 0;
  if constexpr (std::is_same_v<W, LaneWriter::Sink>) {
    if (w.simd) emit_full_rounds_avx512(w, s, nt, i, pending, owed_v.data(), owed_n.data());
  }
  while (i + 32 <= nt) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      const uint32_t p = (pending >> lane) & 1, m = 0u - p;  // m: all ones when the lane owes
      w.put(lane, (owed_v[lane] & m) | (s.lv[i] & ~m), (owed_n[lane] & m) | (s.ln[i] & ~m));
      owed_v[lane] = s.dv[i];  // meaningful only if the lane now owes; harmless otherwise
      owed_n[lane] = s.dn[i];
      pending = (pending & ~(1u << lane)) | (((p ^ 1) & (s.dn[i] != 0)) << lane);
      i += p ^ 1;
    }
  }
  bool eob = false;
  while (!eob) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      if (pending & (1u << lane)) {
        pending &= ~(1u << lane);
        w.put(lane, owed_v[lane], owed_n[lane]);
      } else if (eob) {
        continue;
      } else if (i == nt) {
        w.put(lane, c.litlen_code[kEob], c.litlen_len[kEob]);
        eob = true;
      } else {
        w.put(lane, s.lv[i], s.ln[i]);
        if (s.dn[i]) {
          owed_v[lane] = s.dv[i];
          owed_n[lane] = s.dn[i];
          pending |= 1u << lane;
        }
        ++i;
      }
    }
  }
  for (unsigned lane = 0; lane < 32; ++lane)
    if (pending & (1u << lane)) w.put(lane, owed_v[lane], owed_n[lane]);
}

enum class BlockType : uint8_t { kStored = 0, kFixed = 1, kDynamic = 2 };

// One whole block: BFINAL/BTYPE, its header, its data. `data`/`n` are the block's input bytes.
template <class W>
void emit_block(W& w, BlockType type, const Steps& t, size_t nt, const uint8_t* data, size_t n,
                const BlockCodes& c, bool final_block) {
  if (type == BlockType::kStored) return emit_stored(w, data, n, final_block);
  w.put(0, (final_block ? 1 : 0) | (static_cast<unsigned>(type) << 1), 3);
  if (type == BlockType::kDynamic) emit_dynamic_header(w, c);
  emit_tokens(w, t, nt, c);
}

}  // namespace gdfs::gdeflate
