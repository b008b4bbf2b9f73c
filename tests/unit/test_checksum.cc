// checksum64 and hash128 (gdfs/checksum.h) are XXH3-64 and XXH3-128 whatever vector code computes
// them (AVX2 where the CPU has it, libxxhash's otherwise): every size up to a few blocks, unaligned
// starts, and whole pages, against libxxhash itself.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gdfs/checksum.h"

namespace gdfs {
namespace {

TEST(Checksum, IsXxh3AtEverySizeAndAlignment) {
  std::mt19937_64 rng(64);
  std::vector<uint8_t> buf((64 << 10) + 64);
  for (uint8_t& b : buf) b = static_cast<uint8_t>(rng());
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 1100; ++n) sizes.push_back(n);  // every XXH3 size class and stripe edge
  for (size_t n : {4095u, 4096u, 4097u, 65535u, 65536u}) sizes.push_back(n);
  for (int i = 0; i < 200; ++i) sizes.push_back(rng() % (64 << 10));
  for (size_t n : sizes) {
    for (size_t at : {0u, 1u, 7u, 33u}) {
      const uint8_t* p = buf.data() + at;
      ASSERT_EQ(checksum64(p, n), XXH3_64bits(p, n)) << n << " at +" << at;
      ASSERT_EQ(checksum32(p, n), static_cast<uint32_t>(XXH3_64bits(p, n))) << n;
      const XXH128_hash_t want = XXH3_128bits(p, n);
      const Hash128 got = hash128(p, n);
      ASSERT_EQ(got.lo, want.low64) << n << " at +" << at;
      ASSERT_EQ(got.hi, want.high64) << n << " at +" << at;
    }
  }
}

}  // namespace
}  // namespace gdfs
