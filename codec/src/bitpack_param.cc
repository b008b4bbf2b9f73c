// Parameters of the bitpack codec: validity, the 16-bit PageEntry::param packing, sizes and names.
#include "bitpack_layout.h"
#include "gdfs/bitpack.h"

namespace gdfs::bitpack {

bool valid(const Params& p) {
  // A stride of `block` or more would difference nothing; such params must be written with stride 0 so
  // that every page has one spelling (and a reader can refuse the others).
  return (p.type == Type::kInt16 || p.type == Type::kInt32) &&
         (p.mode == Mode::kPlain || p.mode == Mode::kOutlier) && p.block >= kMinBlock &&
         p.block <= kMaxBlock && p.stride <= kMaxStride && (p.stride == 0 || p.stride < p.block);
}

uint16_t to_param(const Params& p) {
  return static_cast<uint16_t>(static_cast<unsigned>(p.type) | static_cast<unsigned>(p.mode) << 1 |
                               (p.block - 1u) << 2 | unsigned{p.stride} << 12);
}

std::optional<Params> from_param(uint16_t param) {
  Params p;
  p.type = static_cast<Type>(param & 1);
  p.mode = static_cast<Mode>(param >> 1 & 1);
  p.block = static_cast<uint16_t>((param >> 2 & 0x3FF) + 1);
  p.stride = static_cast<uint8_t>(param >> 12);
  if (!valid(p)) return std::nullopt;
  return p;
}

size_t compress_bound(size_t n, const Params& p) {
  if (!valid(p)) return 0;
  const Geometry g = geometry(n, p);
  const unsigned full_rate = 8 * sample_bytes(p.type);
  // Outlier blocks are chosen only when smaller than plain, so plain at full rate bounds every block.
  return g.meta() + g.blocks * planes_cost(full_rate, p.block) + g.tail;
}

}  // namespace gdfs::bitpack
