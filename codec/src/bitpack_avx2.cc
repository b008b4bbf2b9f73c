// AVX2 decoding of bitpack pages: int16 and int32 samples, blocks of 16, 32, 64 or 128 samples.
//
// AVX2 has neither GFNI nor byte permutes across a whole register, so the block is cut into sub-blocks
// of 32 samples: sub-block h of a block with NB bytes per plane owns dword h of every plane. For each
// sub-block and byte q of its samples (planes 8q..8q+7), 8 dwords = four 8x8 bit matrices, one per
// group of 8 samples:
//  1. masked loads (VPMASKMOVD) take the planes as they lie, whole dwords, nothing past rate * NB bytes;
//     for NB = 8 and 16, dword permutes and unpacks collect dword h of the eight planes in one register,
//     planes 8q..8q+3 in the low 128-bit lane and 8q+4..8q+7 in the high one;
//  2. VPSHUFB transposes each lane's 4x4 bytes and VPERMD pairs the lanes, so that each 64-bit lane holds
//     the eight plane bytes of one group, in the order the 8x8 transpose wants;
//  3. the three delta swaps of transpose8() (bitpack_layout.h) on all four 64-bit lanes at once: each
//     then holds byte q of its group's 8 samples. That is 20 instructions for 32 bytes of samples, fewer
//     than the 6 per plane of expanding bits by compares, at the rates real data has (mostly 4-11);
//  4. VPUNPCK joins the bytes of each sample. The groups sit in the order 0, 2, 1, 3 so that the per-lane
//     unpacks come out in sample order (int32 also swaps 128-bit halves once);
//  5. signs: the bitmap spread to one lane per sample (VPSHUFB + AND for int16, VPSLLVD for int32) feeds
//     VPSIGN; outliers are blended in; the first difference is undone per chunk of 8 lanes (a 128-bit
//     lane of int16, a register of int32) by log2 shift-and-adds, plus carries from the one or two chunks
//     before it, with shuffle tables built once per page for its stride.
// NB = 2 (16 samples): planes 0-15 are one register as they lie, step 1 is a single load, and step 2 a
// VPSHUFB. Bytes of the samples with no plane in them (8q >= rate) are not computed.
// Same bytes as the portable code on every input: both only ever see checked metadata.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <array>
#include <cstring>

#include "bitpack_block.h"

#if defined(__x86_64__)
#define GDFS_AVX2 __attribute__((target("avx2")))
// For the per-block steps: the page loop has a copy per metadata width, and a call in it costs a
// VZEROUPPER and spills the registers.
#define GDFS_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline
#define GDFS_SIMD GDFS_AVX2

