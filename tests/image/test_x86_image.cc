// x86-filtered pages (codec 4) in images: mkfs.gdfs gives them to pages of machine code and to nothing
// else, marks the image (incompat bit `x86`, minor 3) exactly when it did, and --no-x86-filter leaves a
// 2.0 image; the images read back exactly, through rebuilds, layers and flatten; and the reader refuses
// a codec 4 entry without the bit, and reads a wrong codec as an error, never as bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "cli_util.h"
#include "gdfs/format.h"
#include "gdfs/image.h"
#include "gdfs/page.h"
#include "image_checks.h"
#include "tests/fuzz/image_surgery.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Bytes = std::vector<uint8_t>;

// Calls from many places to a few functions, between runs of other instructions: what the filter is for.
Bytes call_heavy_code(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (size_t i = 0; i < n;) {
    if (i + 5 <= n && rng() % 4 == 0) {
      const uint32_t rel = static_cast<uint32_t>(0x2000 * (rng() % 6)) - static_cast<uint32_t>(i % 65536 + 5);
      b[i] = rng() % 5 ? 0xE8 : 0xE9;
      std::memcpy(&b[i + 1], &rel, 4);
      i += 5;
    } else {
      b[i++] = static_cast<uint8_t>(0x48 + rng() % 4);
    }
  }
  return b;
}

class X86Image : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("x86");
    src_ = *dir_ / "src";
    fs::create_directories(src_ + "/lib");
    write_bytes(src_ + "/lib/calls.bin", call_heavy_code(5 * 65536 + 1234, 1));
    fs::copy_file("/proc/self/exe", src_ + "/lib/self");  // this test: real x86-64 code, when built for it
    write_text_file(src_ + "/notes.txt", 2 * 65536 + 99, 5);
    for (const auto& [name, args] :
         std::map<std::string, std::vector<std::string>>{{"filtered", {}}, {"plain", {"--no-x86-filter"}}}) {
      std::vector<std::string> a = {"-q", "--json"};
      a.insert(a.end(), args.begin(), args.end());
      a.insert(a.end(), {src_, *dir_ / name});
      CliResult r = run_mkfs(a);
      ASSERT_EQ(r.code, 0) << r.err;
      summary_[name] = json::parse(r.out);
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static void expect_reads_back(const std::string& image) { expect_verifies_and_extracts(image, src_); }
  static uint64_t x86_pages(const Image& img) {
    uint64_t n = 0;
    for (const format::PageEntry& e : img.pages()) n += e.codec == format::kCodecGDeflateX86;
    return n;
  }
  static inline TempDir* dir_ = nullptr;
  static inline std::string src_;
  static inline std::map<std::string, json> summary_;
};

