// libFuzzer harness for the DirectStorage container parser and tile decoder. Input: a whole container.
// Parsing must either throw ContainerError or describe tiles that lie inside the input, in order;
// decoding (single thread, when the claimed size is modest) must either throw ContainerError or give
// exactly the claimed number of bytes.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "gdfs/gdeflate_container.h"

namespace gg = gdfs::gdeflate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  gg::ContainerInfo info;
  try {
    info = gg::parse_container(file);
  } catch (const gg::ContainerError&) {
    return 0;
  }
  uint64_t raw = 0, end = info.data_offset;
  for (const gg::TileSpan& t : info.tiles) {
    if (t.offset < end || t.offset + t.size > size || t.raw_size == 0 || t.raw_size > gg::kTileBytes)
      std::abort();
    end = t.offset + t.size;
    raw += t.raw_size;
  }
  if (raw != info.raw_size || info.tiles.size() != info.num_tiles) std::abort();
  // A few KiB of container may claim up to 4 GiB of output; a fuzzer has no use for that much.
  if (info.raw_size > (uint64_t{16} << 20)) return 0;
  try {
    if (gg::decompress_container(file, 1).size() != info.raw_size) std::abort();
  } catch (const gg::ContainerError&) {
  }
  return 0;
}
