// XXH3 with AVX2 vectors, compiled with -mavx2 (codec/CMakeLists.txt) and called only where the CPU has
// AVX2 (checksum.cc). Debian's libxxhash is built for SSE2 alone; the hashes are the same, since XXH3's
// result does not depend on the vector width it is computed with.
//
// No C++ headers here, nor gdfs ones: an inline function they define, compiled for AVX2 in this file,
// could be the copy the linker keeps for every caller, on CPUs without AVX2 too. xxhash's own functions
// are static under XXH_INLINE_ALL.
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

namespace gdfs::detail {

unsigned long long xxh3_64_avx2(const void* data, size_t n) {
  return XXH3_64bits(data, n);
}

void xxh3_128_avx2(const void* data, size_t n, unsigned long long* low, unsigned long long* high) {
  const XXH128_hash_t h = XXH3_128bits(data, n);
  *low = h.low64;
  *high = h.high64;
}

}  // namespace gdfs::detail
