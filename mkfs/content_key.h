// The key under which mkfs looks for bytes it has seen: pages and tails of this image (dedupe) and
// tails of the base image (--base). A 128-bit hash plus the length; a match is only a candidate, and
// the bytes decide.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gdfs/checksum.h"

namespace gdfs::mkfs {

struct ContentKey {
  Hash128 hash;
  uint32_t len;
  bool operator==(const ContentKey&) const = default;
};
struct ContentKeyHash {
  size_t operator()(const ContentKey& k) const { return static_cast<size_t>(k.hash.lo); }
};
inline ContentKey content_key(const uint8_t* p, size_t n) {
  return {hash128(p, n), static_cast<uint32_t>(n)};
}

}  // namespace gdfs::mkfs
