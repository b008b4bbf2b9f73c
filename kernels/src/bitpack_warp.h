// The bitpack page decoder (codec 3, docs/FORMAT.md section 4.1) for one warp: it gives exactly the
// bytes and the status of the CPU decoder (codec/src/bitpack_decode.cc). Written once against the warp
// primitives of simt.h, so the same source runs as a CUDA kernel and on the host warp emulator.
//
// Two passes over the page, like the CPU decoder.
//
// 1. Check. Lane i reads the metadata of block 32c+i, checks its rate and selector and computes the
//    block's payload bytes; a warp-wide prefix sum gives the payload offsets of 32 blocks at a time.
//    Nothing is decoded until every rate and selector is legal and the payloads, metadata and tail add
//    up to exactly in_size, so the second pass reads no byte outside the page without bounds checks.
// 2. Decode, again 32 blocks at a time, with the same prefix sum. Lanes are samples: each step of the
//    warp decodes a *strip* of 32 consecutive samples, lane j sample j of the strip.
//    - Blocks of 32 or more samples (the mkfs default is 32): a strip lies in one block and starts on a
//      multiple of 32 samples, so its bits are byte 4s..4s+3 of the sign bitmap and of every plane.
//      Lane l loads that 32-bit word of the sign bitmap (l = 0) or of plane l-1, and a 32x32 bit
//      transpose over the warp (five shfl_xor rounds) hands lane j bit j of every word: its sign and
//      magnitude. One coalesced little load per lane instead of `rate` loads per lane.
//    - Blocks of fewer than 32 samples: a strip spans several blocks. Lane j finds its block (a
//      multiply by a reciprocal, no division), fetches that block's offset and rate from the lane that
//      read its metadata (one shfl), and gathers its bit of the sign bitmap and of each plane itself.
//    Outliers (outlier mode) replace the first c = min(max(S,1), b) values of a block. The Lorenzo
//    prediction of stride S is undone with a segmented inclusive scan: shfl_up by S, 2S, 4S, ... (below 32),
//    adding only within the block, then one shfl that adds the last sum of the same residue class from the
//    previous strip when the block started before this strip. Arithmetic is in uint32_t: wrapping
//    modulo 2^32, and the low 16 bits of it are the int16 sums modulo 2^16.
//    Each lane stores its sample (2 or 4 bytes), so a strip is one coalesced 64- or 128-byte store.
//
// Rules kept for the GPU: every lane reaches every collective (all loops around collectives have warp-
// uniform bounds), no lane reads another lane's memory writes (so no syncwarp is needed and the
// shared-memory area is empty), no heap, fixed-size locals only.
#pragma once
#include <cstdint>
#if !defined(__CUDACC__)
#include <cstring>
#endif

#include "gdfs/gpu_batch.h"
#include "gdfs/gpu_page.h"
#include "simt.h"

