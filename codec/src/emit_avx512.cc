// AVX-512 data rounds for the encoder: the mirror image of decoder_avx512.cc. In a full round every lane
// takes either the distance it owes or the next token; VPEXPANDD hands the next tokens to exactly the
// free lanes, in lane order. Each lane's partial word is shifted in with variable shifts, completed
// words go out with a scatter (one word per lane at most), and VPCOMPRESSW appends the lanes whose
// step makes the decoder fetch a word to the fetch order, in lane order. The result is identical to
// the scalar loop in emit_tokens, which the tests check.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "block_writer.h"

namespace gdfs::gdeflate {

#if defined(__x86_64__)
#define GDFS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi2,popcnt")))

namespace {

GDFS_AVX512 inline __m512i load_u64_as_u32(const uint64_t* p) {
  const __m256i a = _mm512_cvtepi64_epi32(_mm512_loadu_si512(p));
  const __m256i b = _mm512_cvtepi64_epi32(_mm512_loadu_si512(p + 8));
  return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}

GDFS_AVX512 inline void store_u32_as_u64(uint64_t* p, __m512i v) {
  _mm512_storeu_si512(p, _mm512_cvtepu32_epi64(_mm512_castsi512_si256(v)));
  _mm512_storeu_si512(p + 8, _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(v, 1)));
}

// One table entry per symbol: code | length << 16 | (length + extra bits) << 24, so that one lookup
// gives everything a step needs. Unused symbols (length 0) get 0, which makes a literal's distance
// step empty.
inline uint32_t step_entry(uint16_t code, uint8_t len, uint8_t extra) {
  return len == 0 ? 0 : code | uint32_t{len} << 16 | uint32_t{static_cast<uint8_t>(len + extra)} << 24;
}

// A step's value and bit count from its table entry and its extra-bit value.
GDFS_AVX512 inline void step_from_entry(__m512i e, __m512i extra, __m512i& v, __m512i& n) {
  const __m512i len = _mm512_and_si512(_mm512_srli_epi32(e, 16), _mm512_set1_epi32(0xFF));
  v = _mm512_or_si512(_mm512_and_si512(e, _mm512_set1_epi32(0xFFFF)), _mm512_sllv_epi32(extra, len));
  n = _mm512_srli_epi32(e, 24);
}

}  // namespace

// encode_steps for 16 tokens at a time: the litlen entry comes from a gather, the distance entry from a
// two-register permute (32 symbols), masked off for literals (dsym == kNoDist).
GDFS_AVX512 size_t encode_steps_avx512(const Sym* s, size_t n, const BlockCodes& c, Steps& out) {
  alignas(64) uint32_t lt[kNumLitlenSyms];
  alignas(64) uint32_t dt[kNumDistSyms];
  for (unsigned k = 0; k < kNumLitlenSyms; ++k)
    lt[k] = step_entry(c.litlen_code[k], c.litlen_len[k], kLitlenExtraBySym[k]);
  for (unsigned k = 0; k < kNumDistSyms; ++k)
    dt[k] = step_entry(c.dist_code[k], c.dist_len[k], kDistExtra[k]);
  const __m512i dt0 = _mm512_load_si512(dt), dt1 = _mm512_load_si512(dt + 16);
  // A Sym is four uint16 in one uint64: its low uint32 holds lsym | lextra << 16, its high one
  // dsym | dextra << 16. These indices pick the low (even) and high (odd) uint32 of 16 Syms.
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i lo16 = _mm512_set1_epi32(0xFFFF), no_dist = _mm512_set1_epi32(kNoDist);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 8);
    const __m512i l = _mm512_permutex2var_epi32(a, even, b), d = _mm512_permutex2var_epi32(a, odd, b);
    const __m512i lsym = _mm512_and_si512(l, lo16), dsym = _mm512_and_si512(d, lo16);
    const __m512i le = _mm512_i32gather_epi32(lsym, lt, 4);
    const __m512i de =
        _mm512_maskz_permutex2var_epi32(_mm512_cmpneq_epu32_mask(dsym, no_dist), dt0, dsym, dt1);
    __m512i lv, ln, dv, dn;
    step_from_entry(le, _mm512_srli_epi32(l, 16), lv, ln);
    step_from_entry(de, _mm512_srli_epi32(d, 16), dv, dn);
    _mm512_storeu_si512(out.lv.data() + i, lv);
    _mm512_storeu_si512(out.ln.data() + i, ln);
    _mm512_storeu_si512(out.dv.data() + i, dv);
    _mm512_storeu_si512(out.dn.data() + i, dn);
  }
  return i;
}

