// Bit-cost model for near-optimal parsing: what each literal, length and distance would cost if the page
// were coded with the Huffman codes that a given token stream's statistics produce.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../tokens.h"
#include "gdfs/deflate64.h"

namespace gdfs::gdeflate::lz {

class CostModel {
 public:
  // Costs are in 1/kScale bits so that symbols the statistics never saw can get fractional defaults.
  static constexpr uint32_t kScale = 8;
  static constexpr uint32_t kLongestPriced = 258;  // all longer lengths share symbol 285 and its cost

  // Prices every symbol from the Huffman code lengths that the tokens' own frequencies give.
  void fit(const Token* tokens, size_t count);

  uint32_t literal(uint8_t b) const { return lit_[b]; }
  uint32_t length(uint32_t len) const { return len_[len < kLongestPriced ? len : kLongestPriced]; }
  // length(len) for len <= kLongestPriced, then three zeros, so four lengths load at once up to the last.
  const uint32_t* lengths() const { return len_; }
  // Cost of a distance by its symbol (dist_symbol(dist)), extra bits included. The parser keeps each
  // match's symbol, so the passes of the minimum-cost path do not derive it again.
  uint32_t distance_symbol(unsigned sym) const { return dist_[sym]; }

 private:
  uint32_t lit_[256];
  uint32_t len_[kLongestPriced + 4] = {};
  uint32_t dist_[32];
};

}  // namespace gdfs::gdeflate::lz
