#include "gdfs/page_encode.h"

#include <fnmatch.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "gdfs/format.h"
#include "gdfs/x86_filter.h"

namespace gdfs::page {

std::optional<CodecChoice> parse_codec(std::string_view name) {
  if (name == "gdeflate") return CodecChoice::kGDeflate;
  if (name == "bitpack") return CodecChoice::kBitpack;
  if (name == "auto") return CodecChoice::kAuto;
  return std::nullopt;
}

const char* codec_choice_name(CodecChoice c) {
  switch (c) {
    case CodecChoice::kGDeflate:
      return "gdeflate";
    case CodecChoice::kBitpack:
      return "bitpack";
    case CodecChoice::kAuto:
      return "auto";
  }
  return "?";
}

CodecChoice codec_for(const std::vector<CodecRule>& rules, const std::string& rel, CodecChoice fallback) {
  const size_t slash = rel.rfind('/');
  const std::string base = slash == std::string::npos ? rel : rel.substr(slash + 1);
  CodecChoice c = fallback;
  for (const CodecRule& r : rules)
    if (fnmatch(r.glob.c_str(), rel.c_str(), 0) == 0 || fnmatch(r.glob.c_str(), base.c_str(), 0) == 0)
      c = r.codec;
  return c;
}

const std::vector<bitpack::Params>& bitpack_candidates() {
  using bitpack::Mode, bitpack::Type;
  static const std::vector<bitpack::Params> kCandidates = {
      {Type::kInt16, Mode::kOutlier, 32, 1},
      {Type::kInt16, Mode::kOutlier, 32, 2},
      {Type::kInt32, Mode::kOutlier, 32, 1},
  };
  return kCandidates;
}

unsigned guess_interleave(const uint8_t* in, size_t n) {
  constexpr size_t kProbe = 2048;  // samples: enough to see the pattern, cheap next to one size pass
  const size_t count = std::min(n / 2, kProbe);
  std::vector<int16_t> x(count);
  if (count) std::memcpy(x.data(), in, count * 2);
  unsigned best = 1;
  uint64_t best_bits = UINT64_MAX;
  for (unsigned s = 1; s <= bitpack::kMaxStride && s < count; ++s) {
    uint64_t bits = 0;  // the bits the differences need: what the bit-plane coder pays, roughly
    for (size_t i = s; i < count; ++i) {
      const int d = x[i] - x[i - s];
      bits += static_cast<unsigned>(std::bit_width(static_cast<unsigned>(d < 0 ? -d : d)));
    }
    if (bits < best_bits) best = s, best_bits = bits;
  }
  return best;
}

BitpackGuess best_bitpack(const uint8_t* in, size_t n) {
  BitpackGuess best;
  auto consider = [&](const bitpack::Params& p) {
    const size_t size = bitpack::compressed_size(in, n, p);
    if (best.size == 0 || size < best.size) best = {p, size};
  };
  for (const bitpack::Params& p : bitpack_candidates()) consider(p);
  // Interleaved data with more than two channels (multichannel audio, ECG leads, image rows of a few
  // pixels): its own stride, found by a cheap probe, as one more candidate. Its blocks hold at least 8
  // samples per channel, so that the `s` whole first samples of each block (the outliers) do not swamp
  // it; the refinement below tries the other sizes.
  if (const unsigned s = guess_interleave(in, n); s > 2) {
    const uint16_t block = s <= 4 ? 32 : (s <= 8 ? 64 : 128);
    consider({bitpack::Type::kInt16, bitpack::Mode::kOutlier, block, static_cast<uint8_t>(s)});
  }
  // Refine the winner: the other block sizes, then plain mode. 4 more size passes, no more. Every size
  // here has a vector decode path (AVX-512, AVX2), so the smallest simply wins; on real audio that is
  // mostly 64 and 128 (bench/results/2026-11-21-bitpack-3-vm.txt).
  const bitpack::Params first = best.params;
  for (const uint16_t block : {uint16_t{16}, uint16_t{32}, uint16_t{64}, uint16_t{128}}) {
    if (block == first.block || first.stride >= block) continue;
    bitpack::Params q = first;
    q.block = block;
    const size_t size = bitpack::compressed_size(in, n, q);
    if (size < best.size) best = {q, size};
  }
  bitpack::Params q = best.params;
  q.mode = bitpack::Mode::kPlain;
  const size_t size = bitpack::compressed_size(in, n, q);
  if (size < best.size) best = {q, size};
  return best;
}

namespace {

// A page is stored raw when its estimated saving is under 1/kSkipFraction of it. 1/128 loses 0.04% of
// the image on the CUDA libraries and on web pages (the pages a full parse would have shrunk a little),
// nothing on source trees, and skips 62% of the CUDA pages (bench/results/2026-11-23-incompressible-vm.txt).
constexpr size_t kSkipFraction = 128;
// What a repeat of L >= 8 bytes saves, per byte, in the estimate: a DEFLATE match costs about 3 bytes.
constexpr double kMatchSaving = 0.6;

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Byte counts for an order-0 entropy bound. Four tables, so that runs of one byte value do not
// serialise on one counter.
struct Histogram {
  uint32_t h[4][256] = {};
  size_t n = 0;

