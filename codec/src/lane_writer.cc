#include "lane_writer.h"

#include <cstring>

namespace gdfs::gdeflate {

void LaneWriter::reset() {
  order_.clear();
  order_.reserve(32 * 1024);
  overflow_ = false;
  for (unsigned i = 0; i < 32; ++i) {
    lanes_[i].acc = 0;
    lanes_[i].acc_bits = 0;
    lanes_[i].nwords = 0;
    avail_[i] = 32;  // the first round loads word i into lane i
    consumed_[i] = 0;
    order_.push_back(static_cast<uint8_t>(i));
  }
}

size_t LaneWriter::finish(uint8_t* out, size_t cap) {
  const size_t bytes = size_bytes();
  if (bytes > cap || overflow_) return 0;
  std::array<size_t, 32> next{};
  for (size_t i = 0; i < order_.size(); ++i) {
    const unsigned lane = order_[i];
    const Lane& l = lanes_[lane];
    const size_t k = next[lane]++;
    uint32_t w = 0;  // words past a lane's last bit are zero (CLARIFICATIONS.md §8)
    if (k < l.nwords) {
      w = words_[lane * kLaneCap + k];
    } else if (k == l.nwords) {
      w = static_cast<uint32_t>(l.acc);
    }
    out[4 * i + 0] = static_cast<uint8_t>(w);
    out[4 * i + 1] = static_cast<uint8_t>(w >> 8);
    out[4 * i + 2] = static_cast<uint8_t>(w >> 16);
    out[4 * i + 3] = static_cast<uint8_t>(w >> 24);
  }
  return bytes;
}

}  // namespace gdfs::gdeflate