namespace gdfs::bitpack {
namespace {

using Table = std::array<uint8_t, 32>;

// VPSHUFB indices, the same in both 128-bit lanes: byte i of a lane takes byte from(i) of that lane.
template <class F>
constexpr Table per_lane(F from) {
  Table t{};
  for (unsigned i = 0; i < 32; ++i) t[i] = static_cast<uint8_t>(from(i % 16));
  return t;
}
// A lane of 4 planes of 4 bytes (one byte per group of 8 samples) -> 4 groups of their 4 plane bytes.
constexpr Table kTranspose4 = per_lane([](unsigned i) { return i % 4 * 4 + i / 4; });
// NB = 2: a lane of 8 planes of 2 bytes -> 2 groups of their 8 plane bytes.
constexpr Table kGather2 = per_lane([](unsigned i) { return i % 8 * 2 + i / 8; });
// A lane of byte q of 8 samples, then byte q + 1 of the same 8 -> the two bytes of each sample, joined.
constexpr Table kZip = per_lane([](unsigned i) { return i % 2 * 8 + i / 2; });

// int16 signs of output register o (samples 16o..16o+15, one bitmap byte per lane): VPSHUFB indices
// that spread bitmap byte 2o + lane over the lane, and the bit of each word's sample, in its high byte.
constexpr std::array<Table, 8> make_sign_index() {
  std::array<Table, 8> t{};
  for (unsigned o = 0; o < 8; ++o)
    for (unsigned i = 0; i < 32; ++i) t[o][i] = static_cast<uint8_t>(2 * o + i / 16);
  return t;
}
constexpr Table kSignBit16 = per_lane([](unsigned i) { return i % 2 ? 1u << (i / 2) : 0u; });

struct alignas(32) Tables {
  Table transpose4 = kTranspose4, gather2 = kGather2, zip = kZip, sign_bit16 = kSignBit16;
  std::array<Table, 8> sign_index = make_sign_index();
  // int32 signs of register o: lane i shifts bit 8 * (o % 4) + i of its bitmap dword up to bit 31.
  alignas(32) int32_t sign_shift[4][8] = {};
  // Masked-load windows: dword (word) j of the 8 (16) at window + 8 - n (window16 + 16 - n) is all-ones
  // when j < n; word j of the 16 at last_word + 16 - n is all-ones when j == n - 1.
  alignas(32) int32_t window[16] = {-1, -1, -1, -1, -1, -1, -1, -1};
  alignas(32) int16_t window16[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  alignas(32) int16_t last_word[32] = {};
  // Broadcast constants, read through constant() below.
  alignas(32) uint64_t swap_mask[3][4] = {
      {0x00AA00AA00AA00AAull, 0x00AA00AA00AA00AAull, 0x00AA00AA00AA00AAull, 0x00AA00AA00AA00AAull},
      {0x0000CCCC0000CCCCull, 0x0000CCCC0000CCCCull, 0x0000CCCC0000CCCCull, 0x0000CCCC0000CCCCull},
      {0x00000000F0F0F0F0ull, 0x00000000F0F0F0F0ull, 0x00000000F0F0F0F0ull, 0x00000000F0F0F0F0ull}};
  alignas(32) int16_t one16[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  alignas(32) int32_t one32[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  alignas(32) int32_t even_odd[8] = {0, 2, 4, 6, 1, 3, 5, 7};  // VPERMD: even dwords, then odd ones
  alignas(32) int32_t pair[8] = {0, 4, 2, 6, 1, 5, 3, 7};      // VPERMD: 64-bit lanes of groups 0, 2, 1, 3
  constexpr Tables() {
    for (unsigned o = 0; o < 4; ++o)
      for (unsigned i = 0; i < 8; ++i) sign_shift[o][i] = static_cast<int32_t>(31 - 8 * o - i);
    last_word[15] = -1;
  }
};
constexpr Tables kT{};

GDFS_AVX2 inline __m256i load(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
GDFS_AVX2 inline __m256i load(const Table& t) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(t.data()));
}

// A constant the compiler cannot see through: it would rebuild a broadcast from immediates at every use
// (three instructions per block); this way it is loaded, hoisted out of the block loop, or spilled.
GDFS_AVX2 inline __m256i constant(const void* p) {
  __m256i x = load(p);
  __asm__("" : "+x"(x));
  return x;
}

// The first n <= 8 dwords at p, zeros after: reads nothing past them.
GDFS_AVX2 inline __m256i load_dwords(const uint8_t* p, unsigned n) {
  return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), load(kT.window + 8 - n));
}
inline unsigned clamp8(int n) {
  return n < 0 ? 0 : (n > 8 ? 8 : static_cast<unsigned>(n));
}

// transpose8() on each 64-bit lane: byte p bit j <-> byte j bit p.
template <int kShift>
GDFS_AVX2 inline __m256i swap_bits(__m256i x, const uint64_t* mask) {
  const __m256i t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, kShift)), constant(mask));
  return _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64(t, kShift)));
}
GDFS_AVX2 inline __m256i transpose8x4(__m256i x) {
  x = swap_bits<7>(x, kT.swap_mask[0]);
  x = swap_bits<14>(x, kT.swap_mask[1]);
  return swap_bits<28>(x, kT.swap_mask[2]);
}

