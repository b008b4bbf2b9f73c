// DEFLATE64 symbol tables as GDeflate uses them (draft-uralsky-00 tables 1 and 2; docs/GDEFLATE.md).
// The one source of these constants: the CPU codec uses the tables, and the GPU warp decoder
// (kernels/src/gdeflate_tables.h), which computes symbol values instead of loading tables, is checked
// against them by tests/kernels/test_emu_gdeflate.cc.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace gdfs::gdeflate {

inline constexpr unsigned kNumLitlenSyms = 288;  // 286 and 287 exist in the fixed code only; invalid
inline constexpr unsigned kNumUsableLitlen = 286;
inline constexpr unsigned kNumDistSyms = 32;  // 30 and 31 are the DEFLATE64 distances
inline constexpr unsigned kNumPrecodeSyms = 19;
inline constexpr unsigned kEob = 256;
inline constexpr unsigned kMaxCodeLen = 15;
inline constexpr unsigned kMaxPrecodeLen = 7;
inline constexpr unsigned kLongLenSym = 285;  // 16 extra bits, base 3: lengths 258..65538

// Order in which the code-length-code lengths are sent (RFC 1951 §3.2.7).
inline constexpr std::array<uint8_t, 19> kPrecodePerm = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                         11, 4,  12, 3, 13, 2, 14, 1, 15};

// Indexed by litlen symbol - 257.
inline constexpr std::array<uint16_t, 29> kLenBase = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                                      67, 83, 99, 115, 131, 163, 195, 227, 3};
inline constexpr std::array<uint8_t, 29> kLenExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 16};
inline constexpr std::array<uint32_t, 32> kDistBase = {
    1,   2,   3,   4,   5,    7,    9,    13,   17,   25,   33,   49,    65,    97,    129,   193,
    257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577, 32769, 49153};
inline constexpr std::array<uint8_t, 32> kDistExtra = {
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14};

// Litlen symbol for a match length (3..65535). The encoder uses 285 for every length >= 258, as the
// reference does; 227..257 use 284.
constexpr unsigned length_symbol(uint32_t len) {
  if (len >= 258) return kLongLenSym;
  if (len <= 10) return 257 + (len - 3);
  const uint32_t l = len - 3;
  const unsigned lg = 31 - std::countl_zero(l);
  return 257 + 4 * (lg - 1) + ((l >> (lg - 2)) & 3);
}

// Distance symbol for a distance (1..65536).
constexpr unsigned dist_symbol(uint32_t dist) {
  if (dist <= 4) return dist - 1;
  const uint32_t d = dist - 1;
  const unsigned lg = 31 - std::countl_zero(d);
  return 2 * lg + ((d >> (lg - 1)) & 1);
}

}  // namespace gdfs::gdeflate
