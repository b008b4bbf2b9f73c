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

}  // namespace

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
      _mm256_mask_compressstoreu_epi16(w.order + norder, fetch, ids[h]);
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
void emit_full_rounds_avx512(LaneWriter::Sink&, const Steps&, size_t, size_t&, uint32_t&, uint32_t*,
                             uint32_t*) {}
#endif

}  // namespace gdfs::gdeflate
