// AVX2 data rounds: the AVX-512 design (decoder_avx512.cc) on machines without AVX-512, 8 lanes per
// register, four registers per round. What AVX-512 does in one instruction is done with tables here:
// refill words are loaded with a masked load and spread to the lanes that asked for them with a
// VPERMD whose indices come from a 256-entry table (the expand), and bit masks become vector masks
// by comparing against lane bits.
//
// As on AVX-512, a round is committed only when it is ordinary; all else is left to the scalar code,
// so every path gives the same bytes and status. The loops are decoder_simd.h's, shared with AVX-512;
// this file holds the AVX2 way of each step (the Avx2 traits).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <array>
#include <cstring>

#include "decode_table.h"
#include "decoder_rounds.h"

#if defined(__x86_64__)
#define GDFS_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))
#define GDFS_SIMD GDFS_AVX2
#include "decoder_simd.h"

namespace gdfs::gdeflate {
namespace {

// kExpand[m][j]: for refill mask m, the index of the loaded word that lane j receives.
constexpr std::array<std::array<uint32_t, 8>, 256> make_expand() {
  std::array<std::array<uint32_t, 8>, 256> t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned k = 0;
    for (unsigned j = 0; j < 8; ++j) t[m][j] = (m >> j) & 1 ? k++ : 0;
  }
  return t;
}
alignas(32) constexpr auto kExpand = make_expand();

GDFS_AVX2 inline __m256i set1(uint32_t v) {
  return _mm256_set1_epi32(static_cast<int>(v));
}

// All-ones in lane j when bit j of m is set.
GDFS_AVX2 inline __m256i bits_to_mask(uint32_t m) {
  const __m256i sel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(set1(m), sel), sel);
}
GDFS_AVX2 inline uint32_t mask_to_bits(__m256i m) {
  return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(m)));
}
GDFS_AVX2 inline __m256i low_bits(__m256i x, __m256i n) {
  return _mm256_and_si256(x, _mm256_sub_epi32(_mm256_sllv_epi32(set1(1), n), set1(1)));
}
GDFS_AVX2 inline __m256i prefix_sum8(__m256i x) {
  x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4));
  x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
  const __m256i low_total = _mm256_shuffle_epi32(_mm256_permute2x128_si256(x, x, 0x08), 0xFF);
  return _mm256_add_epi32(x, low_total);
}

// The traits of decoder_simd.h: 8 lanes a register, lane bit sets as the low 8 bits of a uint32_t.
struct Avx2 {
  using Vec = __m256i;
  using Mask = uint32_t;
  static constexpr unsigned kWidth = 8;

  GDFS_AVX2 static Vec load(const uint32_t* p) { return _mm256_load_si256(reinterpret_cast<const Vec*>(p)); }
  GDFS_AVX2 static void store(uint32_t* p, Vec v) { _mm256_store_si256(reinterpret_cast<Vec*>(p), v); }
  GDFS_AVX2 static Vec set1(uint32_t x) { return gdeflate::set1(x); }
  GDFS_AVX2 static Vec sub(Vec a, Vec b) { return _mm256_sub_epi32(a, b); }
  // Counts are at most 64, so the signed compare is exact.
  GDFS_AVX2 static Mask below32(Vec v) { return mask_to_bits(_mm256_cmpgt_epi32(set1(32), v)); }
  GDFS_AVX2 static unsigned count(Mask m) { return static_cast<unsigned>(__builtin_popcount(m)); }

  GDFS_AVX2 static void refill(Vec& lo, Vec& hi, Vec& cnt, Vec total, Vec newcnt, Mask m,
                               const uint8_t* words) {
    const Vec k32 = set1(32);
    lo = _mm256_or_si256(_mm256_srlv_epi32(lo, total), _mm256_sllv_epi32(hi, _mm256_sub_epi32(k32, total)));
    hi = _mm256_srlv_epi32(hi, total);
    // Load exactly count(m) words (masked: nothing past them is touched), then spread them to their lanes.
    const Vec first_k = bits_to_mask((1u << count(m)) - 1);
    const Vec loaded = _mm256_maskload_epi32(reinterpret_cast<const int*>(words), first_k);
    const Vec idx = _mm256_load_si256(reinterpret_cast<const Vec*>(kExpand[m].data()));
    const Vec w = _mm256_and_si256(_mm256_permutevar8x32_epi32(loaded, idx), bits_to_mask(m));
    lo = _mm256_or_si256(lo, _mm256_sllv_epi32(w, newcnt));
    hi = _mm256_or_si256(hi, _mm256_srlv_epi32(w, _mm256_sub_epi32(k32, newcnt)));
    cnt = _mm256_add_epi32(newcnt, _mm256_and_si256(bits_to_mask(m), k32));
  }

