// libFuzzer harness for the page decoder. Input: a 3-byte little-endian expected output size (its low
// 17 bits; values above 64 KiB + 1 wrap to 16 bits, so "one too many" stays reachable), then the page.
// All three decoder implementations (scalar, AVX2, AVX-512) run on every input. Each must return a status and
// stay inside the exact-size buffers it is given (ASan checks that); they must agree on the status, and on
// the bytes when it is kOk (the API promises both).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gdfs/gdeflate.h"

namespace {

namespace gg = gdfs::gdeflate;
using gdfs::PageStatus;

bool valid(PageStatus s) {
  return s == PageStatus::kOk || s == PageStatus::kBadData || s == PageStatus::kSizeMismatch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint32_t prefix = data[0] | data[1] << 8 | (data[2] & 1u) << 16;
  const size_t out_size = prefix <= gg::kMaxPageBytes + 1 ? prefix : prefix & 0xFFFF;
  const size_t in_size = size - 3;
  // Exact-size heap copies: an overread of the page or an overrun of the output is caught at once.
  std::unique_ptr<uint8_t[]> in(new uint8_t[in_size]);
  if (in_size) std::memcpy(in.get(), data + 3, in_size);
  std::unique_ptr<uint8_t[]> out_scalar(new uint8_t[out_size]), out_simd(new uint8_t[out_size]);

  // Reused across inputs: state left by earlier (failed) decodes must not matter.
  static gg::Decompressor scalar(gg::DecodePath::kScalar), avx2(gg::DecodePath::kAvx2),
      avx512(gg::DecodePath::kAvx512);
  const PageStatus s = scalar.decompress(in.get(), in_size, out_scalar.get(), out_size);
  if (!valid(s)) std::abort();
  for (gg::Decompressor* d : {&avx2, &avx512}) {
    const PageStatus t = d->decompress(in.get(), in_size, out_simd.get(), out_size);
    if (t != s) std::abort();
    if (s == PageStatus::kOk && out_size && std::memcmp(out_scalar.get(), out_simd.get(), out_size) != 0) {
      std::abort();
    }
  }
  return 0;
}
