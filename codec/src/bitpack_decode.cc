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

// Byte k of the result is byte g of plane k (k < kCount): the planes of one group, side by side.
template <unsigned kCount>
inline uint64_t gather(const uint8_t* planes, size_t nb, size_t g) {
  uint64_t w = 0;
  for (unsigned k = 0; k < kCount; ++k) w |= uint64_t{planes[k * nb + g]} << (8 * k);
  return w;
}

// Planes 8q .. 8q+kCount-1 of a block into lane[q]: byte q of each sample. The count is a template
// argument so that each group is kCount loads, a transpose and a store, with no inner loop.
template <unsigned kCount>
void planes_to_lane(const uint8_t* planes, size_t nb, uint8_t* lane) {
  for (size_t g = 0; g < nb; ++g) {
    const uint64_t w = transpose8(gather<kCount>(planes, nb, g));
    std::memcpy(lane + 8 * g, &w, 8);
  }
}
inline void planes_to_lane(const uint8_t* planes, size_t nb, unsigned count, uint8_t* lane) {
  switch (count) {  // once per octet of planes per block
    case 1:
      return planes_to_lane<1>(planes, nb, lane);
    case 2:
      return planes_to_lane<2>(planes, nb, lane);
    case 3:
      return planes_to_lane<3>(planes, nb, lane);
    case 4:
      return planes_to_lane<4>(planes, nb, lane);
    case 5:
      return planes_to_lane<5>(planes, nb, lane);
    case 6:
      return planes_to_lane<6>(planes, nb, lane);
    case 7:
      return planes_to_lane<7>(planes, nb, lane);
    default:
      return planes_to_lane<8>(planes, nb, lane);
  }
}

// Joins the first kLanes byte lanes of every sample of `nb` whole groups and applies the signs. The
// lanes past kLanes are zero, so they are not read (nor written). Eight samples per step: compilers
// turn the inner loop into a few vector instructions.
template <class U, unsigned kLanes>
void join(const Scratch<U>& s, size_t nb, U* v) {
  for (size_t g = 0; g < nb; ++g) {
    for (unsigned j = 0; j < 8; ++j) {
      const size_t i = 8 * g + j;
      U m = s.lane[0][i];
      for (unsigned q = 1; q < kLanes; ++q) m |= static_cast<U>(U{s.lane[q][i]} << (8 * q));
      const U sg = s.sign[i];
      v[i] = static_cast<U>((m ^ static_cast<U>(0 - sg)) + sg);  // sign-magnitude to two's complement
    }
  }
}

// Sign bitmap and `rate` planes of a block of `b` samples -> the signed differences in s.v (whole groups
// of 8: the padding past b is written too, and never copied out).
// kGroups: the block's group count when known at compile time (0: from b), so that the common block
// sizes get loops of constant, short trip counts that compilers unroll.
template <class U, size_t kGroups>
void unpack(const uint8_t* p, unsigned rate, unsigned b, Scratch<U>& s) {
  const size_t nb = kGroups ? kGroups : plane_bytes(b);
  const uint8_t* planes = p + nb;
  const unsigned lanes = (rate + 7) / 8;  // 1..sizeof(U): the byte lanes with any plane in them
  for (unsigned q = 0; q < lanes; ++q)
    planes_to_lane(planes + 8 * q * nb, nb, std::min(8u, rate - 8 * q), s.lane[q]);
  for (size_t g = 0; g < nb; ++g) {
    const uint64_t w = spread_bits(p[g]);
    std::memcpy(s.sign + 8 * g, &w, 8);
  }
  if constexpr (sizeof(U) == 2) {
    if (lanes == 1) return join<U, 1>(s, nb, s.v);
    return join<U, 2>(s, nb, s.v);
  } else {
    switch (lanes) {
      case 1:
        return join<U, 1>(s, nb, s.v);
      case 2:
        return join<U, 2>(s, nb, s.v);
      case 3:
        return join<U, 3>(s, nb, s.v);
      default:
        return join<U, 4>(s, nb, s.v);
    }
  }
}

