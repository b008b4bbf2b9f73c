// One page, any codec, decoded by the calling warp. The batch kernel (decode_kernel.cu) and the
// emulator tests both go through here, so a batch may mix codecs freely.
#pragma once
#include <cstdint>

#include "bitpack_warp.h"
#include "gdeflate_warp.h"
#include "gdfs/gpu_page.h"
#include "simt.h"
#include "x86_warp.h"

namespace gdfs::gpu {

// Per-warp shared memory: one codec runs at a time.
union WarpSmem {
  GdeflateSmem gdeflate;
  BitpackSmem bitpack;
};

// Stored pages: a straight copy, in 16-byte vectors when both sides allow it.
GDFS_DEV PageStatus copy_page_warp(const DevicePage& p) {
  if (p.in_size != p.out_size) return PageStatus::kSizeMismatch;
  const unsigned lane = simt::lane_id();
  uint32_t done = 0;
#if defined(__CUDACC__)
  if (((reinterpret_cast<uintptr_t>(p.in) | reinterpret_cast<uintptr_t>(p.out)) & 15u) == 0) {
    const uint32_t vecs = p.out_size / 16;
    const uint4* src = reinterpret_cast<const uint4*>(p.in);
    uint4* dst = reinterpret_cast<uint4*>(p.out);
    for (uint32_t i = lane; i < vecs; i += 32) dst[i] = src[i];
    done = vecs * 16;
  }
#endif
  for (uint32_t i = done + lane; i < p.out_size; i += 32) p.out[i] = p.in[i];
  return PageStatus::kOk;
}

// Zero pages (holes, or pages a caller knows are zero): no input at all.
GDFS_DEV PageStatus zero_page_warp(const DevicePage& p) {
  if (p.in_size != 0) return PageStatus::kBadData;
  const unsigned lane = simt::lane_id();
  uint32_t done = 0;
#if defined(__CUDACC__)
  if ((reinterpret_cast<uintptr_t>(p.out) & 15u) == 0) {
    const uint32_t vecs = p.out_size / 16;
    uint4* dst = reinterpret_cast<uint4*>(p.out);
    for (uint32_t i = lane; i < vecs; i += 32) dst[i] = make_uint4(0, 0, 0, 0);
    done = vecs * 16;
  }
#endif
  for (uint32_t i = done + lane; i < p.out_size; i += 32) p.out[i] = 0;
  return PageStatus::kOk;
}

GDFS_DEV PageStatus decode_page_warp(const DevicePage& p, WarpSmem& sm) {
  if (p.out_size > kMaxPageBytes) return PageStatus::kSizeMismatch;
  switch (static_cast<uint8_t>(p.codec)) {  // any byte: the caller's pages are not trusted
    case kZeroFill:
      return zero_page_warp(p);
    case format::kCodecStored:
      return copy_page_warp(p);
    case format::kCodecGDeflate:
      return gdeflate_decode_warp(p, sm.gdeflate);
    case format::kCodecBitpack:
      return bitpack_decode_warp(p, sm.bitpack);
    case format::kCodecGDeflateX86: {
      const PageStatus s = gdeflate_decode_warp(p, sm.gdeflate);
      if (s != PageStatus::kOk) return s;
      simt::syncwarp();  // the decoder's stores, seen by every lane
      x86_decode_warp(p.out, p.out_size);
      return s;
    }
  }
  return PageStatus::kUnsupported;
}

}  // namespace gdfs::gpu
