// Test-only GDeflate page writer, written from docs/GDEFLATE.md ("The page bitstream, in one page"),
// independent of the codec's encoder.
// Tests describe a page as the exact sequence of decode steps the decoder will perform (which lane
// consumes which bits, in round and lane order); the writer lays the lanes' words out in the order the
// `< 32` refill rule loads them. That lets a test craft valid and deliberately malformed pages.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gdfs::test {

struct Code {
  uint32_t bits;  // MSB-first, as in RFC 1951 tables
  unsigned len;
};

class GdfWriter {
 public:
  GdfWriter();
  // One decode step of `lane`: the low `nbits` (<= 32) bits of `value`, LSB first.
  void bits(unsigned lane, uint32_t value, unsigned nbits);
  // A Huffman code (sent MSB first) followed, in the same step, by `nextra` extra bits.
  void code(unsigned lane, Code c, uint32_t extra = 0, unsigned nextra = 0);
  // The page: a multiple of 4 bytes, ending at the last word the refill rule loads.
  std::vector<uint8_t> finish() const;

  // Block headers, always on lane 0 (BTYPE 0 stored, 1 fixed, 2 dynamic, 3 reserved).
  void block_header(bool final, unsigned btype) { bits(0, (final ? 1u : 0u) | btype << 1, 3); }
  // A whole stored block: header, 16-bit LEN on lane 0, byte k on lane k mod 32.
  void stored_block(bool final, const uint8_t* data, unsigned len);

 private:
  struct Lane {
    std::vector<uint32_t> words;  // the lane's own bit stream
    uint64_t nbits = 0;           // bits written (= bits the decoder consumes)
    std::vector<size_t> slots;    // stream word index of each of the lane's words
  };
  std::array<Lane, 32> lanes_;
  size_t next_slot_ = 32;
};

// RFC 1951 fixed codes. Litlen symbols 286 and 287 have codes even though they are invalid.
Code fixed_litlen(unsigned sym);
inline Code fixed_dist(unsigned sym) {
  return {sym, 5};
}

// Canonical MSB-first codes for code lengths (RFC 1951 §3.2.2), computed independently of huffman.h.
std::vector<Code> canonical_codes(const std::vector<uint8_t>& lens);

// A code-length symbol (0..18) with its repeat extra bits (16: 2, 17: 3, 18: 7).
struct ClSym {
  unsigned sym;
  uint32_t extra = 0;
};

// Writes a dynamic block header and its tables exactly as given, valid or not: HLIT = nlit - 257,
// HDIST = ndist - 1, the first hclen_count (4..19) precode lengths in RFC order (precode_lens is indexed
// by symbol), then the code-length symbols.
void dynamic_tables(GdfWriter& w, bool final, unsigned nlit, unsigned ndist,
                    const std::vector<uint8_t>& precode_lens, const std::vector<ClSym>& cl_syms,
                    unsigned hclen_count = 19);

// Convenience: sends the given code lengths as literal code-length symbols 0..15 under the given precode
// (which must give each used length a code). Returns the litlen and distance codes for writing the block's
// data.
struct DynamicCodes {
  std::vector<Code> litlen, dist;
};
DynamicCodes dynamic_header(GdfWriter& w, bool final, const std::vector<uint8_t>& litlen_lens,
                            const std::vector<uint8_t>& dist_lens, const std::vector<uint8_t>& precode_lens,
                            unsigned hclen_count = 19);

}  // namespace gdfs::test
