// The public reference vectors (tests/data/gdeflate): every page must decode exactly, and the
// decoder must refuse the wrong size, trailing words and sizes that are not a multiple of 4.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>

#include "test_util.h"

namespace gdfs::test {
namespace {

std::vector<VectorCase> cases() {
  return read_manifest(vectors_dir() + "/MANIFEST.tsv");
}

uint32_t crc32_of(const Bytes& b) {
  return static_cast<uint32_t>(::crc32(::crc32(0, nullptr, 0), b.data(), static_cast<uInt>(b.size())));
}

struct Loaded {
  Bytes raw, gdf;
};

Loaded load(const VectorCase& c) {
  Loaded l;
  EXPECT_TRUE(read_file(c.raw_path(), &l.raw)) << c.raw_path();
  EXPECT_TRUE(read_file(c.gdf_path(), &l.gdf)) << c.gdf_path();
  return l;
}

// The vectors ship in the repository (tests/data/gdeflate): a missing directory is a failure,
// not a skip, or the whole suite would pass vacuously.
TEST(Vectors, DirectoryAndManifestExist) {
  ASSERT_TRUE(std::filesystem::is_directory(vectors_dir())) << vectors_dir();
  const auto all = cases();
  EXPECT_GE(all.size(), 50u) << "manifest looks truncated";
}

TEST(Vectors, FilesMatchManifest) {
  for (const VectorCase& c : cases()) {
    const Loaded l = load(c);
    EXPECT_EQ(l.raw.size(), c.raw_bytes) << c.name;
    EXPECT_EQ(l.gdf.size(), c.gdf_bytes) << c.gdf_path();
    EXPECT_EQ(crc32_of(l.raw), c.crc32) << c.name;
  }
}

class VectorsByPath : public ::testing::TestWithParam<gdeflate::DecodePath> {};

TEST_P(VectorsByPath, EveryVectorDecodesExactly) {
  gdeflate::Decompressor d(GetParam());  // one object for all pages: no state may leak between them
  int ok = 0;
  for (const VectorCase& c : cases()) {
    const Loaded l = load(c);
    ExactBuf in(l.gdf), out(c.raw_bytes);
    const PageStatus s = d.decompress(in.data(), in.size(), out.data(), out.size());
    EXPECT_EQ(s, PageStatus::kOk) << c.gdf_path() << ": " << page_status_message(s);
    if (s != PageStatus::kOk) continue;
    EXPECT_EQ(crc32_of(out.bytes()), c.crc32) << c.gdf_path();
    EXPECT_TRUE(out.bytes() == l.raw) << c.gdf_path();
    ++ok;
  }
  EXPECT_GT(ok, 0);
}

TEST_P(VectorsByPath, UnalignedInputDecodes) {
  // The API takes a void*: the CPU decoder must not assume 4-byte aligned input.
  for (const VectorCase& c : cases()) {
    if (c.name != "man_65536" && c.name != "text_129" && c.name != "random_65536") continue;
    const Loaded l = load(c);
    for (size_t shift : {1, 2, 3}) {
      Bytes shifted(l.gdf.size() + shift);
      std::copy(l.gdf.begin(), l.gdf.end(), shifted.begin() + shift);
      ExactBuf out(c.raw_bytes);
      gdeflate::Decompressor d(GetParam());
      EXPECT_EQ(d.decompress(shifted.data() + shift, l.gdf.size(), out.data(), out.size()), PageStatus::kOk);
      EXPECT_TRUE(out.bytes() == l.raw) << c.gdf_path() << " shifted by " << shift;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, VectorsByPath, ::testing::ValuesIn(kPaths),
                         [](const auto& info) { return std::string(path_name(info.param)); });

TEST(Vectors, PathSelection) {
  EXPECT_EQ(gdeflate::Decompressor(gdeflate::DecodePath::kScalar).path(), gdeflate::DecodePath::kScalar);
  EXPECT_NE(gdeflate::Decompressor().path(), gdeflate::DecodePath::kAuto);
  const auto simd = gdeflate::Decompressor(gdeflate::DecodePath::kAvx512).path();
  EXPECT_NE(simd, gdeflate::DecodePath::kAuto);
  // Say which path ran, so a log from a CPU without AVX-512 shows the SIMD tests covered only scalar.
  std::printf("note: DecodePath::kAvx512 runs the %s decoder on this CPU\n", path_name(simd));
}

// docs/GDEFLATE.md: decoding short, overflowing, and an expected size over 64 KiB are kSizeMismatch.
TEST(Vectors, WrongExpectedSizeIsSizeMismatch) {
  for (const VectorCase& c : cases()) {
    const Bytes gdf = load(c).gdf;
    PageStatus s;
    decode_both(gdf, c.raw_bytes + 1, &s);
    EXPECT_EQ(s, PageStatus::kSizeMismatch) << c.gdf_path() << " +1";
    if (c.raw_bytes == 0) continue;
    decode_both(gdf, c.raw_bytes - 1, &s);
    EXPECT_EQ(s, PageStatus::kSizeMismatch) << c.gdf_path() << " -1";
    decode_both(gdf, 0, &s);
    EXPECT_EQ(s, PageStatus::kSizeMismatch) << c.gdf_path() << " into 0 bytes";
  }
}

TEST(Vectors, TrailingWordIsRejected) {
  // Our documented choice: every input word must be consumed, so an extra word is kBadData.
  for (const VectorCase& c : cases()) {
    Bytes gdf = load(c).gdf;
    gdf.insert(gdf.end(), 4, 0);
    PageStatus s;
    decode_both(gdf, c.raw_bytes, &s);
    EXPECT_EQ(s, PageStatus::kBadData) << c.gdf_path();
  }
}

TEST(Vectors, SizeNotMultipleOfFourIsRejected) {
  for (const VectorCase& c : cases()) {
    const Bytes gdf = load(c).gdf;
    for (size_t cut = 1; cut <= 3; ++cut) {
      PageStatus s;
      decode_both(Bytes(gdf.begin(), gdf.end() - cut), c.raw_bytes, &s);
      EXPECT_EQ(s, PageStatus::kBadData) << c.gdf_path() << " minus " << cut;
      Bytes longer = gdf;
      longer.insert(longer.end(), cut, 0);
      decode_both(longer, c.raw_bytes, &s);
      EXPECT_EQ(s, PageStatus::kBadData) << c.gdf_path() << " plus " << cut;
    }
  }
}

// A guard against encoder regressions: on the reference's own inputs, at the same levels, our pages
// are about as small as the reference's (they are ~0.3% smaller in total when this was written).
TEST(Vectors, CompressionComparableToReference) {
  size_t ours = 0, ref = 0;
  for (const VectorCase& c : cases()) {
    if (c.level == 0) continue;
    gdeflate::Compressor comp(c.level);
    const size_t n = encode(comp, load(c).raw).size();
    EXPECT_LE(n, c.gdf_bytes * 103 / 100 + 64) << c.gdf_path();
    ours += n;
    ref += c.gdf_bytes;
  }
  EXPECT_LE(ours, ref * 101 / 100) << "total over all vectors";
}

// DirectStorage tile containers (tilestream/): a test-only parse of the header and tile table, then
// every tile through the page decoder. Covers long runs of consecutive real pages.
TEST(Vectors, TileStreamsDecode) {
  const std::string dir = vectors_dir() + "/tilestream";
  const auto all = read_manifest(dir + "/MANIFEST.tsv");
  ASSERT_FALSE(all.empty()) << dir;
  for (const VectorCase& c : all) {
    Bytes file, raw;
    ASSERT_TRUE(read_file(dir + "/" + c.name + ".gdeflate", &file));
    ASSERT_TRUE(read_file(dir + "/" + c.name + ".raw", &raw));
    ASSERT_GE(file.size(), 8u);
    auto u32 = [&](size_t at) {
      return uint32_t{file[at]} | uint32_t{file[at + 1]} << 8 | uint32_t{file[at + 2]} << 16 |
             uint32_t{file[at + 3]} << 24;
    };
    const size_t tiles = file[2] | file[3] << 8;
    ASSERT_EQ(tiles, (raw.size() + 65535) / 65536) << c.name;
    const size_t data = 8 + 4 * tiles;
    for (size_t i = 0; i < tiles; ++i) {
      const size_t begin = data + (i ? u32(8 + 4 * i) : 0);
      const size_t end = i + 1 < tiles ? data + u32(8 + 4 * (i + 1)) : begin + u32(8);
      ASSERT_LE(end, file.size());
      const size_t out_size = std::min<size_t>(65536, raw.size() - 65536 * i);
      PageStatus s;
      const Bytes out = decode_both(Bytes(file.begin() + begin, file.begin() + end), out_size, &s);
      ASSERT_EQ(s, PageStatus::kOk) << c.name << " tile " << i;
      EXPECT_TRUE(std::equal(out.begin(), out.end(), raw.begin() + 65536 * i)) << c.name << " tile " << i;
    }
  }
}

}  // namespace
}  // namespace gdfs::test
