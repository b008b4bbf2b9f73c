#include "decode_table.h"

#include <array>
#include <cstring>

#include "gdfs/deflate64.h"

namespace gdfs::gdeflate {
namespace {

constexpr std::array<uint32_t, 288> litlen_entries() {
  std::array<uint32_t, 288> t{};
  for (unsigned s = 0; s < 256; ++s) t[s] = make_entry(s, 0, kEntryLiteral);
  t[256] = make_entry(0, 0, kEntryEob);
  for (unsigned s = 257; s < 286; ++s) t[s] = make_entry(kLenBase[s - 257], kLenExtra[s - 257], 0);
  t[286] = t[287] = make_entry(0, 0, kEntryBad);  // never valid, even in the fixed code
  return t;
}
constexpr std::array<uint32_t, 32> dist_entries() {
  std::array<uint32_t, 32> t{};
  for (unsigned s = 0; s < 32; ++s) t[s] = make_entry(kDistBase[s], kDistExtra[s], 0);
  return t;
}
constexpr std::array<uint32_t, 19> precode_entries() {
  std::array<uint32_t, 19> t{};
  for (unsigned s = 0; s < 16; ++s) t[s] = make_entry(s, 0, 0);
  t[16] = make_entry(16, 2, 0);
  t[17] = make_entry(17, 3, 0);
  t[18] = make_entry(18, 7, 0);
  return t;
}

unsigned reverse_bits(unsigned code, unsigned len) {
  unsigned r = code;  // reverse 16 bits by swapping halves, bytes, nibbles, pairs, bits
  r = ((r & 0x00FF) << 8) | ((r >> 8) & 0x00FF);
  r = ((r & 0x0F0F) << 4) | ((r >> 4) & 0x0F0F);
  r = ((r & 0x3333) << 2) | ((r >> 2) & 0x3333);
  r = ((r & 0x5555) << 1) | ((r >> 1) & 0x5555);
  return r >> (16 - len);
}

}  // namespace

const std::array<uint32_t, 288> kLitlenSymEntries = litlen_entries();
const std::array<uint32_t, 32> kDistSymEntries = dist_entries();
const std::array<uint32_t, 19> kPrecodeSymEntries = precode_entries();

bool build_decode_table(const uint8_t* lens, unsigned n, const uint32_t* sym_entry, unsigned table_bits,
                        unsigned max_len, uint32_t* table) {
  std::array<unsigned, 16> count{};
  for (unsigned s = 0; s < n; ++s) {
    if (lens[s] > max_len) return false;
    ++count[lens[s]];
  }
  count[0] = 0;
  int left = 1;
  unsigned used = 0;
  for (unsigned len = 1; len <= max_len; ++len) {
    left = left * 2 - static_cast<int>(count[len]);
    if (left < 0) return false;  // over-subscribed
    used += count[len];
  }
  // The accepted incomplete codes leave code words unused; they decode to kEntryBad (below).
  if (left != 0 && !(used == 0 || (used == 1 && count[1] == 1))) return false;  // incomplete
  const unsigned main_size = 1u << table_bits;

  // Canonical codes, bit-reversed because lanes are consumed LSB-first.
  std::array<unsigned, 16> next{};
  unsigned code = 0;
  for (unsigned len = 1; len <= max_len; ++len) {
    code = (code + count[len - 1]) << 1;
    next[len] = code;
  }
  std::array<uint16_t, 288> rev;
  std::array<uint16_t, 288> by_len;  // the symbols sorted by code length (stable), from `start`
  std::array<unsigned, 17> start{};
  for (unsigned len = 1; len <= max_len; ++len) start[len + 1] = start[len] + count[len];
  std::array<unsigned, 17> fill = start;
  for (unsigned s = 0; s < n; ++s) {
    const unsigned len = lens[s];
    if (!len) continue;
    rev[s] = static_cast<uint16_t>(reverse_bits(next[len]++, len));
    by_len[fill[len]++] = static_cast<uint16_t>(s);
  }

  // The main table grows by doubling: at size 2^len it holds every code of at most len bits at its
  // reversed code, and each doubling repeats it, which is where a shorter code's entries belong in the
  // larger table. Every entry is then written once by a store or a block copy, instead of once per
  // code in a loop whose length depends on the code. Slots that no code of at most len bits covers
  // start as kEntryBad: longer codes overwrite them, and in the accepted incomplete codes they stay.
  table[0] = table[1] = make_entry(0, 0, kEntryBad);
  unsigned size = 2;
  for (unsigned len = 1; len <= table_bits; ++len) {
    if (len > 1) {
      std::memcpy(table + size, table, size * sizeof(uint32_t));
      size *= 2;
    }
    for (unsigned k = start[len]; k < start[len + 1]; ++k) {
      const unsigned s = by_len[k];
      table[rev[s]] = sym_entry[s] | len;
    }
  }
  std::array<uint16_t, 288> long_syms;  // codes longer than the main table, which need subtables
  unsigned nlong = 0;
  for (unsigned k = start[table_bits + 1]; k < start[max_len + 1]; ++k) long_syms[nlong++] = by_len[k];
  if (!nlong) return true;

  // A subtable per main-table prefix, wide enough for the longest code that shares the prefix. The
  // prefixes of long codes are covered by no short code, so their main entries are free to reuse.
  std::array<uint8_t, 2048> sub_bits;
  for (unsigned k = 0; k < nlong; ++k) sub_bits[rev[long_syms[k]] & (main_size - 1)] = 0;
  for (unsigned k = 0; k < nlong; ++k) {
    const unsigned s = long_syms[k];
    uint8_t& b = sub_bits[rev[s] & (main_size - 1)];
    if (lens[s] - table_bits > b) b = static_cast<uint8_t>(lens[s] - table_bits);
  }
  unsigned sub_next = main_size;
  for (unsigned k = 0; k < nlong; ++k) {
    const unsigned s = long_syms[k], p = rev[s] & (main_size - 1);
    if (!sub_bits[p]) continue;  // already allocated
    table[p] = make_entry(sub_next, sub_bits[p], kEntryLong) | table_bits;
    if (left != 0)
      for (unsigned i = 0; i < (1u << sub_bits[p]); ++i) table[sub_next + i] = make_entry(0, 0, kEntryBad);
    sub_next += 1u << sub_bits[p];
    sub_bits[p] = 0;
  }
  for (unsigned k = 0; k < nlong; ++k) {
    const unsigned s = long_syms[k], len = lens[s];
    const uint32_t ptr = table[rev[s] & (main_size - 1)];
    const unsigned sb = entry_extra(ptr), base = entry_value(ptr);
    const uint32_t e = sym_entry[s] | len;
    for (unsigned i = rev[s] >> table_bits; i < (1u << sb); i += 1u << (len - table_bits))
      table[base + i] = e;
  }
  return true;
}

}  // namespace gdfs::gdeflate
