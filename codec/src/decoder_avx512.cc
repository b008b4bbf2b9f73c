// AVX-512 data rounds: the 32 lanes of a GDeflate page decoded side by side, 16 per register.
//
// Per round: one gather looks every lane's symbol up (the litlen table for most lanes, the distance
// table for lanes owing a distance), a prefix sum over the output lengths gives each lane its output
// position, and VPEXPANDD hands the refill words to exactly the lanes that need them, in lane order,
// which is the GDeflate refill rule in one instruction. Each lane's 64-bit bit buffer is kept as two
// 32-bit halves; VPSHRDVD shifts the pair.
//
// Nothing is written until the whole round is known to be ordinary; any other round is left to the
// scalar code, so both paths give identical output and status on every input.
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), which its own flow analysis
// reports as uninitialised (GCC bug 105593); the warning says nothing about this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "decode_table.h"
#include "decoder_rounds.h"

namespace gdfs::gdeflate {

static_assert(kDistTableOffset == kLitlenTableSize);

#define GDFS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi2,popcnt,bmi,bmi2")))

bool avx512_usable() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vbmi2");
#else
  return false;
#endif
}

#if defined(__x86_64__)
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

// Exact match copy: masked stores end the copy at dst+len, so the bytes after it (literals of higher
// lanes, already final) are never touched and writes need no particular order. Loads may read up to
// 31 bytes past the source, which stays inside the output page plus its slack.
GDFS_AVX512 inline void copy_match(uint8_t* dst, uint32_t dist, uint32_t len) {
  const uint8_t* src = dst - dist;
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
  } else if (dist >= 8) {
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
      uint64_t v;
      std::memcpy(&v, src + i, 8);
      std::memcpy(dst + i, &v, 8);
    }
    for (; i < len; ++i) dst[i] = src[i];
  } else {
    for (uint32_t i = 0; i < len; ++i) dst[i] = src[i];
  }
}

// One decoded round, not yet committed.
struct Round {
  __m512i val[2], total[2], outlen[2];
  __mmask16 lit[2], len[2];
};

// Looks up every lane's symbol. False if any lane hit end-of-block or an invalid code.
GDFS_AVX512 inline bool lookup_round(const __m512i* lo, uint32_t pending, const uint32_t* tables, Round& rd) {
  for (int h = 0; h < 2; ++h) {
    const __mmask16 ph = static_cast<__mmask16>(pending >> (16 * h));
    const __m512i tb =
        _mm512_mask_blend_epi32(ph, _mm512_set1_epi32(kLitlenTableBits), _mm512_set1_epi32(kDistTableBits));
    const __m512i base = _mm512_maskz_mov_epi32(ph, _mm512_set1_epi32(kDistTableOffset));
    const __m512i idx = _mm512_add_epi32(low_bits(lo[h], tb), base);
    __m512i e = _mm512_i32gather_epi32(idx, tables, 4);
    const __mmask16 sub = _mm512_test_epi32_mask(e, _mm512_set1_epi32(kEntryLong));
    if (sub) {
      const __m512i sb = _mm512_and_si512(_mm512_srli_epi32(e, 5), _mm512_set1_epi32(31));
      const __m512i idx2 = _mm512_add_epi32(_mm512_add_epi32(base, _mm512_srli_epi32(e, 16)),
                                            low_bits(_mm512_srlv_epi32(lo[h], tb), sb));
      e = _mm512_mask_i32gather_epi32(e, sub, idx2, tables, 4);
    }
    if (_mm512_test_epi32_mask(e, _mm512_set1_epi32(kEntryEob | kEntryBad))) return false;
    const __m512i cl = _mm512_and_si512(e, _mm512_set1_epi32(31));
    const __m512i nx = _mm512_and_si512(_mm512_srli_epi32(e, 5), _mm512_set1_epi32(31));
    rd.val[h] = _mm512_add_epi32(_mm512_srli_epi32(e, 16), low_bits(_mm512_srlv_epi32(lo[h], cl), nx));
    rd.total[h] = _mm512_add_epi32(cl, nx);
    rd.lit[h] = _mm512_test_epi32_mask(e, _mm512_set1_epi32(kEntryLiteral));
    rd.len[h] = static_cast<__mmask16>(~rd.lit[h] & ~ph);
    rd.outlen[h] =
        _mm512_mask_mov_epi32(_mm512_maskz_mov_epi32(rd.len[h], rd.val[h]), rd.lit[h], _mm512_set1_epi32(1));
  }
  return true;
}

