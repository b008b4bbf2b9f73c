// The bitpack decoder. Two passes over a page: the first reads only the block metadata, checks every
// rate and selector and that the block sizes add up to the input size exactly, so the second can decode
// blocks without a single bounds check. Decoding a block is branch-free apart from loops over its rate:
// eight planes of one 8-sample group are gathered into a 64-bit word and transposed (bitpack_layout.h),
// which yields one byte of each of the eight samples; sign bits are spread the same way, and a plain
// loop that compilers vectorize joins the bytes, applies the signs and undoes the first difference.
#include <algorithm>
#include <cstring>

#include "bitpack_block.h"
#include "bitpack_layout.h"
#include "gdfs/bitpack.h"

namespace gdfs::bitpack {
namespace {

// Per-block scratch: byte q of every sample in lane[q], sign bits one per byte. Padded to whole groups.
template <class U>
struct Scratch {
  alignas(64) uint8_t lane[sizeof(U)][kMaxBlock + 8];
  alignas(64) uint8_t sign[kMaxBlock + 8];
  alignas(64) U v[kMaxBlock + 8];
};

// Byte k of the result is byte g of plane k (k < count): the planes of one group, side by side.
template <unsigned kCount>
inline uint64_t gather(const uint8_t* planes, size_t nb, size_t g) {
  uint64_t w = 0;
  for (unsigned k = 0; k < kCount; ++k) w |= uint64_t{planes[k * nb + g]} << (8 * k);
  return w;
}
inline uint64_t gather(const uint8_t* planes, size_t nb, size_t g, unsigned count) {
  uint64_t w = 0;
  for (unsigned k = 0; k < count; ++k) w |= uint64_t{planes[k * nb + g]} << (8 * k);
  return w;
}

// Planes 8q .. 8q+count-1 of a block into lane[q]: byte q of each sample.
inline void planes_to_lane(const uint8_t* planes, size_t nb, unsigned count, uint8_t* lane) {
  if (count == 8) {  // the common case, unrolled: 8 loads, a transpose and a store per 8 samples
    for (size_t g = 0; g < nb; ++g) {
      const uint64_t w = transpose8(gather<8>(planes, nb, g));
      std::memcpy(lane + 8 * g, &w, 8);
    }
    return;
  }
  for (size_t g = 0; g < nb; ++g) {
    const uint64_t w = transpose8(gather(planes, nb, g, count));
    std::memcpy(lane + 8 * g, &w, 8);
  }
}

// Sign bitmap and `rate` planes of a block of `b` samples -> the signed differences in s.v.
template <class U>
void unpack(const uint8_t* p, unsigned rate, unsigned b, Scratch<U>& s) {
  const size_t nb = plane_bytes(b);
  const uint8_t* planes = p + nb;
  unsigned q = 0;
  for (; q * 8 < rate; ++q) planes_to_lane(planes + 8 * q * nb, nb, std::min(8u, rate - 8 * q), s.lane[q]);
  for (; q < sizeof(U); ++q) std::memset(s.lane[q], 0, 8 * nb);
  for (size_t g = 0; g < nb; ++g) {
    const uint64_t w = spread_bits(p[g]);
    std::memcpy(s.sign + 8 * g, &w, 8);
  }
  for (unsigned i = 0; i < b; ++i) {
    U m = s.lane[0][i];
    for (unsigned k = 1; k < sizeof(U); ++k) m |= static_cast<U>(U{s.lane[k][i]} << (8 * k));
    const U sg = s.sign[i];
    s.v[i] = static_cast<U>((m ^ static_cast<U>(0 - sg)) + sg);  // sign-magnitude to two's complement
  }
}

// Undoes the block-local first difference: a running sum per residue class mod `stride`.
template <class U>
void undo_difference(U* v, unsigned b, unsigned stride) {
  if (stride == 1) {
    U acc = 0;
    for (unsigned i = 0; i < b; ++i) v[i] = acc = static_cast<U>(acc + v[i]);
    return;
  }
  if (stride == 0) return;
  for (unsigned i = stride; i < b; ++i) v[i] = static_cast<U>(v[i] + v[i - stride]);
}

// The metadata of a whole page, checked: every rate and selector legal, and the payloads, metadata
// and tail adding up to exactly `in_size`. Accumulates a flag rather than branching per block.
template <class U>
bool metadata_ok(const uint8_t* meta, const Geometry& g, const Params& p, size_t in_size) {
  constexpr unsigned kMaxRate = 8 * sizeof(U);
  if (in_size < g.meta() + g.tail) return false;
  size_t total = 0;
  bool bad = false;
  for (size_t i = 0; i < g.blocks; ++i) {
    const unsigned rate = meta[i * g.meta_each];
    const unsigned sel = g.meta_each == 2 ? meta[i * 2 + 1] : 0;
    bad |= rate > kMaxRate || sel > 7 || (sel != 0 && !(sel & kSelOutlier)) || outlier_bytes(sel) > sizeof(U);
    total += block_cost(rate, sel, i + 1 == g.blocks ? g.last : p.block, p.stride);
  }
  return !bad && total == in_size - g.meta() - g.tail;
}

template <class U>
Status decode(const uint8_t* in, size_t in_size, const Params& p, uint8_t* out, size_t out_size,
              DecodePath path) {
  const Geometry g = geometry(out_size, p);
  if (!metadata_ok<U>(in, g, p, in_size)) return Status::kBadData;
  if constexpr (sizeof(U) == 2) {
    if (path == DecodePath::kAvx512 && p.block == 32) {
      decode_int16_b32_avx512(in, g, p, out);
      return Status::kOk;
    }
  }
  const uint8_t* src = in + g.meta();
  for (size_t i = 0; i < g.blocks; ++i) {
    const unsigned b = i + 1 == g.blocks ? g.last : p.block;
    const unsigned rate = in[i * g.meta_each];
    const unsigned k = g.meta_each == 2 ? outlier_bytes(in[i * 2 + 1]) : 0;
    decode_block<U>(src, rate, k, b, p.stride, out + i * p.block * sizeof(U));
    src += k * outlier_count(p.stride, b) + planes_cost(rate, b);
  }
  if (g.tail) std::memcpy(out + g.samples * sizeof(U), src, g.tail);
  return Status::kOk;
}

}  // namespace

template <class U>
void decode_block(const uint8_t* src, unsigned rate, unsigned k, unsigned b, unsigned stride, uint8_t* out) {
  Scratch<U> s;  // 5-9 KiB of stack, every byte read written first: no state between calls
  const unsigned outliers = k ? outlier_count(stride, b) : 0;
  if (rate) {
    unpack(src + k * outliers, rate, b, s);
  } else {
    std::fill(s.v, s.v + b, U{0});
  }
  for (unsigned j = 0; j < outliers; ++j) s.v[j] = read_outlier<U>(src + j * k, k);
  undo_difference(s.v, b, stride);
  std::memcpy(out, s.v, size_t{b} * sizeof(U));
}
template void decode_block<uint16_t>(const uint8_t*, unsigned, unsigned, unsigned, unsigned, uint8_t*);
template void decode_block<uint32_t>(const uint8_t*, unsigned, unsigned, unsigned, unsigned, uint8_t*);

DecodePath decode_path(DecodePath want) {
  if (want == DecodePath::kPortable) return DecodePath::kPortable;
  return avx512_bitpack_usable() ? DecodePath::kAvx512 : DecodePath::kPortable;
}

Status decompress(const void* in, size_t in_size, const Params& p, void* out, size_t out_size,
                  DecodePath path) {
  if (!valid(p)) return Status::kBadParam;
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  path = decode_path(path);
  return p.type == Type::kInt16 ? decode<uint16_t>(src, in_size, p, dst, out_size, path)
                                : decode<uint32_t>(src, in_size, p, dst, out_size, path);
}

}  // namespace gdfs::bitpack
