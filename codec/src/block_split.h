// Block splitting: where one Huffman block should end and the next begin.
//
// The token stream is cut into segments of roughly equal input size; walking left to right, a segment
// joins the current block when coding them together is estimated to cost no more than coding them
// apart (each block pays for its own header, but gets codes fitted to its own statistics).
#pragma once

#include <cstddef>
#include <vector>

#include "block_writer.h"
#include "tokens.h"

namespace gdfs::gdeflate {

struct BlockRange {
  size_t tok_begin, tok_end;    // tokens [tok_begin, tok_end)
  size_t byte_begin, byte_end;  // the input bytes they cover
  BlockStats stats;
};

struct SplitParams {
  size_t segment_bytes;  // granularity of candidate split points
  bool exact_cost;       // price candidates with real Huffman codes rather than an entropy estimate
  bool optimal = false;  // cheapest split over all segment boundaries, not a left-to-right greedy merge
  // With `optimal`: the cheapest split over every other boundary, then each cut moved by one segment
  // where that is cheaper (a quarter of the candidate blocks).
  bool pairs = false;
};
SplitParams split_params_for_level(int level);

// The entropy estimate of coding a block's symbols with codes of its own, header included, in bits: what
// the splitter minimises unless SplitParams::exact_cost. `s` counts the tokens of one page at most (its
// counts index a table of kMaxPageBytes + 1 entries). In fixed point (1/256 bit), so the AVX-512 path
// (`simd`, where the CPU has it) and the scalar one give the same number and the same blocks.
double estimate_block_bits(const BlockStats& s, bool simd = true);

// Splits tokens t[0..nt) into blocks, and writes each token's symbols to s[0..nt) (as encode_symbols
// would) on the way.
void split_blocks(const Token* t, size_t nt, const SplitParams& p, Sym* s, std::vector<BlockRange>& out);

// The same blocks from segments already cut and counted (by a parser that writes symbols itself):
// segment k must be what split_blocks' scan would have made of the same tokens.
void merge_segments(const std::vector<BlockRange>& segs, const SplitParams& p, std::vector<BlockRange>& out);

}  // namespace gdfs::gdeflate
