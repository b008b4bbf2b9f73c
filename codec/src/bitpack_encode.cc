// The bitpack encoder. Per block: the block-local first difference, sign and magnitude of each
// difference, the rate (bit width of the largest magnitude), and in outlier mode whether storing the
// first difference whole is cheaper; then the metadata bytes, and the sign bitmap and bit-planes,
// produced eight samples at a time by the same 8x8 transpose the decoder uses.
#include <algorithm>
#include <bit>
#include <cstring>

#include "bitpack_layout.h"
#include "gdfs/bitpack.h"

namespace gdfs::bitpack {
namespace {

// One block, planned: what it costs and everything needed to write it.
template <class U>
struct Block {
  unsigned b = 0, stride = 0;
  unsigned rate = 0, sel = 0;   // metadata
  U first[kMaxStride];          // the first differences, as they are (the outliers when sel != 0)
  U mag[kMaxBlock + 8];         // magnitudes, zero past b up to the next multiple of 8
  uint8_t sign[kMaxBlock + 8];  // 1 = negative
  size_t cost() const { return block_cost(rate, sel, b, stride); }
};

// Bytes of the shortest little-endian two's-complement form of `v` (1..sizeof(U)).
template <class U>
unsigned signed_bytes(U v) {
  using S = std::make_signed_t<U>;
  const U folded = static_cast<U>(v ^ static_cast<U>(static_cast<S>(v) >> (8 * sizeof(U) - 1)));
  return (static_cast<unsigned>(std::bit_width(folded)) + 1 + 7) / 8;  // + the sign bit
}

template <class U>
void plan(const uint8_t* in, unsigned b, const Params& p, Block<U>& blk) {
  constexpr unsigned kBits = 8 * sizeof(U);
  U x[kMaxBlock];
  std::memcpy(x, in, size_t{b} * sizeof(U));
  const unsigned outliers = outlier_count(p.stride, b);
  U all = 0, rest = 0;
  unsigned k = 1;  // bytes of the widest outlier
  for (unsigned i = 0; i < b; ++i) {
    const U d = p.stride && i >= p.stride ? static_cast<U>(x[i] - x[i - p.stride]) : x[i];
    const U s = static_cast<U>(d >> (kBits - 1));
    const U m = static_cast<U>((d ^ static_cast<U>(0 - s)) + s);  // |d|; INT_MIN gives 2^(kBits-1)
    blk.mag[i] = m;
    blk.sign[i] = static_cast<uint8_t>(s);
    all |= m;
    rest |= i >= outliers ? m : 0;
    if (i < outliers) blk.first[i] = d, k = std::max(k, signed_bytes(d));
  }
  std::fill(blk.mag + b, blk.mag + plane_bytes(b) * 8, U{0});
  std::fill(blk.sign + b, blk.sign + plane_bytes(b) * 8, uint8_t{0});
  blk.b = b;
  blk.stride = p.stride;
  blk.rate = static_cast<unsigned>(std::bit_width(all));
  blk.sel = 0;
  if (p.mode != Mode::kOutlier) return;
  const unsigned rest_rate = static_cast<unsigned>(std::bit_width(rest));
  if (k * outliers + planes_cost(rest_rate, b) < blk.cost()) {  // ties stay plain: one spelling per block
    blk.rate = rest_rate;
    blk.sel = kSelOutlier | (k - 1) << 1;
    std::fill(blk.mag, blk.mag + outliers, U{0});  // the outliers leave the planes and the bitmap
    std::fill(blk.sign, blk.sign + outliers, uint8_t{0});
  }
}

// Writes the outlier, sign bitmap and planes of a planned block at `out`; returns the bytes written.
template <class U>
size_t write_block(const Block<U>& blk, uint8_t* out) {
  uint8_t* o = out;
  const unsigned k = outlier_bytes(blk.sel);
  for (unsigned j = 0; k && j < outlier_count(blk.stride, blk.b); ++j)
    for (unsigned i = 0; i < k; ++i) *o++ = static_cast<uint8_t>(blk.first[j] >> (8 * i));
  if (blk.rate == 0) return static_cast<size_t>(o - out);
  const size_t nb = plane_bytes(blk.b);
  for (size_t g = 0; g < nb; ++g) {
    uint8_t bits = 0;
    for (unsigned j = 0; j < 8; ++j) bits |= static_cast<uint8_t>(blk.sign[8 * g + j] << j);
    o[g] = bits;
  }
  uint8_t* planes = o + nb;
  for (unsigned q = 0; q * 8 < blk.rate; ++q) {  // planes 8q .. 8q+7
    const unsigned count = std::min(8u, blk.rate - 8 * q);
    for (size_t g = 0; g < nb; ++g) {
      uint64_t w = 0;  // byte j: bits 8q..8q+7 of sample 8g+j
      for (unsigned j = 0; j < 8; ++j)
        w |= uint64_t{static_cast<uint8_t>(blk.mag[8 * g + j] >> (8 * q))} << (8 * j);
      w = transpose8(w);  // byte k: bit 8q+k of samples 8g..8g+7, i.e. byte g of plane 8q+k
      for (unsigned k = 0; k < count; ++k) planes[(8 * q + k) * nb + g] = static_cast<uint8_t>(w >> (8 * k));
    }
  }
  return static_cast<size_t>(planes + blk.rate * nb - out);
}

template <class U>
size_t sized(const uint8_t* in, size_t n, const Params& p) {
  const Geometry g = geometry(n, p);
  Block<U> blk;
  size_t total = g.meta() + g.tail;
  for (size_t i = 0; i < g.blocks; ++i) {
    plan(in + i * p.block * sizeof(U), i + 1 == g.blocks ? g.last : p.block, p, blk);
    total += blk.cost();
  }
  return total;
}

template <class U>
size_t encode(const uint8_t* in, size_t n, const Params& p, uint8_t* out, size_t cap) {
  const Geometry g = geometry(n, p);
  if (cap < compress_bound(n, p) && cap < sized<U>(in, n, p)) return 0;
  uint8_t* meta = out;
  uint8_t* o = out + g.meta();
  Block<U> blk;
  for (size_t i = 0; i < g.blocks; ++i) {
    plan(in + i * p.block * sizeof(U), i + 1 == g.blocks ? g.last : p.block, p, blk);
    meta[i * g.meta_each] = static_cast<uint8_t>(blk.rate);
    if (g.meta_each == 2) meta[i * 2 + 1] = static_cast<uint8_t>(blk.sel);
    o += write_block(blk, o);
  }
  if (g.tail) std::memcpy(o, in + g.samples * sizeof(U), g.tail);
  return static_cast<size_t>(o + g.tail - out);
}

}  // namespace

size_t compressed_size(const void* in, size_t n, const Params& p) {
  if (!valid(p)) return 0;
  const auto* src = static_cast<const uint8_t*>(in);
  return p.type == Type::kInt16 ? sized<uint16_t>(src, n, p) : sized<uint32_t>(src, n, p);
}

size_t compress(const void* in, size_t n, const Params& p, void* out, size_t out_cap) {
  if (!valid(p)) return 0;
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  return p.type == Type::kInt16 ? encode<uint16_t>(src, n, p, dst, out_cap)
                                : encode<uint32_t>(src, n, p, dst, out_cap);
}

}  // namespace gdfs::bitpack
