// libFuzzer harness for the bitpack page codec. Input: a 2-byte little-endian PageEntry::param, a 3-byte
// little-endian decoded size (its low 17 bits; values above 64 KiB wrap to 16 bits), then the bytes.
// 1. The bytes are decoded as a page by every decoder path the CPU has (portable, AVX2, AVX-512) into
//    exact-size buffers: each must return a status (kUnsupported exactly when the param is invalid), stay
//    inside its buffers (ASan), and all must agree on the status and, when it is kOk, on the bytes.
// 2. With a valid param, the same bytes (at most 64 KiB) are encoded and must decode back exactly, at
//    the size compressed_size() promised and within compress_bound().
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "gdfs/bitpack.h"

namespace {

namespace bp = gdfs::bitpack;
using gdfs::PageStatus;

std::unique_ptr<uint8_t[]> copy(const uint8_t* p, size_t n) {
  std::unique_ptr<uint8_t[]> b(new uint8_t[n]);  // exact size, so ASan sees one byte too far
  if (n) std::memcpy(b.get(), p, n);
  return b;
}

// The raw fields of a param, valid or not, so that invalid ones reach decompress() too.
bp::Params raw_params(uint16_t v) {
  return {static_cast<bp::Type>(v & 1), static_cast<bp::Mode>(v >> 1 & 1),
          static_cast<uint16_t>((v >> 2 & 0x3FF) + 1), static_cast<uint8_t>(v >> 12)};
}

// Every path this CPU has; the ones it lacks would only repeat the portable decode.
const std::vector<bp::DecodePath>& paths() {
  static const std::vector<bp::DecodePath> v = [] {
    std::vector<bp::DecodePath> r{bp::DecodePath::kPortable};
    for (bp::DecodePath p : {bp::DecodePath::kAvx2, bp::DecodePath::kAvx512})
      if (bp::decode_path(p) == p) r.push_back(p);
    return r;
  }();
  return v;
}

void decode_all(const uint8_t* in, size_t n, const bp::Params& p, size_t out_size) {
  auto page = copy(in, n);
  std::unique_ptr<uint8_t[]> a(new uint8_t[out_size]), b(new uint8_t[out_size]);
  const PageStatus s = bp::decompress(page.get(), n, p, a.get(), out_size, bp::DecodePath::kPortable);
  if ((s == PageStatus::kUnsupported) == bp::valid(p)) std::abort();
  for (bp::DecodePath path : paths()) {
    const PageStatus t = bp::decompress(page.get(), n, p, b.get(), out_size, path);
    if (s != t) std::abort();
    if (s == PageStatus::kOk && out_size && std::memcmp(a.get(), b.get(), out_size) != 0) std::abort();
  }
}

void round_trip(const uint8_t* data, size_t n, const bp::Params& p) {
  auto in = copy(data, n);
  const size_t bound = bp::compress_bound(n, p), expect = bp::compressed_size(in.get(), n, p);
  if (expect > bound) std::abort();
  std::unique_ptr<uint8_t[]> page(new uint8_t[expect]);
  if (bp::compress(in.get(), n, p, page.get(), expect) != expect) std::abort();
  std::unique_ptr<uint8_t[]> out(new uint8_t[n]);
  for (bp::DecodePath path : paths()) {
    if (bp::decompress(page.get(), expect, p, out.get(), n, path) != PageStatus::kOk) std::abort();
    if (n && std::memcmp(out.get(), in.get(), n) != 0) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const bp::Params p = raw_params(static_cast<uint16_t>(data[0] | data[1] << 8));
  const uint32_t prefix = data[2] | data[3] << 8 | (data[4] & 1u) << 16;
  const size_t out_size = prefix <= 65536 ? prefix : prefix & 0xFFFF;
  decode_all(data + 5, size - 5, p, out_size);
  if (bp::valid(p)) round_trip(data + 5, std::min<size_t>(size - 5, 65536), p);
  return 0;
}