// Dword h of planes 8q..8q+7 (present: `rate` planes of NB bytes at `planes`) for each sub-block h:
// c[h] = [planes 8q..8q+3 | planes 8q+4..8q+7].
template <unsigned NB>
GDFS_AVX2 void gather(const uint8_t* planes, unsigned rate, unsigned q, __m256i* c) {
  constexpr unsigned kRegs = NB / 4;  // registers per 8 planes
  const int dwords = static_cast<int>(rate * NB / 4);
  __m256i a[kRegs];
  for (unsigned j = 0; j < kRegs; ++j) {
    const unsigned m = q * kRegs + j, n = clamp8(dwords - static_cast<int>(8 * m));
    a[j] = load_dwords(planes + (n ? 32 * m : 0), n);  // an empty load points at the block, not past it
  }
  if constexpr (NB == 4) {
    c[0] = a[0];
  } else if constexpr (NB == 8) {  // a[j] = planes 4j..4j+3, dwords 0 and 1 of each
    const __m256i even_odd = load(kT.even_odd);
    const __m256i x = _mm256_permutevar8x32_epi32(a[0], even_odd),
                  y = _mm256_permutevar8x32_epi32(a[1], even_odd);
    c[0] = _mm256_permute2x128_si256(x, y, 0x20);
    c[1] = _mm256_permute2x128_si256(x, y, 0x31);
  } else {  // NB == 16: a[j] = [plane 2j | plane 2j + 1], 4 dwords each: a 4x4 dword transpose per lane
    const __m256i b0 = _mm256_permute2x128_si256(a[0], a[2], 0x20),
                  b1 = _mm256_permute2x128_si256(a[0], a[2], 0x31);
    const __m256i b2 = _mm256_permute2x128_si256(a[1], a[3], 0x20),
                  b3 = _mm256_permute2x128_si256(a[1], a[3], 0x31);
    const __m256i t0 = _mm256_unpacklo_epi32(b0, b1), t1 = _mm256_unpacklo_epi32(b2, b3);
    const __m256i t2 = _mm256_unpackhi_epi32(b0, b1), t3 = _mm256_unpackhi_epi32(b2, b3);
    c[0] = _mm256_unpacklo_epi64(t0, t1);
    c[1] = _mm256_unpackhi_epi64(t0, t1);
    c[2] = _mm256_unpacklo_epi64(t2, t3);
    c[3] = _mm256_unpackhi_epi64(t2, t3);
  }
}

// One gathered sub-block register -> byte q of its 32 samples, 64-bit lanes = groups 0, 2, 1, 3.
GDFS_AVX2 inline __m256i sub_block_bytes(__m256i c) {
  return transpose8x4(
      _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(c, load(kT.transpose4)), load(kT.pair)));
}

// NB = 2: `n` <= 16 planes of 2 bytes at `at` (`safe`: any readable byte, for n = 0) -> bytes q and q + 1
// of the 16 samples, joined: words [samples 0-7 | samples 8-15].
GDFS_AVX2 inline __m256i pair_bytes(const uint8_t* at, unsigned n, const uint8_t* safe) {
  __m256i x = load_dwords(n ? at : safe, n / 2);
  uint16_t last;  // an odd last plane is half a dword: a word load and a blend (a no-op when n is even)
  std::memcpy(&last, n ? at + 2 * n - 2 : safe, 2);
  x = _mm256_blendv_epi8(x, _mm256_set1_epi16(static_cast<short>(last)), load(kT.last_word + 16 - n));
  x = transpose8x4(_mm256_shuffle_epi8(x, load(kT.gather2)));  // [q: samples 0-7, 8-15 | q + 1: the same]
  return _mm256_shuffle_epi8(_mm256_permute4x64_epi64(x, 0xD8), load(kT.zip));
}

// int32: words of bytes 0-1 and of bytes 2-3 of 16 samples, [samples 0-7 | 8-15] -> two registers of
// 8 samples in order.
GDFS_AVX2 inline void join32(__m256i lo, __m256i hi, __m256i* v) {
  const __m256i a = _mm256_unpacklo_epi16(lo, hi),
                b = _mm256_unpackhi_epi16(lo, hi);  // [0-3 | 8-11], [4-7 | 12-15]
  v[0] = _mm256_permute2x128_si256(a, b, 0x20);
  v[1] = _mm256_permute2x128_si256(a, b, 0x31);
}

