// Checksums used by the image format (docs/FORMAT.md): XXH3-64 from libxxhash. Metadata and the
// superblock keep all 64 bits; page checksums keep the low 32 bits, which is plenty to catch corruption
// of a page that is at most 64 KiB (the same width as the CRC-32C that ext4 and EROFS use).
#pragma once
#include <cstddef>
#include <cstdint>

namespace gdfs {

uint64_t checksum64(const void* data, size_t n);
inline uint32_t checksum32(const void* data, size_t n) {
  return static_cast<uint32_t>(checksum64(data, n));
}

// 128-bit content hash for deduplication (XXH3-128): a hit is only a candidate, confirmed byte by byte.
struct Hash128 {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128&) const = default;
};
Hash128 hash128(const void* data, size_t n);

}  // namespace gdfs
