// libFuzzer harness for the x86 branch filter (gdfs/x86_filter.h): the CPU's encode and decode undo each
// other for any bytes, and the GPU warp's inverse (kernels/src/x86_warp.h, run on the warp emulator)
// gives the CPU's bytes, inside an exact-size buffer (ASan) with its lanes converged. Input: one page
// of any bytes (at most 64 KiB are used).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "emu/warp_emu.h"
#include "gdfs/x86_filter.h"
#include "x86_warp.h"

namespace {

namespace gpu = gdfs::gpu;
namespace x86 = gdfs::x86;

std::unique_ptr<uint8_t[]> copy(const uint8_t* p, size_t n) {
  std::unique_ptr<uint8_t[]> b(new uint8_t[n]);  // exact size, so ASan sees one byte too far
  if (n) std::memcpy(b.get(), p, n);
  return b;
}

void same_or_abort(const uint8_t* a, const uint8_t* b, size_t n) {
  if (n && std::memcmp(a, b, n) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t n = std::min<size_t>(size, 65536);
  auto enc = copy(data, n), dec = copy(data, n), dev = copy(data, n);
  x86::encode(enc.get(), n);
  x86::decode(dec.get(), n);
  auto back = copy(enc.get(), n);
  x86::decode(back.get(), n);
  same_or_abort(back.get(), data, n);  // decode(encode(x)) == x
  auto again = copy(dec.get(), n);
  x86::encode(again.get(), n);
  same_or_abort(again.get(), data, n);                                            // encode(decode(x)) == x
  if (x86::count_sites(enc.get(), n) != x86::count_sites(data, n)) std::abort();  // the same sites
  if (!gpu::emu::run_warp([&] { gpu::x86_decode_warp(dev.get(), static_cast<uint32_t>(n)); }).empty())
    std::abort();
  same_or_abort(dev.get(), dec.get(), n);  // the warp's inverse is the CPU's
  return 0;
}