// Undoes the block-local first difference (a running sum per residue class mod `stride`) and stores
// the `b` samples at out.
template <class U>
void undo_difference(U* v, unsigned b, unsigned stride, uint8_t* out) {
  if (stride == 1) {  // the common case: the running sum goes straight to the output
    U acc = 0;
    for (unsigned i = 0; i < b; ++i) {
      acc = static_cast<U>(acc + v[i]);
      std::memcpy(out + i * sizeof(U), &acc, sizeof(U));
    }
    return;
  }
  for (unsigned i = stride; stride && i < b; ++i) v[i] = static_cast<U>(v[i] + v[i - stride]);
  std::memcpy(out, v, size_t{b} * sizeof(U));
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
PageStatus decode(const uint8_t* in, size_t in_size, const Params& p, uint8_t* out, size_t out_size,
              DecodePath path) {
  const Geometry g = geometry(out_size, p);
  if (!metadata_ok<U>(in, g, p, in_size)) return PageStatus::kBadData;
  if (path != DecodePath::kPortable && vector_block(p.block)) {
    (path == DecodePath::kAvx512 ? kAvx512Pages : kAvx2Pages).page<U>()(in, g, p, out);
    return PageStatus::kOk;
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
  return PageStatus::kOk;
}

}  // namespace

template <class U>
void decode_block(const uint8_t* src, unsigned rate, unsigned k, unsigned b, unsigned stride, uint8_t* out) {
  Scratch<U> s;  // 5-9 KiB of stack, every byte read written first: no state between calls
  const unsigned outliers = k ? outlier_count(stride, b) : 0;
  if (rate) {
    const uint8_t* p = src + k * outliers;
    switch (b) {  // the block sizes mkfs picks, whole: group loops of constant trip count
      case 32:
        unpack<U, 4>(p, rate, b, s);
        break;
      case 64:
        unpack<U, 8>(p, rate, b, s);
        break;
      case 128:
        unpack<U, 16>(p, rate, b, s);
        break;
      default:
        unpack<U, 0>(p, rate, b, s);
        break;
    }
  } else {
    std::fill(s.v, s.v + b, U{0});
  }
  for (unsigned j = 0; j < outliers; ++j) s.v[j] = read_outlier<U>(src + j * k, k);
  undo_difference(s.v, b, stride, out);
}
template void decode_block<uint16_t>(const uint8_t*, unsigned, unsigned, unsigned, unsigned, uint8_t*);
template void decode_block<uint32_t>(const uint8_t*, unsigned, unsigned, unsigned, unsigned, uint8_t*);

template <class U>
void finish_page(const uint8_t* in, const Geometry& g, const Params& p, size_t whole, const uint8_t* src,
                 uint8_t* out) {
  if (whole < g.blocks) {
    const unsigned rate = in[whole * g.meta_each];
    const unsigned k = g.meta_each == 2 ? outlier_bytes(in[whole * 2 + 1]) : 0;
    decode_block<U>(src, rate, k, g.last, p.stride, out + whole * p.block * sizeof(U));
    src += k * outlier_count(p.stride, g.last) + planes_cost(rate, g.last);
  }
  if (g.tail) std::memcpy(out + g.samples * sizeof(U), src, g.tail);
}
template void finish_page<uint16_t>(const uint8_t*, const Geometry&, const Params&, size_t, const uint8_t*,
                                    uint8_t*);
template void finish_page<uint32_t>(const uint8_t*, const Geometry&, const Params&, size_t, const uint8_t*,
                                    uint8_t*);

DecodePath decode_path(DecodePath want) {
  switch (want) {
    case DecodePath::kPortable:
      return DecodePath::kPortable;
    case DecodePath::kAvx2:
      return avx2_bitpack_usable() ? DecodePath::kAvx2 : DecodePath::kPortable;
    default:
      if (avx512_bitpack_usable()) return DecodePath::kAvx512;
      return avx2_bitpack_usable() ? DecodePath::kAvx2 : DecodePath::kPortable;
  }
}

const char* path_name(DecodePath p) {
  switch (p) {
    case DecodePath::kAuto:
      return "auto";
    case DecodePath::kPortable:
      return "portable";
    case DecodePath::kAvx512:
      return "avx512";
    case DecodePath::kAvx2:
      return "avx2";
  }
  return "?";
}

PageStatus decompress(const void* in, size_t in_size, const Params& p, void* out, size_t out_size,
                  DecodePath path) {
  if (!valid(p)) return PageStatus::kUnsupported;
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  path = decode_path(path);
  return p.type == Type::kInt16 ? decode<uint16_t>(src, in_size, p, dst, out_size, path)
                                : decode<uint32_t>(src, in_size, p, dst, out_size, path);
}

}  // namespace gdfs::bitpack