struct VecLanes {
  __m512i lo[2], hi[2], cnt[2];
};

GDFS_AVX512 inline void load_lanes(const LaneReader& r, VecLanes& v) {
  alignas(64) uint32_t lo[32], hi[32], cnt[32];
  for (unsigned l = 0; l < 32; ++l) {
    lo[l] = static_cast<uint32_t>(r.buf[l]);
    hi[l] = static_cast<uint32_t>(r.buf[l] >> 32);
    cnt[l] = r.cnt[l];
  }
  for (int h = 0; h < 2; ++h) {
    v.lo[h] = _mm512_load_si512(lo + 16 * h);
    v.hi[h] = _mm512_load_si512(hi + 16 * h);
    v.cnt[h] = _mm512_load_si512(cnt + 16 * h);
  }
}

GDFS_AVX512 inline void store_lanes(const VecLanes& v, LaneReader& r) {
  alignas(64) uint32_t lo[32], hi[32], cnt[32];
  for (int h = 0; h < 2; ++h) {
    _mm512_store_si512(lo + 16 * h, v.lo[h]);
    _mm512_store_si512(hi + 16 * h, v.hi[h]);
    _mm512_store_si512(cnt + 16 * h, v.cnt[h]);
  }
  for (unsigned l = 0; l < 32; ++l) {
    r.buf[l] = lo[l] | (uint64_t{hi[l]} << 32);
    r.cnt[l] = cnt[l];
  }
}

// Consumes `total` bits from every lane, then refills the lanes left with fewer than 32 bits from
// r.in[next...], in lane order. The caller has checked that enough words remain.
GDFS_AVX512 inline void consume_refill(VecLanes& v, const __m512i* total, const __m512i* newcnt,
                                       const __mmask16* refill, const uint8_t* in, size_t& next) {
  const __m512i k32 = _mm512_set1_epi32(32);
  for (int h = 0; h < 2; ++h) {
    v.lo[h] = _mm512_shrdv_epi32(v.lo[h], v.hi[h], total[h]);
    v.hi[h] = _mm512_srlv_epi32(v.hi[h], total[h]);
    const __m512i w = _mm512_maskz_expandloadu_epi32(refill[h], in + 4 * next);
    next += _mm_popcnt_u32(refill[h]);
    v.lo[h] = _mm512_or_si512(v.lo[h], _mm512_sllv_epi32(w, newcnt[h]));
    v.hi[h] = _mm512_or_si512(v.hi[h], _mm512_srlv_epi32(w, _mm512_sub_epi32(k32, newcnt[h])));
    v.cnt[h] = _mm512_mask_add_epi32(newcnt[h], refill[h], newcnt[h], k32);
  }
}

}  // namespace

