// Table-driven Huffman decoding for the decoder (one lookup per symbol in the common case), with the
// entries of gdfs/huffman_entry.h. A code longer than the main table resolves through a subtable: its
// main-table entry is flagged kEntryLong and keeps the main-table bit count in bits 0-4, the subtable bit
// count in bits 5-9 and the subtable start as its value; the subtable's entries hold the full code length.
#pragma once

#include <array>
#include <cstdint>

#include "gdfs/huffman_entry.h"

namespace gdfs::gdeflate {

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
// length 1. Unused code words decode to kEntryBad. `simd`: sort the symbols with AVX-512 where the CPU
// has it (the tables are the same either way; tests compare the two).
bool build_decode_table(const uint8_t* lens, unsigned n, const uint32_t* sym_entry, unsigned table_bits,
                        unsigned max_len, uint32_t* table, bool simd = true);

// Per-symbol entries (without code lengths) for the three alphabets.
extern const std::array<uint32_t, 288> kLitlenSymEntries;
extern const std::array<uint32_t, 32> kDistSymEntries;
extern const std::array<uint32_t, 19> kPrecodeSymEntries;

}  // namespace gdfs::gdeflate
