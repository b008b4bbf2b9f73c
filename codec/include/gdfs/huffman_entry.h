// One entry of a GDeflate Huffman decode table: everything a lane needs to consume one symbol and its
// extra bits after one lookup. The CPU decoder (codec/src/decode_table.h) and the GPU warp decoder
// (kernels/src/gdeflate_tables.h) both build their tables from these entries, so this header compiles
// as host and as device code.
//
//   bits 0-4   code length in bits
//   bits 5-9   number of extra bits that follow the code (0..16)
//   bits 10-13 flags: literal, end of block, long code, bad
//   bits 16-31 value: literal byte, length or distance base, or precode symbol
//
// A long code is one longer than the main table's index bits. The CPU decoder's entry for it points at a
// subtable (codec/src/decode_table.h); the GPU's carries nothing else, and the warp walks the canonical
// code instead (kernels/src/gdeflate_tables.h).
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define GDFS_HOST_DEVICE __host__ __device__
#else
#define GDFS_HOST_DEVICE
#endif

namespace gdfs::gdeflate {

inline constexpr uint32_t kEntryLiteral = 1u << 10;
inline constexpr uint32_t kEntryEob = 1u << 11;
inline constexpr uint32_t kEntryLong = 1u << 12;
inline constexpr uint32_t kEntryBad = 1u << 13;  // unused code word, or litlen symbol 286/287
inline constexpr uint32_t kEntrySpecial = kEntryEob | kEntryLong | kEntryBad;

GDFS_HOST_DEVICE constexpr uint32_t make_entry(uint32_t value, unsigned extra, uint32_t flags) {
  return (value << 16) | flags | (extra << 5);
}
GDFS_HOST_DEVICE constexpr uint32_t entry_codelen(uint32_t e) {
  return e & 31u;
}
GDFS_HOST_DEVICE constexpr uint32_t entry_extra(uint32_t e) {
  return (e >> 5) & 31u;
}
GDFS_HOST_DEVICE constexpr uint32_t entry_value(uint32_t e) {
  return e >> 16;
}
// The extra bits that follow the code, from `bits`: the next stream bits, the code's own first.
GDFS_HOST_DEVICE constexpr uint32_t extra_value(uint32_t e, uint64_t bits) {
  return static_cast<uint32_t>(bits >> entry_codelen(e)) & ((1u << entry_extra(e)) - 1u);
}

}  // namespace gdfs::gdeflate
