#include "gdfs/checksum.h"

#include <xxhash.h>

#include "cpu.h"

namespace gdfs {

#ifdef GDFS_CHECKSUM_AVX2
namespace detail {
unsigned long long xxh3_64_avx2(const void* data, size_t n);
void xxh3_128_avx2(const void* data, size_t n, unsigned long long* low, unsigned long long* high);
}  // namespace detail

namespace {
// Every page is hashed once or twice on its way to a reader: over one 64 KiB buffer, the AVX2 loop
// hashed 2.5x the bytes per second of libxxhash's SSE2 one on the 2-core VM (39 against 15.5 GB/s;
// bench/results/2026-11-26-xxh3-avx2-vm.txt).
bool use_avx2() {
  static const bool yes = cpu_features().avx2;
  return yes;
}
}  // namespace
#endif

uint64_t checksum64(const void* data, size_t n) {
#ifdef GDFS_CHECKSUM_AVX2
  if (use_avx2()) return detail::xxh3_64_avx2(data, n);
#endif
  return XXH3_64bits(data, n);
}

Hash128 hash128(const void* data, size_t n) {
#ifdef GDFS_CHECKSUM_AVX2
  if (use_avx2()) {
    unsigned long long lo, hi;
    detail::xxh3_128_avx2(data, n, &lo, &hi);
    return {lo, hi};
  }
#endif
  XXH128_hash_t h = XXH3_128bits(data, n);
  return {h.low64, h.high64};
}

}  // namespace gdfs
