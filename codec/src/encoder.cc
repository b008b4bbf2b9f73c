// GDeflate page encoder: parse (lz/), split into blocks, pick each block's type, lay out the lanes.
//
// Guarantee: the result is never larger than the page's stored form. Block types are chosen by exact
// bit counts, and for the final block, where per-lane word padding decides the page size, by page size
// (choose_final); if Huffman coding still loses overall, the page is re-emitted as stored blocks.
#include <array>
#include <stdexcept>
#include <string>

#include "block_split.h"
#include "block_writer.h"
#include "gdfs/gdeflate.h"
#include "lane_writer.h"
#include "lz/parser.h"

namespace gdfs::gdeflate {

size_t stored_size(size_t n) {
  LaneCounter c;
  count_stored(c, n);
  return 4 * c.page_words();
}

size_t compress_bound(size_t n) {
  return stored_size(n);
}

struct Compressor::Impl {
  int level;
  std::unique_ptr<Parser> parser;
  SplitParams split;
  std::vector<Sym> syms;
  Steps steps, fixed_steps;
  std::vector<BlockRange> segments;  // from parsers that count symbols themselves
  std::vector<BlockRange> blocks;
  std::vector<BlockCodes> codes;  // dynamic codes, per block
  std::vector<BlockType> types;   // planned type, per block
  LaneWriter writer;
  BlockCodes fixed;

  explicit Impl(int lvl) : level(lvl) {
    if (lvl < kMinLevel || lvl > kMaxLevel)
      throw std::invalid_argument("gdeflate: compression level " + std::to_string(lvl) + " is not in 0..12");
    if (lvl > 0) parser = make_parser(lvl);
    split = split_params_for_level(lvl);
    fixed.build_fixed();
  }