// Magnitudes of one block -> v (output registers in sample order, 32 bytes each), signs not applied.
template <unsigned S, unsigned NB>
GDFS_AVX2_INLINE void magnitudes(const uint8_t* planes, unsigned rate, __m256i* v) {
  if constexpr (NB == 2) {
    const __m256i lo = pair_bytes(planes, rate < 16 ? rate : 16, planes);
    if constexpr (S == 2) {
      v[0] = lo;
    } else {
      join32(lo, pair_bytes(rate > 16 ? planes + 32 : planes, rate > 16 ? rate - 16 : 0, planes), v);
    }
  } else {
    constexpr unsigned kSub = NB / 4;
    __m256i r[S][kSub];
    for (unsigned q = 0; q < S; ++q) {
      if (q && 8 * q >= rate) {  // no plane in this byte of the samples
        for (auto& x : r[q]) x = _mm256_setzero_si256();
        continue;
      }
      __m256i c[kSub];
      gather<NB>(planes, rate, q, c);
      for (unsigned h = 0; h < kSub; ++h) r[q][h] = sub_block_bytes(c[h]);
    }
    for (unsigned h = 0; h < kSub; ++h) {
      if constexpr (S == 2) {
        v[2 * h] = _mm256_unpacklo_epi8(r[0][h], r[1][h]);  // [group 0 | group 1]
        v[2 * h + 1] = _mm256_unpackhi_epi8(r[0][h], r[1][h]);
      } else {
        join32(_mm256_unpacklo_epi8(r[0][h], r[1][h]), _mm256_unpacklo_epi8(r[2][h], r[3][h]), v + 4 * h);
        join32(_mm256_unpackhi_epi8(r[0][h], r[1][h]), _mm256_unpackhi_epi8(r[2][h], r[3][h]), v + 4 * h + 2);
      }
    }
  }
}

// The sign bitmap of a block, NB bytes, in every 128-bit lane.
template <unsigned NB>
GDFS_AVX2 inline __m256i sign_bytes(const uint8_t* p) {
  if constexpr (NB == 2) {
    uint16_t w;
    std::memcpy(&w, p, 2);
    return _mm256_set1_epi16(static_cast<short>(w));
  } else if constexpr (NB == 4) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return _mm256_set1_epi32(static_cast<int>(w));
  } else if constexpr (NB == 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return _mm256_set1_epi64x(static_cast<long long>(w));
  } else {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
}

// Sign-magnitude to two's complement. VPSIGN negates a lane whose control is negative and keeps one
// whose control is positive, so each sample's sign bit is moved to the top of a nonzero control.
template <unsigned S, unsigned NB>
GDFS_AVX2_INLINE void apply_signs(const uint8_t* p, __m256i* v) {
  constexpr unsigned kRegs = NB * S / 4;
  if constexpr (S == 2) {
    const __m256i bits = sign_bytes<NB>(p), one = constant(kT.one16);
    for (unsigned o = 0; o < kRegs; ++o) {
      // Word: 0x100 << j where the sign is set, else 0; 1 minus that is negative or 1 (0x8000 wraps).
      const __m256i set =
          _mm256_and_si256(_mm256_shuffle_epi8(bits, load(kT.sign_index[o])), load(kT.sign_bit16));
      v[o] = _mm256_sign_epi16(v[o], _mm256_sub_epi16(one, set));
    }
  } else {
    const __m256i one = constant(kT.one32);
    for (unsigned o = 0; o < kRegs; ++o) {
      uint32_t w = 0;  // the bitmap dword of the register's sub-block (NB = 2: the only 16 bits)
      std::memcpy(&w, p + 4 * (o / 4), NB == 2 ? 2 : 4);
      const __m256i top =
          _mm256_sllv_epi32(_mm256_set1_epi32(static_cast<int>(w)), load(kT.sign_shift[o % 4]));
      v[o] = _mm256_sign_epi32(v[o], _mm256_or_si256(top, one));
    }
  }
}

// Per-page constants of the first-difference undo for a stride, on chunks of 8 lanes: int16 VPSHUFB
// tables (a chunk is a 128-bit lane; index 0x80 gives 0), or int32 VPERMD indices and masks of the lanes
// that take anything (a chunk is a register).
struct Scan {
  // Lane i adds lane i - d, d = stride, 2 stride, 4 stride while < 8; always three steps, the unused
  // ones adding 0, as a branch per step would cost more than the step.
  static constexpr unsigned kSteps = 3;
  __m256i step[kSteps], step_keep[kSteps];
  bool far = false;  // stride > 8: lane i's predecessor is in the chunk before or the one before that
  __m256i carry1, carry1_keep;  // from the chunk before: the last of lane i's class there
  __m256i carry2, carry2_keep;  // from the one before that (far only)
};

