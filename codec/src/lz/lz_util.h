// Small inline helpers shared by every match finder: unaligned loads, hashes, match extension, and the
// token buffer the parsers write into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../tokens.h"
#include "parser.h"

namespace gdfs::gdeflate::lz {

inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Multiplicative hashes (Knuth's golden-ratio constant): the high bits of the product mix every input
// byte, so we keep the top `bits` bits. The 3-byte hash masks the fourth byte out of a 4-byte load, so
// it too is only used where 4 bytes are readable.
inline uint32_t hash4(uint32_t v, unsigned bits) {
  return (v * 0x9E3779B1u) >> (32 - bits);
}
inline uint32_t hash3(uint32_t v, unsigned bits) {
  return ((v & 0xFFFFFFu) * 0x9E3779B1u) >> (32 - bits);
}

// Length of the common prefix of a and b, at most `max`. b is the current position and a an earlier one,
// so reading max bytes from b bounds both reads. Compares 8 bytes at a time while 8 bytes remain.
inline uint32_t match_len(const uint8_t* a, const uint8_t* b, uint32_t max) {
  uint32_t len = 0;
  while (len + 8 <= max) {
    const uint64_t x = load64(a + len) ^ load64(b + len);
    if (x != 0) return len + (__builtin_ctzll(x) >> 3);
    len += 8;
  }
  while (len < max && a[len] == b[len]) ++len;
  return len;
}

// Same, starting the comparison at `start` (bytes before it are already known to match).
inline uint32_t match_len_from(const uint8_t* a, const uint8_t* b, uint32_t start, uint32_t max) {
  return start + match_len(a + start, b + start, max - start);
}

inline uint32_t min_u32(uint32_t a, uint32_t b) {
  return a < b ? a : b;
}

// Tokens are written through a raw pointer into a buffer sized for the worst case (one literal per byte);
// this keeps the hot loops free of capacity checks.
class TokenBuf {
 public:
  TokenBuf() : buf_(65536 + 8) {}
  Token* begin() { return buf_.data(); }
  const Token* data() const { return buf_.data(); }
  Parser::TokenSpan finish(const Token* end) const {
    return {buf_.data(), static_cast<size_t>(end - buf_.data())};
  }

 private:
  std::vector<Token> buf_;
};

}  // namespace gdfs::gdeflate::lz
