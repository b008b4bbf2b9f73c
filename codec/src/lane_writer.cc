#include "lane_writer.h"

#include "cpu.h"

namespace gdfs::gdeflate {

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
  // A lane fetches when a step moves ceil(consumed / 32); rounds run in lane order.
  std::array<uint32_t, 32> c = start;
  for (size_t k = 0; k < len; ++k) {
    const unsigned lane = k & 31;
    const uint32_t before = (c[lane] + 31) >> 5;
    c[lane] += 8;
    order[norder] = static_cast<uint16_t>(lane);
    norder += (((c[lane] + 31) >> 5) != before) & (norder + 1 < order_cap);
  }
}

size_t LaneWriter::finish(uint8_t* out, size_t cap) {
  const size_t bytes = size_bytes();
  if (bytes > cap || overflow_) return 0;
  std::array<uint32_t, 32> next{};
  for (size_t i = 0; i < norder_; ++i) {
    const unsigned lane = order_[i];
    const uint32_t k = next[lane]++, complete = consumed_[lane] >> 5;
    uint32_t w = 0;  // words past a lane's last bit are zero (CLARIFICATIONS.md §8)
    if (k < complete) {
      w = words_[lane * kLaneCap + k];
    } else if (k == complete) {
      w = static_cast<uint32_t>(acc_[lane]);
    }
    out[4 * i + 0] = static_cast<uint8_t>(w);
    out[4 * i + 1] = static_cast<uint8_t>(w >> 8);
    out[4 * i + 2] = static_cast<uint8_t>(w >> 16);
    out[4 * i + 3] = static_cast<uint8_t>(w >> 24);
  }
  return bytes;
}

}  // namespace gdfs::gdeflate
