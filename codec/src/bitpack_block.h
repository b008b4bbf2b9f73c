// The bitpack decoder's internal entry points: one block with the portable code, and the AVX-512 page
// loop, which takes the blocks it has a fast path for and hands the rest to the portable code.
#pragma once

#include <cstdint>

#include "bitpack_layout.h"

namespace gdfs::bitpack {

// Decodes one block whose metadata was checked: `src` is its payload (outlier of `k` bytes, then the
// sign bitmap and `rate` planes), `out` receives its `b` samples.
template <class U>
void decode_block(const uint8_t* src, unsigned rate, unsigned k, unsigned b, unsigned stride, uint8_t* out);

// AVX-512 F, BW, VBMI and GFNI (bitpack_avx512.cc).
bool avx512_bitpack_usable();
// Every block of an int16 page with 32-sample blocks, whose metadata was checked.
void decode_int16_b32_avx512(const uint8_t* in, const Geometry& g, const Params& p, uint8_t* out);

}  // namespace gdfs::bitpack
