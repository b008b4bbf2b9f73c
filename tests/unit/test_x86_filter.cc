// The x86 branch filter (gdfs/x86_filter.h): worked examples of its definition, agreement with a
// plain reading of that definition on every path (scalar, AVX2 and AVX-512 scans, and their scalar tails),
// exact inversion for any bytes, and the page codec that uses it (codec 4 through PageDecoder, encode_page's
// choice).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/page.h"
#include "gdfs/page_encode.h"
#include "gdfs/x86_filter.h"
#include "x86_filter_paths.h"

namespace gdfs {
namespace {

using Bytes = std::vector<uint8_t>;

// The definition, read literally: the oracle every path is held to.
size_t reference(Bytes& b, int direction) {
  size_t sites = 0;
  long last_op = -100;  // the last E8/E9 byte passed over since the last site
  for (size_t i = 0; i + 5 <= b.size();) {
    const bool opcode = b[i] == 0xE8 || b[i] == 0xE9;
    if (opcode && (b[i + 4] == 0x00 || b[i + 4] == 0xFF) && static_cast<long>(i) - last_op > 3) {
      uint32_t v = b[i + 1] | b[i + 2] << 8 | b[i + 3] << 16 | uint32_t{b[i + 4]} << 24;
      v = direction > 0 ? v + static_cast<uint32_t>(i + 5) : v - static_cast<uint32_t>(i + 5);
      v &= 0x01FFFFFF;
      if (v & 0x01000000) v |= 0xFE000000;
      for (int k = 0; k < 4; ++k) b[i + 1 + k] = static_cast<uint8_t>(v >> (8 * k));
      ++sites;
      i += 5;
      last_op = -100;
    } else {
      if (opcode) last_op = static_cast<long>(i);
      ++i;
    }
  }
  return sites;
}

// Bytes dense in opcodes and 00/FF, so that sites overlap, chain and straddle every 32-byte block.
Bytes dense(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  static constexpr uint8_t kPick[] = {0xE8, 0xE9, 0x00, 0xFF, 0x90};
  Bytes b(n);
  for (auto& x : b) x = rng() % 3 ? kPick[rng() % 5] : static_cast<uint8_t>(rng());
  return b;
}

// Calls from many places to a few functions: what the filter is for.
Bytes call_heavy_code(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  const uint32_t targets[] = {0x1200, 0x7F00, 0xA000, 0x3340};
  for (size_t i = 0; i < n;) {
    if (i + 5 <= n && rng() % 3 == 0) {
      const uint32_t rel = targets[rng() % 4] - static_cast<uint32_t>(i + 5);
      b[i] = 0xE8;
      std::memcpy(&b[i + 1], &rel, 4);
      i += 5;
    } else {
      b[i++] = static_cast<uint8_t>(0x40 + rng() % 8);  // a few register moves
    }
  }
  return b;
}

Bytes encoded(Bytes b) {
  x86::encode(b.data(), b.size());
  return b;
}
Bytes decoded(Bytes b) {
  x86::decode(b.data(), b.size());
  return b;
}

TEST(X86Filter, WorkedExamples) {
  // A call 16 bytes ahead, at position 0: 0x10 + 5.
  EXPECT_EQ(encoded({0xE8, 0x10, 0x00, 0x00, 0x00}), (Bytes{0xE8, 0x15, 0x00, 0x00, 0x00}));
  // A jump 16 bytes back, at position 1: -16 + 6 = -10.
  EXPECT_EQ(encoded({0x90, 0xE9, 0xF0, 0xFF, 0xFF, 0xFF}), (Bytes{0x90, 0xE9, 0xF6, 0xFF, 0xFF, 0xFF}));
  // The sum leaves 25 bits and wraps: 0x00FFFFFF + 5 keeps its low 25 bits, bit 24 sign-extended.
  EXPECT_EQ(encoded({0xE8, 0xFF, 0xFF, 0xFF, 0x00}), (Bytes{0xE8, 0x04, 0x00, 0x00, 0xFF}));
  EXPECT_EQ(decoded({0xE8, 0x04, 0x00, 0x00, 0xFF}), (Bytes{0xE8, 0xFF, 0xFF, 0xFF, 0x00}));
  // Not sites: a far displacement (top byte 0x12), a site cut off by the end, an opcode inside a site.
  EXPECT_EQ(encoded({0xE8, 0x00, 0x00, 0x00, 0x12}), (Bytes{0xE8, 0x00, 0x00, 0x00, 0x12}));
  EXPECT_EQ(encoded({0x90, 0xE8, 0x00, 0x00, 0x00}), (Bytes{0x90, 0xE8, 0x00, 0x00, 0x00}));
  EXPECT_EQ(encoded({0xE8, 0xE8, 0x00, 0x00, 0x00, 0x00}), (Bytes{0xE8, 0xED, 0x00, 0x00, 0x00, 0x00}));
  EXPECT_EQ(x86::count_sites(Bytes{0xE8, 0xE8, 0x00, 0x00, 0x00, 0x00}.data(), 6), 1u);
  // An opcode that is not a site (its byte 4 is 0x12) bars a site in the 3 bytes after it: otherwise
  // that site could rewrite the 0x12 into 00 or FF, and decode would see a site encode did not.
  const Bytes barred{0xE8, 0x90, 0xE8, 0x00, 0x12, 0x00, 0x00, 0x90};
  EXPECT_EQ(encoded(barred), barred);
  EXPECT_EQ(encoded({0xE8, 0x90, 0x90, 0x90, 0x12, 0xE8, 0x01, 0x00, 0x00, 0x00}),
            (Bytes{0xE8, 0x90, 0x90, 0x90, 0x12, 0xE8, 0x0B, 0x00, 0x00, 0x00}));  // 4 bytes on: free
}

TEST(X86Filter, EveryPathFollowsTheDefinition) {
  const std::pair<x86::ScanPath, const char*> paths[] = {
      {x86::ScanPath::kScalar, "scalar"}, {x86::ScanPath::kAvx2, "avx2"}, {x86::ScanPath::kAvx512, "avx512"}};
  for (const auto& [path, name] : paths)
    if (!x86::path_usable(path))
      std::printf("note: this CPU has no %s: that path is not tested here\n", name);
  uint32_t seed = 1;
  for (size_t n : {0, 1, 4, 5, 6, 31, 32, 35, 36, 37, 63, 64, 68, 69, 100, 255, 4096, 65535, 65536}) {
    for (int rep = 0; rep < 6; ++rep, ++seed) {
      // Noise (few sites), sites packed and barred (the scan's slow path), and code-like pages whose
      // sites stand apart (its fast path).
      const Bytes in = rep % 3 == 1   ? dense(n, seed)
                       : rep % 3 == 2 ? call_heavy_code(n, seed)
                                      : [&] {
                                          std::mt19937 rng(seed);
                                          Bytes b(n);
                                          for (auto& x : b) x = static_cast<uint8_t>(rng());
                                          return b;
                                        }();
      Bytes want = in;
      const size_t sites = reference(want, +1);
      Bytes back = in;
      reference(back, -1);
      EXPECT_EQ(x86::count_sites(in.data(), in.size()), sites) << n;
      EXPECT_EQ(encoded(in), want) << "encode, n=" << n << " seed=" << seed;
      EXPECT_EQ(decoded(in), back) << "decode, n=" << n << " seed=" << seed;
      for (const auto& [path, name] : paths) {
        if (!x86::path_usable(path)) continue;
        Bytes e = in, d = in, c = in;
        EXPECT_EQ(x86::run_path(path, +1, e.data(), e.size()), sites) << name << " n=" << n;
        EXPECT_EQ(e, want) << name << " encode, n=" << n << " seed=" << seed;
        EXPECT_EQ(x86::run_path(path, -1, d.data(), d.size()), reference(c, -1)) << name;
        EXPECT_EQ(d, back) << name << " decode, n=" << n << " seed=" << seed;
        EXPECT_EQ(x86::run_path(path, 0, c.data(), c.size()), sites) << name << " count, n=" << n;
      }
    }
  }
}

TEST(X86Filter, EachDirectionUndoesTheOther) {
  for (uint32_t seed = 100; seed < 140; ++seed) {
    const Bytes in = dense(1000 + seed * 37, seed);
    EXPECT_EQ(decoded(encoded(in)), in) << seed;
    EXPECT_EQ(encoded(decoded(in)), in) << seed;
  }
}

TEST(X86Filter, LooksLikeCodeTellsCodeFromData) {
  const Bytes code = call_heavy_code(65536, 7);
  EXPECT_TRUE(x86::looks_like_code(code.data(), code.size()));
  Bytes text(65536);
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<uint8_t>("the quick brown fox "[i % 20]);
  EXPECT_FALSE(x86::looks_like_code(text.data(), text.size()));
  std::mt19937 rng(3);
  Bytes noise(65536);
  for (auto& x : noise) x = static_cast<uint8_t>(rng());
  EXPECT_FALSE(x86::looks_like_code(noise.data(), noise.size()));
  EXPECT_FALSE(x86::looks_like_code(code.data(), x86::kCodeBytesPerSite - 1));  // too short to judge
}

TEST(X86Filter, CodePagesGetCodec4AndDecodeBack) {
  gdeflate::Compressor comp(7);
  const Bytes code = call_heavy_code(65536, 11);
  page::Encoded plain, filtered;
  page::encode_page(code, page::CodecChoice::kGDeflate, comp, plain, false);
  page::encode_page(code, page::CodecChoice::kGDeflate, comp, filtered, true);
  ASSERT_EQ(plain.codec, format::kCodecGDeflate);
  ASSERT_EQ(filtered.codec, format::kCodecGDeflateX86);
  EXPECT_LT(filtered.bytes.size(), plain.bytes.size());  // ten calls to one function, one string

  format::PageEntry e{};
  e.codec = filtered.codec;
  e.csize = static_cast<uint32_t>(filtered.bytes.size());
  e.usize = static_cast<uint32_t>(code.size());
  e.ccheck = checksum32(filtered.bytes.data(), e.csize);
  e.ucheck = checksum32(code.data(), code.size());
  PageDecoder dec;
  Bytes out(code.size());
  ASSERT_EQ(dec.decode(e, filtered.bytes.data(), out.data()), PageStatus::kOk);
  EXPECT_EQ(out, code);
  // The same stream read as plain GDeflate gives the filtered bytes, which the checksum refuses.
  e.codec = format::kCodecGDeflate;
  EXPECT_EQ(dec.decode(e, filtered.bytes.data(), out.data()), PageStatus::kChecksum);
  EXPECT_EQ(codec_name(format::kCodecGDeflateX86), "gdeflate-x86");

  // Text never gets the filter, asked or not.
  const Bytes text(20000, 'a');
  page::encode_page(text, page::CodecChoice::kGDeflate, comp, filtered, true);
  EXPECT_EQ(filtered.codec, format::kCodecGDeflate);
}

}  // namespace
}  // namespace gdfs
