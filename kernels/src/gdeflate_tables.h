// Huffman decode tables for the GDeflate warp decoder, built by the warp itself in shared memory.
//
// A main table indexed by the next `bits` stream bits resolves every code of at most `bits` bits in
// one lookup. Longer codes, which are rare by construction (each occurs at most once per 2^bits
// symbols), are resolved by a canonical-code walk over lengths bits+1..15 instead of subtables: that
// keeps a warp's tables at about 6 KiB, so many warps fit on one SM. A main-table entry flagged
// kEntryLong means "walk the longer codes".
//
// Entries are the CPU decoder's (gdfs/huffman_entry.h).
#pragma once
#include <cstdint>

#include "gdfs/deflate64.h"
#include "gdfs/huffman_entry.h"
#include "simt.h"

namespace gdfs::gpu::gdw {

using gdeflate::entry_codelen, gdeflate::entry_extra, gdeflate::entry_value, gdeflate::extra_value;
using gdeflate::kEntryBad, gdeflate::kEntryEob, gdeflate::kEntryLiteral, gdeflate::kEntryLong;
using gdeflate::make_entry;

inline constexpr unsigned kMaxCodeLen = gdeflate::kMaxCodeLen;

enum class Alphabet : uint8_t { kLitlen, kDist, kPrecode };

// What a symbol decodes to (without its code length), computed rather than tabulated so that device
// code needs no constant tables. Lengths and distances are DEFLATE64's
// (gdfs/deflate64.h, whose tables a unit test compares with this function symbol by symbol).
GDFS_DEV uint32_t symbol_entry(Alphabet a, unsigned s) {
  if (a == Alphabet::kPrecode) return make_entry(s, s == 16 ? 2 : s == 17 ? 3 : s == 18 ? 7 : 0, 0);
  if (a == Alphabet::kDist) {
    if (s < 4) return make_entry(s + 1, 0, 0);
    const unsigned extra = (s >> 1) - 1;
    return make_entry(((2u + (s & 1u)) << extra) + 1u, extra, 0);
  }
  if (s < 256) return make_entry(s, 0, kEntryLiteral);
  if (s == 256) return make_entry(0, 0, kEntryEob);
  if (s >= 286) return make_entry(0, 0, kEntryBad);
  const unsigned c = s - 257;
  if (c == 28) return make_entry(3, 16, 0);  // DEFLATE64: 16 extra bits, base 3
  if (c < 8) return make_entry(3u + c, 0, 0);
  const unsigned extra = (c >> 2) - 1;
  return make_entry(((4u + (c & 3u)) << extra) + 3u, extra, 0);
}

// The canonical code, for the lengths the main table does not cover.
struct Canon {
  uint16_t count[16];   // codes of each length
  uint16_t first[16];   // first canonical code of each length
  uint16_t offset[16];  // index in `sorted` of the first symbol of each length
};

struct Table {
  uint32_t* main;  // 1 << bits entries
  Canon* canon;
  uint16_t* sorted;  // symbols ordered by (code length, symbol)
  unsigned bits;
  Alphabet alphabet;
};

// Code lengths 1..max_len: lane L ends up holding the number of symbols of length L.
GDFS_DEV uint32_t count_lengths(const uint8_t* lens, unsigned n, unsigned max_len) {
  const unsigned lane = simt::lane_id();
  uint32_t count = 0;
  for (unsigned base = 0; base < n; base += 32) {
    const unsigned v = base + lane < n ? lens[base + lane] : 0;
    for (unsigned len = 1; len <= max_len; ++len) {
      const uint32_t m = simt::ballot(v == len);
      if (lane == len) count += simt::popc(m);
    }
  }
  return count;
}

// Symbols of each length in symbol order, into t.sorted (needs t.canon->offset).
GDFS_DEV void sort_symbols(const uint8_t* lens, unsigned n, unsigned max_len, const Table& t) {
  const unsigned lane = simt::lane_id();
  uint32_t placed = 0;  // lane L: symbols of length L placed so far
  for (unsigned base = 0; base < n; base += 32) {
    const unsigned s = base + lane;
    const unsigned v = s < n ? lens[s] : 0;
    uint32_t slot = 0;
    for (unsigned len = 1; len <= max_len; ++len) {
      const uint32_t m = simt::ballot(v == len);
      const uint32_t before = simt::shfl(placed, len);
      if (v == len) slot = t.canon->offset[len] + before + simt::popc(m & simt::lanes_below());
      if (lane == len) placed += simt::popc(m);
    }
    if (v) t.sorted[slot] = static_cast<uint16_t>(s);
  }
}

// Builds table `t` from lens[0..n) (symbols >= n have no code). Returns false, on every lane, for the
// lengths the CPU decoder refuses: an over-subscribed code, or an incomplete one other than no codes at
// all or a single code of length 1.
GDFS_DEV bool build_table(const uint8_t* lens, unsigned n, unsigned max_len, const Table& t) {
  const unsigned lane = simt::lane_id();
  const uint32_t my_count = count_lengths(lens, n, max_len);
  int left = 1;
  uint32_t used = 0, code = 0, offset = 0, prev = 0;
  for (unsigned len = 1; len <= kMaxCodeLen; ++len) {
    const uint32_t c = len <= max_len ? simt::shfl(my_count, len) : 0;
    left = 2 * left - static_cast<int>(c);
    if (left < 0) return false;  // uniform: every lane computes the same
    used += c;
    code = (code + prev) << 1;
    if (lane == len) {
      t.canon->count[len] = static_cast<uint16_t>(c);
      t.canon->first[len] = static_cast<uint16_t>(code);
      t.canon->offset[len] = static_cast<uint16_t>(offset);
    }
    offset += c;
    prev = c;
  }
  const uint32_t count1 = simt::shfl(my_count, 1);
  if (left != 0 && !(used == 0 || (used == 1 && count1 == 1))) return false;
  simt::syncwarp();
  sort_symbols(lens, n, max_len, t);
  simt::syncwarp();

  const unsigned size = 1u << t.bits;
  const unsigned short_max = t.bits < max_len ? t.bits : max_len;
  for (unsigned i = lane; i < size; i += 32) {
    const uint32_t rev = simt::brev(i) >> (32 - t.bits);  // the next `bits` stream bits, code order
    uint32_t e = kEntryLong;  // longer code, or a code word no symbol uses: decode_long sorts it out
    for (unsigned len = 1; len <= short_max; ++len) {
      const uint32_t d = (rev >> (t.bits - len)) - t.canon->first[len];
      if (d < t.canon->count[len]) {
        e = symbol_entry(t.alphabet, t.sorted[t.canon->offset[len] + d]) | len;
        break;
      }
    }
    t.main[i] = e;
  }
  simt::syncwarp();
  return true;
}

// A code longer than the main table: walk the canonical code (per lane, no collectives).
GDFS_DEV uint32_t decode_long(const Table& t, uint64_t bits) {
  const uint32_t rev = simt::brev(static_cast<uint32_t>(bits) & 0x7fffu) >> 17;  // 15 bits, code order
  for (unsigned len = t.bits + 1; len <= kMaxCodeLen; ++len) {
    const uint32_t d = (rev >> (kMaxCodeLen - len)) - t.canon->first[len];
    if (d < t.canon->count[len]) return symbol_entry(t.alphabet, t.sorted[t.canon->offset[len] + d]) | len;
  }
  return kEntryBad;
}

GDFS_DEV uint32_t lookup(const Table& t, uint64_t bits) {
  const uint32_t e = t.main[static_cast<uint32_t>(bits) & ((1u << t.bits) - 1u)];
  return (e & kEntryLong) ? decode_long(t, bits) : e;
}

}  // namespace gdfs::gpu::gdw
