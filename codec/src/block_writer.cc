#include "block_writer.h"

#include "cpu.h"
#include "huffman.h"

namespace gdfs::gdeflate {

void encode_symbols(const Token* t, size_t nt, Sym* out) {
  for (size_t i = 0; i < nt; ++i) out[i] = token_symbol(t[i]);
}

void BlockStats::add(const Sym& t) {
  ++litlen[t.lsym];
  ++dist[t.dsym];
  extra_bits += kLitlenExtraBySym[t.lsym] + kDistExtraBySym[t.dsym];
}

void encode_steps_scalar(const Sym* s, size_t first, size_t n, const BlockCodes& c, Steps& out) {
  std::array<uint32_t, kNumDistSyms + 1> dcode{};
  std::array<uint8_t, kNumDistSyms + 1> dlen{};  // [kNoDist] stays 0: a literal has no distance step
  for (unsigned k = 0; k < kNumDistSyms; ++k) {
    dcode[k] = c.dist_code[k];
    dlen[k] = c.dist_len[k];
  }
  for (size_t i = first; i < n; ++i) {
    const unsigned ls = s[i].lsym, ds = s[i].dsym, ll = c.litlen_len[ls], dl = dlen[ds];
    out.lv[i] = c.litlen_code[ls] | (uint32_t{s[i].lextra} << ll);
    out.ln[i] = ll + kLitlenExtraBySym[ls];
    out.dv[i] = dcode[ds] | (uint32_t{s[i].dextra} << dl);
    out.dn[i] = dl ? dl + kDistExtraBySym[ds] : 0;
  }
}

void encode_steps(const Sym* s, size_t n, const BlockCodes& c, Steps& out) {
  static const bool simd = avx512_usable();
  encode_steps_scalar(s, simd ? encode_steps_avx512(s, n, c, out) : 0, n, c, out);
}

void BlockStats::add(const BlockStats& o) {
  for (unsigned i = 0; i < kNumLitlenSyms; ++i) litlen[i] += o.litlen[i];
  for (unsigned i = 0; i <= kNumDistSyms; ++i) dist[i] += o.dist[i];
  extra_bits += o.extra_bits;
}

namespace {

// Run-length codes the concatenated code lengths with precode symbols 16 (repeat previous 3-6),
// 17 (3-10 zeros) and 18 (11-138 zeros), as RFC 1951 §3.2.7 defines them.
unsigned rle_lengths(const uint8_t* lens, unsigned n, uint16_t* out) {
  unsigned k = 0;
  auto emit = [&](unsigned sym, unsigned extra) { out[k++] = static_cast<uint16_t>(sym | (extra << 5)); };
  for (unsigned i = 0; i < n;) {
    const uint8_t v = lens[i];
    unsigned run = 1;
    while (i + run < n && lens[i + run] == v) ++run;
    i += run;
    if (v == 0) {
      while (run >= 11) {
        const unsigned r = run < 138 ? run : 138;
        emit(18, r - 11);
        run -= r;
      }
      if (run >= 3) {
        emit(17, run - 3);
        run = 0;
      }
    } else {
      emit(v, 0);
      --run;
      while (run >= 3) {
        const unsigned r = run < 6 ? run : 6;
        emit(16, r - 3);
        run -= r;
      }
    }
    while (run--) emit(v, 0);
  }
  return k;
}

}  // namespace

void BlockCodes::build_dynamic(const BlockStats& s) {
  build_dynamic_lengths(s);
  build_canonical_codes(litlen_len.data(), kNumLitlenSyms, litlen_code.data());
  build_canonical_codes(dist_len.data(), kNumDistSyms, dist_code.data());
  build_canonical_codes(pre_len.data(), kNumPrecodeSyms, pre_code.data());
}

void BlockCodes::build_dynamic_lengths(const BlockStats& s) {
  std::array<uint32_t, kNumLitlenSyms> lf = s.litlen;
  lf[kEob] = 1;
  build_code_lengths(lf.data(), kNumUsableLitlen, kMaxCodeLen, litlen_len.data());
  litlen_len[286] = litlen_len[287] = 0;
  build_code_lengths(s.dist.data(), kNumDistSyms, kMaxCodeLen, dist_len.data());

  hlit = kNumUsableLitlen;
  while (hlit > 257 && litlen_len[hlit - 1] == 0) --hlit;
  hdist = kNumDistSyms;
  while (hdist > 1 && dist_len[hdist - 1] == 0) --hdist;
  std::array<uint8_t, 288 + 32> all{};
  for (unsigned i = 0; i < hlit; ++i) all[i] = litlen_len[i];
  for (unsigned i = 0; i < hdist; ++i) all[hlit + i] = dist_len[i];
  nrle = rle_lengths(all.data(), hlit + hdist, rle.data());

  std::array<uint32_t, kNumPrecodeSyms> pf{};
  for (unsigned j = 0; j < nrle; ++j) ++pf[rle[j] & 31];
  build_code_lengths(pf.data(), kNumPrecodeSyms, kMaxPrecodeLen, pre_len.data());
  hclen = kNumPrecodeSyms;
  while (hclen > 4 && pre_len[kPrecodePerm[hclen - 1]] == 0) --hclen;

  static constexpr uint8_t kRleExtra[3] = {2, 3, 7};
  header_bits = 14 + 3 * hclen;
  for (unsigned j = 0; j < nrle; ++j) {
    const unsigned sym = rle[j] & 31;
    header_bits += pre_len[sym] + (sym >= 16 ? kRleExtra[sym - 16] : 0);
  }
}

void BlockCodes::build_fixed() {
  for (unsigned s = 0; s < kNumLitlenSyms; ++s) litlen_len[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  dist_len.fill(5);
  build_canonical_codes(litlen_len.data(), kNumLitlenSyms, litlen_code.data());
  build_canonical_codes(dist_len.data(), kNumDistSyms, dist_code.data());
  header_bits = 0;
}

uint64_t BlockCodes::data_bits(const BlockStats& s) const {
  uint64_t bits = s.extra_bits + litlen_len[kEob];
  for (unsigned i = 0; i < kNumLitlenSyms; ++i) bits += uint64_t{s.litlen[i]} * litlen_len[i];
  for (unsigned i = 0; i < kNumDistSyms; ++i) bits += uint64_t{s.dist[i]} * dist_len[i];
  return bits;
}

uint64_t stored_bits(size_t n) {
  const size_t blocks = n == 0 ? 1 : (n + 65534) / 65535;
  return 19 * blocks + 8 * uint64_t{n};
}

}  // namespace gdfs::gdeflate
