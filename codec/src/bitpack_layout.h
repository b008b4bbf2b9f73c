// What the bitpack encoder and decoder share: page geometry, the cost of a block, the selector byte,
// and the 8x8 bit transpose that turns bit-planes into samples and back. docs/FORMAT.md, 4.1.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gdfs/bitpack.h"

namespace gdfs::bitpack {

static_assert(std::endian::native == std::endian::little, "samples are copied as little-endian words");

// How a page of `n` decoded bytes splits into samples, blocks and raw tail bytes.
struct Geometry {
  size_t samples = 0;      // n / sample size
  size_t blocks = 0;       // ceil(samples / block)
  unsigned last = 0;       // samples in the last block (== block unless the page ends mid-block)
  unsigned tail = 0;       // n % sample size: trailing bytes carried raw
  unsigned meta_each = 0;  // metadata bytes per block: 1 (plain: rate) or 2 (outlier: rate, sel)
  size_t meta() const { return blocks * meta_each; }
};

inline Geometry geometry(size_t n, const Params& p) {
  Geometry g;
  const unsigned w = sample_bytes(p.type);
  g.samples = n / w;
  g.tail = static_cast<unsigned>(n % w);
  g.blocks = (g.samples + p.block - 1) / p.block;
  g.last = g.blocks ? static_cast<unsigned>(g.samples - (g.blocks - 1) * p.block) : 0;
  g.meta_each = p.mode == Mode::kOutlier ? 2 : 1;
  return g;
}

// Bytes of one bit-plane (and of the sign bitmap) of a block of `b` samples.
inline constexpr size_t plane_bytes(unsigned b) {
  return (b + 7) / 8;
}

// Selector byte (outlier mode): bit 0 = the block starts with outliers, bits 1-2 = the byte count of
// each - 1; 0 when it does not. Every other value is malformed.
inline constexpr unsigned kSelOutlier = 1;
inline constexpr unsigned outlier_bytes(unsigned sel) {
  return sel & kSelOutlier ? ((sel >> 1) & 3) + 1 : 0;
}
// The outliers of a block are its first `stride` differences (at least one, at most the block): those
// with no predecessor in the block, whole samples, which would otherwise set the block's rate. cuSZp2
// has one per block because its prediction has stride 1.
inline constexpr unsigned outlier_count(unsigned stride, unsigned b) {
  const unsigned c = stride ? stride : 1;
  return c < b ? c : b;
}

// Bytes of a block's sign bitmap and planes (none at rate 0).
inline constexpr size_t planes_cost(unsigned rate, unsigned b) {
  return rate ? (rate + 1) * plane_bytes(b) : 0;
}
// Payload bytes of a block: its outliers, then its sign bitmap and planes.
inline constexpr size_t block_cost(unsigned rate, unsigned sel, unsigned b, unsigned stride) {
  return outlier_bytes(sel) * outlier_count(stride, b) + planes_cost(rate, b);
}

// Transposes the 8x8 bit matrix whose row i is byte i and column j is bit j (Hacker's Delight 7-3):
// byte p bit j <-> byte j bit p. An involution, so it both gathers planes into samples and back.
// Three rounds of swapping off-diagonal 1x1, 2x2 and 4x4 sub-blocks: 15 ALU ops, no branches.
inline constexpr uint64_t transpose8(uint64_t x) {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x ^= t ^ (t << 28);
  return x;
}

// Byte j of the result is bit j of `b` (0 or 1): one sign-bitmap byte spread over 8 sample bytes.
inline constexpr uint64_t spread_bits(uint8_t b) {
  const uint64_t t = (b * 0x0101010101010101ull) & 0x8040201008040201ull;  // byte j keeps only bit j
  return ((t + 0x7F7F7F7F7F7F7F7Full) >> 7) & 0x0101010101010101ull;       // nonzero byte -> 1, no carry out
}

// Sign-extends the `k`-byte little-endian outlier at p (k <= sizeof(U); 0 when k is 0, with no shift by
// the full width, which would be undefined for int32).
template <class U>
U read_outlier(const uint8_t* p, unsigned k) {
  U v = 0;
  for (unsigned i = 0; i < k; ++i) v = static_cast<U>(v | U{p[i]} << (8 * i));
  const unsigned unused = 8 * (sizeof(U) - k);
  using S = std::make_signed_t<U>;
  return unused && k ? static_cast<U>(static_cast<S>(static_cast<U>(v << unused)) >> unused) : v;
}

}  // namespace gdfs::bitpack
