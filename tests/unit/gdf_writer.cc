#include "gdf_writer.h"

#include <cassert>

namespace gdfs::test {

GdfWriter::GdfWriter() {
  // Words 0..31 initialise lanes 0..31.
  for (size_t i = 0; i < lanes_.size(); ++i) lanes_[i].slots.push_back(i);
}

void GdfWriter::bits(unsigned lane, uint32_t value, unsigned nbits) {
  assert(lane < 32 && nbits <= 32);
  Lane& l = lanes_[lane];
  for (unsigned i = 0; i < nbits; ++i, ++l.nbits) {
    if (l.nbits % 32 == 0) l.words.push_back(0);
    l.words.back() |= ((value >> i) & 1u) << (l.nbits % 32);
  }
  // After its step the lane refills when it holds fewer than 32 bits; refills appear in step order.
  while (32 * l.slots.size() - l.nbits < 32) l.slots.push_back(next_slot_++);
}

void GdfWriter::code(unsigned lane, Code c, uint32_t extra, unsigned nextra) {
  uint32_t rev = 0;
  for (unsigned i = 0; i < c.len; ++i) rev |= ((c.bits >> i) & 1u) << (c.len - 1 - i);
  bits(lane, rev | extra << c.len, c.len + nextra);
}

std::vector<uint8_t> GdfWriter::finish() const {
  std::vector<uint32_t> stream(next_slot_, 0);
  for (const Lane& l : lanes_) {
    for (size_t j = 0; j < l.words.size() && j < l.slots.size(); ++j) stream[l.slots[j]] = l.words[j];
  }
  std::vector<uint8_t> out;
  for (uint32_t w : stream) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(w >> (8 * b)));
  }
  return out;
}

void GdfWriter::stored_block(bool final, const uint8_t* data, unsigned len) {
  block_header(final, 0);
  bits(0, len, 16);
  for (unsigned k = 0; k < len; ++k) bits(k % 32, data[k], 8);
}

Code fixed_litlen(unsigned sym) {
  if (sym < 144) return {0x30 + sym, 8};
  if (sym < 256) return {0x190 + (sym - 144), 9};
  if (sym < 280) return {sym - 256, 7};
  return {0xC0 + (sym - 280), 8};
}

std::vector<Code> canonical_codes(const std::vector<uint8_t>& lens) {
  unsigned count[16] = {}, next[16] = {};
  for (uint8_t l : lens) ++count[l];
  count[0] = 0;
  for (unsigned len = 1, code = 0; len < 16; ++len) {
    code = (code + count[len - 1]) << 1;
    next[len] = code;
  }
  std::vector<Code> codes(lens.size(), Code{0, 0});
  for (size_t s = 0; s < lens.size(); ++s) {
    if (lens[s]) codes[s] = {next[lens[s]]++, lens[s]};
  }
  return codes;
}

void dynamic_tables(GdfWriter& w, bool final, unsigned nlit, unsigned ndist,
                    const std::vector<uint8_t>& precode_lens, const std::vector<ClSym>& cl_syms,
                    unsigned hclen_count) {
  static constexpr unsigned kPerm[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  static constexpr unsigned kExtraBits[19] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};
  assert(nlit >= 257 && nlit <= 288 && ndist >= 1 && ndist <= 32 && precode_lens.size() == 19);
  w.block_header(final, 2);
  w.bits(0, (nlit - 257) | (ndist - 1) << 5 | (hclen_count - 4) << 10, 14);
  // One 3-bit precode length per lane, all in one round.
  for (unsigned i = 0; i < hclen_count; ++i) w.bits(i, precode_lens[kPerm[i]], 3);
  // Code-length symbols round-robin from lane 0.
  const std::vector<Code> pre = canonical_codes(precode_lens);
  unsigned k = 0;
  for (const ClSym& c : cl_syms) w.code(k++ % 32, pre[c.sym], c.extra, kExtraBits[c.sym]);
}

DynamicCodes dynamic_header(GdfWriter& w, bool final, const std::vector<uint8_t>& litlen_lens,
                            const std::vector<uint8_t>& dist_lens, const std::vector<uint8_t>& precode_lens,
                            unsigned hclen_count) {
  std::vector<ClSym> syms;
  for (uint8_t l : litlen_lens) syms.push_back({l});
  for (uint8_t l : dist_lens) syms.push_back({l});
  dynamic_tables(w, final, static_cast<unsigned>(litlen_lens.size()), static_cast<unsigned>(dist_lens.size()),
                 precode_lens, syms, hclen_count);
  return {canonical_codes(litlen_lens), canonical_codes(dist_lens)};
}

}  // namespace gdfs::test
