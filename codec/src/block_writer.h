// Writing GDeflate blocks: stored, fixed-Huffman and dynamic-Huffman, in the decoder's round order.
//
// The emitters are templates over the writer so that the same code that writes a block can also
// count, lane by lane, what it would cost (LaneCounter), which is how block types are chosen with the
// per-lane word padding taken into account.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "lane_writer.h"
#include "tables.h"
#include "tokens.h"

namespace gdfs::gdeflate {

// Counts the bits each lane consumes; a page's size follows from them alone (CLARIFICATIONS.md §8).
struct LaneCounter {
  std::array<uint32_t, 32> bits{};
  void put(unsigned lane, uint32_t, unsigned n) { bits[lane] += n; }
  // Page size in 32-bit words: every lane holds ceil(bits/32) words plus the one loaded after its
  // final step.
  size_t page_words() const {
    size_t w = 0;
    for (uint32_t b : bits) w += (b + 31) / 32 + 1;
    return w;
  }
};

// Symbol statistics of one block.
struct BlockStats {
  std::array<uint32_t, kNumLitlenSyms> litlen{};
  std::array<uint32_t, kNumDistSyms> dist{};
  uint64_t extra_bits = 0;  // length and distance extra bits, which no code choice changes
  void add(const Token& t);
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
  void build_fixed();
  uint64_t data_bits(const BlockStats& s) const;  // symbols + extra bits + EOB
};

// Total bits of a stored encoding of n bytes, headers included.
uint64_t stored_bits(size_t n);

template <class W>
void emit_stored(W& w, const uint8_t* data, size_t n, bool final_block) {
  do {
    const size_t len = n < 65535 ? n : 65535;
    n -= len;
    w.put(0, (final_block && n == 0) ? 1 : 0, 3);
    w.put(0, static_cast<uint32_t>(len), 16);
    for (size_t k = 0; k < len; ++k) w.put(k & 31, data[k], 8);
    data += len;
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
// next round; after EOB only owed distances follow (CLARIFICATIONS.md §6-7).
template <class W>
void emit_tokens(W& w, const Token* t, size_t nt, const BlockCodes& c) {
  uint32_t pending = 0;
  std::array<uint32_t, 32> owed;
  auto put_dist = [&](unsigned lane) {
    const uint32_t d = owed[lane];
    const unsigned sym = dist_symbol(d), len = c.dist_len[sym];
    w.put(lane, c.dist_code[sym] | ((d - kDistBase[sym]) << len), len + kDistExtra[sym]);
  };
  size_t i = 0;
  bool eob = false;
  while (!eob) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      if (pending & (1u << lane)) {
        pending &= ~(1u << lane);
        put_dist(lane);
      } else if (eob) {
        continue;
      } else if (i == nt) {
        w.put(lane, c.litlen_code[kEob], c.litlen_len[kEob]);
        eob = true;
      } else if (t[i].is_literal()) {
        w.put(lane, c.litlen_code[t[i].len], c.litlen_len[t[i].len]);
        ++i;
      } else {
        const unsigned sym = length_symbol(t[i].len), len = c.litlen_len[sym];
        const uint32_t x = t[i].len - kLenBase[sym - 257];
        w.put(lane, c.litlen_code[sym] | (x << len), len + kLenExtra[sym - 257]);
        owed[lane] = t[i].dist;
        pending |= 1u << lane;
        ++i;
      }
    }
  }
  for (unsigned lane = 0; lane < 32; ++lane)
    if (pending & (1u << lane)) put_dist(lane);
}

enum class BlockType : uint8_t { kStored = 0, kFixed = 1, kDynamic = 2 };

// One whole block: BFINAL/BTYPE, its header, its data. `data`/`n` are the block's input bytes.
template <class W>
void emit_block(W& w, BlockType type, const Token* t, size_t nt, const uint8_t* data, size_t n,
                const BlockCodes& c, bool final_block) {
  if (type == BlockType::kStored) return emit_stored(w, data, n, final_block);
  w.put(0, (final_block ? 1 : 0) | (static_cast<unsigned>(type) << 1), 3);
  if (type == BlockType::kDynamic) emit_dynamic_header(w, c);
  emit_tokens(w, t, nt, c);
}

}  // namespace gdfs::gdeflate