GDFS_AVX512 void avx512_rounds(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* tables) {
  alignas(64) uint32_t dist_s[32], pos_s[32], val_s[32];
  VecLanes v;
  load_lanes(r, v);
  const __m512i k32 = _mm512_set1_epi32(32);
  size_t next = r.next, opos = o.pos;
  uint32_t pending = m.pending;
  Round rd;
  while (lookup_round(v.lo, pending, tables, rd)) {
    const uint32_t sum0 = static_cast<uint32_t>(_mm512_reduce_add_epi32(rd.outlen[0]));
    const uint32_t sum1 = static_cast<uint32_t>(_mm512_reduce_add_epi32(rd.outlen[1]));
    if (sum0 + sum1 > o.size - opos) break;
    __mmask16 bad_dist = 0, refill[2];
    __m512i newcnt[2];
    for (int h = 0; h < 2; ++h) {
      const __mmask16 ph = static_cast<__mmask16>(pending >> (16 * h));
      bad_dist |= _mm512_mask_cmpgt_epu32_mask(ph, rd.val[h], _mm512_loadu_si512(m.pos.data() + 16 * h));
      newcnt[h] = _mm512_sub_epi32(v.cnt[h], rd.total[h]);
      refill[h] = _mm512_cmplt_epu32_mask(newcnt[h], k32);
    }
    if (bad_dist || next + _mm_popcnt_u32(refill[0]) + _mm_popcnt_u32(refill[1]) > r.nwords) break;

    // Commit: the copies owed from the previous round (in lane order: a copy may read what a lower
    // lane's copy writes), then this round's literals and match reservations.
    if (pending) {
      _mm512_store_si512(dist_s, rd.val[0]);
      _mm512_store_si512(dist_s + 16, rd.val[1]);
      for (uint32_t b = pending; b; b &= b - 1) {
        const unsigned l = __builtin_ctz(b);
        copy_match(o.data + m.pos[l], dist_s[l], m.len[l]);
      }
    }
    if (!(rd.len[0] | rd.len[1])) {
      // Only literals start here, so they are contiguous: compress them into place.
      size_t p = opos;
      for (int h = 0; h < 2; ++h) {
        const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_maskz_compress_epi32(rd.lit[h], rd.val[h]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o.data + p), bytes);
        p += _mm_popcnt_u32(rd.lit[h]);
      }
    } else {
      const __m512i base = _mm512_set1_epi32(static_cast<int>(opos));
      const __m512i pos0 = _mm512_add_epi32(_mm512_sub_epi32(prefix_sum16(rd.outlen[0]), rd.outlen[0]), base);
      const __m512i pos1 =
          _mm512_add_epi32(_mm512_sub_epi32(prefix_sum16(rd.outlen[1]), rd.outlen[1]),
                           _mm512_add_epi32(base, _mm512_set1_epi32(static_cast<int>(sum0))));
      _mm512_store_si512(pos_s, pos0);
      _mm512_store_si512(pos_s + 16, pos1);
      _mm512_store_si512(val_s, rd.val[0]);
      _mm512_store_si512(val_s + 16, rd.val[1]);
      for (uint32_t b = rd.lit[0] | (uint32_t{rd.lit[1]} << 16); b; b &= b - 1) {
        const unsigned l = __builtin_ctz(b);
        o.data[pos_s[l]] = static_cast<uint8_t>(val_s[l]);
      }
      _mm512_mask_storeu_epi32(m.pos.data(), rd.len[0], pos0);
      _mm512_mask_storeu_epi32(m.pos.data() + 16, rd.len[1], pos1);
      _mm512_mask_storeu_epi32(m.len.data(), rd.len[0], rd.val[0]);
      _mm512_mask_storeu_epi32(m.len.data() + 16, rd.len[1], rd.val[1]);
    }
    pending = rd.len[0] | (uint32_t{rd.len[1]} << 16);
    opos += sum0 + sum1;
    consume_refill(v, rd.total, newcnt, refill, r.in, next);
  }
  store_lanes(v, r);
  r.next = next;
  m.pending = pending;
  o.pos = opos;
}

// Stored-block body: byte k on lane k mod 32, so a full round is 32 consecutive output bytes.
GDFS_AVX512 void avx512_stored(LaneReader& r, Output& o, uint32_t& remaining) {
  VecLanes v;
  load_lanes(r, v);
  const __m512i k8 = _mm512_set1_epi32(8), k32 = _mm512_set1_epi32(32);
  const __m512i total[2] = {k8, k8};
  size_t next = r.next;
  while (remaining >= 32) {
    __mmask16 refill[2];
    __m512i newcnt[2];
    for (int h = 0; h < 2; ++h) {
      newcnt[h] = _mm512_sub_epi32(v.cnt[h], k8);
      refill[h] = _mm512_cmplt_epu32_mask(newcnt[h], k32);
    }
    if (next + _mm_popcnt_u32(refill[0]) + _mm_popcnt_u32(refill[1]) > r.nwords) break;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o.data + o.pos), _mm512_cvtepi32_epi8(v.lo[0]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o.data + o.pos + 16), _mm512_cvtepi32_epi8(v.lo[1]));
    o.pos += 32;
    remaining -= 32;
    consume_refill(v, total, newcnt, refill, r.in, next);
  }
  store_lanes(v, r);
  r.next = next;
}
#else
void avx512_rounds(LaneReader&, Output&, OwedMatches&, const uint32_t*) {}
void avx512_stored(LaneReader&, Output&, uint32_t&) {}
#endif

}  // namespace gdfs::gdeflate
