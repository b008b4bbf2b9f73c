// AVX2 data rounds: the AVX-512 design (decoder_avx512.cc) on machines without AVX-512, 8 lanes per
// register, four registers per round. What AVX-512 does in one instruction is done with tables here:
// refill words are loaded with a masked load and spread to the lanes that asked for them with a
// VPERMD whose indices come from a 256-entry table (the expand), and bit masks become vector masks
// by comparing against lane bits.
//
// As on AVX-512, a round is committed only when it is ordinary; all else is left to the scalar code,
// so every path gives the same bytes and status.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <array>
#include <cstring>

#include "decode_table.h"
#include "decoder_rounds.h"

namespace gdfs::gdeflate {

bool avx2_usable() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#else
  return false;
#endif
}

#if defined(__x86_64__)
#define GDFS_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))

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

// Exact-length copy (the bytes after dst+len may already be final).
GDFS_AVX2 inline void copy_match(uint8_t* dst, uint32_t dist, uint32_t len) {
  const uint8_t* src = dst - dist;
  if (dist >= len) {
    std::memcpy(dst, src, len);
    return;
  }
  uint32_t i = 0;
  if (dist >= 8) {
    for (; i + 8 <= len; i += 8) {
      uint64_t v;
      std::memcpy(&v, src + i, 8);
      std::memcpy(dst + i, &v, 8);
    }
  } else if (dist == 1) {
    std::memset(dst, *src, len);
    return;
  }
  for (; i < len; ++i) dst[i] = src[i];
}

struct Lanes {
  __m256i lo[4], hi[4], cnt[4];
};

GDFS_AVX2 inline void load_lanes(const LaneReader& r, Lanes& v) {
  alignas(32) uint32_t lo[32], hi[32], cnt[32];
  for (unsigned l = 0; l < 32; ++l) {
    lo[l] = static_cast<uint32_t>(r.buf[l]);
    hi[l] = static_cast<uint32_t>(r.buf[l] >> 32);
    cnt[l] = r.cnt[l];
  }
  for (int g = 0; g < 4; ++g) {
    v.lo[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo + 8 * g));
    v.hi[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi + 8 * g));
    v.cnt[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(cnt + 8 * g));
  }
}

GDFS_AVX2 inline void store_lanes(const Lanes& v, LaneReader& r) {
  alignas(32) uint32_t lo[32], hi[32], cnt[32];
  for (int g = 0; g < 4; ++g) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(lo + 8 * g), v.lo[g]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(hi + 8 * g), v.hi[g]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(cnt + 8 * g), v.cnt[g]);
  }
  for (unsigned l = 0; l < 32; ++l) {
    r.buf[l] = lo[l] | (uint64_t{hi[l]} << 32);
    r.cnt[l] = cnt[l];
  }
}

// Consumes total[g] bits per lane, then refills the lanes left under 32 bits from in[next...], in
// lane order. The caller has checked that the words exist.
GDFS_AVX2 inline void consume_refill(Lanes& v, const __m256i* total, const __m256i* newcnt,
                                     const uint32_t* refill, const uint8_t* in, size_t& next) {
  const __m256i k32 = set1(32);
  for (int g = 0; g < 4; ++g) {
    v.lo[g] = _mm256_or_si256(_mm256_srlv_epi32(v.lo[g], total[g]),
                              _mm256_sllv_epi32(v.hi[g], _mm256_sub_epi32(k32, total[g])));
    v.hi[g] = _mm256_srlv_epi32(v.hi[g], total[g]);
    const unsigned k = static_cast<unsigned>(__builtin_popcount(refill[g]));
    // Load exactly k words (masked: nothing past them is touched), then spread them to their lanes.
    const __m256i first_k = bits_to_mask((1u << k) - 1);
    const __m256i loaded = _mm256_maskload_epi32(reinterpret_cast<const int*>(in + 4 * next), first_k);
    const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(kExpand[refill[g]].data()));
    const __m256i w = _mm256_and_si256(_mm256_permutevar8x32_epi32(loaded, idx), bits_to_mask(refill[g]));
    next += k;
    v.lo[g] = _mm256_or_si256(v.lo[g], _mm256_sllv_epi32(w, newcnt[g]));
    v.hi[g] = _mm256_or_si256(v.hi[g], _mm256_srlv_epi32(w, _mm256_sub_epi32(k32, newcnt[g])));
    v.cnt[g] = _mm256_add_epi32(newcnt[g], _mm256_and_si256(bits_to_mask(refill[g]), k32));
  }
}

