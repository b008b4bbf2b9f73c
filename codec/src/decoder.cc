// GDeflate page decoder. It walks the stream in the reference's round order: in each round every
// active lane decodes one symbol, in lane order, and refills right after its own step. Ordinary data
// rounds may run on AVX-512 (decoder_avx512.cc); everything else runs here.
#include <array>
#include <cstring>

#include "decode_table.h"
#include "decoder_rounds.h"
#include "gdfs/deflate64.h"
#include "gdfs/gdeflate.h"
#include "lane_reader.h"

namespace gdfs::gdeflate {
namespace {

uint32_t lookup(const uint32_t* table, unsigned table_bits, uint64_t bits) {
  uint32_t e = table[bits & ((1u << table_bits) - 1)];
  if (e & kEntryLong) e = table[entry_value(e) + ((bits >> table_bits) & ((1u << entry_extra(e)) - 1))];
  return e;
}

constexpr size_t kTablesSize = kLitlenTableSize + kDistTableSize;

}  // namespace

struct Decompressor::Impl {
  std::array<uint32_t, kTablesSize> dynamic_tables;  // litlen, then distance (decoder_rounds.h)
  std::array<uint32_t, kTablesSize> fixed_tables;
  std::array<uint32_t, kPrecodeTableSize> precode;
  DecodePath path;
  const SimdRounds* simd;  // the path's SIMD loops; null on the scalar path

