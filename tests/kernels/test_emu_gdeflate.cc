// The CUDA GDeflate decoder's device code, run on the CPU by the warp emulator: it must give the CPU
// decoder's bytes and status on every public vector, on our encoder's pages, and on corrupt pages,
// in both lane orders (a difference between orders means a missing syncwarp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "emu/warp_emu.h"
#include "gdeflate_warp.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

using gpu::emu::Order;

struct EmuOut {
  PageStatus result = PageStatus::kNotRun;
  Bytes out;
};

// Runs the warp decoder on exactly-sized buffers (ASan sees any byte outside them), with shared memory
// full of garbage so that a read of anything the decoder did not write shows up as a difference.
EmuOut emu_decode(const Bytes& page, size_t out_size, Order order, size_t misalign = 0) {
  // The page ends exactly at the end of its allocation and starts `misalign` bytes into it.
  ExactBuf storage(page.size() + misalign);
  std::copy(page.begin(), page.end(), storage.data() + misalign);
  const uint8_t* in = storage.data() + misalign;
  ExactBuf out(out_size);
  std::memset(out.data(), 0xEE, out_size);
  auto sm = std::make_unique<gpu::GdeflateSmem>();
  std::memset(static_cast<void*>(sm.get()), 0xA5, sizeof(gpu::GdeflateSmem));
  gpu::DevicePage p{in,
                    out.data(),
                    static_cast<uint32_t>(page.size()),
                    static_cast<uint32_t>(out_size),
                    format::kCodecGDeflate,
                    0,
                    0,
                    0};
  PageStatus results[32];
  const std::string err =
      gpu::emu::run_warp([&] { results[gpu::simt::lane_id()] = gpu::gdeflate_decode_warp(p, *sm); }, order);
  EXPECT_EQ(err, "");
  for (int l = 1; l < 32; ++l) EXPECT_EQ(results[l], results[0]) << "lanes disagree on the result";
  return {results[0], out.bytes()};
}

// Compares the emulated kernel with the CPU's scalar decoder, in both lane orders.
void check_page(const Bytes& page, size_t out_size, const std::string& what) {
  PageStatus want;
  const Bytes cpu = decode(page, out_size, &want, gdeflate::DecodePath::kScalar);
  for (Order order : {Order::kForward, Order::kReverse}) {
    const EmuOut got = emu_decode(page, out_size, order);
    ASSERT_EQ(got.result, want) << what << (order == Order::kReverse ? " (reverse order)" : "");
    if (want == PageStatus::kOk) {
      ASSERT_TRUE(got.out == cpu) << what << ": bytes differ";
    }
  }
}

// The warp decoder computes each symbol's value and extra-bit count instead of loading the DEFLATE64
// tables (device code has no constant tables); both must say the same for every symbol.
TEST(EmuGdeflate, SymbolValuesMatchTheDeflate64Tables) {
  namespace gd = gdfs::gdeflate;
  using gpu::gdw::Alphabet;
  for (unsigned s = 0; s < gd::kNumLitlenSyms; ++s) {
    const uint32_t e = gpu::gdw::symbol_entry(Alphabet::kLitlen, s);
    if (s < 256) {
      EXPECT_EQ(e, gd::make_entry(s, 0, gd::kEntryLiteral)) << s;
    } else if (s == gd::kEob) {
      EXPECT_EQ(e, gd::kEntryEob);
    } else if (s >= gd::kNumUsableLitlen) {
      EXPECT_EQ(e, gd::kEntryBad) << s;
    } else {
      EXPECT_EQ(gd::entry_value(e), gd::kLenBase[s - 257]) << s;
      EXPECT_EQ(gd::entry_extra(e), gd::kLenExtra[s - 257]) << s;
    }
  }
  for (unsigned s = 0; s < gd::kNumDistSyms; ++s) {
    const uint32_t e = gpu::gdw::symbol_entry(Alphabet::kDist, s);
    EXPECT_EQ(gd::entry_value(e), gd::kDistBase[s]) << s;
    EXPECT_EQ(gd::entry_extra(e), gd::kDistExtra[s]) << s;
  }
}

TEST(EmuGdeflate, EveryPublicVector) {
  const auto all = read_manifest(vectors_dir() + "/MANIFEST.tsv");
  ASSERT_GE(all.size(), 50u);
  int ok = 0;
  for (const VectorCase& c : all) {
    Bytes raw, gdf;
    ASSERT_TRUE(read_file(c.raw_path(), &raw));
    ASSERT_TRUE(read_file(c.gdf_path(), &gdf));
    const EmuOut got = emu_decode(gdf, raw.size(), Order::kForward);
    ASSERT_EQ(got.result, PageStatus::kOk) << c.name << " L" << c.level;
    ASSERT_TRUE(got.out == raw) << c.name << " L" << c.level;
    ++ok;
  }
  EXPECT_EQ(ok, static_cast<int>(all.size()));
}

