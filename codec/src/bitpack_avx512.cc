// AVX-512 decoding of bitpack pages: int16 and int32 samples, blocks of 16, 32, 64 or 128 samples.
//
// A block of B = 8 * NB samples (NB: bytes per bit-plane) of S-byte samples has NB * S "units": one
// 8-sample group g times one byte q of its samples, which is the 8x8 bit matrix of planes 8q..8q+7 over
// the group's 8 samples. Units are numbered q-major (u = q * NB + g), eight to a register:
//  1. masked loads take the planes as they lie (rate * NB bytes, nothing past them);
//  2. VPERMB (VPERMI2B for NB = 16, whose eight planes of one q span 128 bytes) puts the eight plane
//     bytes of each unit in one 64-bit lane, in reverse, since GF2P8AFFINEQB reads matrix rows from the
//     top byte down;
//  3. one GF2P8AFFINEQB against the identity transposes all eight matrices at once: each lane then holds
//     byte q of the group's 8 samples;
//  4. VPERMI2B interleaves the bytes of each sample (for int32, two of them and a byte blend);
//  5. the sign bitmap is a mask register as it lies; outliers are blended in; the first difference is
//     undone by log2 shift-and-adds per register, plus the previous register's running sums.
// The tables behind every permutation are built at compile time from the layout (docs/FORMAT.md, 4.1).
// Same bytes as the portable code on every input: both only ever see checked metadata.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's own _mm512_undefined_epi32()
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "bitpack_block.h"

#if defined(__x86_64__)
#define GDFS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,gfni,bmi2")))
// For the per-block helpers: a call in the block loop costs a VZEROUPPER and spills the registers.
#define GDFS_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,gfni,bmi2"), always_inline)) inline
#define GDFS_SIMD GDFS_AVX512

namespace gdfs::bitpack {
namespace {

using Table = std::array<uint8_t, 64>;

// The geometry of one block shape: S-byte samples, NB bytes per plane.
template <unsigned S, unsigned NB>
struct Shape {
  static constexpr unsigned kUnits = NB * S;                            // 8x8 bit matrices per block
  static constexpr unsigned kUnitRegs = (kUnits + 7) / 8;               // registers of units
  static constexpr unsigned kChunks = (8 * S * NB + 63) / 64;           // 64-byte chunks of planes, at most
  static constexpr unsigned kLanes = 64 / S;                            // samples per output register
  static constexpr unsigned kOutRegs = (8 * NB + kLanes - 1) / kLanes;  // output registers per block
  static constexpr unsigned kBlockBytes = 8 * NB * S;
  // The first chunk register r's units are gathered from (r's planes start there); NB = 16 also reads the
  // one after it.
  static constexpr unsigned chunk_of(unsigned r) { return NB == 16 ? r / 2 * 2 : (NB <= 2 ? 0 : r); }

