// Length-limited Huffman code construction and canonical code assignment (RFC 1951 §3.2.2).
#pragma once

#include <cstdint>

namespace gdfs::gdeflate {

// Fills lens[0..n) with code lengths <= max_len for the given frequencies. Symbols with frequency 0 get
// length 0. If fewer than two symbols are used, lengths are padded so the code is complete (two codes
// of length 1): every decoder, ours, the reference and nvCOMP, accepts a complete code.
// Deterministic: ties are broken by symbol index. n <= 288.
void build_code_lengths(const uint32_t* freq, unsigned n, unsigned max_len, uint8_t* lens);

// Canonical codes for lens[0..n), already bit-reversed so they can be written LSB-first.
void build_canonical_codes(const uint8_t* lens, unsigned n, uint16_t* codes);

}  // namespace gdfs::gdeflate