  // Packs the low byte of every lane; the packs interleave 128-bit halves, which VPERMD undoes.
  GDFS_AVX2 static void store_low_bytes(const Vec* lo, uint8_t* dst) {
    const Vec byte = set1(0xFF);
    const Vec order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const Vec p01 = _mm256_packus_epi32(_mm256_and_si256(lo[0], byte), _mm256_and_si256(lo[1], byte));
    const Vec p23 = _mm256_packus_epi32(_mm256_and_si256(lo[2], byte), _mm256_and_si256(lo[3], byte));
    _mm256_storeu_si256(reinterpret_cast<Vec*>(dst),
                        _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), order));
  }

  GDFS_AVX2 static void copy_match(uint8_t* dst, uint32_t dist, uint32_t len) {
    gdeflate::copy_match(dst, dist, len);
  }

  struct Round {
    Vec val[4], total[4], outlen[4], pos[4];
    uint32_t lit, len;  // lane bit masks over all 32 lanes
  };

  // Looks up every lane's symbol. False if any lane hit end-of-block or an invalid code.
  GDFS_AVX2 static bool lookup_round(const Vec* lo, uint32_t pending, const uint32_t* tables, Round& rd) {
    rd.lit = rd.len = 0;
    const int* t = reinterpret_cast<const int*>(tables);
    for (int g = 0; g < 4; ++g) {
      const uint32_t pg = (pending >> (8 * g)) & 0xFF;
      const Vec pm = bits_to_mask(pg);
      const Vec tb = _mm256_blendv_epi8(set1(kLitlenTableBits), set1(kDistTableBits), pm);
      const Vec base = _mm256_and_si256(pm, set1(kDistTableOffset));
      Vec e = _mm256_i32gather_epi32(t, _mm256_add_epi32(low_bits(lo[g], tb), base), 4);
      const Vec sub = _mm256_cmpeq_epi32(_mm256_and_si256(e, set1(kEntryLong)), set1(kEntryLong));
      if (!_mm256_testz_si256(sub, sub)) {
        const Vec sb = _mm256_and_si256(_mm256_srli_epi32(e, 5), set1(31));
        const Vec idx2 = _mm256_add_epi32(_mm256_add_epi32(base, _mm256_srli_epi32(e, 16)),
                                          low_bits(_mm256_srlv_epi32(lo[g], tb), sb));
        e = _mm256_mask_i32gather_epi32(e, t, idx2, sub, 4);
      }
      if (!_mm256_testz_si256(e, set1(kEntryEob | kEntryBad))) return false;
      const Vec cl = _mm256_and_si256(e, set1(31));
      const Vec nx = _mm256_and_si256(_mm256_srli_epi32(e, 5), set1(31));
      rd.val[g] = _mm256_add_epi32(_mm256_srli_epi32(e, 16), low_bits(_mm256_srlv_epi32(lo[g], cl), nx));
      rd.total[g] = _mm256_add_epi32(cl, nx);
      const Vec lit = _mm256_cmpeq_epi32(_mm256_and_si256(e, set1(kEntryLiteral)), set1(kEntryLiteral));
      const uint32_t litg = mask_to_bits(lit), leng = ~litg & ~pg & 0xFF;
      rd.lit |= litg << (8 * g);
      rd.len |= leng << (8 * g);
      rd.outlen[g] =
          _mm256_or_si256(_mm256_and_si256(bits_to_mask(leng), rd.val[g]), _mm256_and_si256(lit, set1(1)));
    }
    return true;
  }

  // Output positions: an exclusive prefix sum of the output lengths across the 32 lanes.
  GDFS_AVX2 static uint32_t place(Round& rd, size_t opos) {
    uint32_t sum = 0;
    for (int g = 0; g < 4; ++g) {
      const Vec incl = prefix_sum8(rd.outlen[g]);
      rd.pos[g] =
          _mm256_add_epi32(_mm256_sub_epi32(incl, rd.outlen[g]), set1(static_cast<uint32_t>(opos) + sum));
      sum += static_cast<uint32_t>(_mm256_extract_epi32(incl, 7));
    }
    return sum;
  }

  GDFS_AVX2 static bool bad_distance(const Round& rd, uint32_t pending, const OwedMatches& m) {
    uint32_t bad = 0;
    for (int g = 0; g < 4; ++g) {
      const Vec mpos = _mm256_loadu_si256(reinterpret_cast<const Vec*>(m.pos.data() + 8 * g));
      // Values are below 2^17, so the signed compare is exact.
      bad |= mask_to_bits(_mm256_cmpgt_epi32(rd.val[g], mpos)) & (pending >> (8 * g)) & 0xFF;
    }
    return bad != 0;
  }

  // Owed copies in lane order, then literals and new reservations.
  GDFS_AVX2 static void commit(const Round& rd, uint32_t pending, size_t, Output& o, OwedMatches& m) {
    alignas(32) uint32_t val_s[32], pos_s[32];
    for (int g = 0; g < 4; ++g) {
      _mm256_store_si256(reinterpret_cast<Vec*>(val_s + 8 * g), rd.val[g]);
      _mm256_store_si256(reinterpret_cast<Vec*>(pos_s + 8 * g), rd.pos[g]);
    }
    copy_owed<Avx2>(o, m, pending, val_s);
    put_literals(o, rd.lit, pos_s, val_s);
    // The new reservations, blended in a register at a time (a lane-by-lane loop mispredicts).
    for (int g = 0; g < 4; ++g) {
      const Vec take = bits_to_mask((rd.len >> (8 * g)) & 0xFF);
      Vec* pos = reinterpret_cast<Vec*>(m.pos.data() + 8 * g);
      Vec* len = reinterpret_cast<Vec*>(m.len.data() + 8 * g);
      _mm256_storeu_si256(pos, _mm256_blendv_epi8(_mm256_loadu_si256(pos), rd.pos[g], take));
      _mm256_storeu_si256(len, _mm256_blendv_epi8(_mm256_loadu_si256(len), rd.val[g], take));
    }
  }

  static uint32_t match_lanes(const Round& rd) { return rd.len; }
};

}  // namespace

const SimdRounds kAvx2Rounds{data_rounds<Avx2>, stored_rounds<Avx2>, nullptr};

}  // namespace gdfs::gdeflate
#endif
