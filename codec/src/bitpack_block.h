// The bitpack decoder's internal entry points: one block with the portable code, and the AVX-512 page
// loop, which takes the blocks it has a fast path for and hands the rest to the portable code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bitpack_layout.h"
#include "cpu.h"

namespace gdfs::bitpack {

// Decodes one block whose metadata was checked: `src` is its payload (outlier of `k` bytes, then the
// sign bitmap and `rate` planes), `out` receives its `b` samples.
template <class U>
void decode_block(const uint8_t* src, unsigned rate, unsigned k, unsigned b, unsigned stride, uint8_t* out);

// The vector page loops take pages whose block size is one of these (what mkfs picks from); every other
// block size is decoded by the portable code. Their last block, when partial, goes to decode_block.
inline constexpr bool vector_block(unsigned b) {
  return b == 16 || b == 32 || b == 64 || b == 128;
}

// Calls f.template operator()<NB>() with NB, the bytes per bit-plane, of a vector_block() size: the
// vector page loops are templates on it.
template <class F>
void with_plane_bytes(unsigned block, F&& f) {
  switch (block) {
    case 16:
      return f.template operator()<2>();
    case 32:
      return f.template operator()<4>();
    case 64:
      return f.template operator()<8>();
    default:
      return f.template operator()<16>();
  }
}

// The blocks of `block` samples a page has whole: all but a partial last one.
inline size_t whole_blocks(const Geometry& g, unsigned block) {
  return g.blocks && g.last < block ? g.blocks - 1 : g.blocks;
}
// What a vector page loop leaves after its `whole` blocks, `src` just past them: the partial last block,
// if any (by the portable code), and the raw tail bytes.
template <class U>
void finish_page(const uint8_t* in, const Geometry& g, const Params& p, size_t whole, const uint8_t* src,
                 uint8_t* out);

// The vector page loops of one instruction set (bitpack_simd.h): every block of a page whose metadata
// was checked, with a vector_block() size.
struct SimdPages {
  using Page = void (*)(const uint8_t* in, const Geometry& g, const Params& p, uint8_t* out);
  Page int16, int32;
  template <class U>
  Page page() const {
    return sizeof(U) == 2 ? int16 : int32;
  }
};

#if defined(__x86_64__)
extern const SimdPages kAvx512Pages;  // AVX-512 F, BW, VBMI and GFNI: only where avx512_bitpack_usable()
extern const SimdPages kAvx2Pages;    // only where avx2_bitpack_usable()
#else
// Never used: off x86-64 the cpu.h checks are false.
inline constexpr SimdPages kAvx512Pages{}, kAvx2Pages{};
#endif

}  // namespace gdfs::bitpack
