// AVX-512 data rounds: the 32 lanes of a GDeflate page decoded side by side, 16 per register.
//
// Per round: one gather looks every lane's symbol up (the litlen table for most lanes, the distance
// table for lanes owing a distance), a prefix sum over the output lengths gives each lane its output
// position, and VPEXPANDD hands the refill words to exactly the lanes that need them, in lane order,
// which is the GDeflate refill rule in one instruction. Each lane's 64-bit bit buffer is kept as two
// 32-bit halves; VPSHRDVD shifts the pair.
//
// Nothing is written until the whole round is known to be ordinary; any other round is left to the
// scalar code, so both paths give identical output and status on every input. The loops themselves are
// decoder_simd.h's, shared with AVX2; this file holds what AVX-512 does its own way (the Avx512 traits).
//
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), which its own flow analysis
// reports as uninitialised (GCC bug 105593); the warning says nothing about this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "decode_table.h"
#include "decoder_rounds.h"

#if defined(__x86_64__)
#define GDFS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi2,popcnt,bmi,bmi2")))
#define GDFS_SIMD GDFS_AVX512
#include "decoder_simd.h"

namespace gdfs::gdeflate {
static_assert(kDistTableOffset == kLitlenTableSize);

namespace {

GDFS_AVX512 inline __m512i prefix_sum16(__m512i x) {
  const __m512i z = _mm512_setzero_si512();
  x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 15));
  x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 14));
  x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 12));
  return _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 8));
}

GDFS_AVX512 inline __m512i low_bits(__m512i x, __m512i n) {
  const __m512i one = _mm512_set1_epi32(1);
  return _mm512_and_si512(x, _mm512_sub_epi32(_mm512_sllv_epi32(one, n), one));
}

// kRepeat[d][j] = j mod d: the PSHUFB indices that repeat a pattern of d bytes (2 <= d < 16).
constexpr std::array<std::array<uint8_t, 64>, 16> make_repeat() {
  std::array<std::array<uint8_t, 64>, 16> t{};
  for (unsigned d = 1; d < 16; ++d)
    for (unsigned j = 0; j < 64; ++j) t[d][j] = static_cast<uint8_t>(j % d);
  return t;
}
alignas(64) constexpr auto kRepeat = make_repeat();

// The traits of decoder_simd.h: 16 lanes a register, lane bit sets in mask registers.
struct Avx512 {
  using Vec = __m512i;
  using Mask = __mmask16;
  static constexpr unsigned kWidth = 16;