  // Byte t of unit register r: byte g of plane 8q + 7 - t % 8, for its unit u = 8r + t / 8 = q * NB + g,
  // as an index into chunk_of(r) (and the chunk after it, from 64 up).
  static constexpr Table gather(unsigned r) {
    Table idx{};
    for (unsigned t = 0; t < 64; ++t) {
      const unsigned u = 8 * r + t / 8, q = u / NB, g = u % NB;
      const unsigned offset = (8 * q + 7 - t % 8) * NB + g;
      idx[t] = u < kUnits ? static_cast<uint8_t>(offset - 64 * chunk_of(r)) : 0;
    }
    return idx;
  }
  // The unit register holding byte h of sample n, and that byte's place in it.
  static constexpr unsigned unit_reg(unsigned n, unsigned h) { return (h * NB + n / 8) / 8; }
  static constexpr unsigned unit_byte(unsigned n, unsigned h) { return (h * NB + n / 8) % 8 * 8 + n % 8; }
  // Output register o, bytes h0 and h0 + 1 of its samples (the rest don't care): byte i takes byte
  // h = i % S of sample o * kLanes + i / S from unit_reg(., h0) (index < 64) or unit_reg(., h0 + 1).
  static constexpr Table interleave(unsigned o, unsigned h0) {
    Table idx{};
    for (unsigned i = 0; i < 64; ++i) {
      const unsigned n = o * kLanes + i / S, h = i % S;
      if (n >= 8 * NB || (h != h0 && h != h0 + 1)) continue;
      idx[i] = static_cast<uint8_t>(unit_byte(n, h) + (h == h0 ? 0 : 64));
    }
    return idx;
  }
  // Interleave tables, two per output register (int16 uses the first).
  static constexpr std::array<Table, 2 * kOutRegs> interleaves() {
    std::array<Table, 2 * kOutRegs> t{};
    for (unsigned o = 0; o < kOutRegs; ++o) t[2 * o] = interleave(o, 0), t[2 * o + 1] = interleave(o, 2);
    return t;
  }
  static constexpr std::array<Table, 2> gathers() { return {gather(0), gather(kUnitRegs > 1 ? 1 : 0)}; }
};

// What unpack() relies on: one gather table serves every unit register (two alternating ones for
// NB = 16), and each output register's bytes h come from a single unit register.
template <unsigned S, unsigned NB>
constexpr bool shape_holds() {
  using Sh = Shape<S, NB>;
  for (unsigned r = 0; r < Sh::kUnitRegs; ++r)
    if (Sh::gather(r) != Sh::gather(NB == 16 ? r % 2 : 0)) return false;
  for (unsigned n = 0; n < 8 * NB; ++n)
    for (unsigned h = 0; h < S; ++h)
      if (Sh::unit_reg(n, h) != Sh::unit_reg(n / Sh::kLanes * Sh::kLanes, h)) return false;
  return true;
}

template <unsigned S, unsigned NB>
struct Tables {
  static_assert(shape_holds<S, NB>());
  alignas(64) static constexpr auto kGather = Shape<S, NB>::gathers();
  alignas(64) static constexpr auto kInterleave = Shape<S, NB>::interleaves();
};

// Per-page constants of the first-difference undo for a stride: the shift-and-add steps within one
// register and the lane of the previous register each lane continues from.
struct Scan {
  __m512i from[5];   // lane i adds lane from[k][i] at step k ...
  uint32_t keep[5];  // ... when bit i is set
  unsigned steps = 0;
  __m512i carry;  // lane L - stride + i % stride of the previous register: the last of i's class
};

// Lane indices (as uint16) widened to the lanes of S-byte samples.
template <unsigned S>
GDFS_AVX512 __m512i lane_indices(const uint16_t* idx) {
  if constexpr (S == 2) return _mm512_loadu_si512(idx);
  return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)));
}

// Steps stop at the block (or register) size: a shift past it would only add zeros or other blocks' lanes.
template <unsigned S>
GDFS_AVX512 Scan make_scan(unsigned stride, unsigned block) {
  constexpr unsigned kLanes = 64 / S;
  Scan s;
  uint16_t idx[32] = {};
  for (unsigned d = stride; stride && d < kLanes && d < block; d *= 2, ++s.steps) {
    for (unsigned i = 0; i < kLanes; ++i) idx[i] = static_cast<uint16_t>(i >= d ? i - d : 0);
    s.from[s.steps] = lane_indices<S>(idx);
    s.keep[s.steps] = static_cast<uint32_t>(~((1ull << d) - 1));
  }
  for (unsigned i = 0; i < kLanes; ++i)
    idx[i] = static_cast<uint16_t>(stride ? kLanes - stride + i % stride : 0);
  s.carry = lane_indices<S>(idx);
  return s;
}