// Chunk lane i takes lane from[i] (-1: nothing).
template <unsigned S>
GDFS_AVX2 void lane_picks(const int (&from)[8], __m256i& idx, __m256i& keep) {
  if constexpr (S == 2) {
    alignas(32) uint8_t t[32];
    for (unsigned i = 0; i < 16; ++i) {
      const int f = from[i / 2];
      t[i] = t[i + 16] = f < 0 ? 0x80 : static_cast<uint8_t>(2 * f + i % 2);
    }
    idx = load(t);
    keep = _mm256_set1_epi8(-1);
  } else {
    alignas(32) int32_t t[8], k[8];
    for (unsigned i = 0; i < 8; ++i) t[i] = from[i] < 0 ? 0 : from[i], k[i] = from[i] < 0 ? 0 : -1;
    idx = load(t);
    keep = load(k);
  }
}

template <unsigned S>
GDFS_AVX2 Scan make_scan(unsigned stride, unsigned /*block*/) {
  Scan s;
  int from[8];
  for (unsigned j = 0, d = stride; j < Scan::kSteps; ++j, d *= 2) {
    for (int i = 0; i < 8; ++i)
      from[i] = d && d < 8 && i >= static_cast<int>(d) ? i - static_cast<int>(d) : -1;
    lane_picks<S>(from, s.step[j], s.step_keep[j]);
  }
  const int st = static_cast<int>(stride);
  s.far = stride > 8;
  for (int i = 0; i < 8; ++i)
    from[i] = st == 0 ? -1 : (s.far ? (i >= st - 8 ? i + 8 - st : -1) : 8 - st + i % st);
  lane_picks<S>(from, s.carry1, s.carry1_keep);
  for (int i = 0; i < 8; ++i) from[i] = s.far && i < st - 8 ? i + 16 - st : -1;
  lane_picks<S>(from, s.carry2, s.carry2_keep);
  return s;
}

// int16: `regs` registers of two chunks each. Lane 0 of register r is chunk 2r, lane 1 chunk 2r + 1.
GDFS_AVX2_INLINE void undo_difference16(__m256i* v, unsigned regs, const Scan& s) {
  __m256i prev = _mm256_setzero_si256();
  for (unsigned r = 0; r < regs; ++r) {
    __m256i x = v[r];
    for (unsigned i = 0; i < Scan::kSteps; ++i) x = _mm256_add_epi16(x, _mm256_shuffle_epi8(x, s.step[i]));
    if (r) {  // lane 0 from the previous register's lane 1 (and, far, both lanes from their own lane there)
      const __m256i c = _mm256_shuffle_epi8(prev, s.carry1);
      x = _mm256_add_epi16(x, _mm256_permute2x128_si256(c, c, 0x81));
      if (s.far) x = _mm256_add_epi16(x, _mm256_shuffle_epi8(prev, s.carry2));
    }
    const __m256i c = _mm256_shuffle_epi8(x, s.carry1);  // lane 1 from lane 0, now complete
    v[r] = prev = _mm256_add_epi16(x, _mm256_permute2x128_si256(c, c, 0x08));
  }
}

// int32: `regs` registers of one chunk each.
GDFS_AVX2 inline __m256i pick32(__m256i x, __m256i idx, __m256i keep) {
  return _mm256_and_si256(_mm256_permutevar8x32_epi32(x, idx), keep);
}
GDFS_AVX2_INLINE void undo_difference32(__m256i* v, unsigned regs, const Scan& s) {
  for (unsigned r = 0; r < regs; ++r) {
    __m256i x = v[r];
    for (unsigned i = 0; i < Scan::kSteps; ++i) x = _mm256_add_epi32(x, pick32(x, s.step[i], s.step_keep[i]));
    if (r) x = _mm256_add_epi32(x, pick32(v[r - 1], s.carry1, s.carry1_keep));
    if (r > 1 && s.far) x = _mm256_add_epi32(x, pick32(v[r - 2], s.carry2, s.carry2_keep));
    v[r] = x;
  }
}