struct Round {
  __m256i val[4], total[4], outlen[4];
  uint32_t lit, len;  // lane bit masks over all 32 lanes
};

// Looks up every lane's symbol. False if any lane hit end-of-block or an invalid code.
GDFS_AVX2 inline bool lookup_round(const __m256i* lo, uint32_t pending, const uint32_t* tables, Round& rd) {
  rd.lit = rd.len = 0;
  const int* t = reinterpret_cast<const int*>(tables);
  for (int g = 0; g < 4; ++g) {
    const uint32_t pg = (pending >> (8 * g)) & 0xFF;
    const __m256i pm = bits_to_mask(pg);
    const __m256i tb = _mm256_blendv_epi8(set1(kLitlenTableBits), set1(kDistTableBits), pm);
    const __m256i base = _mm256_and_si256(pm, set1(kDistTableOffset));
    __m256i e = _mm256_i32gather_epi32(t, _mm256_add_epi32(low_bits(lo[g], tb), base), 4);
    const __m256i sub = _mm256_cmpeq_epi32(_mm256_and_si256(e, set1(kEntryLong)), set1(kEntryLong));
    if (!_mm256_testz_si256(sub, sub)) {
      const __m256i sb = _mm256_and_si256(_mm256_srli_epi32(e, 5), set1(31));
      const __m256i idx2 = _mm256_add_epi32(_mm256_add_epi32(base, _mm256_srli_epi32(e, 16)),
                                            low_bits(_mm256_srlv_epi32(lo[g], tb), sb));
      e = _mm256_mask_i32gather_epi32(e, t, idx2, sub, 4);
    }
    if (!_mm256_testz_si256(e, set1(kEntryEob | kEntryBad))) return false;
    const __m256i cl = _mm256_and_si256(e, set1(31));
    const __m256i nx = _mm256_and_si256(_mm256_srli_epi32(e, 5), set1(31));
    rd.val[g] = _mm256_add_epi32(_mm256_srli_epi32(e, 16), low_bits(_mm256_srlv_epi32(lo[g], cl), nx));
    rd.total[g] = _mm256_add_epi32(cl, nx);
    const __m256i lit = _mm256_cmpeq_epi32(_mm256_and_si256(e, set1(kEntryLiteral)), set1(kEntryLiteral));
    const uint32_t litg = mask_to_bits(lit), leng = ~litg & ~pg & 0xFF;
    rd.lit |= litg << (8 * g);
    rd.len |= leng << (8 * g);
    rd.outlen[g] =
        _mm256_or_si256(_mm256_and_si256(bits_to_mask(leng), rd.val[g]), _mm256_and_si256(lit, set1(1)));
  }
  return true;
}

}  // namespace