template <unsigned S>
GDFS_AVX512_INLINE __m512i add(__m512i a, __m512i b) {
  if constexpr (S == 2) return _mm512_add_epi16(a, b);
  return _mm512_add_epi32(a, b);
}
// Lane i of the result is lane idx[i] of v, or 0 where bit i of `keep` is clear.
template <unsigned S>
GDFS_AVX512_INLINE __m512i pick(uint32_t keep, __m512i idx, __m512i v) {
  if constexpr (S == 2) return _mm512_maskz_permutexvar_epi16(keep, idx, v);
  return _mm512_maskz_permutexvar_epi32(static_cast<__mmask16>(keep), idx, v);
}
// Negates the lanes whose bit is set: sign-magnitude to two's complement.
template <unsigned S>
GDFS_AVX512_INLINE __m512i negate(__m512i v, uint32_t signs) {
  if constexpr (S == 2) return _mm512_mask_sub_epi16(v, signs, _mm512_setzero_si512(), v);
  return _mm512_mask_sub_epi32(v, static_cast<__mmask16>(signs), _mm512_setzero_si512(), v);
}

// 64 bytes at p, of which only the first min(n, 64) are read; the rest are zero.
GDFS_AVX512_INLINE __m512i load_first(const uint8_t* p, unsigned n) {
  return _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, n < 64 ? n : 64), p);  // BZHI reads n's low byte only
}

// Sign bitmap and `rate` planes at p -> the signed differences of one block, kOutRegs registers.
// Branch-free: at rate 0 every load is masked off (the block has neither), and the result is zero.
template <unsigned S, unsigned NB>
GDFS_AVX512_INLINE void unpack(const uint8_t* p, unsigned rate, __m512i* v) {
  using Sh = Shape<S, NB>;
  using T = Tables<S, NB>;
  const uint8_t* planes = p + NB;
  const unsigned size = rate * NB;  // bytes of planes present; the planes past rate are all zero
  __m512i chunk[Sh::kChunks + 1];
  for (unsigned c = 0; c < Sh::kChunks; ++c)
    chunk[c] = load_first(planes + 64 * c, size > 64 * c ? size - 64 * c : 0);
  chunk[Sh::kChunks] = _mm512_setzero_si512();
  const __m512i identity =
      _mm512_set1_epi64(static_cast<long long>(0x8040201008040201ull));  // byte i = 1 << i
  const __m512i gather0 = _mm512_load_si512(T::kGather[0].data()),
                gather1 = _mm512_load_si512(T::kGather[1].data());
  __m512i unit[Sh::kUnitRegs];
  for (unsigned r = 0; r < Sh::kUnitRegs; ++r) {
    const unsigned c = Sh::chunk_of(r);
    const __m512i src = NB == 16 ? _mm512_permutex2var_epi8(chunk[c], r % 2 ? gather1 : gather0, chunk[c + 1])
                                 : _mm512_permutexvar_epi8(gather0, chunk[c]);
    unit[r] = _mm512_gf2p8affine_epi64_epi8(identity, src, 0);
  }
  const __m128i sign_bytes = _mm512_castsi512_si128(load_first(p, rate ? NB : 0));
  const uint64_t signs[2] = {static_cast<uint64_t>(_mm_cvtsi128_si64(sign_bytes)),
                             static_cast<uint64_t>(_mm_extract_epi64(sign_bytes, 1))};
  for (unsigned o = 0; o < Sh::kOutRegs; ++o) {
    const unsigned n0 = o * Sh::kLanes;  // the register's first sample
    const __m512i* t = reinterpret_cast<const __m512i*>(T::kInterleave[2 * o].data());
    __m512i x =
        _mm512_permutex2var_epi8(unit[Sh::unit_reg(n0, 0)], _mm512_load_si512(t), unit[Sh::unit_reg(n0, 1)]);
    if constexpr (S == 4) {
      const __m512i hi = _mm512_permutex2var_epi8(unit[Sh::unit_reg(n0, 2)], _mm512_load_si512(t + 1),
                                                  unit[Sh::unit_reg(n0, 3)]);
      x = _mm512_mask_blend_epi8(0xCCCCCCCCCCCCCCCCull, x, hi);  // bytes 2 and 3 of every sample
    }
    const uint32_t sg = static_cast<uint32_t>(signs[n0 / 64] >> (n0 % 64));
    v[o] = negate<S>(x, Sh::kLanes == 32 ? sg : sg & 0xFFFF);
  }
}