// The first outlier of a block, sign-extended, or 0 when k == 0 (then nothing at src is read). Byte i is
// read from min(i, k - 1): a fixed number of loads, no branch on k, nothing past the outlier.
template <class U>
inline U first_outlier(const uint8_t* src, unsigned k) {
  static constexpr uint8_t kZero = 0;
  const uint8_t* q = k ? src : &kZero;
  const unsigned last = k ? k - 1 : 0, shift = 32 - 8 * (k ? k : 1);
  uint32_t v = 0;
  for (unsigned i = 0; i < sizeof(U); ++i) v |= uint32_t{q[i < last ? i : last]} << (8 * i);
  return static_cast<U>(static_cast<int32_t>(v << shift) >> shift);
}

// Outliers replace the first differences. Stride 0 or 1: one or none, a blend, as the two kinds of
// block alternate unpredictably.
template <class U>
GDFS_AVX2 inline __m256i blend_first(const uint8_t* src, unsigned k, __m256i v) {
  const U first = first_outlier<U>(src, k);
  const int lane0 = k ? (sizeof(U) == 2 ? 0xFFFF : -1) : 0;
  return _mm256_blendv_epi8(v, _mm256_setr_epi32(static_cast<int>(first), 0, 0, 0, 0, 0, 0, 0),
                            _mm256_setr_epi32(lane0, 0, 0, 0, 0, 0, 0, 0));
}
// Stride >= 2: `outliers` of them (at most the stride, so within the first 16 samples). The reading is
// out of line (rarer, and a loop) and the blend inline, so that v stays in registers.
template <class U>
__attribute__((noinline)) void read_outliers(const uint8_t* src, unsigned k, unsigned outliers, U* first) {
  for (unsigned j = 0; j < outliers; ++j) first[j] = read_outlier<U>(src + j * k, k);
}
template <class U>
GDFS_AVX2 inline void blend_outliers(const uint8_t* src, unsigned k, unsigned outliers, __m256i* v) {
  alignas(32) U first[64 / sizeof(U)] = {};
  read_outliers<U>(src, k, outliers, first);
  if constexpr (sizeof(U) == 2) {
    v[0] = _mm256_blendv_epi8(v[0], load(first), load(kT.window16 + 16 - outliers));
  } else {
    v[0] = _mm256_blendv_epi8(v[0], load(first), load(kT.window + 8 - (outliers < 8 ? outliers : 8)));
    if (outliers > 8) v[1] = _mm256_blendv_epi8(v[1], load(first + 8), load(kT.window + 16 - outliers));
  }
}

// One whole block; `outliers`: outlier_count() of the page's stride and block size, 0 when k == 0.
template <class U, unsigned NB>
GDFS_AVX2_INLINE void block(const uint8_t* src, unsigned rate, unsigned k, unsigned outliers, unsigned stride,
                            const Scan& scan, uint8_t* out) {
  constexpr unsigned S = sizeof(U), kRegs = NB * S / 4;  // output registers: 8 * NB samples
  __m256i v[kRegs];
  if (rate) {
    const uint8_t* p = src + k * outliers;
    magnitudes<S, NB>(p + NB, rate, v);
    apply_signs<S, NB>(p, v);
  } else {
    for (auto& x : v) x = _mm256_setzero_si256();
  }
  if (stride <= 1) {
    v[0] = blend_first<U>(src, k, v[0]);
  } else if (outliers) {
    blend_outliers<U>(src, k, outliers, v);
  }
  if (stride) {
    if constexpr (S == 2) {
      undo_difference16(v, kRegs, scan);
    } else {
      undo_difference32(v, kRegs, scan);
    }
  }
  for (unsigned o = 0; o < kRegs; ++o) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * o), v[o]);
}

#include "bitpack_simd.h"  // the page loops, on the block() and make_scan() above
}  // namespace

const SimdPages kAvx2Pages{simd_page<uint16_t>, simd_page<uint32_t>};
}  // namespace gdfs::bitpack
#endif
