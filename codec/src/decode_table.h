// Table-driven Huffman decoding for the decoder (one lookup per symbol in the common case).
//
// An entry packs everything a lane needs to consume one symbol and its extra bits:
//   bits 0-4   code length in bits (the full length, also for subtable entries)
//   bits 5-9   number of extra bits that follow the code (0..16)
//   bits 10-13 flags (literal, end of block, subtable pointer, invalid)
//   bits 16-31 value: literal byte, length/distance base, or subtable start
// A subtable pointer keeps the main-table bit count in bits 0-4 and the subtable bit count in 5-9.
#pragma once

#include <array>
#include <cstdint>

namespace gdfs::gdeflate {

inline constexpr uint32_t kEntryLiteral = 1u << 10;
inline constexpr uint32_t kEntryEob = 1u << 11;
inline constexpr uint32_t kEntrySub = 1u << 12;
inline constexpr uint32_t kEntryBad = 1u << 13;  // unused code word, or symbol 286/287
inline constexpr uint32_t kEntrySpecial = kEntryEob | kEntrySub | kEntryBad;

constexpr uint32_t make_entry(uint32_t value, unsigned extra, uint32_t flags) {
  return (value << 16) | flags | (extra << 5);
}
inline uint32_t entry_codelen(uint32_t e) {
  return e & 31u;
}
inline uint32_t entry_extra(uint32_t e) {
  return (e >> 5) & 31u;
}
inline uint32_t entry_value(uint32_t e) {
  return e >> 16;
}

// Main-table bits and worst-case sizes: at most one 16-entry subtable per code longer than the main
// table (lengths are at most 15), which is simple and comfortably bounded.
inline constexpr unsigned kLitlenTableBits = 11;
inline constexpr unsigned kDistTableBits = 8;
inline constexpr unsigned kPrecodeTableBits = 7;
inline constexpr unsigned kLitlenTableSize = (1u << kLitlenTableBits) + 288 * (1u << (15 - kLitlenTableBits));
inline constexpr unsigned kDistTableSize = (1u << kDistTableBits) + 32 * (1u << (15 - kDistTableBits));
inline constexpr unsigned kPrecodeTableSize = 1u << kPrecodeTableBits;

// Builds a decode table for code lengths lens[0..n) where symbol s decodes to sym_entry[s] (value, extra
// and flags; the code length is filled in here). Returns false for an over-subscribed code, or an
// incomplete one other than the two forms DEFLATE decoders accept: no codes at all, or a single code of
// length 1. Unused code words decode to kEntryBad.
bool build_decode_table(const uint8_t* lens, unsigned n, const uint32_t* sym_entry, unsigned table_bits,
                        unsigned max_len, uint32_t* table);

// Per-symbol entries (without code lengths) for the three alphabets.
extern const std::array<uint32_t, 288> kLitlenSymEntries;
extern const std::array<uint32_t, 32> kDistSymEntries;
extern const std::array<uint32_t, 19> kPrecodeSymEntries;

}  // namespace gdfs::gdeflate