  GDFS_AVX512 static Vec load(const uint32_t* p) { return _mm512_load_si512(p); }
  GDFS_AVX512 static void store(uint32_t* p, Vec v) { _mm512_store_si512(p, v); }
  GDFS_AVX512 static Vec set1(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
  GDFS_AVX512 static Vec sub(Vec a, Vec b) { return _mm512_sub_epi32(a, b); }
  GDFS_AVX512 static Mask below32(Vec v) { return _mm512_cmplt_epu32_mask(v, _mm512_set1_epi32(32)); }
  GDFS_AVX512 static unsigned count(Mask m) { return _mm_popcnt_u32(m); }

  // VPSHRDVD shifts the lo:hi pair in one instruction; VPEXPANDD hands the words to the lanes in m.
  GDFS_AVX512 static void refill(Vec& lo, Vec& hi, Vec& cnt, Vec total, Vec newcnt, Mask m,
                                 const uint8_t* words) {
    const Vec k32 = _mm512_set1_epi32(32);
    lo = _mm512_shrdv_epi32(lo, hi, total);
    hi = _mm512_srlv_epi32(hi, total);
    const Vec w = _mm512_maskz_expandloadu_epi32(m, words);
    lo = _mm512_or_si512(lo, _mm512_sllv_epi32(w, newcnt));
    hi = _mm512_or_si512(hi, _mm512_srlv_epi32(w, _mm512_sub_epi32(k32, newcnt)));
    cnt = _mm512_mask_add_epi32(newcnt, m, newcnt, k32);
  }

  GDFS_AVX512 static void store_low_bytes(const Vec* lo, uint8_t* dst) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm512_cvtepi32_epi8(lo[0]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16), _mm512_cvtepi32_epi8(lo[1]));
  }

  // Exact match copy: masked stores end the copy at dst+len, so the bytes after it (literals of higher
  // lanes, already final) are never touched and writes need no particular order. Loads may read up to
  // 31 bytes past the source, never past dst+len: the page decodes in place, in a buffer of its size.
  GDFS_AVX512 static void copy_match(uint8_t* dst, uint32_t dist, uint32_t len) {
    const uint8_t* src = dst - dist;
    if (len <= 32 && dist >= len) {
      // Most matches (97% at level 12 on mixed data): one masked load and store, whatever the distance.
      // Choosing a path by distance first mispredicted often, as short distances are common but not usual.
      const __mmask32 k = _bzhi_u32(~0u, len);
      _mm256_mask_storeu_epi8(dst, k, _mm256_maskz_loadu_epi8(k, src));
      return;
    }
    if (dist >= 32) {
      uint32_t i = 0;
      for (; i + 32 <= len; i += 32)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
      if (i < len)
        _mm256_mask_storeu_epi8(dst + i, _bzhi_u32(~0u, len - i),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    } else if (dist == 1) {
      const __m256i v = _mm256_set1_epi8(static_cast<char>(*src));
      uint32_t i = 0;
      for (; i + 32 <= len; i += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), v);
      if (i < len) _mm256_mask_storeu_epi8(dst + i, _bzhi_u32(~0u, len - i), v);
    } else if (dist < 16) {
      // A repeating pattern of dist bytes: 64 bytes of it made at once (the pattern in every 128-bit
      // lane, then PSHUFB by j mod dist), stored every `period` bytes, a multiple of dist, so each store
      // starts the pattern afresh. Byte by byte, each byte waited for the store dist bytes before it.
      const __m512i pat = _mm512_broadcast_i32x4(_mm_maskz_loadu_epi8(_bzhi_u32(0xFFFF, dist), src));
      const __m512i rep = _mm512_shuffle_epi8(pat, _mm512_load_si512(kRepeat[dist].data()));
      const uint32_t period = 64 - 64 % dist;
      for (uint32_t i = 0; i < len; i += period)
        _mm512_mask_storeu_epi8(dst + i, _bzhi_u64(~0ull, std::min(len - i, 64u)), rep);
    } else {
      // 16 <= dist < 32: 16-byte blocks read only bytes already final.
      uint32_t i = 0;
      for (; i + 16 <= len; i += 16)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
      if (i < len)
        _mm_mask_storeu_epi8(dst + i, static_cast<__mmask16>(_bzhi_u32(0xFFFF, len - i)),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    }
  }

  // One decoded round, not yet committed.
  struct Round {
    Vec val[2], total[2], outlen[2];
    Mask lit[2], len[2];
    uint32_t sum0, sum1;  // output bytes of lanes 0-15 and of lanes 16-31
  };

  // Looks up every lane's symbol. False if any lane hit end-of-block or an invalid code.
  GDFS_AVX512 static bool lookup_round(const Vec* lo, uint32_t pending, const uint32_t* tables, Round& rd) {
    for (int h = 0; h < 2; ++h) {
      const Mask ph = static_cast<Mask>(pending >> (16 * h));
      const Vec tb =
          _mm512_mask_blend_epi32(ph, _mm512_set1_epi32(kLitlenTableBits), _mm512_set1_epi32(kDistTableBits));
      const Vec base = _mm512_maskz_mov_epi32(ph, _mm512_set1_epi32(kDistTableOffset));
      const Vec idx = _mm512_add_epi32(low_bits(lo[h], tb), base);
      Vec e = _mm512_i32gather_epi32(idx, tables, 4);
      const Mask sub = _mm512_test_epi32_mask(e, _mm512_set1_epi32(kEntryLong));
      if (sub) {
        const Vec sb = _mm512_and_si512(_mm512_srli_epi32(e, 5), _mm512_set1_epi32(31));
        const Vec idx2 = _mm512_add_epi32(_mm512_add_epi32(base, _mm512_srli_epi32(e, 16)),
                                          low_bits(_mm512_srlv_epi32(lo[h], tb), sb));
        e = _mm512_mask_i32gather_epi32(e, sub, idx2, tables, 4);
      }
      if (_mm512_test_epi32_mask(e, _mm512_set1_epi32(kEntryEob | kEntryBad))) return false;
      const Vec cl = _mm512_and_si512(e, _mm512_set1_epi32(31));
      const Vec nx = _mm512_and_si512(_mm512_srli_epi32(e, 5), _mm512_set1_epi32(31));
      rd.val[h] = _mm512_add_epi32(_mm512_srli_epi32(e, 16), low_bits(_mm512_srlv_epi32(lo[h], cl), nx));
      rd.total[h] = _mm512_add_epi32(cl, nx);
      rd.lit[h] = _mm512_test_epi32_mask(e, _mm512_set1_epi32(kEntryLiteral));
      rd.len[h] = static_cast<Mask>(~rd.lit[h] & ~ph);
      rd.outlen[h] = _mm512_mask_mov_epi32(_mm512_maskz_mov_epi32(rd.len[h], rd.val[h]), rd.lit[h],
                                           _mm512_set1_epi32(1));
    }
    return true;
  }

  // Positions are only needed when a match starts, so commit() computes them; here only the sums.
  GDFS_AVX512 static uint32_t place(Round& rd, size_t) {
    rd.sum0 = static_cast<uint32_t>(_mm512_reduce_add_epi32(rd.outlen[0]));
    rd.sum1 = static_cast<uint32_t>(_mm512_reduce_add_epi32(rd.outlen[1]));
    return rd.sum0 + rd.sum1;
  }

  GDFS_AVX512 static bool bad_distance(const Round& rd, uint32_t pending, const OwedMatches& m) {
    Mask bad = 0;
    for (int h = 0; h < 2; ++h) {
      const Mask ph = static_cast<Mask>(pending >> (16 * h));
      bad |= _mm512_mask_cmpgt_epu32_mask(ph, rd.val[h], _mm512_loadu_si512(m.pos.data() + 16 * h));
    }
    return bad != 0;
  }

  // The literals of one half of a round that also starts matches: byte val[l] at out + rel[l] for each
  // lane l in `lit`, where the half's output is `span` bytes. Lane order is position order, so where the
  // span fits in kLiteralSpan bytes an expand per 64 bytes puts the literal bytes at their positions and a
  // masked store writes them, leaving the match bytes between them alone. One byte store per literal, in a
  // loop whose trip count changes every round, was a fifth of the decoder's time.
  static constexpr uint32_t kLiteralSpan = 128;
  GDFS_AVX512 static void place_literals(uint8_t* out, Mask lit, Vec val, Vec rel, uint32_t span) {
    if (!lit) return;
    if (span <= kLiteralSpan) {
      const __m512i r0 = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(rel));
      const __m512i r1 = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(rel, 1));
      __m512i bytes = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(_mm512_maskz_compress_epi32(lit, val)));
      for (uint32_t from = 0; from < span; from += 64) {
        const __mmask64 at = literal_bytes(lit, r0, r1, from);
        _mm512_mask_storeu_epi8(out + from, at, _mm512_maskz_expand_epi8(at, bytes));
        bytes = _mm512_maskz_compress_epi8(~0ull << _mm_popcnt_u64(at), bytes);  // the bytes not yet placed
      }
      return;
    }
    alignas(64) uint32_t rel_s[16], val_s[16];
    _mm512_store_si512(rel_s, rel);
    _mm512_store_si512(val_s, val);
    for (uint32_t b = lit; b; b &= b - 1) {
      const unsigned l = static_cast<unsigned>(__builtin_ctz(b));
      out[rel_s[l]] = static_cast<uint8_t>(val_s[l]);
    }
  }

  // Bit j set where a lane of `lit` has position from + j (positions r0: lanes 0-7, r1: lanes 8-15, as
  // 64-bit lanes). A shift by 64 or more, which the subtraction makes of positions outside the 64 bytes,
  // gives 0.
  GDFS_AVX512 static __mmask64 literal_bytes(Mask lit, __m512i r0, __m512i r1, uint64_t from) {
    const __m512i one = _mm512_set1_epi64(1), f = _mm512_set1_epi64(static_cast<long long>(from));
    const __m512i lo = _mm512_maskz_sllv_epi64(static_cast<__mmask8>(lit), one, _mm512_sub_epi64(r0, f));
    const __m512i hi = _mm512_maskz_sllv_epi64(static_cast<__mmask8>(lit >> 8), one, _mm512_sub_epi64(r1, f));
    return static_cast<__mmask64>(_mm512_reduce_or_epi64(_mm512_or_si512(lo, hi)));
  }

  // The copies owed from the previous round, then this round's literals and match reservations.
  GDFS_AVX512 static void commit(const Round& rd, uint32_t pending, size_t opos, Output& o, OwedMatches& m) {
    alignas(64) uint32_t val_s[32];
    if (pending) {
      _mm512_store_si512(val_s, rd.val[0]);
      _mm512_store_si512(val_s + 16, rd.val[1]);
      copy_owed<Avx512>(o, m, pending, val_s);
    }
    if (!(rd.len[0] | rd.len[1])) {
      // Only literals start here, so they are contiguous: compress them into place.
      size_t p = opos;
      for (int h = 0; h < 2; ++h) {
        const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_maskz_compress_epi32(rd.lit[h], rd.val[h]));
        const unsigned n = _mm_popcnt_u32(rd.lit[h]);
        _mm_mask_storeu_epi8(o.data + p, static_cast<__mmask16>(_bzhi_u32(0xFFFF, n)), bytes);
        p += n;
      }
      return;
    }
    // Each half's positions relative to its first output byte, then absolute.
    const Vec rel0 = _mm512_sub_epi32(prefix_sum16(rd.outlen[0]), rd.outlen[0]);
    const Vec rel1 = _mm512_sub_epi32(prefix_sum16(rd.outlen[1]), rd.outlen[1]);
    const size_t start1 = opos + rd.sum0;
    place_literals(o.data + opos, rd.lit[0], rd.val[0], rel0, rd.sum0);
    place_literals(o.data + start1, rd.lit[1], rd.val[1], rel1, rd.sum1);
    const Vec pos0 = _mm512_add_epi32(rel0, _mm512_set1_epi32(static_cast<int>(opos)));
    const Vec pos1 = _mm512_add_epi32(rel1, _mm512_set1_epi32(static_cast<int>(start1)));
    _mm512_mask_storeu_epi32(m.pos.data(), rd.len[0], pos0);
    _mm512_mask_storeu_epi32(m.pos.data() + 16, rd.len[1], pos1);
    _mm512_mask_storeu_epi32(m.len.data(), rd.len[0], rd.val[0]);
    _mm512_mask_storeu_epi32(m.len.data() + 16, rd.len[1], rd.val[1]);
  }

  static uint32_t match_lanes(const Round& rd) { return rd.len[0] | (uint32_t{rd.len[1]} << 16); }
};

