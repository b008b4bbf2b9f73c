// The encoder's side of the lane layout: bits are appended to the lane that the decoder will read
// them from, and the writer replays the decoder's refill rule (fetch when a lane holds < 32 bits,
// right after that lane's step) to learn the order in which the words must be laid out.
//
// Callers issue put() in exactly the decoder's step order: round by round, lane order within a round.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gdfs::gdeflate {

class LaneWriter {
 public:
  LaneWriter() : words_(32 * kLaneCap) { reset(); }
  void reset();

  // One decode step of `n` bits (0 < n <= 32) on `lane`: the code, then its extra bits.
  void put(unsigned lane, uint32_t bits, unsigned n) {
    Lane& l = lanes_[lane];
    l.acc |= static_cast<uint64_t>(bits) << l.acc_bits;
    l.acc_bits += n;
    if (l.acc_bits >= 32) {
      if (l.nwords < kLaneCap) {
        words_[lane * kLaneCap + l.nwords++] = static_cast<uint32_t>(l.acc);
      } else {
        overflow_ = true;  // far beyond any page we would keep; the caller falls back to stored
      }
      l.acc >>= 32;
      l.acc_bits -= 32;
    }
    consumed_[lane] += n;
    avail_[lane] -= static_cast<int>(n);
    if (avail_[lane] < 32) {
      order_.push_back(static_cast<uint8_t>(lane));
      avail_[lane] += 32;
    }
  }

  // True if a lane outgrew kLaneCap words; the page is then unusable (and far above stored size).
  bool overflow() const { return overflow_; }

  // Page size so far, including the words the decoder's refills will have loaded.
  size_t size_bytes() const { return 4 * order_.size(); }
  const std::array<uint32_t, 32>& consumed_bits() const { return consumed_; }

  // Lays the words out in fetch order. Returns the page size, or 0 if it exceeds `cap`.
  size_t finish(uint8_t* out, size_t cap);

 private:
  // A stored 64 KiB page needs 514 words in lane 0; a Huffman page worth keeping needs fewer.
  static constexpr size_t kLaneCap = 2048;
  struct Lane {
    uint64_t acc;
    unsigned acc_bits;
    size_t nwords;
  };
  std::vector<uint32_t> words_;  // lane l's words at [l * kLaneCap, l * kLaneCap + nwords)
  std::array<Lane, 32> lanes_;
  bool overflow_;
  std::array<int, 32> avail_;  // bits the decoder holds in each lane after its last refill
  std::array<uint32_t, 32> consumed_;
  std::vector<uint8_t> order_;  // lane of each word, in stream order
};

}  // namespace gdfs::gdeflate
