// State shared by the decoder's scalar and SIMD data-round loops.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

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

// The litlen table followed by the distance table, so one gather can serve both.
inline constexpr size_t kDistTableOffset = 2048 + 288 * 16;  // == kLitlenTableSize

// Runs whole data rounds with AVX-512 for as long as each round is an ordinary one (no end of block,
// no invalid code, enough input and output left, every distance valid). Stops *before* any other
// round and leaves it, with all state consistent, to the scalar code. Only call when avx512_usable().
void avx512_rounds(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* tables);
// Stored-block body: copies whole 32-byte rounds while at least 32 bytes remain and input lasts;
// decrements `remaining` by what it did and leaves the rest to the scalar code.
void avx512_stored(LaneReader& r, Output& o, uint32_t& remaining);

// The same two entry points for AVX2 machines (decoder_avx2.cc).
void avx2_rounds(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* tables);
void avx2_stored(LaneReader& r, Output& o, uint32_t& remaining);

}  // namespace gdfs::gdeflate