// Code-length rounds (SimdRounds::lengths). A round's 32 precode symbols are decoded side by side;
// their runs are then written in lane order (a repeat copies the length before it, which may be the
// previous lane's).
GDFS_AVX512 void length_rounds(LaneReader& r, const uint32_t* precode, uint8_t* lens, unsigned total,
                               unsigned& k) {
  using Vec = __m512i;
  Lanes<Avx512> v;
  load_lanes(r, v);
  size_t next = r.next;
  unsigned at = k;
  const Vec k31 = _mm512_set1_epi32(31), k16 = _mm512_set1_epi32(16);
  alignas(64) uint32_t sym_s[32], run_s[32];
  for (;;) {
    Vec tot[2], sym[2], run[2];
    bool bad = false;
    for (int h = 0; h < 2; ++h) {
      const Vec e = _mm512_i32gather_epi32(_mm512_and_si512(v.lo[h], _mm512_set1_epi32(127)), precode, 4);
      bad |= _mm512_test_epi32_mask(e, _mm512_set1_epi32(kEntryBad)) != 0;
      const Vec cl = _mm512_and_si512(e, k31);
      const Vec nx = _mm512_and_si512(_mm512_srli_epi32(e, 5), k31);
      sym[h] = _mm512_srli_epi32(e, 16);
      tot[h] = _mm512_add_epi32(cl, nx);
      // A run: 1 length below 16; 3 + x for 16 (repeat) and 17 (zeros); 11 + x for 18 (zeros).
      const Vec x = low_bits(_mm512_srlv_epi32(v.lo[h], cl), nx);
      const __mmask16 rle = _mm512_cmpge_epu32_mask(sym[h], k16);
      const __mmask16 long_zeros = _mm512_cmpeq_epi32_mask(sym[h], _mm512_set1_epi32(18));
      const Vec base = _mm512_mask_mov_epi32(_mm512_set1_epi32(3), long_zeros, _mm512_set1_epi32(11));
      run[h] = _mm512_mask_add_epi32(_mm512_set1_epi32(1), rle, base, x);
    }
    if (bad) break;
    const uint32_t sum = static_cast<uint32_t>(_mm512_reduce_add_epi32(_mm512_add_epi32(run[0], run[1])));
    if (sum > total - at) break;  // the header ends inside this round, or a run is too long
    _mm512_store_si512(sym_s, sym[0]);
    _mm512_store_si512(sym_s + 16, sym[1]);
    if (at == 0 && sym_s[0] == 16) break;  // a repeat with nothing before it
    Vec newcnt[2];
    __mmask16 refill[2];
    if (next + plan_refill(v, tot, newcnt, refill) > r.nwords) break;
    _mm512_store_si512(run_s, run[0]);
    _mm512_store_si512(run_s + 16, run[1]);
    for (unsigned l = 0; l < 32; ++l) {
      const uint32_t s = sym_s[l], n = run_s[l];
      if (s < 16) {
        lens[at++] = static_cast<uint8_t>(s);
      } else {
        std::memset(lens + at, s == 16 ? lens[at - 1] : 0, n);
        at += n;
      }
    }
    consume_refill(v, tot, newcnt, refill, r.in, next);
  }
  store_lanes(v, r);
  r.next = next;
  k = at;
}

}  // namespace

const SimdRounds kAvx512Rounds{data_rounds<Avx512>, stored_rounds<Avx512>, length_rounds};

}  // namespace gdfs::gdeflate
#endif
