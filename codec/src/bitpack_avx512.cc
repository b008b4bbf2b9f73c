// AVX-512 decoding of int16 pages with 32-sample blocks (the default block size): one block is one
// 512-bit register. A masked load takes the block's planes (4 bytes each, at most 16 of them); VPERMB
// regroups them so that each 64-bit lane holds the 8 planes of one 8-sample group, in reverse; one
// GF2P8AFFINEQB against the identity transposes all eight 8x8 bit matrices at once (each lane then holds
// one byte of 8 samples); a second VPERMB interleaves low and high bytes into 16-bit samples. The sign
// bitmap is a mask register as it lies, and the first difference is undone by log2(32) shift-and-adds.
// Same bytes as the portable code on every input: both only ever see checked metadata.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's own _mm512_undefined_epi32()
#endif
#include <immintrin.h>

#include <array>
#include <cstring>

#include "bitpack_block.h"

namespace gdfs::bitpack {

bool avx512_bitpack_usable() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni");
#else
  return false;
#endif
}

#if defined(__x86_64__)
#define GDFS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,gfni")))

namespace {

// Byte t of lane Q = 2g + q (g: group, q: low or high octet of planes) is byte g of plane 8q + 7 - t%8:
// reversed, because GF2P8AFFINEQB reads matrix rows from the top byte down.
constexpr std::array<uint8_t, 64> make_gather() {
  std::array<uint8_t, 64> idx{};
  for (unsigned t = 0; t < 64; ++t) {
    const unsigned lane = t / 8, g = lane / 2, q = lane % 2, j = t % 8;
    idx[t] = static_cast<uint8_t>(4 * (8 * q + 7 - j) + g);
  }
  return idx;
}
// Output byte 2s + h (sample s = 8g + j, h = high byte) comes from byte j of lane 2g + h.
constexpr std::array<uint8_t, 64> make_interleave() {
  std::array<uint8_t, 64> idx{};
  for (unsigned s = 0; s < 32; ++s)
    for (unsigned h = 0; h < 2; ++h) idx[2 * s + h] = static_cast<uint8_t>(16 * (s / 8) + 8 * h + s % 8);
  return idx;
}
alignas(64) constexpr auto kGather = make_gather();
alignas(64) constexpr auto kInterleave = make_interleave();

struct Consts {
  __m512i gather, interleave, identity, iota;
};

GDFS_AVX512 Consts load_consts() {
  Consts c;
  c.gather = _mm512_load_si512(kGather.data());
  c.interleave = _mm512_load_si512(kInterleave.data());
  c.identity = _mm512_set1_epi64(static_cast<long long>(0x8040201008040201ull));  // byte i = 1 << i
  c.iota = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12,
                            11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  return c;
}

// v[i] += v[i - stride] for i >= stride, as a doubling scan: after the step with shift d every sample
// holds the sum of up to 2d / stride differences of its class.
GDFS_AVX512 __m512i undo_difference(__m512i v, unsigned stride, const Consts& c) {
  for (unsigned d = stride; stride && d < 32; d *= 2) {
    const __m512i from = _mm512_sub_epi16(c.iota, _mm512_set1_epi16(static_cast<short>(d)));
    const __mmask32 keep = ~((1u << d) - 1);
    v = _mm512_add_epi16(v, _mm512_maskz_permutexvar_epi16(keep, from, v));
  }
  return v;
}

GDFS_AVX512 void block32(const uint8_t* src, unsigned rate, unsigned k, unsigned stride, const Consts& c,
                         uint8_t* out) {
  __m512i v = _mm512_setzero_si512();
  const unsigned outliers = k ? outlier_count(stride, 32) : 0;
  if (rate) {
    const uint8_t* p = src + k * outliers;
    uint32_t signs;
    std::memcpy(&signs, p, 4);
    const __mmask64 present = rate >= 16 ? ~0ull : (1ull << (4 * rate)) - 1;  // planes past rate are 0
    const __m512i planes = _mm512_maskz_loadu_epi8(present, p + 4);
    const __m512i lanes = _mm512_permutexvar_epi8(c.gather, planes);
    const __m512i bytes = _mm512_gf2p8affine_epi64_epi8(c.identity, lanes, 0);
    v = _mm512_permutexvar_epi8(c.interleave, bytes);
    v = _mm512_mask_sub_epi16(v, signs, _mm512_setzero_si512(), v);
  }
  if (stride <= 1) {  // one outlier or none: a blend, as the two kinds of block alternate unpredictably
    const auto first = static_cast<short>(read_outlier<uint16_t>(src, k));  // 0 when k == 0
    v = _mm512_mask_set1_epi16(v, static_cast<__mmask32>(k != 0), first);
  } else if (outliers) {
    alignas(64) uint16_t first[32];
    for (unsigned j = 0; j < outliers; ++j) first[j] = read_outlier<uint16_t>(src + j * k, k);
    v = _mm512_mask_loadu_epi16(v, (1u << outliers) - 1, first);
  }
  _mm512_storeu_si512(out, undo_difference(v, stride, c));
}

}  // namespace

GDFS_AVX512 void decode_int16_b32_avx512(const uint8_t* in, const Geometry& g, const Params& p,
                                         uint8_t* out) {
  const Consts c = load_consts();
  const uint8_t* src = in + g.meta();
  for (size_t i = 0; i < g.blocks; ++i) {
    const unsigned b = i + 1 == g.blocks ? g.last : 32;
    const unsigned rate = in[i * g.meta_each];
    const unsigned k = g.meta_each == 2 ? outlier_bytes(in[i * 2 + 1]) : 0;
    if (b == 32) {
      block32(src, rate, k, p.stride, c, out + i * 64);
    } else {
      decode_block<uint16_t>(src, rate, k, b, p.stride, out + i * 64);
    }
    src += k * outlier_count(p.stride, b) + planes_cost(rate, b);
  }
  if (g.tail) std::memcpy(out + g.samples * 2, src, g.tail);
}

#else  // not x86-64: never called, avx512_bitpack_usable() is false

void decode_int16_b32_avx512(const uint8_t*, const Geometry&, const Params&, uint8_t*) {}

#endif

}  // namespace gdfs::bitpack
