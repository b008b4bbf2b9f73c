#include "gdfs/checksum.h"

#include <xxhash.h>

namespace gdfs {

uint64_t checksum64(const void* data, size_t n) {
  return XXH3_64bits(data, n);
}

Hash128 hash128(const void* data, size_t n) {
  XXH128_hash_t h = XXH3_128bits(data, n);
  return {h.low64, h.high64};
}

}  // namespace gdfs
