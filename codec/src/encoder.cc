// GDeflate page encoder: parse (lz/), split into blocks, pick each block's type, lay out the lanes.
//
// Guarantee: the result is never larger than the page's stored form. Block types are chosen by exact
// bit counts, and for the final block, where per-lane word padding decides the page size, by the exact
// page size; if Huffman coding still loses overall, the page is re-emitted as stored blocks.
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

size_t compress_bound(size_t n) { return stored_size(n); }

struct Compressor::Impl {
  int level;
  std::unique_ptr<Parser> parser;
  SplitParams split;
  TokenVec tokens;
  std::vector<Sym> syms;
  std::vector<Step> steps, fixed_steps;
  std::vector<BlockRange> blocks;
  LaneWriter writer;
  BlockCodes fixed, dynamic;

  explicit Impl(int lvl) : level(lvl) {
    if (lvl < kMinLevel || lvl > kMaxLevel)
      throw std::invalid_argument("gdeflate: compression level " + std::to_string(lvl) + " is not in 0..12");
    if (lvl > 0) parser = make_parser(lvl);
    split = split_params_for_level(lvl);
    fixed.build_fixed();
  }

  size_t compress(const uint8_t* in, size_t n, uint8_t* out, size_t cap);
  BlockType choose_type(const BlockRange& b, const uint8_t* in, bool final_block);
};

// Cheapest block type by exact bit count. For the final block, candidates within a padding's reach of
// each other (at most one word per lane) are compared by the exact resulting page size instead.
BlockType Compressor::Impl::choose_type(const BlockRange& b, const uint8_t* in, bool final_block) {
  const size_t n = b.byte_end - b.byte_begin;
  const uint64_t bits[3] = {stored_bits(n), 3 + fixed.data_bits(b.stats),
                            3 + dynamic.header_bits + dynamic.data_bits(b.stats)};
  unsigned best = 0;
  for (unsigned k = 1; k < 3; ++k)
    if (bits[k] < bits[best]) best = k;
  if (!final_block) return static_cast<BlockType>(best);

  size_t best_words = SIZE_MAX;
  unsigned pick = best;
  for (unsigned k = 0; k < 3; ++k) {
    if (bits[k] > bits[best] + 32 * 32) continue;
    LaneCounter c;
    c.bits = writer.consumed_bits();
    if (k == 0) {
      count_stored(c, n);
    } else {
      const Step* st = k == 1 ? fixed_steps.data() : steps.data();
      if (k == 1) encode_steps(syms.data() + b.tok_begin, b.tok_end - b.tok_begin, fixed, fixed_steps.data());
      emit_block(c, static_cast<BlockType>(k), st, b.tok_end - b.tok_begin, in + b.byte_begin, n,
                 k == 1 ? fixed : dynamic, true);
    }
    const size_t words = c.page_words();
    if (words < best_words || (words == best_words && bits[k] < bits[pick])) {
      best_words = words;
      pick = k;
    }
  }
  return static_cast<BlockType>(pick);
}

size_t Compressor::Impl::compress(const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
  if (n > kMaxPageBytes) throw std::invalid_argument("gdeflate: a page holds at most 65536 bytes");
  const size_t stored = stored_size(n);
  writer.reset();
  if (level > 0 && n > 0) {
    parser->parse(in, n, tokens);
    syms.resize(tokens.size());
    steps.resize(tokens.size());
    fixed_steps.resize(tokens.size());
    encode_symbols(tokens.data(), tokens.size(), syms.data());
    split_blocks(tokens.data(), syms.data(), tokens.size(), split, blocks);
    for (size_t k = 0; k < blocks.size(); ++k) {
      const BlockRange& b = blocks[k];
      const bool final_block = k + 1 == blocks.size();
      const size_t nt = b.tok_end - b.tok_begin;
      dynamic.build_dynamic(b.stats);
      encode_steps(syms.data() + b.tok_begin, nt, dynamic, steps.data());
      const BlockType type = choose_type(b, in, final_block);
      if (type == BlockType::kFixed) encode_steps(syms.data() + b.tok_begin, nt, fixed, steps.data());
      emit_block(writer, type, steps.data(), nt, in + b.byte_begin, b.byte_end - b.byte_begin,
                 type == BlockType::kFixed ? fixed : dynamic, final_block);
    }
  }
  if (level == 0 || n == 0 || writer.overflow() || writer.size_bytes() > stored) {
    writer.reset();
    emit_stored(writer, in, n, true);
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
int Compressor::level() const { return impl_->level; }

}  // namespace gdfs::gdeflate
