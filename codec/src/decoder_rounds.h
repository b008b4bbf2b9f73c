// State shared by the decoder's scalar and SIMD data-round loops.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu.h"
#include "lane_reader.h"

namespace gdfs::gdeflate {

struct Output {
  uint8_t* data;  // has kOutputSlack writable bytes past `size` for wide stores
  size_t size;
  size_t pos;
};
inline constexpr size_t kOutputSlack = 64;

// Matches whose length was decoded in the previous round and whose distance is owed this round.
struct OwedMatches {
  uint32_t pending = 0;  // lane bit set: that lane owes a distance
  std::array<uint32_t, 32> len{};
  std::array<uint32_t, 32> pos{};
};

// Match copy, 8 bytes at a time where the source is at least 8 bytes behind (no 8-byte block reads
// what it writes), then byte by byte, which repeats the pattern of a shorter distance. Exact length:
// the bytes after dst + len may already be final.
inline void copy_forward(uint8_t* dst, const uint8_t* src, uint32_t dist, uint32_t len) {
  uint32_t i = 0;
  if (dist >= 8) {
    for (; i + 8 <= len; i += 8) {
      uint64_t w;
      std::memcpy(&w, src + i, 8);
      std::memcpy(dst + i, &w, 8);
    }
  }
  for (; i < len; ++i) dst[i] = src[i];
}

// Overlapping LZ77 copy of len bytes from dist back, exact length; the caller has bounds-checked both
// ranges. The scalar and AVX2 paths' copy.
inline void copy_match(uint8_t* dst, uint32_t dist, uint32_t len) {
  const uint8_t* src = dst - dist;
  if (dist >= len) {
    std::memcpy(dst, src, len);
  } else if (dist == 1) {
    std::memset(dst, *src, len);
  } else {
    copy_forward(dst, src, dist, len);
  }
}

// The litlen table followed by the distance table, so one gather can serve both.
inline constexpr size_t kDistTableOffset = 2048 + 288 * 16;  // == kLitlenTableSize

// The SIMD loops of one instruction set (decoder_simd.h, instantiated by decoder_avx512.cc and
// decoder_avx2.cc).
struct SimdRounds {
  // Runs whole data rounds for as long as each round is an ordinary one (no end of block, no invalid
  // code, enough input and output left, every distance valid). Stops *before* any other round and
  // leaves it, with all state consistent, to the scalar code.
  void (*rounds)(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* tables);
  // Stored-block body: copies whole 32-byte rounds while at least 32 bytes remain and input lasts;
  // decrements `remaining` by what it did and leaves the rest to the scalar code.
  void (*stored)(LaneReader& r, Output& o, uint32_t& remaining);
};

#if defined(__x86_64__)
extern const SimdRounds kAvx512Rounds;  // only where avx512_usable()
extern const SimdRounds kAvx2Rounds;    // only where avx2_usable()
#else
// Never used: off x86-64 the cpu.h checks are false.
inline constexpr SimdRounds kAvx512Rounds{}, kAvx2Rounds{};
#endif

}  // namespace gdfs::gdeflate