// Outlier expansion for k-byte outliers into S-byte lanes: byte b < k of lane i comes from byte i * k + b
// of the packed outliers; the mask keeps those bytes and zeroes the rest.
struct OutlierSpread {
  std::array<uint8_t, 64> idx[5];
  uint64_t keep[5];
};
template <unsigned S>
constexpr OutlierSpread make_outlier_spread() {
  OutlierSpread t{};
  for (unsigned k = 0; k <= S; ++k) {
    for (unsigned i = 0; i < 64; ++i) {
      const unsigned lane = i / S, b = i % S;
      if (b >= k) continue;
      t.idx[k][i] = static_cast<uint8_t>((lane * k + b) % 64);
      t.keep[k] |= 1ull << i;
    }
  }
  return t;
}
template <unsigned S>
alignas(64) constexpr OutlierSpread kOutlierSpread = make_outlier_spread<S>();

// Replaces the first `outliers` differences of v[0] with the k-byte outliers packed at src, sign-extended
// (at most the stride of them, so they lie in the first register). Branch-free: whether a block has
// outliers, and their width, change from block to block unpredictably.
template <class U>
GDFS_AVX512_INLINE void put_outliers(const uint8_t* src, unsigned k, unsigned outliers, __m512i* v) {
  constexpr unsigned S = sizeof(U);
  const OutlierSpread& t = kOutlierSpread<S>;
  const __m512i packed = load_first(src, k * outliers);
  const __m512i idx = _mm512_load_si512(t.idx[k].data());
  const __m512i x = _mm512_maskz_permutexvar_epi8(t.keep[k], idx, packed);
  const __m128i unused = _mm_cvtsi32_si128(static_cast<int>(8 * (S - k)));  // high bits to sign-fill
  if constexpr (S == 2) {
    const __m512i w = _mm512_sra_epi16(_mm512_sll_epi16(x, unused), unused);
    v[0] = _mm512_mask_mov_epi16(v[0], _bzhi_u32(~0u, outliers), w);
  } else {
    const __m512i w = _mm512_sra_epi32(_mm512_sll_epi32(x, unused), unused);
    v[0] = _mm512_mask_mov_epi32(v[0], static_cast<__mmask16>(_bzhi_u32(~0u, outliers)), w);
  }
}

template <class U, unsigned NB>
GDFS_AVX512_INLINE void block(const uint8_t* src, unsigned rate, unsigned k, unsigned outliers,
                              unsigned stride, const Scan& scan, uint8_t* out) {
  constexpr unsigned S = sizeof(U);
  using Sh = Shape<S, NB>;
  __m512i v[Sh::kOutRegs];
  unpack<S, NB>(src + k * outliers, rate, v);
  put_outliers<U>(src, k, outliers, v);
  for (unsigned o = 0; o < Sh::kOutRegs; ++o) {
    for (unsigned i = 0; i < scan.steps; ++i) v[o] = add<S>(v[o], pick<S>(scan.keep[i], scan.from[i], v[o]));
    if (o && stride) v[o] = add<S>(v[o], pick<S>(~0u, scan.carry, v[o - 1]));
    if constexpr (Sh::kBlockBytes < 64) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(v[o]));
    } else {
      _mm512_storeu_si512(out + 64 * o, v[o]);
    }
  }
}

#include "bitpack_simd.h"  // the page loops, on the block() and make_scan() above
}  // namespace

const SimdPages kAvx512Pages{simd_page<uint16_t>, simd_page<uint32_t>};
}  // namespace gdfs::bitpack
#endif
