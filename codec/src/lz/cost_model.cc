#include "cost_model.h"

#include "../huffman.h"
#include "gdfs/deflate64.h"

namespace gdfs::gdeflate::lz {
namespace {

// A symbol the statistics never used has no code yet; pricing it as "one bit longer than the longest
// code in use" lets the parser still pick it when it saves a lot, without chasing it for small gains.
void lengths_to_costs(const uint8_t* lens, unsigned n, uint32_t* cost) {
  unsigned longest = 0;
  for (unsigned s = 0; s < n; ++s) longest = lens[s] > longest ? lens[s] : longest;
  const unsigned unused = longest + 1 < kMaxCodeLen ? longest + 1 : kMaxCodeLen;
  for (unsigned s = 0; s < n; ++s) cost[s] = (lens[s] ? lens[s] : unused) * CostModel::kScale;
}

}  // namespace

void CostModel::fit(const Token* tokens, size_t count) {
  uint32_t lf[kNumLitlenSyms] = {}, df[kNumDistSyms] = {};
  for (size_t i = 0; i < count; ++i) {
    const Token& t = tokens[i];
    if (t.is_literal()) {
      ++lf[t.len];
    } else {
      ++lf[length_symbol(t.len)];
      ++df[dist_symbol(t.dist)];
    }
  }
  lf[kEob] = 1;
  uint8_t ll[kNumLitlenSyms], dl[kNumDistSyms];
  build_code_lengths(lf, kNumLitlenSyms, kMaxCodeLen, ll);
  build_code_lengths(df, kNumDistSyms, kMaxCodeLen, dl);
  uint32_t lc[kNumLitlenSyms], dc[kNumDistSyms];
  lengths_to_costs(ll, kNumUsableLitlen, lc);
  lengths_to_costs(dl, kNumDistSyms, dc);
  for (unsigned b = 0; b < 256; ++b) lit_[b] = lc[b];
  for (uint32_t len = kMinMatch; len <= kLongestPriced; ++len) {
    const unsigned sym = length_symbol(len);
    len_[len] = lc[sym] + kLenExtra[sym - 257] * kScale;
  }
  for (unsigned s = 0; s < kNumDistSyms; ++s) dist_[s] = dc[s] + kDistExtra[s] * kScale;
}

}  // namespace gdfs::gdeflate::lz
