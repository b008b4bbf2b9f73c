// libFuzzer harness for the CUDA GDeflate decoder's device code, run on the warp emulator. Input: as
// fuzz_decode (a 3-byte little-endian output size, then the page), so the two share seed corpora. The
// warp decoder must stay inside its exact-size buffers (ASan), keep its lanes converged, and give the
// CPU scalar decoder's status, and its bytes when the status is ok.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "emu/warp_emu.h"
#include "gdeflate_warp.h"
#include "gdfs/gdeflate.h"

namespace {

namespace gg = gdfs::gdeflate;
namespace gpu = gdfs::gpu;
using gdfs::PageStatus;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint32_t prefix = data[0] | data[1] << 8 | (data[2] & 1u) << 16;
  const size_t out_size = prefix <= gg::kMaxPageBytes + 1 ? prefix : prefix & 0xFFFF;
  const size_t in_size = size - 3;
  std::unique_ptr<uint8_t[]> in(new uint8_t[in_size]);
  if (in_size) std::memcpy(in.get(), data + 3, in_size);
  std::unique_ptr<uint8_t[]> cpu_out(new uint8_t[out_size]), gpu_out(new uint8_t[out_size]);

  static gg::Decompressor scalar(gg::DecodePath::kScalar);
  const PageStatus s = scalar.decompress(in.get(), in_size, cpu_out.get(), out_size);

  static auto sm = std::make_unique<gpu::GdeflateSmem>();  // stale contents from earlier inputs on purpose
  const gpu::DevicePage page{in.get(),
                             gpu_out.get(),
                             static_cast<uint32_t>(in_size),
                             static_cast<uint32_t>(out_size),
                             gdfs::format::kCodecGDeflate,
                             0,
                             0,
                             0};
  PageStatus lanes[32];
  const std::string err =
      gpu::emu::run_warp([&] { lanes[gpu::simt::lane_id()] = gpu::gdeflate_decode_warp(page, *sm); });
  if (!err.empty()) std::abort();
  for (const PageStatus r : lanes)
    if (r != lanes[0]) std::abort();
  if (lanes[0] != s) std::abort();  // one verdict, CPU or GPU
  if (s == PageStatus::kOk && out_size && std::memcmp(cpu_out.get(), gpu_out.get(), out_size) != 0)
    std::abort();
  return 0;
}
