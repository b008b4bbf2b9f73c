// The DirectStorage .gdeflate container: reference examples, round trips, determinism across thread
// counts, and refusal of every kind of inconsistent container.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "gdfs/gdeflate.h"
#include "gdfs/gdeflate_container.h"
#include "tools_test_util.h"

namespace gdfs::tools_test {
namespace {

namespace gd = gdfs::gdeflate;

uint32_t load_u32(const Bytes& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, &b[at], 4);  // containers are little-endian, as are the machines we run on
  return v;
}

void store_u32(Bytes& b, size_t at, uint32_t v) {
  std::memcpy(&b[at], &v, 4);
}

// --- reference examples ---

struct Example {
  const char* name;
  uint32_t tiles, last_tile_size;
};

void PrintTo(const Example& ex, std::ostream* os) {
  *os << ex.name;
}

class TilestreamExample : public testing::TestWithParam<Example> {};

TEST_P(TilestreamExample, DecodesToRaw) {
  const Example& ex = GetParam();
  const Bytes file = read_file(tilestream_dir() + "/" + ex.name + ".gdeflate");
  const Bytes raw = read_file(tilestream_dir() + "/" + ex.name + ".raw");
  ASSERT_FALSE(file.empty()) << "missing vector " << ex.name << " under " << tilestream_dir();
  const gd::ContainerInfo info = gd::parse_container(file);
  EXPECT_EQ(info.num_tiles, ex.tiles);
  EXPECT_EQ(info.last_tile_size, ex.last_tile_size);
  EXPECT_EQ(info.raw_size, raw.size());
  for (unsigned threads : {1u, 3u, 0u}) EXPECT_EQ(gd::decompress_container(file, threads), raw) << threads;
}

INSTANTIATE_TEST_SUITE_P(Vectors, TilestreamExample,
                         testing::Values(Example{"ts_text_elf_1mib", 16, 0},
                                         Example{"ts_headers_500001", 8, 41249},
                                         Example{"ts_mixed_200k", 4, 8541}),
                         [](const auto& info) { return std::string(info.param.name); });

// --- our containers ---

TEST(Container, EmptyInputIsHeaderOnly) {
  const Bytes c = gd::compress_container({}, 6, 1);
  EXPECT_EQ(c, (Bytes{4, 0xFB, 0, 0, 1, 0, 0, 0}));
  const gd::ContainerInfo info = gd::parse_container(c);
  EXPECT_EQ(info.num_tiles, 0u);
  EXPECT_EQ(info.raw_size, 0u);
  EXPECT_TRUE(gd::decompress_container(c).empty());
}

class RoundTrip : public testing::TestWithParam<int> {};

TEST_P(RoundTrip, SizesAndThreadCountsAgree) {
  const int level = GetParam();
  for (size_t n : {size_t{1}, size_t{65535}, size_t{65536}, size_t{65537}, size_t{3 * 65536 + 1234}}) {
    const Bytes data = mixed_data(n, static_cast<uint32_t>(n));
    const Bytes one = gd::compress_container(data, level, 1);
    const gd::ContainerInfo info = gd::parse_container(one);
    EXPECT_EQ(info.num_tiles, (n + 65535) / 65536);
    EXPECT_EQ(info.last_tile_size, n % 65536);
    EXPECT_EQ(info.raw_size, n);
    for (unsigned threads : {2u, 3u, 8u, 0u})
      EXPECT_EQ(gd::compress_container(data, level, threads), one) << "n=" << n << " threads=" << threads;
    for (unsigned threads : {1u, 4u}) EXPECT_EQ(gd::decompress_container(one, threads), data) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, RoundTrip, testing::Values(0, 1, 6, 9, 12));

TEST(Container, RefusesBadLevel) {
  EXPECT_THROW(gd::compress_container(Bytes(10), 13, 1), std::invalid_argument);
  EXPECT_THROW(gd::compress_container(Bytes(10), -1, 1), std::invalid_argument);
}

TEST(Container, RefusesInputOverMaximum) {
  const uint8_t byte = 0;
  // Never dereferenced: the size is checked before any tile is read.
  const std::span<const uint8_t> huge(&byte, gd::kMaxContainerInput + 1);
  EXPECT_THROW(gd::compress_container(huge, 1, 1), gd::ContainerError);
}

// 65535 one-byte tiles: the largest raw size must be computed without 32-bit overflow.
TEST(Container, MaximumTileCountRawSize) {
  const uint32_t n = 65535;
  Bytes c(8 + 4 * n + n);
  c[0] = 4, c[1] = 0xFB, c[2] = 0xFF, c[3] = 0xFF, c[4] = 1;
  store_u32(c, 8, 1);
  for (uint32_t i = 1; i < n; ++i) store_u32(c, 8 + 4 * i, i);
  const gd::ContainerInfo info = gd::parse_container(c);
  EXPECT_EQ(info.raw_size, uint64_t{n} * 65536);
  EXPECT_EQ(info.tiles.back().offset, 8 + 4 * uint64_t{n} + n - 1);
}

// --- refusals: each test breaks one thing in a valid 4-tile container ---

class Malformed : public testing::Test {
 protected:
  void SetUp() override {
    data_ = mixed_data(3 * 65536 + 1000, 7);
    good_ = gd::compress_container(data_, 1, 1);
    ASSERT_EQ(gd::parse_container(good_).num_tiles, 4u);
  }
  // Expects a ContainerError whose message contains `needle`.
  static void ExpectRefused(const Bytes& c, const std::string& needle) {
    try {
      gd::decompress_container(c, 1);
      ADD_FAILURE() << "accepted; expected an error mentioning '" << needle << "'";
    } catch (const gd::ContainerError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  void SetWord(uint32_t w) { store_u32(good_, 4, w); }
  size_t TableAt(size_t i) const { return 8 + 4 * i; }

  Bytes data_, good_;
};

TEST_F(Malformed, ShortHeader) {
  ExpectRefused(Bytes(good_.begin(), good_.begin() + 7), "8-byte header");
}

TEST_F(Malformed, WrongId) {
  good_[0] = 3;
  ExpectRefused(good_, "id is 3");
}

TEST_F(Malformed, WrongMagic) {
  good_[1] = 0xFC;
  ExpectRefused(good_, "magic is 0xFC, expected 0xFB");
}

TEST_F(Malformed, TileSizeIdx) {
  for (uint32_t idx : {0u, 2u, 3u}) {
    SetWord((load_u32(good_, 4) & ~3u) | idx);
    ExpectRefused(good_, "tileSizeIdx is " + std::to_string(idx));
  }
}

TEST_F(Malformed, ReservedBits) {
  SetWord(load_u32(good_, 4) | 1u << 31);
  ExpectRefused(good_, "reserved");
}

TEST_F(Malformed, LastTileSizeTooLarge) {
  SetWord(1 | 65537 << 2);
  ExpectRefused(good_, "lastTileSize 65537");
}

TEST_F(Malformed, LastTileSizeInconsistentWithData) {
  SetWord(1 | 999 << 2);  // the last tile holds 1000 bytes
  ExpectRefused(good_, "tile 3 of 4");
}

TEST_F(Malformed, TableRunsPastEnd) {
  good_.resize(8 + 4 * 3);
  ExpectRefused(good_, "offset table of 4 tiles");
}

TEST_F(Malformed, OffsetsNotIncreasing) {
  const uint32_t one = load_u32(good_, TableAt(1)), two = load_u32(good_, TableAt(2));
  store_u32(good_, TableAt(1), two);
  store_u32(good_, TableAt(2), one);
  ExpectRefused(good_, "tile 2 offset");
}

TEST_F(Malformed, EmptyTile) {
  store_u32(good_, TableAt(2), load_u32(good_, TableAt(1)));
  ExpectRefused(good_, "overlap");
}

TEST_F(Malformed, OffsetPastEnd) {
  store_u32(good_, TableAt(3), 0xFFFFFF00u);
  ExpectRefused(good_, "tile 3 offset");
}

TEST_F(Malformed, LastTilePastEnd) {
  store_u32(good_, TableAt(0), load_u32(good_, TableAt(0)) + 4);
  ExpectRefused(good_, "past the end");
}

TEST_F(Malformed, LastTileEmpty) {
  store_u32(good_, TableAt(0), 0);
  ExpectRefused(good_, "compressed size 0");
}

TEST_F(Malformed, TrailingBytes) {
  good_.insert(good_.end(), {0, 0, 0, 0});
  ExpectRefused(good_, "4 trailing bytes");
}

TEST_F(Malformed, NoTilesButData) {
  ExpectRefused(Bytes{4, 0xFB, 0, 0, 1, 0, 0, 0, 9}, "no tiles but 1 bytes");
  ExpectRefused(Bytes{4, 0xFB, 0, 0, 0x91, 0x01, 0, 0}, "no tiles but lastTileSize is 100");
}

TEST_F(Malformed, TileDecodeFailureNamesLowestTile) {
  // All-ones words start with BTYPE 11, a reserved block type: tiles 1 and 2 are both bad.
  const gd::ContainerInfo info = gd::parse_container(good_);
  for (size_t t : {1, 2})
    std::fill_n(good_.begin() + static_cast<ptrdiff_t>(info.tiles[t].offset), info.tiles[t].size, 0xFF);
  for (unsigned threads : {1u, 2u, 4u}) {
    try {
      gd::decompress_container(good_, threads);
      ADD_FAILURE() << "corrupt tiles accepted";
    } catch (const gd::ContainerError& e) {
      EXPECT_NE(std::string(e.what()).find("tile 1 of 4"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(page_status_message(PageStatus::kBadData)), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(Malformed, ErrorDerivesFromRuntimeError) {
  good_[0] = 0;
  EXPECT_THROW(gd::parse_container(good_), std::runtime_error);
}

}  // namespace
}  // namespace gdfs::tools_test
