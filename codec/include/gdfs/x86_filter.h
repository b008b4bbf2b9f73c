// The x86 branch filter: a reversible transform that makes x86 machine code compress better.
//
// A near CALL (opcode E8) or JMP (E9) carries a 32-bit displacement relative to the next instruction, so
// ten calls of one function from ten places carry ten different byte strings. The filter rewrites each
// displacement as the target's position in the page, and the ten become one repeated string. On the
// shared libraries measured, the pages that get the filter came out 4.8-5.5% smaller in GDeflate
// (bench/results/2026-11-27-x86-filter-vm.txt). It is the idea of the BCJ x86 filters of xz and
// squashfs, defined here on its own terms so that it is exactly invertible for any bytes, page by page:
//
//   Scan i = 0, 1, ... while i + 5 <= n. Position i is a *site* when byte i is E8 or E9, byte i + 4 is
//   00 or FF (the little-endian value v of bytes i+1..i+4 is a 25-bit signed number: calls within
//   16 MiB, nearly all of them), and no byte the scan passed over since the last site among i-3..i-1
//   is E8 or E9. At a site, bytes i+1..i+4 become
//       encode: sext25(v + (i + 5))       decode: sext25(v - (i + 5))
//   where sext25(x) keeps the low 25 bits of x and copies bit 24 into bits 25..31; the scan then goes
//   on at i + 5. Anywhere else it goes on at i + 1.
//
// Either direction leaves every byte a test reads as it was: the opcode bytes, a site's top byte
// (still 00 or FF), and, thanks to the last condition, the byte i + 4 of an opcode at i that is not a
// site (no site may start in i+1..i+3 then, so none rewrites it). So encode and decode find the same
// sites, and arithmetic modulo 2^25 undoes the addition: decode(encode(x)) == x and
// encode(decode(x)) == x for every x. Pages are filtered on their own, with positions counted from the
// page's first byte.
//
// The site test and the per-site arithmetic below compile as host and as device code: the CPU (codec/src/
// x86_filter.cc) and the GPU warp decoder (kernels/src/x86_warp.h) share them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gdfs/huffman_entry.h"  // GDFS_HOST_DEVICE

namespace gdfs::x86 {

inline constexpr uint32_t kSiteBytes = 5;  // opcode and 32-bit displacement
inline constexpr uint32_t kLookback = 3;   // bytes before a site that must hold no other opcode

GDFS_HOST_DEVICE constexpr bool is_opcode(uint8_t b) {
  return (b & 0xFEu) == 0xE8u;
}
GDFS_HOST_DEVICE constexpr bool is_top_byte(uint8_t b) {
  return b == 0x00u || b == 0xFFu;
}
GDFS_HOST_DEVICE constexpr uint32_t sext25(uint32_t v) {
  return (v & 0x01FFFFFFu) | ((v & 0x01000000u) ? 0xFE000000u : 0u);
}
// The displacement at site `pos`, rewritten. `v` is bytes pos+1..pos+4 read little-endian.
GDFS_HOST_DEVICE constexpr uint32_t encode_site(uint32_t v, uint32_t pos) {
  return sext25(v + pos + kSiteBytes);
}
GDFS_HOST_DEVICE constexpr uint32_t decode_site(uint32_t v, uint32_t pos) {
  return sext25(v - pos - kSiteBytes);
}

// How many sites `n` bytes have (the scan above, changing nothing).
size_t count_sites(const uint8_t* data, size_t n);
// Whether a page looks like x86 machine code, so that the filter should pay: at least one site per
// kCodeBytesPerSite bytes. Random bytes have about one per 16 KiB by chance (2/256 x 2/256); the shared
// libraries of a Python install averaged one per 80 bytes. The threshold is the middle of a flat optimum
// (128-384 bytes per site) measured on shared libraries (bench/results/2026-11-27-x86-filter-vm.txt).
inline constexpr size_t kCodeBytesPerSite = 256;
bool looks_like_code(const uint8_t* data, size_t n);

// The filter and its inverse, in place.
void encode(uint8_t* data, size_t n);
void decode(uint8_t* data, size_t n);

}  // namespace gdfs::x86