GDFS_AVX512 void emit_full_rounds_avx512(LaneWriter::Sink& w, const Steps& s, size_t nt, size_t& i_ref,
                                         uint32_t& pending_ref, uint32_t* owed_v, uint32_t* owed_n) {
  constexpr uint32_t kCap = LaneWriter::kLaneCap;
  const __m512i k31 = _mm512_set1_epi32(31), k32 = _mm512_set1_epi32(32);
  __m512i c[2], acc[2], ov[2], on[2], base[2];
  __m256i ids[2];
  for (int h = 0; h < 2; ++h) {
    c[h] = _mm512_loadu_si512(w.consumed + 16 * h);
    acc[h] = load_u64_as_u32(w.acc + 16 * h);  // a lane's partial word always has fewer than 32 bits
    ov[h] = _mm512_loadu_si512(owed_v + 16 * h);
    on[h] = _mm512_loadu_si512(owed_n + 16 * h);
    const __m512i lane = _mm512_add_epi32(
        _mm512_set1_epi32(16 * h), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    base[h] = _mm512_mullo_epi32(lane, _mm512_set1_epi32(kCap));
    ids[h] = _mm512_cvtepi32_epi16(lane);
  }
  size_t i = i_ref, norder = w.norder;
  uint32_t pending = pending_ref;
  __mmask16 overflow = 0;
  while (i + 32 <= nt && norder + 32 < w.order_cap) {
    uint32_t next_pending = 0;
    for (int h = 0; h < 2; ++h) {
      const __mmask16 owes = static_cast<__mmask16>(pending >> (16 * h)),
                      free = static_cast<__mmask16>(~owes);
      const __m512i tlv = _mm512_maskz_expandloadu_epi32(free, s.lv.data() + i);
      const __m512i tln = _mm512_maskz_expandloadu_epi32(free, s.ln.data() + i);
      const __m512i tdv = _mm512_maskz_expandloadu_epi32(free, s.dv.data() + i);
      const __m512i tdn = _mm512_maskz_expandloadu_epi32(free, s.dn.data() + i);
      i += _mm_popcnt_u32(free);
      const __m512i v = _mm512_mask_blend_epi32(owes, tlv, ov[h]);
      const __m512i n = _mm512_mask_blend_epi32(owes, tln, on[h]);
      ov[h] = _mm512_mask_mov_epi32(ov[h], free, tdv);
      on[h] = _mm512_mask_mov_epi32(on[h], free, tdn);
      next_pending |= uint32_t{_mm512_mask_test_epi32_mask(free, tdn, tdn)} << (16 * h);

      // Shift the step's bits in at the lane's position; a word completes when they reach bit 32.
      const __m512i sh = _mm512_and_si512(c[h], k31);
      const __m512i lo = _mm512_or_si512(acc[h], _mm512_sllv_epi32(v, sh));
      const __m512i hi = _mm512_srlv_epi32(v, _mm512_sub_epi32(k32, sh));  // a shift by 32 gives 0
      const __mmask16 full = _mm512_cmpge_epu32_mask(_mm512_add_epi32(sh, n), k32);
      __m512i word = _mm512_srli_epi32(c[h], 5);
      overflow |= _mm512_mask_cmpge_epu32_mask(full, word, _mm512_set1_epi32(kCap));
      word = _mm512_min_epu32(word, _mm512_set1_epi32(kCap - 1));  // keeps a runaway page in bounds
      _mm512_mask_i32scatter_epi32(w.words, full, _mm512_add_epi32(base[h], word), lo, 4);
      acc[h] = _mm512_mask_blend_epi32(full, lo, hi);

      // The decoder fetches a word when a step moves ceil(consumed / 32).
      const __m512i c2 = _mm512_add_epi32(c[h], n);
      const __mmask16 fetch = _mm512_cmpneq_epu32_mask(_mm512_srli_epi32(_mm512_add_epi32(c2, k31), 5),
                                                       _mm512_srli_epi32(_mm512_add_epi32(c[h], k31), 5));
      // Compressed in a register and stored whole: a masked compress-store to memory is microcoded on
      // AMD Zen 4. The loop condition leaves room for the 16 entries; those past norder are scratch.
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(w.order + norder),
                          _mm256_maskz_compress_epi16(fetch, ids[h]));
      norder += _mm_popcnt_u32(fetch);
      c[h] = c2;
    }
    pending = next_pending;
  }
  for (int h = 0; h < 2; ++h) {
    _mm512_storeu_si512(w.consumed + 16 * h, c[h]);
    store_u32_as_u64(w.acc + 16 * h, acc[h]);
    _mm512_storeu_si512(owed_v + 16 * h, ov[h]);
    _mm512_storeu_si512(owed_n + 16 * h, on[h]);
  }
  w.norder = norder;
  w.overflow |= overflow != 0;
  i_ref = i;
  pending_ref = pending;
}
#else
size_t encode_steps_avx512(const Sym*, size_t, const BlockCodes&, Steps&) {
  return 0;
}
void emit_full_rounds_avx512(LaneWriter::Sink&, const Steps&, size_t, size_t&, uint32_t&, uint32_t*,
                             uint32_t*) {}
#endif

}  // namespace gdfs::gdeflate