  explicit Impl(DecodePath p) : path(pick_path(p)), simd(simd_rounds(path)) { build_fixed_tables(); }
  static DecodePath pick_path(DecodePath want) {
    if ((want == DecodePath::kAuto || want == DecodePath::kAvx512) && avx512_usable())
      return DecodePath::kAvx512;
    if (want != DecodePath::kScalar && avx2_usable()) return DecodePath::kAvx2;
    return DecodePath::kScalar;
  }
  static const SimdRounds* simd_rounds(DecodePath p) {
    if (p == DecodePath::kAvx512) return &kAvx512Rounds;
    return p == DecodePath::kAvx2 ? &kAvx2Rounds : nullptr;
  }
  void build_fixed_tables();
  PageStatus decode(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size);
  PageStatus decode_blocks(LaneReader& r, Output& o);
  PageStatus stored_block(LaneReader& r, Output& o);
  PageStatus read_dynamic_tables(LaneReader& r);
  PageStatus huffman_block(LaneReader& r, Output& o, const uint32_t* tables);
};

void Decompressor::Impl::build_fixed_tables() {
  std::array<uint8_t, 288> ll{};
  for (unsigned s = 0; s < 288; ++s) ll[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  std::array<uint8_t, 32> dl;
  dl.fill(5);
  uint32_t* t = fixed_tables.data();
  build_decode_table(ll.data(), 288, kLitlenSymEntries.data(), kLitlenTableBits, 15, t);
  build_decode_table(dl.data(), 32, kDistSymEntries.data(), kDistTableBits, 15, t + kLitlenTableSize);
}

// Stored block: a 16-bit LEN on lane 0 (no complement, no alignment), then byte k on lane k mod 32.
PageStatus Decompressor::Impl::stored_block(LaneReader& r, Output& o) {
  const uint32_t len = static_cast<uint32_t>(r.buf[0] & 0xFFFF);
  r.consume(0, 16);
  if (len > o.size - o.pos) return PageStatus::kSizeMismatch;
  uint32_t remaining = len;
  // Whole rounds, so the rest starts again at lane 0.
  if (simd) simd->stored(r, o, remaining);
  for (uint32_t k = 0; k < remaining; ++k) {
    const unsigned lane = k & 31;
    o.data[o.pos++] = static_cast<uint8_t>(r.buf[lane]);
    r.consume(lane, 8);
  }
  return r.overrun ? PageStatus::kBadData : PageStatus::kOk;
}

// Dynamic block tables: HLIT/HDIST/HCLEN on lane 0, one 3-bit precode length per lane, then the
// precode symbols round-robin from lane 0 (docs/GDEFLATE.md, "The page bitstream, in one page": Headers).
PageStatus Decompressor::Impl::read_dynamic_tables(LaneReader& r) {
  const uint32_t h = static_cast<uint32_t>(r.buf[0]);
  const unsigned hlit = (h & 31) + 257, hdist = ((h >> 5) & 31) + 1, hclen = ((h >> 10) & 15) + 4;
  r.consume(0, 14);
  if (hlit > kNumUsableLitlen) return PageStatus::kBadData;

  std::array<uint8_t, 19> plens{};
  for (unsigned i = 0; i < hclen; ++i) {
    plens[kPrecodePerm[i]] = static_cast<uint8_t>(r.buf[i] & 7);
    r.consume(i, 3);
  }
  if (!build_decode_table(plens.data(), 19, kPrecodeSymEntries.data(), kPrecodeTableBits, 7, precode.data()))
    return PageStatus::kBadData;

  std::array<uint8_t, 288 + 32> lens{};
  const unsigned total = hlit + hdist;
  unsigned k = 0;
  if (simd && simd->lengths) simd->lengths(r, precode.data(), lens.data(), total, k);  // whole rounds
  for (unsigned j = 0; k < total; ++j) {
    const unsigned lane = j & 31;
    const uint64_t bits = r.buf[lane];
    const uint32_t e = precode[bits & 127];
    if (e & kEntryBad) return PageStatus::kBadData;
    const uint32_t sym = entry_value(e), x = extra_value(e, bits);
    r.consume(lane, entry_codelen(e) + entry_extra(e));
    if (sym < 16) {
      lens[k++] = static_cast<uint8_t>(sym);
      continue;
    }
    if (sym == 16 && k == 0) return PageStatus::kBadData;
    const uint8_t fill = sym == 16 ? lens[k - 1] : 0;
    const unsigned rep = sym == 18 ? 11 + x : 3 + x;
    if (rep > total - k) return PageStatus::kBadData;
    for (unsigned i = 0; i < rep; ++i) lens[k++] = fill;
  }
  if (r.overrun) return PageStatus::kBadData;

  std::array<uint8_t, 288> ll{};
  std::array<uint8_t, 32> dl{};
  std::memcpy(ll.data(), lens.data(), hlit);
  std::memcpy(dl.data(), lens.data() + hlit, hdist);
  uint32_t* t = dynamic_tables.data();
  if (!build_decode_table(ll.data(), 288, kLitlenSymEntries.data(), kLitlenTableBits, 15, t) ||
      !build_decode_table(dl.data(), 32, kDistSymEntries.data(), kDistTableBits, 15, t + kLitlenTableSize))
    return PageStatus::kBadData;
  return PageStatus::kOk;
}

namespace {

// Decodes the distance lane `lane` owes and performs its copy.
PageStatus finish_match(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* dt, unsigned lane) {
  const uint64_t bits = r.buf[lane];
  const uint32_t e = lookup(dt, kDistTableBits, bits);
  if (e & kEntryBad) return PageStatus::kBadData;
  const uint32_t dist = entry_value(e) + extra_value(e, bits);
  r.consume(lane, entry_codelen(e) + entry_extra(e));
  if (dist > m.pos[lane]) return PageStatus::kBadData;  // reaches before the page start
  copy_match(o.data + m.pos[lane], dist, m.len[lane]);
  return PageStatus::kOk;
}

// One data round on the scalar path (docs/GDEFLATE.md, "The page bitstream, in one page": Data rounds).
// A lane that decodes a length reserves its output at once and decodes the distance on the next round;
// after end of block only owed distances are decoded. Sets `eob` when this round held the end-of-block
// symbol.
PageStatus scalar_round(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* tables, bool& eob) {
  const uint32_t* dt = tables + kLitlenTableSize;
  const uint32_t owed = m.pending;
  m.pending = 0;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (owed & (1u << lane)) {
      if (PageStatus s = finish_match(r, o, m, dt, lane); s != PageStatus::kOk) return s;
      continue;
    }
    if (eob) continue;
    const uint64_t bits = r.buf[lane];
    const uint32_t e = lookup(tables, kLitlenTableBits, bits);
    if (e & kEntryLiteral) {
      if (o.pos == o.size) return PageStatus::kSizeMismatch;
      o.data[o.pos++] = static_cast<uint8_t>(entry_value(e));
      r.consume(lane, entry_codelen(e));
    } else if (!(e & kEntrySpecial)) {
      const uint32_t len = entry_value(e) + extra_value(e, bits);
      r.consume(lane, entry_codelen(e) + entry_extra(e));
      if (len > o.size - o.pos) return PageStatus::kSizeMismatch;
      m.len[lane] = len;
      m.pos[lane] = static_cast<uint32_t>(o.pos);
      o.pos += len;
      m.pending |= 1u << lane;
    } else if (e & kEntryEob) {
      r.consume(lane, entry_codelen(e));
      eob = true;
    } else {
      return PageStatus::kBadData;  // unused code word, or symbol 286/287
    }
  }
  return r.overrun ? PageStatus::kBadData : PageStatus::kOk;
}

}  // namespace

PageStatus Decompressor::Impl::huffman_block(LaneReader& r, Output& o, const uint32_t* tables) {
  OwedMatches m;
  bool eob = false;
  while (!eob) {
    if (simd) simd->rounds(r, o, m, tables);
    if (PageStatus s = scalar_round(r, o, m, tables, eob); s != PageStatus::kOk) return s;
  }
  // Lanes before the end-of-block lane that decoded a length in its round get one more round.
  for (uint32_t p = m.pending; p; p &= p - 1) {
    if (PageStatus s = finish_match(r, o, m, tables + kLitlenTableSize, __builtin_ctz(p));
        s != PageStatus::kOk)
      return s;
  }
  return r.overrun ? PageStatus::kBadData : PageStatus::kOk;
}

PageStatus Decompressor::Impl::decode_blocks(LaneReader& r, Output& o) {
  bool final_block = false;
  while (!final_block) {
    const uint32_t hdr = static_cast<uint32_t>(r.buf[0] & 7);
    r.consume(0, 3);
    if (r.overrun) return PageStatus::kBadData;
    final_block = hdr & 1;
    PageStatus s = PageStatus::kBadData;
    switch (hdr >> 1) {
      case 0:
        s = stored_block(r, o);
        break;
      case 1:
        s = huffman_block(r, o, fixed_tables.data());
        break;
      case 2:
        s = read_dynamic_tables(r);
        if (s == PageStatus::kOk) s = huffman_block(r, o, dynamic_tables.data());
        break;
      default:
        break;  // BTYPE 3 is reserved
    }
    if (s != PageStatus::kOk) return s;
  }
  if (r.next != r.nwords) return PageStatus::kBadData;  // trailing words: see docs/GDEFLATE.md
  return o.pos == o.size ? PageStatus::kOk : PageStatus::kSizeMismatch;
}

PageStatus Decompressor::Impl::decode(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  if (out_size > kMaxPageBytes) return PageStatus::kSizeMismatch;
  if (in_size % 4 != 0 || in_size < 4 * kLanes) return PageStatus::kBadData;
  LaneReader r;
  r.init(in, in_size / 4);
  Output o{out, out_size, 0};
  return decode_blocks(r, o);
}

Decompressor::Decompressor(DecodePath path) : impl_(std::make_unique<Impl>(path)) {}
Decompressor::~Decompressor() = default;
Decompressor::Decompressor(Decompressor&&) noexcept = default;
Decompressor& Decompressor::operator=(Decompressor&&) noexcept = default;

PageStatus Decompressor::decompress(const void* in, size_t in_size, void* out, size_t out_size) {
  return impl_->decode(static_cast<const uint8_t*>(in), in_size, static_cast<uint8_t*>(out), out_size);
}

DecodePath Decompressor::path() const {
  return impl_->path;
}

}  // namespace gdfs::gdeflate
