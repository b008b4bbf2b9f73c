#include "decode_table.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <array>
#include <cstring>

#include "cpu.h"
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

// The symbols with a code, sorted by code length and, within a length, by symbol (the canonical code's
// order), and how many codes each length has. False if a length exceeds max_len.
struct ByLength {
  std::array<unsigned, 16> count{};
  std::array<uint16_t, 288 + 32> sym;  // 32 spare: the AVX-512 path stores whole vectors
};

bool sort_by_length_scalar(const uint8_t* lens, unsigned n, unsigned max_len, ByLength& b) {
  for (unsigned s = 0; s < n; ++s) {
    if (lens[s] > max_len) return false;
    ++b.count[lens[s]];
  }
  std::array<unsigned, 16> fill{};
  for (unsigned len = 2; len <= max_len; ++len) fill[len] = fill[len - 1] + b.count[len - 1];
  for (unsigned s = 0; s < n; ++s)
    if (lens[s]) b.sym[fill[lens[s]]++] = static_cast<uint16_t>(s);
  return true;
}

#if defined(__x86_64__)
#define GDFS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi2,popcnt")))
// A stable counting sort by compares: for each length, VPCOMPRESSW packs the symbols of that length
// from each 32-symbol chunk, in symbol order. The scalar sort's increments of one counter per symbol
// wait on each other whenever neighbouring symbols share a length, which is most of the time.
GDFS_AVX512 bool sort_by_length_avx512(const uint8_t* lens, unsigned n, unsigned max_len, ByLength& b) {
  constexpr unsigned kChunks = (288 + 31) / 32;
  __m512i len16[kChunks];
  __mmask32 live[kChunks];
  const unsigned chunks = (n + 31) / 32;
  __mmask32 over = 0;
  for (unsigned c = 0; c < chunks; ++c) {
    const unsigned left = n - 32 * c;
    live[c] = left >= 32 ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
    len16[c] = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(live[c], lens + 32 * c));
    over |= _mm512_mask_cmpgt_epu16_mask(live[c], len16[c], _mm512_set1_epi16(static_cast<short>(max_len)));
  }
  if (over) return false;
  const __m512i iota = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15,
                                        14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  unsigned pos = 0;
  for (unsigned len = 1; len <= max_len && pos < n; ++len) {
    const __m512i want = _mm512_set1_epi16(static_cast<short>(len));
    const unsigned first = pos;
    for (unsigned c = 0; c < chunks; ++c) {
      const __mmask32 m = _mm512_mask_cmpeq_epu16_mask(live[c], len16[c], want);
      const __m512i syms = _mm512_add_epi16(iota, _mm512_set1_epi16(static_cast<short>(32 * c)));
      _mm512_storeu_si512(b.sym.data() + pos, _mm512_maskz_compress_epi16(m, syms));
      pos += static_cast<unsigned>(__builtin_popcount(m));
    }
    b.count[len] = pos - first;
  }
  return true;
}
#endif

bool sort_by_length(const uint8_t* lens, unsigned n, unsigned max_len, bool simd, ByLength& b) {
#if defined(__x86_64__)
  static const bool usable = avx512_usable();
  if (simd && usable && n <= 288) return sort_by_length_avx512(lens, n, max_len, b);
#else
  (void)simd;
#endif
  return sort_by_length_scalar(lens, n, max_len, b);
}

}  // namespace

const std::array<uint32_t, 288> kLitlenSymEntries = litlen_entries();
const std::array<uint32_t, 32> kDistSymEntries = dist_entries();
const std::array<uint32_t, 19> kPrecodeSymEntries = precode_entries();

bool build_decode_table(const uint8_t* lens, unsigned n, const uint32_t* sym_entry, unsigned table_bits,
                        unsigned max_len, uint32_t* table, bool simd) {
  ByLength b;
  if (!sort_by_length(lens, n, max_len, simd, b)) return false;
  const std::array<unsigned, 16>& count = b.count;
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

  // The main table grows by doubling: at size 2^len it holds every code of at most len bits at its
  // reversed code (lanes are consumed LSB-first), and each doubling repeats it, which is where a
  // shorter code's entries belong in the larger table. Every entry is then written once by a store or a
  // block copy, instead of once per code in a loop whose length depends on the code. Slots that no code
  // of at most len bits covers start as kEntryBad: longer codes overwrite them, and in the accepted
  // incomplete codes they stay. The canonical code of the k-th symbol in length order is the previous
  // one plus 1, shifted left at each new length.
  table[0] = table[1] = make_entry(0, 0, kEntryBad);
  unsigned size = 2, code = 0, k = 0;
  for (unsigned len = 1; len <= table_bits; ++len) {
    if (len > 1) {
      std::memcpy(table + size, table, size * sizeof(uint32_t));
      size *= 2;
    }
    for (const unsigned end = k + count[len]; k < end; ++k, ++code) {
      const unsigned s = b.sym[k];
      table[reverse_bits(code, len)] = sym_entry[s] | len;
    }
    code <<= 1;
  }
  const unsigned first_long = k;
  if (first_long == used) return true;

  // Codes longer than the main table: their reversed codes, in length order.
  std::array<uint16_t, 288> rev;
  for (unsigned len = table_bits + 1; len <= max_len; ++len, code <<= 1)
    for (const unsigned end = k + count[len]; k < end; ++k, ++code)
      rev[k] = static_cast<uint16_t>(reverse_bits(code, len));

  // A subtable per main-table prefix, wide enough for the longest code that shares the prefix. The
  // prefixes of long codes are covered by no short code, so their main entries are free to reuse.
  std::array<uint8_t, 2048> sub_bits;
  for (unsigned j = first_long; j < used; ++j) sub_bits[rev[j] & (main_size - 1)] = 0;
  for (unsigned j = first_long; j < used; ++j) {
    uint8_t& sb = sub_bits[rev[j] & (main_size - 1)];
    const unsigned len = lens[b.sym[j]];
    if (len - table_bits > sb) sb = static_cast<uint8_t>(len - table_bits);
  }
  unsigned sub_next = main_size;
  for (unsigned j = first_long; j < used; ++j) {
    const unsigned p = rev[j] & (main_size - 1);
    if (!sub_bits[p]) continue;  // already allocated
    table[p] = make_entry(sub_next, sub_bits[p], kEntryLong) | table_bits;
    if (left != 0)
      for (unsigned i = 0; i < (1u << sub_bits[p]); ++i) table[sub_next + i] = make_entry(0, 0, kEntryBad);
    sub_next += 1u << sub_bits[p];
    sub_bits[p] = 0;
  }
  for (unsigned j = first_long; j < used; ++j) {
    const unsigned s = b.sym[j], len = lens[s];
    const uint32_t ptr = table[rev[j] & (main_size - 1)];
    const unsigned sb = entry_extra(ptr), base = entry_value(ptr);
    const uint32_t e = sym_entry[s] | len;
    for (unsigned i = rev[j] >> table_bits; i < (1u << sb); i += 1u << (len - table_bits))
      table[base + i] = e;
  }
  return true;
}

}  // namespace gdfs::gdeflate
