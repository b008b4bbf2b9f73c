#include "lane_writer.h"

#include <bit>
#include <cstring>

#include "cpu.h"

namespace gdfs::gdeflate {
namespace {

void store_le32(uint8_t* p, uint32_t w) {
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap32(w);
  std::memcpy(p, &w, 4);
}

}  // namespace

LaneWriter::LaneWriter(bool allow_simd)
    : words_(32 * kLaneCap), order_(32 * kLaneCap + 32), simd_(allow_simd && avx512_usable()) {
  reset();
}

void LaneWriter::reset() {
  for (unsigned i = 0; i < 32; ++i) {
    acc_[i] = 0;
    consumed_[i] = 0;
    order_[i] = static_cast<uint16_t>(i);  // the first round loads word i into lane i
  }
  norder_ = 32;
  overflow_ = false;
}

void LaneWriter::Sink::put_stored_body(const uint8_t* data, size_t len) {
  std::array<uint32_t, 32> start;
  for (unsigned lane = 0; lane < 32; ++lane) start[lane] = consumed[lane];
  for (unsigned lane = 0; lane < 32 && lane < len; ++lane) {
    uint32_t c = consumed[lane];
    uint64_t a = acc[lane];
    for (size_t k = lane; k < len; k += 32, c += 8) {
      a |= uint64_t{data[k]} << (c & 31);
      if (((c + 8) & 31) < 8) {  // this byte completed a word
        const uint32_t word = c >> 5;
        overflow |= word >= kLaneCap;
        words[lane * kLaneCap + (word < kLaneCap ? word : kLaneCap - 1)] = static_cast<uint32_t>(a);
        a >>= 32;
      }
    }
    consumed[lane] = c;
    acc[lane] = a;
  }
  // A lane fetches when a step moves ceil(consumed / 32); rounds run in lane order. Every round adds
  // 8 bits to every lane, so which lanes fetch repeats every 4 rounds: list those once, then copy.
  std::array<std::array<uint16_t, 32>, 4> fetch;
  std::array<unsigned, 4> nfetch{};
  for (unsigned r = 0; r < 4; ++r) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      const uint32_t c = start[lane] + 8 * r;
      if (((c + 8 + 31) >> 5) != ((c + 31) >> 5)) fetch[r][nfetch[r]++] = static_cast<uint16_t>(lane);
    }
  }
  for (size_t k = 0; k < len; k += 32) {
    const unsigned r = (k >> 5) & 3, lanes = len - k < 32 ? static_cast<unsigned>(len - k) : 32;
    for (unsigned j = 0; j < nfetch[r] && fetch[r][j] < lanes; ++j) {
      order[norder] = fetch[r][j];
      norder += norder + 1 < order_cap;
    }
  }
}

// finish() for a lane too full to take its two final words in its row; never reached by a page worth
// keeping, but kept exact.
void LaneWriter::finish_full_lanes(uint8_t* out) const {
  std::array<uint32_t, 32> next{};
  for (size_t i = 0; i < norder_; ++i) {
    const unsigned lane = order_[i];
    const uint32_t k = next[lane]++, complete = consumed_[lane] >> 5;
    uint32_t w = 0;  // words past a lane's last bit are zero (docs/GDEFLATE.md, Page size)
    if (k < complete) {
      w = words_[lane * kLaneCap + k];
    } else if (k == complete) {
      w = static_cast<uint32_t>(acc_[lane]);
    }
    store_le32(out + 4 * i, w);
  }
}

size_t LaneWriter::finish(uint8_t* out, size_t cap) {
  const size_t bytes = size_bytes();
  if (bytes > cap || overflow_) return 0;
  // Every lane's words, complete or not, in its row of words_: the partial word, then a zero word, for
  // the decoder loads one word past a lane's last bit (docs/GDEFLATE.md, "The page bitstream, in one
  // page": Page size). The page is then a walk through the fetch order, without a branch per word.
  for (unsigned lane = 0; lane < 32; ++lane) {
    const uint32_t complete = consumed_[lane] >> 5;
    if (complete + 2 > kLaneCap) {
      finish_full_lanes(out);
      return bytes;
    }
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    const uint32_t complete = consumed_[lane] >> 5;
    words_[lane * kLaneCap + complete] = static_cast<uint32_t>(acc_[lane]);
    words_[lane * kLaneCap + complete + 1] = 0;
  }
  std::array<uint32_t, 32> next;
  for (unsigned lane = 0; lane < 32; ++lane) next[lane] = lane * kLaneCap;
  for (size_t i = 0; i < norder_; ++i) store_le32(out + 4 * i, words_[next[order_[i]]++]);
  return bytes;
}

}  // namespace gdfs::gdeflate
