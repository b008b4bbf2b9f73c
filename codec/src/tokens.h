// The LZ77 token stream that sits between match finding/parsing and the GDeflate block writer.
#pragma once

#include <cstdint>
#include <vector>

namespace gdfs::gdeflate {

// A literal when dist == 0 (len holds the byte), otherwise a match of `len` (3..65535) bytes at
// distance `dist` (1..65535). DEFLATE64 lets one match span the whole page.
struct Token {
  uint32_t len;
  uint32_t dist;
  static Token literal(uint8_t b) { return {b, 0}; }
  static Token match(uint32_t l, uint32_t d) { return {l, d}; }
  bool is_literal() const { return dist == 0; }
};
using TokenVec = std::vector<Token>;

inline constexpr uint32_t kMinMatch = 3;
inline constexpr uint32_t kMaxMatch = 65535;  // longest match inside one 64 KiB page
inline constexpr uint32_t kMaxDist = 65535;

}  // namespace gdfs::gdeflate
