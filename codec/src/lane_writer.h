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
  // A stored 64 KiB page needs 514 words in lane 0; a Huffman page worth keeping needs fewer.
  static constexpr size_t kLaneCap = 2048;

  // The writing end, for hot loops: a local copy whose counters the compiler can keep in registers
  // (through the writer itself, every store to a lane's state could alias them). Take one with
  // sink(), write through it, hand it back with commit().
  struct Sink {
    uint32_t* words;     // lane l's complete words at [l * kLaneCap, ...)
    uint64_t* acc;       // per lane: bits past the last complete word
    uint32_t* consumed;  // per lane: bits written so far
    uint16_t* order;     // lane of each word, in stream order
    size_t norder, order_cap;
    bool overflow;
    bool simd;  // emit full data rounds with AVX-512 (block_writer.h)

    // One decode step of `n` bits (0 < n <= 32) on `lane`: the code, then its extra bits.
    //
    // Everything follows from the lane's consumed-bit count c: its first c/32 words are complete, and
    // the decoder has fetched ceil(c/32) + 1 words, so a step that moves ceil(c/32) fetches one word.
    // Branch-free: the current word is stored on every step (a partial word is simply rewritten until
    // it completes), and the fetch order grows by 0 or 1 entry.
    void put(unsigned lane, uint32_t bits, unsigned n) {
      const uint32_t c = consumed[lane], c2 = c + n;
      const uint64_t a = acc[lane] | (static_cast<uint64_t>(bits) << (c & 31));
      const uint32_t word = c >> 5, full = (c2 >> 5) != word;
      overflow |= word >= kLaneCap;  // far beyond any page we would keep: the caller stores instead
      words[lane * kLaneCap + (word < kLaneCap ? word : kLaneCap - 1)] = static_cast<uint32_t>(a);
      acc[lane] = a >> (full << 5);
      consumed[lane] = c2;
      order[norder] = static_cast<uint16_t>(lane);
      norder += (((c2 + 31) >> 5) != ((c + 31) >> 5)) & (norder + 1 < order_cap);
    }

    // A stored block's body: byte k on lane k mod 32, one 8-bit step each, in round order. Same result
    // as len put() calls, but each lane's bytes are packed in one pass and the fetch order is replayed
    // with counters alone.
    void put_stored_body(const uint8_t* data, size_t len);
  };

  // `allow_simd`: let hot loops use AVX-512 when the CPU has it (the output is the same either way).
  explicit LaneWriter(bool allow_simd = true);
  void reset();

  Sink sink() {
    return {words_.data(), acc_.data(),   consumed_.data(), order_.data(),
            norder_,       order_.size(), overflow_,        simd_};
  }
  void commit(const Sink& s) {
    norder_ = s.norder;
    overflow_ = s.overflow;
  }

  // True if a lane outgrew kLaneCap words; the page is then unusable (and far above stored size).
  bool overflow() const { return overflow_; }

  // Page size so far, including the words the decoder's refills will have loaded.
  size_t size_bytes() const { return 4 * norder_; }
  const std::array<uint32_t, 32>& consumed_bits() const { return consumed_; }

  // Lays the words out in fetch order. Returns the page size, or 0 if it exceeds `cap`.
  size_t finish(uint8_t* out, size_t cap);

 private:
  void finish_full_lanes(uint8_t* out) const;

  std::vector<uint32_t> words_;
  std::array<uint64_t, 32> acc_;
  std::array<uint32_t, 32> consumed_;
  std::vector<uint16_t> order_;  // not uint8_t: char stores alias everything
  size_t norder_;
  bool overflow_;
  bool simd_;
};

}  // namespace gdfs::gdeflate
