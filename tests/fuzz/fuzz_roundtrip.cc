// libFuzzer harness for the encoder. Input: one byte choosing the level (mod 13), then up to 64 KiB of
// data. Compressing must succeed, be deterministic, fit in the stored size, and decode back exactly.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "gdfs/gdeflate.h"

namespace gg = gdfs::gdeflate;
using gdfs::PageStatus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int level = data[0] % (gg::kMaxLevel + 1);
  const size_t n = size - 1 < gg::kMaxPageBytes ? size - 1 : gg::kMaxPageBytes;
  std::unique_ptr<uint8_t[]> in(new uint8_t[n]);
  if (n) std::memcpy(in.get(), data + 1, n);

  // One compressor per level, reused: earlier inputs must not change the output.
  static std::vector<std::unique_ptr<gg::Compressor>> compressors(gg::kMaxLevel + 1);
  if (!compressors[level]) compressors[level] = std::make_unique<gg::Compressor>(level);
  gg::Compressor& c = *compressors[level];

  const size_t cap = gg::compress_bound(n);
  std::unique_ptr<uint8_t[]> page(new uint8_t[cap]);
  const size_t page_size = c.compress(in.get(), n, page.get(), cap);
  if (page_size == 0 || page_size > gg::stored_size(n) || page_size % 4 != 0) std::abort();

  // Again, into a buffer of exactly the page size: the same bytes.
  std::unique_ptr<uint8_t[]> again(new uint8_t[page_size]);
  if (c.compress(in.get(), n, again.get(), page_size) != page_size) std::abort();
  if (std::memcmp(page.get(), again.get(), page_size) != 0) std::abort();

  std::unique_ptr<uint8_t[]> out(new uint8_t[n]);
  gg::Decompressor d;
  if (d.decompress(again.get(), page_size, out.get(), n) != PageStatus::kOk) std::abort();
  if (n && std::memcmp(out.get(), in.get(), n) != 0) std::abort();
  return 0;
}
