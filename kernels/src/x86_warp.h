// The x86 branch filter's inverse (codec/include/gdfs/x86_filter.h) over one decoded page, by the
// calling warp, for codec 4 pages: GDeflate first (gdeflate_warp.h), then this, in place.
//
// The filter's scan is sequential (a site hides the 4 bytes after it), but sites are sparse. So the warp
// tests 32 positions a step, one per lane, and resolves the step's sites from the ballot in position
// order, on every lane alike: a candidate inside the previous site's bytes is skipped, as the scan
// would. Each site's lane then rewrites its 4 bytes. A position's test reads only bytes that no earlier
// site rewrites, so the ballot may be taken before this step's rewrites and after the last step's.
#pragma once
#include <cstdint>

#include "gdfs/x86_filter.h"
#include "simt.h"

namespace gdfs::gpu {

GDFS_DEV void x86_decode_warp(uint8_t* out, uint32_t n) {
  constexpr uint32_t kSite = x86::kSiteBytes, kBack = x86::kLookback;
  const unsigned lane = simt::lane_id();
  uint32_t next = 0;   // the first position not inside a site; the same on every lane
  uint64_t carry = 0;  // opcode bits of the kLookback positions before the step
  for (uint32_t base = 0; base + kSite <= n; base += 32) {
    const uint32_t pos = base + lane;
    const bool opcode = pos < n && x86::is_opcode(out[pos]);
    const bool candidate = opcode && pos + kSite <= n && x86::is_top_byte(out[pos + 4]);
    const uint64_t ops = uint64_t{simt::ballot(opcode)} << kBack | carry;  // bit b: position base - 3 + b
    carry = ops >> 32;
    uint32_t mask = simt::ballot(candidate);
    if (next > base) mask &= next - base >= 32 ? 0u : ~0u << (next - base);
    uint32_t sites = 0;
    while (mask) {
      const unsigned j = simt::ffs(mask) - 1;
      const uint32_t lo = next + kBack > base + j ? next + kBack - base : j;  // window: bits lo .. j + 2
      if (ops & ((uint64_t{1} << (j + kBack)) - (uint64_t{1} << lo))) {
        mask &= mask - 1;
        continue;
      }
      sites |= 1u << j;
      next = base + j + kSite;
      mask &= j + kSite >= 32 ? 0u : ~0u << (j + kSite);
    }
    if (sites >> lane & 1u) {
      uint8_t* p = out + pos + 1;
      const uint32_t v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
      const uint32_t d = x86::decode_site(v, pos);
      p[0] = static_cast<uint8_t>(d);
      p[1] = static_cast<uint8_t>(d >> 8);
      p[2] = static_cast<uint8_t>(d >> 16);
      p[3] = static_cast<uint8_t>(d >> 24);
    }
    simt::syncwarp();  // the rewrites are seen by every lane's next loads
  }
}

}  // namespace gdfs::gpu
