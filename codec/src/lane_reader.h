// The decoder's view of the 32 interleaved lanes (docs/GDEFLATE.md, "The page bitstream, in one page":
// Lanes and refill, Page size).
//
// Each lane holds up to 64 bits, consumed LSB-first. After every decode step a lane holding fewer than
// 32 bits fetches the next word of the page; words are handed out in the order lanes ask for them.
// Running past the end of the page is recorded in `overrun` and zeros are supplied instead: callers
// check the flag at round and block boundaries, which keeps the per-symbol path branch-light while
// guaranteeing that no byte outside the page is read.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace gdfs::gdeflate {

struct LaneReader {
  uint64_t buf[32];
  uint32_t cnt[32];
  const uint8_t* in;
  size_t nwords;
  size_t next;  // index of the next word to hand out
  bool overrun;

  static uint32_t load_le32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
    return v;
  }

  // The first round loads words 0..31 into lanes 0..31. Requires nwords >= 32.
  void init(const uint8_t* data, size_t words) {
    in = data;
    nwords = words;
    for (unsigned l = 0; l < 32; ++l) {
      buf[l] = load_le32(in + 4 * l);
      cnt[l] = 32;
    }
    next = 32;
    overrun = false;
  }

  void consume(unsigned lane, unsigned bits) {
    buf[lane] >>= bits;
    cnt[lane] -= bits;
    if (cnt[lane] < 32) {
      uint64_t w = 0;
      if (next < nwords) {
        w = load_le32(in + 4 * next++);
      } else {
        overrun = true;
      }
      buf[lane] |= w << cnt[lane];
      cnt[lane] += 32;
    }
  }
};

}  // namespace gdfs::gdeflate
