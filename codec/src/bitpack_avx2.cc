// AVX2 decoding of bitpack pages: placeholder until the vector code lands; the CPU check says no, so
// decode_path() never picks it, and the page loop is the portable one.
#include <cstring>

#include "bitpack_block.h"

namespace gdfs::bitpack {

bool avx2_bitpack_usable() {
  return false;
}

template <class U>
void decode_page_avx2(const uint8_t* in, const Geometry& g, const Params& p, uint8_t* out) {
  const uint8_t* src = in + g.meta();
  for (size_t i = 0; i < g.blocks; ++i) {
    const unsigned b = i + 1 == g.blocks ? g.last : p.block;
    const unsigned rate = in[i * g.meta_each];
    const unsigned k = g.meta_each == 2 ? outlier_bytes(in[i * 2 + 1]) : 0;
    decode_block<U>(src, rate, k, b, p.stride, out + i * p.block * sizeof(U));
    src += k * outlier_count(p.stride, b) + planes_cost(rate, b);
  }
  if (g.tail) std::memcpy(out + g.samples * sizeof(U), src, g.tail);
}
template void decode_page_avx2<uint16_t>(const uint8_t*, const Geometry&, const Params&, uint8_t*);
template void decode_page_avx2<uint32_t>(const uint8_t*, const Geometry&, const Params&, uint8_t*);

}  // namespace gdfs::bitpack
