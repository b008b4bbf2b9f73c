// libFuzzer harness for the CUDA bitpack decoder's device code, run on the warp emulator. Input: as
// fuzz_bitpack (a 2-byte little-endian PageEntry::param, a 3-byte decoded size, then the page), so the
// two share seed corpora. The warp decoder must stay inside its exact-size buffers (ASan), keep its
// lanes converged, and give the CPU decoder's status (kUnsupported for an invalid param), and its bytes
// when the status is ok. With a valid param, the page the CPU encodes from the same bytes must decode
// back exactly.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "bitpack_warp.h"
#include "emu/warp_emu.h"
#include "gdfs/bitpack.h"

namespace {

namespace bp = gdfs::bitpack;
namespace gpu = gdfs::gpu;
using gdfs::PageStatus;

std::unique_ptr<uint8_t[]> copy(const uint8_t* p, size_t n) {
  std::unique_ptr<uint8_t[]> b(new uint8_t[n]);  // exact size, so ASan sees one byte too far
  if (n) std::memcpy(b.get(), p, n);
  return b;
}

// The warp decoder's result and bytes; aborts on divergence or lanes that disagree.
PageStatus emu_decode(const uint8_t* in, size_t n, uint16_t param, uint8_t* out, size_t out_size) {
  gpu::BitpackSmem sm;
  const gpu::DevicePage page{
      in,    out, static_cast<uint32_t>(n), static_cast<uint32_t>(out_size), gdfs::format::kCodecBitpack, 0,
      param, 0};
  PageStatus lanes[32];
  if (!gpu::emu::run_warp([&] { lanes[gpu::simt::lane_id()] = gpu::bitpack_decode_warp(page, sm); }).empty())
    std::abort();
  for (const PageStatus r : lanes)
    if (r != lanes[0]) std::abort();
  return lanes[0];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const uint16_t param = static_cast<uint16_t>(data[0] | data[1] << 8);
  const uint32_t prefix = data[2] | data[3] << 8 | (data[4] & 1u) << 16;
  const size_t out_size = prefix <= 65536 ? prefix : prefix & 0xFFFF;
  const size_t n = size - 5;
  auto page = copy(data + 5, n);
  std::unique_ptr<uint8_t[]> cpu(new uint8_t[out_size]), dev(new uint8_t[out_size]);
  const auto p = bp::from_param(param);
  const PageStatus s = p ? bp::decompress(page.get(), n, *p, cpu.get(), out_size, bp::DecodePath::kPortable)
                         : PageStatus::kUnsupported;
  if (emu_decode(page.get(), n, param, dev.get(), out_size) != s) std::abort();  // one verdict, CPU or GPU
  if (s == PageStatus::kOk && out_size && std::memcmp(cpu.get(), dev.get(), out_size) != 0) std::abort();
  if (!p) return 0;
  // A valid page from the same bytes.
  const size_t raw_n = std::min<size_t>(n, 65536);
  const size_t enc_n = bp::compressed_size(page.get(), raw_n, *p);
  auto enc = std::unique_ptr<uint8_t[]>(new uint8_t[enc_n]);
  if (bp::compress(page.get(), raw_n, *p, enc.get(), enc_n) != enc_n) std::abort();
  std::unique_ptr<uint8_t[]> back(new uint8_t[raw_n]);
  if (emu_decode(enc.get(), enc_n, param, back.get(), raw_n) != PageStatus::kOk) std::abort();
  if (raw_n && std::memcmp(back.get(), page.get(), raw_n) != 0) std::abort();
  return 0;
}