TEST(EmuGdeflate, VectorsInReverseOrderAndMisaligned) {
  const auto all = read_manifest(vectors_dir() + "/MANIFEST.tsv");
  for (size_t i = 0; i < all.size(); i += 7) {
    Bytes raw, gdf;
    ASSERT_TRUE(read_file(all[i].raw_path(), &raw));
    ASSERT_TRUE(read_file(all[i].gdf_path(), &gdf));
    const EmuOut rev = emu_decode(gdf, raw.size(), Order::kReverse, 1);
    ASSERT_EQ(rev.result, PageStatus::kOk) << all[i].name;
    ASSERT_TRUE(rev.out == raw) << all[i].name;
  }
}

// Text-like data with long and short repeats, so pages mix literals, short and long matches,
// overlapping copies and several Huffman blocks.
Bytes texty(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  static const char* words[] = {"gdfs ", "page ", "warp ", "lane ", "decode ", "the ", "of ", "\n", "0123 "};
  Bytes b;
  while (b.size() < n) {
    const uint64_t r = rng();
    if (r % 17 == 0 && b.size() > 300) {  // a long repeat from far back
      const size_t from = rng() % (b.size() - 200), len = 20 + rng() % 400;
      for (size_t k = 0; k < len && b.size() < n; ++k) b.push_back(b[from + k]);
    } else if (r % 29 == 0) {
      const size_t len = rng() % 3000;  // a run: overlapping copies with distance 1
      for (size_t k = 0; k < len && b.size() < n; ++k) b.push_back('z');
    } else {
      for (const char* w = words[r % 9]; *w && b.size() < n; ++w) b.push_back(static_cast<uint8_t>(*w));
    }
  }
  return b;
}

TEST(EmuGdeflate, OurEncoderAcrossLevelsAndSizes) {
  const size_t sizes[] = {0, 1, 31, 32, 33, 100, 4096, 10000, 65535, 65536};
  const int levels[] = {0, 1, 6, 12};
  uint64_t seed = 1;
  for (int level : levels) {
    gdeflate::Compressor c(level);
    for (size_t n : sizes) {
      for (const Bytes& raw : {texty(n, seed), random_bytes(n, seed), Bytes(n, 0)}) {
        const Bytes page = encode(c, raw);
        check_page(page, raw.size(), "level " + std::to_string(level) + " size " + std::to_string(n));
        ++seed;
      }
    }
  }
}

TEST(EmuGdeflate, RealFiles) {
  // This machine's own binaries and headers: real, varied data no one made for this test.
  const char* files[] = {"/usr/include/stdio.h", "/bin/ls", "/usr/include/unistd.h"};
  gdeflate::Compressor c(6);
  int pages = 0;
  for (const char* f : files) {
    Bytes all;
    if (!read_file(f, &all)) continue;
    for (size_t off = 0; off < all.size() && off < 4 * 65536; off += 65536) {
      const Bytes raw(all.begin() + static_cast<ptrdiff_t>(off),
                      all.begin() + static_cast<ptrdiff_t>(std::min(all.size(), off + 65536)));
      check_page(encode(c, raw), raw.size(), std::string(f) + " @" + std::to_string(off));
      ++pages;
    }
  }
  EXPECT_GT(pages, 2);
}

TEST(EmuGdeflate, WrongSizesAndShapes) {
  gdeflate::Compressor c(6);
  const Bytes raw = texty(20000, 7);
  const Bytes page = encode(c, raw);
  check_page(page, raw.size() - 1, "one byte short");
  check_page(page, raw.size() + 1, "one byte long");
  check_page(page, 0, "zero");
  check_page(Bytes(page.begin(), page.end() - 4), raw.size(), "truncated by a word");
  Bytes longer = page;
  longer.insert(longer.end(), 4, 0);
  check_page(longer, raw.size(), "a trailing word");
  check_page(Bytes(page.begin(), page.end() - 1), raw.size(), "not a multiple of 4");
  check_page(Bytes(64, 0), raw.size(), "shorter than the lane words");
  const EmuOut big = emu_decode(page, 65537, Order::kForward);
  EXPECT_EQ(big.result, PageStatus::kSizeMismatch);
}

TEST(EmuGdeflate, CorruptPagesMatchTheCpu) {
  std::mt19937_64 rng(42);
  gdeflate::Compressor c(9);
  int differing = 0;
  for (int round = 0; round < 40; ++round) {
    const Bytes raw =
        round % 2 ? texty(2000 + rng() % 30000, rng()) : random_bytes(500 + rng() % 3000, rng());
    Bytes page = encode(c, raw);
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) page[rng() % page.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    check_page(page, raw.size(), "flipped page " + std::to_string(round));
    PageStatus s;
    decode(page, raw.size(), &s, gdeflate::DecodePath::kScalar);
    differing += s != PageStatus::kOk;
  }
  EXPECT_GT(differing, 10) << "the corruptions should mostly be detected by the codec itself";
}

TEST(EmuGdeflate, GarbagePages) {
  std::mt19937_64 rng(9);
  for (int round = 0; round < 60; ++round) {
    const size_t n = 128 + 4 * (rng() % 600);
    check_page(random_bytes(n, rng()), rng() % 65537, "garbage " + std::to_string(round));
  }
}

}  // namespace
}  // namespace gdfs::test
