// State shared by the decoder's scalar and SIMD data-round loops.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu.h"
#include "lane_reader.h"

namespace gdfs::gdeflate {

// Every path writes exactly [data, data + size): no store, however wide, reaches past the bytes it
// produces, so a page decodes in place into a buffer of exactly its size.
struct Output {
  uint8_t* data;
  size_t size;
  size_t pos;
};

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

// The copies below are exact: they write only [dst, dst+len) and read only [src, src+len), so a page
// can be decoded in place into a buffer of exactly its size. Most matches are short, and a call into
// the C library's memcpy cost more than the copy (22% of the AVX2 decoder's time on text), hence the
// fixed-size moves, whose last one ends exactly at len and may overlap the one before it.
template <size_t N>
inline void move_bytes(uint8_t* dst, const uint8_t* src) {
  uint8_t w[N];
  std::memcpy(w, src, N);
  std::memcpy(dst, w, N);
}

// N <= len <= 2N bytes as the first N and the last N, which may overlap.
template <size_t N>
inline void move_ends(uint8_t* dst, const uint8_t* src, uint32_t len) {
  uint8_t a[N], b[N];
  std::memcpy(a, src, N);
  std::memcpy(b, src + len - N, N);
  std::memcpy(dst, a, N);
  std::memcpy(dst + len - N, b, N);
}

// Source and destination do not overlap (dist >= len).
inline void copy_disjoint(uint8_t* dst, const uint8_t* src, uint32_t len) {
  if (len >= 16) {
    for (uint32_t i = 0; i + 16 < len; i += 16) move_bytes<16>(dst + i, src + i);
    move_bytes<16>(dst + len - 16, src + len - 16);
  } else if (len >= 8) {
    move_ends<8>(dst, src, len);
  } else if (len >= 4) {
    move_ends<4>(dst, src, len);
  } else {
    for (uint32_t i = 0; i < len; ++i) dst[i] = src[i];
  }
}

// An overlapping copy whose distance is at least N: blocks of N bytes in order (each reads only bytes
// already final), the last one ending at len; it rewrites bytes the one before wrote, with the same values.
template <size_t N>
inline void copy_blocks(uint8_t* dst, const uint8_t* src, uint32_t len) {
  uint32_t i = 0;
  for (; i + N < len; i += N) move_bytes<N>(dst + i, src + i);
  move_bytes<N>(dst + len - N, src + len - N);
}

// A run of one byte.
inline void fill_bytes(uint8_t* dst, uint8_t b, uint32_t len) {
  const uint64_t w = 0x0101010101010101ull * b;
  if (len >= 8) {
    for (uint32_t i = 0; i + 8 < len; i += 8) std::memcpy(dst + i, &w, 8);
    std::memcpy(dst + len - 8, &w, 8);
  } else {
    for (uint32_t i = 0; i < len; ++i) dst[i] = b;
  }
}

// Overlapping LZ77 copy of len bytes from dist back, exact length; the caller has bounds-checked both
// ranges. The scalar and AVX2 paths' copy.
inline void copy_match(uint8_t* dst, uint32_t dist, uint32_t len) {
  const uint8_t* src = dst - dist;
  if (dist >= len) {
    copy_disjoint(dst, src, len);
  } else if (dist == 1) {
    fill_bytes(dst, *src, len);
  } else if (dist >= 16) {
    copy_blocks<16>(dst, src, len);  // len > dist >= 16
  } else if (dist >= 8) {
    copy_blocks<8>(dst, src, len);
  } else {
    for (uint32_t i = 0; i < len; ++i) dst[i] = src[i];
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
  // A dynamic header's code lengths, from a round boundary: whole rounds of 32 precode symbols (one a
  // lane, decoded with the precode table `precode`) for as long as each is ordinary (every code valid,
  // no repeat before the first length, every run within the `total` lengths, enough input). Appends the
  // lengths at lens[k..] and advances k; leaves the rest, from a round boundary, to the scalar code.
  // Null where an instruction set has none.
  void (*lengths)(LaneReader& r, const uint32_t* precode, uint8_t* lens, unsigned total, unsigned& k);
};

#if defined(__x86_64__)
extern const SimdRounds kAvx512Rounds;  // only where avx512_usable()
extern const SimdRounds kAvx2Rounds;    // only where avx2_usable()
#else
// Never used: off x86-64 the cpu.h checks are false.
inline constexpr SimdRounds kAvx512Rounds{}, kAvx2Rounds{};
#endif

}  // namespace gdfs::gdeflate
