#include "lane_writer.h"

namespace gdfs::gdeflate {

void LaneWriter::reset() {
  for (unsigned i = 0; i < 32; ++i) {
    acc_[i] = 0;
    consumed_[i] = 0;
    order_[i] = static_cast<uint16_t>(i);  // the first round loads word i into lane i
  }
  norder_ = 32;
  overflow_ = false;
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