  void add(const uint8_t* in, size_t len) {
    size_t i = 0;
    for (; i + 4 <= len; i += 4) ++h[0][in[i]], ++h[1][in[i + 1]], ++h[2][in[i + 2]], ++h[3][in[i + 3]];
    for (; i < len; ++i) ++h[0][in[i]];
    n += len;
  }
  // What an order-0 coder (Huffman, at best) saves per byte, as a fraction of the byte: 1 - H/8.
  double literal_saving() const {
    double bits = 0;
    for (int b = 0; b < 256; ++b) {
      const uint32_t c = h[0][b] + h[1][b] + h[2][b] + h[3][b];
      if (c) bits -= c * std::log2(static_cast<double>(c) / static_cast<double>(n));
    }
    return 1 - bits / static_cast<double>(n) / 8;
  }
};

// The page's first bytes decide alone when they are clearly compressible. A sample's entropy estimate
// runs low (16 KiB of random bytes read as 7.99 bits per byte), so this exit can only send a page to
// the parser, never store one that the full count would not.
constexpr size_t kSampleBytes = 16384;

}  // namespace

bool looks_incompressible(const uint8_t* in, size_t n) {
  if (n < 64 || n > gdeflate::kMaxPageBytes) return false;
  const double target = static_cast<double>(n) / kSkipFraction;
  // Text, code and tables end here, most after the sample.
  Histogram hist;
  const size_t sample = std::min(n, kSampleBytes);
  hist.add(in, sample);
  if (hist.literal_saving() * static_cast<double>(n) >= target) return false;
  hist.add(in + sample, n - sample);
  const double literal_saving = hist.literal_saving();
  if (literal_saving * static_cast<double>(n) >= target) return false;
  // A greedy pass over repeats of 8 bytes or more (hashing 6), stopping as soon as the estimate
  // reaches the target. Positions fit 16 bits; 0xFFFF marks an empty slot (no page is that long and
  // still has 8 bytes after it).
  constexpr unsigned kHashBits = 13;
  uint16_t table[1u << kHashBits];
  std::memset(table, 0xFF, sizeof table);
  size_t matched = 0;
  for (size_t i = 0; i + 8 <= n;) {
    const uint64_t v = load64(in + i);
    const auto h = static_cast<uint32_t>(((v << 16) * 0x9E3779B97F4A7C15ull) >> (64 - kHashBits));
    const size_t c = table[h];
    table[h] = static_cast<uint16_t>(i);
    if (c == 0xFFFF || load64(in + c) != v) {
      ++i;
      continue;
    }
    size_t len = 8;
    while (i + len < n && in[c + len] == in[i + len]) ++len;
    matched += len;
    i += len;
    const double estimate =
        literal_saving * static_cast<double>(n - matched) + kMatchSaving * static_cast<double>(matched);
    if (estimate >= target) return false;
  }
  return true;
}

namespace {

void encode_bitpack(const std::vector<uint8_t>& raw, const BitpackGuess& g, Encoded& out) {
  out.bytes.resize(g.size);
  if (bitpack::compress(raw.data(), raw.size(), g.params, out.bytes.data(), g.size) != g.size)
    throw std::logic_error("bitpack encoder disagrees with its own size");
  out.codec = format::kCodecBitpack;
  out.param = bitpack::to_param(g.params);
}

// GDeflate into out.bytes, after the x86 branch filter when `x86_filter` and the page looks like x86
// machine code; returns its size (compress_bound always suffices).
size_t encode_gdeflate(const std::vector<uint8_t>& raw, gdeflate::Compressor& comp, bool x86_filter,
                       Encoded& out) {
  const uint8_t* in = raw.data();
  out.codec = format::kCodecGDeflate;
  thread_local std::vector<uint8_t> filtered;
  if (x86_filter && x86::looks_like_code(raw.data(), raw.size())) {
    filtered.assign(raw.begin(), raw.end());
    x86::encode(filtered.data(), filtered.size());
    in = filtered.data();
    out.codec = format::kCodecGDeflateX86;
  }
  out.bytes.resize(gdeflate::compress_bound(raw.size()));
  const size_t n = comp.compress(in, raw.size(), out.bytes.data(), out.bytes.size());
  if (n == 0) throw std::logic_error("GDeflate compressor exceeded compress_bound");
  out.bytes.resize(n);
  out.param = 0;
  return n;
}

}  // namespace

void encode_page(const std::vector<uint8_t>& raw, CodecChoice choice, gdeflate::Compressor& comp,
                 Encoded& out, bool x86_filter) {
  size_t best = raw.size();  // stored, unless something is smaller
  out = {format::kCodecStored, 0, {}};
  const bool try_gdeflate =
      choice != CodecChoice::kBitpack &&
      !(comp.level() <= kMaxShortcutLevel && looks_incompressible(raw.data(), raw.size()));
  if (try_gdeflate) {
    const size_t n = encode_gdeflate(raw, comp, x86_filter, out);
    if (n < best) {
      best = n;
    } else {
      out = {format::kCodecStored, 0, {}};
    }
  }
  if (choice != CodecChoice::kGDeflate) {
    const BitpackGuess g = best_bitpack(raw.data(), raw.size());
    if (g.size < best) encode_bitpack(raw, g, out);  // strictly smaller: ties keep GDeflate or stored
  }
}

}  // namespace gdfs::page