TEST_F(X86Image, CodePagesAreFilteredAndTheImageSaysSo) {
  const json& f = summary_["filtered"];
  const json& p = summary_["plain"];
  // The 5 full pages of calls.bin at least; none of the text.
  EXPECT_GE(f["pages"]["x86"].get<int>(), 5);
  EXPECT_EQ(p["pages"]["x86"], 0);
  EXPECT_LT(f["image_bytes"].get<uint64_t>(), p["image_bytes"].get<uint64_t>());
  std::printf("image bytes: filtered %llu, plain %llu\n", f["image_bytes"].get<unsigned long long>(),
              p["image_bytes"].get<unsigned long long>());

  const auto img = Image::open(*dir_ / "filtered");
  EXPECT_EQ(x86_pages(*img), f["pages"]["x86"].get<uint64_t>());
  EXPECT_TRUE(img->superblock().incompat & format::kIncompatX86);
  EXPECT_EQ(img->superblock().minor, format::kMinorX86);
  const auto plain = Image::open(*dir_ / "plain");
  EXPECT_FALSE(plain->superblock().incompat & format::kIncompatX86);
  EXPECT_EQ(plain->superblock().minor, format::kMinor);  // readable by every 2.x reader
  expect_reads_back(*dir_ / "filtered");
  expect_reads_back(*dir_ / "plain");

  CliResult info = run_inspect({"info", *dir_ / "filtered"});
  EXPECT_NE(info.out.find("x86"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("2.3"), std::string::npos) << info.out;
}

// A rebuild reuses the filtered pages as they are; a layered image that only refers to them still needs
// the bit, and so does its flattened copy.
TEST_F(X86Image, RebuildsLayersAndFlattenKeepTheFilteredPages) {
  const std::string base = *dir_ / "filtered";
  const std::string rebuilt = *dir_ / "rebuilt", layered = *dir_ / "layered", flat = *dir_ / "flat";
  ASSERT_EQ(run_mkfs({"-q", "--base", base, src_, rebuilt}).code, 0);
  CliResult l = run_mkfs({"-q", "--json", "--base", base, "--layered", src_, layered});
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_GT(json::parse(l.out)["base"]["reused_pages"].get<int>(), 0);
  CliResult fl = run_inspect({"flatten", layered, flat});
  ASSERT_EQ(fl.code, 0) << fl.err;
  const uint64_t want = x86_pages(*Image::open(base));
  for (const std::string& path : {rebuilt, layered, flat}) {
    const auto img = Image::open(path);
    EXPECT_EQ(x86_pages(*img), want) << path;
    EXPECT_TRUE(img->superblock().incompat & format::kIncompatX86) << path;
    EXPECT_EQ(img->superblock().minor, format::kMinorX86) << path;
    expect_reads_back(path);
  }
  // Asked for no filter, a rebuild compresses OLD's filtered pages again rather than reuse them: the
  // image stays readable by 2.2 readers. Every other page is still reused.
  const std::string unfiltered = *dir_ / "unfiltered";
  CliResult u = run_mkfs({"-q", "--json", "--no-x86-filter", "--base", base, src_, unfiltered});
  ASSERT_EQ(u.code, 0) << u.err;
  EXPECT_GT(json::parse(u.out)["base"]["reused_pages"].get<uint64_t>(), 0u);
  const auto img = Image::open(unfiltered);
  EXPECT_EQ(x86_pages(*img), 0u);
  EXPECT_EQ(img->superblock().minor, format::kMinor);
  EXPECT_FALSE(img->superblock().incompat & format::kIncompatX86);
  expect_reads_back(unfiltered);
}

// Crafted entries behind valid checksums.
Bytes crafted(const std::string& image,
              const std::function<void(surgery::Unpacked&, format::PageEntry&)>& change) {
  const Bytes b = read_bytes(image);
  surgery::Unpacked u = surgery::unpack_image(b);
  auto* pages = u.record<format::PageEntry>(format::kSecPages);
  for (uint64_t i = 0; i < u.sb.page_count; ++i) {
    if (pages[i].codec == format::kCodecGDeflateX86) {
      change(u, pages[i]);
      break;
    }
  }
  return surgery::repack_image(b, u);
}

TEST_F(X86Image, AMissingFeatureBitIsRefusedAndAWrongCodecIsAnError) {
  const std::string image = *dir_ / "filtered";
  EXPECT_EQ(open_error(crafted(image, [](surgery::Unpacked&, format::PageEntry&) {})), "");
  EXPECT_NE(
      open_error(crafted(image, [](surgery::Unpacked& u,
                                   format::PageEntry&) { u.sb.incompat &= ~uint64_t{format::kIncompatX86}; }))
          .find("without the x86 feature bit"),
      std::string::npos);
  EXPECT_NE(open_error(crafted(image, [](surgery::Unpacked&, format::PageEntry& e) { e.param = 1; }))
                .find("codec parameter on a codec without one"),
            std::string::npos);
  // The filtered stream read as plain GDeflate decodes, to the filtered bytes: the checksum refuses them.
  const auto img = Image::from_memory(
      crafted(image, [](surgery::Unpacked&, format::PageEntry& e) { e.codec = format::kCodecGDeflate; }),
      "crafted");
  const auto good = Image::open(image);
  PageDecoder dec;
  for (uint64_t i = 0; i < good->pages().size(); ++i) {
    if (good->pages()[i].codec != format::kCodecGDeflateX86) continue;
    std::vector<uint8_t> out(good->pages()[i].usize);
    EXPECT_EQ(img->read_page(i, dec, out.data()), PageStatus::kChecksum);
    EXPECT_EQ(good->read_page(i, dec, out.data()), PageStatus::kOk);
    return;  // the first x86 page is the one crafted
  }
  FAIL() << "no x86 page in the image";
}

}  // namespace
}  // namespace gdfs::test