GDFS_AVX2 void avx2_rounds(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* tables) {
  alignas(32) uint32_t val_s[32], pos_s[32];
  Lanes v;
  load_lanes(r, v);
  size_t next = r.next, opos = o.pos;
  uint32_t pending = m.pending;
  Round rd;
  while (lookup_round(v.lo, pending, tables, rd)) {
    // Output positions: an exclusive prefix sum of the output lengths across the 32 lanes.
    __m256i pos[4];
    uint32_t sum = 0;
    for (int g = 0; g < 4; ++g) {
      const __m256i incl = prefix_sum8(rd.outlen[g]);
      pos[g] =
          _mm256_add_epi32(_mm256_sub_epi32(incl, rd.outlen[g]), set1(static_cast<uint32_t>(opos) + sum));
      sum += static_cast<uint32_t>(_mm256_extract_epi32(incl, 7));
    }
    if (sum > o.size - opos) break;
    uint32_t bad_dist = 0, refill[4], nref = 0;
    __m256i newcnt[4];
    for (int g = 0; g < 4; ++g) {
      const __m256i mpos = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m.pos.data() + 8 * g));
      // Values are below 2^17, so the signed compare is exact.
      bad_dist |= mask_to_bits(_mm256_cmpgt_epi32(rd.val[g], mpos)) & (pending >> (8 * g)) & 0xFF;
      newcnt[g] = _mm256_sub_epi32(v.cnt[g], rd.total[g]);
      refill[g] = mask_to_bits(_mm256_cmpgt_epi32(set1(32), newcnt[g]));
      nref += static_cast<uint32_t>(__builtin_popcount(refill[g]));
    }
    if (bad_dist || next + nref > r.nwords) break;

    // Commit: owed copies in lane order, then literals and new reservations.
    for (int g = 0; g < 4; ++g) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(val_s + 8 * g), rd.val[g]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(pos_s + 8 * g), pos[g]);
    }
    for (uint32_t b = pending; b; b &= b - 1) {
      const unsigned l = static_cast<unsigned>(__builtin_ctz(b));
      copy_match(o.data + m.pos[l], val_s[l], m.len[l]);
    }
    for (uint32_t b = rd.lit; b; b &= b - 1) {
      const unsigned l = static_cast<unsigned>(__builtin_ctz(b));
      o.data[pos_s[l]] = static_cast<uint8_t>(val_s[l]);
    }
    for (uint32_t b = rd.len; b; b &= b - 1) {
      const unsigned l = static_cast<unsigned>(__builtin_ctz(b));
      m.pos[l] = pos_s[l];
      m.len[l] = val_s[l];
    }
    pending = rd.len;
    opos += sum;
    consume_refill(v, rd.total, newcnt, refill, r.in, next);
  }
  store_lanes(v, r);
  r.next = next;
  m.pending = pending;
  o.pos = opos;
}

// Stored-block body: 32 consecutive output bytes per round.
GDFS_AVX2 void avx2_stored(LaneReader& r, Output& o, uint32_t& remaining) {
  Lanes v;
  load_lanes(r, v);
  const __m256i k8 = set1(8), k32 = set1(32), byte = set1(0xFF);
  const __m256i total[4] = {k8, k8, k8, k8};
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t next = r.next;
  while (remaining >= 32) {
    uint32_t refill[4], nref = 0;
    __m256i newcnt[4];
    for (int g = 0; g < 4; ++g) {
      newcnt[g] = _mm256_sub_epi32(v.cnt[g], k8);
      refill[g] = mask_to_bits(_mm256_cmpgt_epi32(k32, newcnt[g]));
      nref += static_cast<uint32_t>(__builtin_popcount(refill[g]));
    }
    if (next + nref > r.nwords) break;
    // Pack the low byte of every lane; the packs interleave 128-bit halves, which VPERMD undoes.
    const __m256i p01 = _mm256_packus_epi32(_mm256_and_si256(v.lo[0], byte), _mm256_and_si256(v.lo[1], byte));
    const __m256i p23 = _mm256_packus_epi32(_mm256_and_si256(v.lo[2], byte), _mm256_and_si256(v.lo[3], byte));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o.data + o.pos), bytes);
    o.pos += 32;
    remaining -= 32;
    consume_refill(v, total, newcnt, refill, r.in, next);
  }
  store_lanes(v, r);
  r.next = next;
}
#else
void avx2_rounds(LaneReader&, Output&, OwedMatches&, const uint32_t*) {}
void avx2_stored(LaneReader&, Output&, uint32_t&) {}
#endif

}  // namespace gdfs::gdeflate