  size_t compress(const uint8_t* in, size_t n, uint8_t* out, size_t cap);
  bool plan_blocks(size_t n);
  BlockType choose_final(const BlockRange& b, const uint8_t* in, const BlockCodes& dyn);
};

namespace {

// Exact bits of each block type for block b with dynamic codes `dyn`: stored, fixed, dynamic.
std::array<uint64_t, 3> type_bits(const BlockRange& b, const BlockCodes& fixed, const BlockCodes& dyn) {
  return {stored_bits(b.byte_end - b.byte_begin), 3 + fixed.data_bits(b.stats),
          3 + dyn.header_bits + dyn.data_bits(b.stats)};
}

unsigned cheapest(const std::array<uint64_t, 3>& bits) {
  unsigned best = 0;
  for (unsigned k = 1; k < 3; ++k)
    if (bits[k] < bits[best]) best = k;
  return best;
}

}  // namespace

// The final block decides the page's padding: every lane ends on a whole word, plus the word its last
// refill loads. Candidates whose bit counts are within that reach (one word per lane) of the best are
// compared by page size: exactly, from a dry run of the same emitter, from level 4 up; at levels 1-3,
// where a dry run would cost a tenth of the time, Huffman candidates are charged the expected half word
// per lane and stored blocks their exact (closed-form) padding.
BlockType Compressor::Impl::choose_final(const BlockRange& b, const uint8_t* in, const BlockCodes& dyn) {
  const size_t n = b.byte_end - b.byte_begin, nt = b.tok_end - b.tok_begin;
  const auto bits = type_bits(b, fixed, dyn);
  const unsigned best = cheapest(bits);
  unsigned in_reach = 0;
  for (unsigned k = 0; k < 3; ++k) in_reach += bits[k] <= bits[best] + 32 * 32;
  if (in_reach == 1) return static_cast<BlockType>(best);  // nothing to compare: skip the dry run
  size_t best_words = SIZE_MAX;
  unsigned pick = best;
  for (unsigned k = 0; k < 3; ++k) {
    if (bits[k] > bits[best] + 32 * 32) continue;
    LaneCounter c;
    c.bits = writer.consumed_bits();
    size_t words;
    if (k == 0) {
      count_stored(c, n);
      words = c.page_words();
    } else if (level >= 4) {
      if (k == 1) encode_steps(syms.data() + b.tok_begin, nt, fixed, fixed_steps);
      emit_block(c, static_cast<BlockType>(k), k == 1 ? fixed_steps : steps, nt, in + b.byte_begin, n,
                 k == 1 ? fixed : dyn, true);
      words = c.page_words();
    } else {
      uint64_t total = bits[k];
      for (uint32_t lane_bits : c.bits) total += lane_bits;
      words = (total + 31) / 32 + 16 + 32;
    }
    if (words < best_words || (words == best_words && bits[k] < bits[pick])) {
      best_words = words;
      pick = k;
    }
  }
  return static_cast<BlockType>(pick);
}

// Plans every block's type by exact bit count first: when Huffman coding cannot beat storing the page
// even before padding, the page is stored without emitting anything twice.
bool Compressor::Impl::plan_blocks(size_t n) {
  codes.resize(blocks.size());
  types.resize(blocks.size());
  uint64_t total = 0;
  for (size_t k = 0; k < blocks.size(); ++k) {
    codes[k].build_dynamic(blocks[k].stats);
    const auto bits = type_bits(blocks[k], fixed, codes[k]);
    types[k] = static_cast<BlockType>(cheapest(bits));
    total += bits[static_cast<unsigned>(types[k])];
  }
  return total < stored_bits(n) + 32 * 32;  // worth emitting: padding could still tip it either way
}

size_t Compressor::Impl::compress(const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
  if (n > kMaxPageBytes) throw std::invalid_argument("gdeflate: a page holds at most 65536 bytes");
  writer.reset();
  bool coded = false;
  if (level > 0 && n > 0) {
    // Grow only: growing zero-fills, which would cost a memset on every page with more tokens than
    // the one before. A page has at most one token per byte.
    if (syms.size() < n) {
      syms.resize(n);
      steps.resize(n);
      fixed_steps.resize(n);
    }
    if (parser->parse_segments(in, n, split.segment_bytes, syms.data(), segments) != SIZE_MAX) {
      merge_segments(segments, split, blocks);
    } else {
      const Parser::TokenSpan tokens = parser->parse(in, n);
      split_blocks(tokens.begin, tokens.size, split, syms.data(), blocks);
    }
    coded = plan_blocks(n);
  }
  for (size_t k = 0; coded && k < blocks.size(); ++k) {
    const BlockRange& b = blocks[k];
    const bool final_block = k + 1 == blocks.size();
    const size_t nt = b.tok_end - b.tok_begin;
    // Dynamic steps: for a dynamic block, and for the final block, whose choice may dry-run them.
    if (types[k] == BlockType::kDynamic || final_block)
      encode_steps(syms.data() + b.tok_begin, nt, codes[k], steps);
    const BlockType type = final_block ? choose_final(b, in, codes[k]) : types[k];
    if (type == BlockType::kFixed) encode_steps(syms.data() + b.tok_begin, nt, fixed, steps);
    LaneWriter::Sink sink = writer.sink();
    emit_block(sink, type, steps, nt, in + b.byte_begin, b.byte_end - b.byte_begin,
               type == BlockType::kFixed ? fixed : codes[k], final_block);
    writer.commit(sink);
  }
  if (!coded || writer.overflow() || writer.size_bytes() > stored_size(n)) {
    writer.reset();
    LaneWriter::Sink sink = writer.sink();
    emit_stored(sink, in, n, true);
    writer.commit(sink);
  }
  return writer.finish(out, cap);
}

Compressor::Compressor(int level) : impl_(std::make_unique<Impl>(level)) {}
Compressor::~Compressor() = default;
Compressor::Compressor(Compressor&&) noexcept = default;
Compressor& Compressor::operator=(Compressor&&) noexcept = default;

size_t Compressor::compress(const void* in, size_t n, void* out, size_t out_cap) {
  return impl_->compress(static_cast<const uint8_t*>(in), n, static_cast<uint8_t*>(out), out_cap);
}
int Compressor::level() const {
  return impl_->level;
}

}  // namespace gdfs::gdeflate
