// The incompressible-page shortcut (gdfs/page_encode.h, looks_incompressible): which pages it stores
// without running the GDeflate parser, that it never stores a page GDeflate would have shrunk by much,
// that the top levels ignore it, and that images with such pages round trip and verify.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "cli_util.h"
#include "gdfs/format.h"
#include "gdfs/gdeflate.h"
#include "gdfs/page_encode.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Bytes = std::vector<uint8_t>;
constexpr size_t kPage = gdeflate::kMaxPageBytes;

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// What GDeflate at `level` saves on `page` (0 when it would be stored).
size_t gdeflate_saving(const Bytes& page, int level) {
  gdeflate::Compressor comp(level);
  Bytes out(gdeflate::compress_bound(page.size()));
  const size_t n = comp.compress(page.data(), page.size(), out.data(), out.size());
  return n < page.size() ? page.size() - n : 0;
}

bool incompressible(const Bytes& b) {
  return page::looks_incompressible(b.data(), b.size());
}

TEST(LooksIncompressible, RandomBytesAreAndGDeflateAgrees) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Bytes page = random_bytes(kPage, seed);
    EXPECT_TRUE(incompressible(page)) << seed;
    EXPECT_LT(gdeflate_saving(page, 9), kPage / 128) << seed;
  }
}

TEST(LooksIncompressible, TextAndSmallAlphabetsAreNot) {
  Bytes text;
  const std::string line = "the quick brown fox jumps over the lazy dog 0123456789\n";
  while (text.size() < kPage) text.insert(text.end(), line.begin(), line.end());
  text.resize(kPage);
  EXPECT_FALSE(incompressible(text));
  Bytes seven_bits = random_bytes(kPage, 4);  // 7 bits of entropy per byte: Huffman alone saves 1/8
  for (auto& x : seven_bits) x &= 0x7F;
  EXPECT_FALSE(incompressible(seven_bits));
  EXPECT_GT(gdeflate_saving(seven_bits, 7), kPage / 16);
}

// High-entropy bytes whose only redundancy is a repeat: the entropy count cannot see it, the match
// probe must. A 2 KiB repeat is worth about 2 KiB to GDeflate, over the 512-byte threshold.
TEST(LooksIncompressible, RepeatsInRandomBytesAreSeen) {
  Bytes page = random_bytes(kPage, 5);
  std::copy(page.begin() + 1000, page.begin() + 3048, page.begin() + 40001);
  EXPECT_FALSE(incompressible(page));
  EXPECT_GT(gdeflate_saving(page, 7), kPage / 128);
  // A repeat too short to matter leaves the verdict alone.
  Bytes short_repeat = random_bytes(kPage, 6);
  std::copy(short_repeat.begin() + 10, short_repeat.begin() + 74, short_repeat.begin() + 30000);
  EXPECT_TRUE(incompressible(short_repeat));
}

// A page that starts random and turns to text: the sample exit does not decide, the full count does.
TEST(LooksIncompressible, HighEntropyStartThenTextIsNot) {
  Bytes page = random_bytes(kPage, 7);
  std::fill(page.begin() + 20000, page.end(), 'a');
  EXPECT_FALSE(incompressible(page));
}

TEST(LooksIncompressible, SizesOutsideOnePageAreNever) {
  EXPECT_FALSE(incompressible(random_bytes(kPage + 1, 8)));
  EXPECT_FALSE(incompressible(random_bytes(10, 8)));
  EXPECT_TRUE(incompressible(random_bytes(5000, 8)));  // a short last page or tail pack
}

// encode_page stores a shortcut page at levels up to kMaxShortcutLevel; above, the parser runs (and
// here it also finds nothing better than the raw bytes, so the result is the same page).
TEST(LooksIncompressible, EncodePageStoresShortcutPagesAtEveryLevel) {
  const Bytes page = random_bytes(kPage, 9);
  for (const int level : {1, 7, page::kMaxShortcutLevel, page::kMaxShortcutLevel + 1}) {
    gdeflate::Compressor comp(level);
    page::Encoded e;
    page::encode_page(page, page::CodecChoice::kGDeflate, comp, e);
    EXPECT_EQ(e.codec, format::kCodecStored) << level;
    EXPECT_TRUE(e.bytes.empty()) << level;
  }
}

class IncompressibleImage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("incompressible");
    src_ = *dir_ / "src";
    fs::create_directories(src_);
    write_bytes(src_ + "/random.bin", random_bytes(5 * kPage + 1234, 11));  // 5 pages and a tail
    Bytes mixed = random_bytes(3 * kPage, 12);                              // random, then text
    std::fill(mixed.begin() + kPage, mixed.end(), 'z');
    write_bytes(src_ + "/mixed.bin", mixed);
    write_text_file(src_ + "/notes.txt", 2 * kPage + 99, 13);
  }
  static void TearDownTestSuite() { delete dir_; }
  static inline TempDir* dir_ = nullptr;
  static inline std::string src_;
};

TEST_F(IncompressibleImage, RandomPagesAreStoredAndTheImageRoundTrips) {
  for (const char* level : {"7", "10"}) {
    const std::string image = *dir_ / (std::string("l") + level);
    CliResult r = run_mkfs({"-q", "--json", "-l", level, src_, image});
    ASSERT_EQ(r.code, 0) << r.err;
    const json s = json::parse(r.out);
    // random.bin's 5 whole pages and mixed.bin's first; the tail pack (mostly random.bin's tail) may be.
    EXPECT_GE(s["pages"]["stored"].get<int>(), 6) << level;
    EXPECT_LE(s["pages"]["stored"].get<int>(), 7) << level;
    const json random = inspect_json({"pages", image, "/random.bin"})["pages"];
    ASSERT_EQ(random.size(), 6u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(random[i]["codec"], "stored") << random[i].dump();
    const json mixed = inspect_json({"pages", image, "/mixed.bin"})["pages"];
    ASSERT_EQ(mixed.size(), 3u);
    EXPECT_EQ(mixed[0]["codec"], "stored");
    EXPECT_EQ(mixed[1]["codec"], "gdeflate");
    EXPECT_NE(inspect_json({"pages", image, "/notes.txt"})["pages"][0]["codec"], "stored");
    EXPECT_EQ(run_inspect({"verify", image}).code, 0) << level;
    const std::string out = *dir_ / (std::string("out") + level);
    ASSERT_EQ(run_inspect({"extract", image, out}).code, 0);
    const auto diffs = compare_trees(src_, out, false, false);
    EXPECT_TRUE(diffs.empty()) << diffs.front();
  }
}

}  // namespace
}  // namespace gdfs::test