namespace gdfs::gpu {

// Per-warp shared memory of the bitpack decoder: none. Lanes exchange values only through shuffles.
// The type exists so the page kernel's shared union has one member per codec.
struct BitpackSmem {};

namespace bitpack_warp {

// The page geometry and param fields, the same in every lane.
struct Geo {
  uint32_t block;      // B, samples per block, 1..1024
  uint32_t stride;     // S, 0..15, and S < B when S > 0
  uint32_t meta_each;  // metadata bytes per block: 1 (plain), 2 (outlier mode)
  uint32_t samples;    // n
  uint32_t blocks;     // nb = ceil(n / B)
  uint32_t last;       // samples in the last block
  uint32_t tail;       // raw tail bytes
  uint32_t meta;       // nb * meta_each
  uint32_t recip;      // block_recip(B), for blocks of fewer than 32 samples
};

// Offsets, rates and outlier widths travel between lanes packed in one word: a validated page of at
// most kMaxPageBytes decoded bytes has fewer than 2^23 input bytes (the worst case, int16 with B = 1 in
// outlier mode, is 32768 * 19 + 65536 + 1), rate <= 32 needs 6 bits and k <= 4 needs 3.
inline constexpr uint32_t kOffBits = 23;
inline constexpr uint32_t kOffMask = (1u << kOffBits) - 1;
GDFS_DEV uint32_t pack(uint32_t off, uint32_t rate, uint32_t k) {
  return off | rate << kOffBits | k << 29;
}
GDFS_DEV uint32_t packed_off(uint32_t m) {
  return m & kOffMask;
}
GDFS_DEV uint32_t packed_rate(uint32_t m) {
  return m >> kOffBits & 63;
}
GDFS_DEV uint32_t packed_k(uint32_t m) {
  return m >> 29;
}

GDFS_DEV uint32_t plane_bytes(uint32_t b) {
  return (b + 7) >> 3;
}
// Outliers of an outlier block: its first S differences (at least one, at most the block).
GDFS_DEV uint32_t outlier_count(uint32_t stride, uint32_t b) {
  const uint32_t c = stride ? stride : 1;
  return c < b ? c : b;
}

// One block's metadata, read and checked by the lane that owns the block. Returns false when the rate
// or selector is malformed (then `cost` is meaningless). The rules are bitpack_decode.cc's metadata_ok.
template <uint32_t W>
GDFS_DEV bool read_meta(const uint8_t* in, const Geo& g, uint32_t blk, uint32_t& rate, uint32_t& k,
                        uint32_t& cost) {
  rate = in[blk * g.meta_each];
  const uint32_t sel = g.meta_each == 2 ? in[blk * 2 + 1] : 0;
  k = sel & 1 ? ((sel >> 1) & 3) + 1 : 0;
  const bool ok = rate <= 8 * W && sel <= 7 && (sel == 0 || (sel & 1)) && k <= W;
  const uint32_t b = blk + 1 == g.blocks ? g.last : g.block;
  cost = k * outlier_count(g.stride, b) + (rate ? (rate + 1) * plane_bytes(b) : 0);
  return ok;
}

// Metadata of the 32 blocks starting at `first` (lane i: block first+i), with payload offsets from
// `base`: returns the packed word of this lane's block (0 past the last block) and advances `base`
// past the 32 payloads. Collective: every lane must call it. `ok` is the warp-wide verdict on rates
// and selectors.
template <uint32_t W>
GDFS_DEV uint32_t chunk_meta(const uint8_t* in, const Geo& g, uint32_t first, uint32_t& base, bool& ok) {
  const uint32_t blk = first + simt::lane_id();
  uint32_t rate = 0, k = 0, cost = 0;
  bool lane_ok = true;
  if (blk < g.blocks) lane_ok = read_meta<W>(in, g, blk, rate, k, cost);
  ok = simt::ballot(!lane_ok) == 0;
  if (!ok) cost = 0;  // a bad rate (up to 255) must not feed the sum; the page is refused anyway
  // Per block at most 4*15 + 33*128 bytes, so 32 blocks' sum and the page total fit 32 bits easily.
  const uint32_t incl = simt::inclusive_sum(cost);
  const uint32_t off = base + incl - cost;
  base += simt::shfl(incl, 31);
  return pack(off, rate, k);  // off < 2^23: in_size is (checked by bitpack_decode_warp)
}

// The page as one lane sees it: the buffers, and what every lane works out once per page.
struct Lane {
  const uint8_t* in;
  uint8_t* out;
  uint32_t in_size;
  bool in_words;     // `in` is 4-byte aligned: 32-bit loads are possible
  bool out_aligned;  // `out` is W-byte aligned: one store per sample
  uint32_t j0;       // lane % S (0 when S == 0), for the stride scan's carry
};

// n <= 4 bytes at p, little-endian, one byte load each: payloads start at any byte offset.
GDFS_DEV uint32_t load_le(const uint8_t* p, uint32_t n) {
  uint32_t v = 0;
  for (uint32_t i = 0; i < n; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}

// An aligned 32-bit load (p is 4-byte aligned).
GDFS_DEV uint32_t load_word(const uint8_t* p) {
#if defined(__CUDACC__)
  return *reinterpret_cast<const uint32_t*>(p);
#else
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}

// n <= 4 bytes at in+pos, little-endian, never touching a byte at or past in_size. Four bytes at an
// unaligned position are two aligned word loads and a funnel shift where the second word still lies
// inside the input (all but the last few bytes of a page), else byte loads.
GDFS_DEV uint32_t load_upto4(const Lane& ln, uint32_t pos, uint32_t n) {
  if (n == 4 && ln.in_words) {
    const uint32_t a = pos & ~3u, sh = 8 * (pos & 3u);
    if (sh == 0) return load_word(ln.in + a);
    if (a + 8 <= ln.in_size) {
      const uint32_t lo = load_word(ln.in + a), hi = load_word(ln.in + a + 4);
#if defined(__CUDACC__)
      return __funnelshift_r(lo, hi, sh);
#else
      return lo >> sh | hi << (32 - sh);  // sh is 8, 16 or 24
#endif
    }
  }
  return load_le(ln.in + pos, n);
}

// A k-byte little-endian two's-complement outlier, sign-extended to 32 bits (for int16 its low 16 bits
// are the 16-bit sign extension).
GDFS_DEV uint32_t read_outlier(const uint8_t* p, uint32_t k) {
  const uint32_t unused = 32 - 8 * k;
  return static_cast<uint32_t>(static_cast<int32_t>(load_le(p, k) << unused) >> unused);
}

// Sign and magnitude to two's complement, modulo 2^32: -0 is 0, an int16 magnitude above 2^15 wraps.
GDFS_DEV uint32_t signed_value(uint32_t mag, uint32_t sign) {
  return (mag ^ (0u - sign)) + sign;
}

// One round of transpose32: rows (lanes) l and l^m swap their off-diagonal m x m sub-blocks. `lo` has
// the columns c with (c & m) == 0: a row with (row & m) == 0 takes its partner's low columns into its
// high ones, the partner takes this row's high columns into its low ones.
GDFS_DEV uint32_t transpose_round(uint32_t x, unsigned lane, unsigned m, uint32_t lo) {
  const uint32_t t = simt::shfl_xor(x, m);
  return (lane & m) ? ((x & ~lo) | ((t >> m) & lo)) : ((x & lo) | ((t << m) & ~lo));
}

// 32x32 bit transpose across the warp: lane j returns the word whose bit l is bit j of lane l's `x`.
// Swapping the off-diagonal blocks at sizes 16, 8, 4, 2, 1 (Hacker's Delight 7-3, lanes as rows):
// five shfl_xor and about twenty logic ops per lane for 32 samples' signs and magnitudes.
GDFS_DEV uint32_t transpose32(uint32_t x) {
  const unsigned lane = simt::lane_id();
  x = transpose_round(x, lane, 16, 0x0000FFFFu);
  x = transpose_round(x, lane, 8, 0x00FF00FFu);
  x = transpose_round(x, lane, 4, 0x0F0F0F0Fu);
  x = transpose_round(x, lane, 2, 0x33333333u);
  return transpose_round(x, lane, 1, 0x55555555u);
}

// Undoes the stride-S difference within one strip. `pos` is the lane's position in its block; lane j
// adds lane j-d only when that lane holds an earlier sample of the same block (pos >= d). Hillis-
// Steele with distances S, 2S, 4S, ... below 32: afterwards lane j holds the sum of the differences of
// its residue class from the first one in this strip and block. `carry` then adds the previous strip's
// final value of the same class (lane 32 - S + j mod S there) when the class started before this strip:
// the first in-strip member of the class, at position pos0 = pos - (j - j mod S), has a predecessor in
// its block, i.e. pos0 >= S. Collective; S > 0 and uniform; j0 = lane % S.
GDFS_DEV uint32_t undo_difference(uint32_t v, uint32_t stride, uint32_t pos, uint32_t prev, uint32_t j0) {
  const uint32_t lane = simt::lane_id();
  for (uint32_t d = stride; d < 32; d <<= 1) {
    const uint32_t t = simt::shfl_up(v, d);
    if (lane >= d && pos >= d) v += t;
  }
  const uint32_t carry = simt::shfl(prev, 32 - stride + j0);
  if (static_cast<int32_t>(pos) - static_cast<int32_t>(lane - j0) >= static_cast<int32_t>(stride)) v += carry;
  return v;
}

// Writes sample `idx` (its low 8W bits, little-endian).
template <uint32_t W>
GDFS_DEV void store_sample(uint8_t* out, uint32_t idx, uint32_t v, bool aligned) {
  uint8_t* p = out + size_t{idx} * W;
#if defined(__CUDACC__)
  if (aligned) {  // the usual case: the output buffer is W-aligned, one 2- or 4-byte store per lane
    if constexpr (W == 2) {
      *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(v);
    } else {
      *reinterpret_cast<uint32_t*>(p) = v;
    }
    return;
  }
  for (uint32_t i = 0; i < W; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
#else
  (void)aligned;
  uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
                  static_cast<uint8_t>(v >> 24)};
  std::memcpy(p, b, W);
#endif
}

// Blocks of B >= 32 samples: each block is decoded strip by strip; all lanes are in the block.
template <uint32_t W>
GDFS_DEV void decode_chunk_wide(const Lane& ln, const Geo& g, uint32_t first, uint32_t packed) {
  const uint32_t lane = simt::lane_id();
  const uint32_t count = g.blocks - first < 32 ? g.blocks - first : 32;
  for (uint32_t bi = 0; bi < count; ++bi) {  // uniform: every lane walks the same blocks
    const uint32_t m = simt::shfl(packed, bi);
    const uint32_t blk = first + bi;
    const uint32_t rate = packed_rate(m), k = packed_k(m), off = packed_off(m);
    const uint32_t b = blk + 1 == g.blocks ? g.last : g.block;
    const uint32_t c = k ? outlier_count(g.stride, b) : 0;
    const uint32_t nbytes = plane_bytes(b);
    const uint32_t planes = off + k * c;  // sign bitmap, then plane 0, 1, ...
    uint32_t prev = 0;
    for (uint32_t s = 0; 32 * s < b; ++s) {
      const uint32_t i = 32 * s + lane;  // this lane's position in the block
      // Bytes 4s.. of each bitmap in this strip: 4, or fewer in the block's last strip.
      const uint32_t avail = nbytes - 4 * s < 4 ? nbytes - 4 * s : 4;
      uint32_t v = 0;
      if (rate) {  // uniform; rate 0 blocks have neither signs nor planes
        // Word `lane` is the sign bitmap (lane 0) or plane lane-1; with rate 32 (int32 only) plane 31 is
        // word 32, past the last lane: every lane loads it (a broadcast) and takes its own bit.
        // With B = 32 the words are contiguous: one coalesced 128-byte load when they are aligned.
        const uint32_t word = lane <= rate ? load_upto4(ln, planes + lane * nbytes + 4 * s, avail) : 0;
        const uint32_t bits = transpose32(word);
        uint32_t mag = bits >> 1;
        if (rate == 32) mag |= (load_upto4(ln, planes + 32 * nbytes + 4 * s, avail) >> lane & 1) << 31;
        v = signed_value(mag, bits & 1);
      }
      if (i < c) v = read_outlier(ln.in + off + i * k, k);
      if (g.stride) v = prev = undo_difference(v, g.stride, i, prev, ln.j0);
      if (i < b) store_sample<W>(ln.out, blk * g.block + i, v, ln.out_aligned);
    }
  }
}

// q / B without a division (about twenty instructions on a GPU): (q * (2^16/B + 1)) >> 16. The error
// of the reciprocal is below B / 2^16 relative, so the quotient is exact while q * B < 2^16; the narrow
// path has q < 32 * B <= 992 and B <= 31. (The emulator test checks every case.)
GDFS_DEV uint32_t block_recip(uint32_t block) {
  return 65536u / block + 1;
}
GDFS_DEV uint32_t div_block(uint32_t q, uint32_t recip) {
  return (q * recip) >> 16;
}

// Blocks of B < 32 samples: the 32 blocks of a chunk hold 32*B samples (fewer in the last chunk), which
// are decoded as consecutive strips of 32 samples that may cut blocks anywhere.
template <uint32_t W>
GDFS_DEV void decode_chunk_narrow(const Lane& ln, const Geo& g, uint32_t first, uint32_t packed) {
  const uint32_t lane = simt::lane_id();
  const uint32_t o = first * g.block;  // the chunk's first sample
  const uint32_t count = g.samples - o < 32 * g.block ? g.samples - o : 32 * g.block;
  uint32_t prev = 0;
  for (uint32_t q0 = 0; q0 < count; q0 += 32) {  // uniform bounds
    const uint32_t q = q0 + lane;                // sample within the chunk
    const bool live = q < count;
    const uint32_t bl = live ? div_block(q, g.recip) : 0;  // block within the chunk
    const uint32_t i = q - bl * g.block;                   // position within the block
    const uint32_t m = simt::shfl(packed, bl);
    const uint32_t blk = first + bl;
    const uint32_t rate = live ? packed_rate(m) : 0, k = live ? packed_k(m) : 0, off = packed_off(m);
    const uint32_t b = blk + 1 == g.blocks ? g.last : g.block;
    const uint32_t c = k ? outlier_count(g.stride, b) : 0;
    uint32_t v = 0;
    if (rate) {  // per lane: lanes of a block read the same bytes, neighbouring blocks adjacent bytes
      const uint32_t nbytes = plane_bytes(b);
      const uint8_t* p = ln.in + off + k * c + (i >> 3);
      const uint32_t bit = i & 7;
      uint32_t mag = 0;
      for (uint32_t pl = 0; pl < rate; ++pl) mag |= (uint32_t{p[(pl + 1) * nbytes]} >> bit & 1u) << pl;
      v = signed_value(mag, uint32_t{p[0]} >> bit & 1u);
    }
    if (i < c) v = read_outlier(ln.in + off + i * k, k);
    if (g.stride) v = prev = undo_difference(v, g.stride, i, prev, ln.j0);
    if (live) store_sample<W>(ln.out, o + q, v, ln.out_aligned);
  }
}

template <uint32_t W>
GDFS_DEV PageStatus decode_page(const DevicePage& p, const Geo& g) {
  const uint8_t* in = p.in;
  // Pass 1: every rate and selector legal, and the sizes add up to exactly in_size. The metadata and
  // tail must fit before any metadata byte is read.
  if (p.in_size < g.meta + g.tail) return PageStatus::kBadData;
  const uint32_t budget = p.in_size - g.tail;  // where the payloads must end
  uint32_t end = g.meta;
  for (uint32_t first = 0; first < g.blocks; first += 32) {  // uniform bounds, uniform exits
    bool ok = true;
    chunk_meta<W>(in, g, first, end, ok);
    if (!ok || end > budget) return PageStatus::kBadData;
  }
  if (end != budget) return PageStatus::kBadData;

  // Pass 2: decode. Offsets are recomputed per chunk, which is cheaper than keeping them in shared
  // memory (a 32-block chunk costs one ballot and six shuffles; decoding it costs far more).
  Lane ln;
  ln.in = in;
  ln.out = p.out;
  ln.in_size = p.in_size;
  ln.in_words = (reinterpret_cast<uintptr_t>(in) & 3) == 0;
  ln.out_aligned = (reinterpret_cast<uintptr_t>(p.out) & (W - 1)) == 0;
  ln.j0 = g.stride ? simt::lane_id() % g.stride : 0;
  uint32_t base = g.meta;
  for (uint32_t first = 0; first < g.blocks; first += 32) {
    bool ok = true;
    const uint32_t packed = chunk_meta<W>(in, g, first, base, ok);
    if (g.block >= 32) {
      decode_chunk_wide<W>(ln, g, first, packed);
    } else {
      decode_chunk_narrow<W>(ln, g, first, packed);
    }
  }
  // The raw tail: the last t (< W) bytes of both.
  const uint32_t lane = simt::lane_id();
  if (lane < g.tail) p.out[g.samples * W + lane] = in[budget + lane];
  return PageStatus::kOk;
}

}  // namespace bitpack_warp

// Decodes one bitpack page with the whole warp (all 32 lanes call it, with the same page). Returns the
// CPU decoder's verdict: kOk with exactly its bytes, kBadData when it says kBadData, and kUnsupported
// for a param that from_param() refuses (a stride not below the block size) or a page above
// kMaxPageBytes (the packed offsets assume that bound; the batch API never passes larger pages).
GDFS_DEV PageStatus bitpack_decode_warp(const DevicePage& p, BitpackSmem& /*sm*/) {
  using bitpack_warp::Geo;
  const uint32_t param = p.param;
  Geo g;
  // Bit 0: int16 or int32 samples; bit 1: plain or outlier mode; bits 2..11: B - 1; bits 12..15: S.
  const uint32_t w = param & 1 ? 4 : 2;
  g.meta_each = param >> 1 & 1 ? 2 : 1;
  g.block = (param >> 2 & 0x3FF) + 1;
  g.stride = param >> 12;
  if (g.stride != 0 && g.stride >= g.block) return PageStatus::kUnsupported;  // from_param()'s rule
  if (p.out_size > kMaxPageBytes) return PageStatus::kUnsupported;
  // No page of at most kMaxPageBytes adds up to 2^23 input bytes or more (see kOffBits), so the CPU
  // says kBadData for such an input too. Refusing it here keeps every offset and sum below 2^23.
  if (p.in_size > bitpack_warp::kOffMask) return PageStatus::kBadData;
  g.samples = p.out_size / w;
  g.tail = p.out_size % w;
  g.blocks = (g.samples + g.block - 1) / g.block;
  g.last = g.blocks ? g.samples - (g.blocks - 1) * g.block : 0;
  g.meta = g.blocks * g.meta_each;
  g.recip = bitpack_warp::block_recip(g.block);
  return w == 2 ? bitpack_warp::decode_page<2>(p, g) : bitpack_warp::decode_page<4>(p, g);
}

}  // namespace gdfs::gpu
