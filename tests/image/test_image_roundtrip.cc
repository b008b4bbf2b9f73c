// Pack, extract, compare: every entry kind and edge case of the format survives mkfs.gdfs and
// gdfs-inspect extract, and the reader's own view (lookup, page map, reads) matches the source.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "cli_util.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

// One edge-case tree and its image, shared by the tests of this file (building it takes a second).
class EdgeTree : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("roundtrip");
    std::filesystem::create_directory(*dir_ / "src");
    caps_ = new TreeCaps(make_edge_tree(*dir_ / "src"));
    for (auto& note : caps_->notes) std::cout << "[   NOTE   ] " << note << "\n";
    image_ = *dir_ / "tree.gdfs";
    CliResult r = run_mkfs({"-q", *dir_ / "src", image_});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete caps_;
    delete dir_;
  }
  static std::string src(const std::string& rel) { return *dir_ / ("src/" + rel); }
  static inline TempDir* dir_ = nullptr;
  static inline TreeCaps* caps_ = nullptr;
  static inline std::string image_;
};

TEST_F(EdgeTree, ExtractGivesBackTheSameTree) {
  CliResult x = run_inspect({"extract", image_, *dir_ / "out"});
  ASSERT_EQ(x.code, 0) << x.err;
  auto diffs = compare_trees(*dir_ / "src", *dir_ / "out", caps_->root, caps_->xattrs);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
}

// The comparison above is only worth something if it sees differences: each mutation must be caught.
TEST_F(EdgeTree, CompareTreesNoticesDifferences) {
  const std::string out = *dir_ / "mutated";
  ASSERT_EQ(run_inspect({"extract", image_, out}).code, 0);
  chmod((out + "/one").c_str(), 0600);
  write_file(out + "/page+1", std::string(65537, 'x'));
  struct timespec t[2] = {{5, 0}, {5, 0}};
  utimensat(AT_FDCWD, (out + "/sub").c_str(), t, AT_SYMLINK_NOFOLLOW);
  unlink((out + "/hard-2").c_str());
  write_file(out + "/hard-2", "");
  unlink((out + "/link-rel").c_str());
  symlink("other", (out + "/link-rel").c_str());
  std::filesystem::remove(out + "/names/-dash");
  auto diffs = compare_trees(*dir_ / "src", out, caps_->root, caps_->xattrs);
  EXPECT_NE(join_lines(diffs).find("only in one tree: names/-dash"), std::string::npos) << join_lines(diffs);
  std::filesystem::remove(out + "/tiny/f3");  // restore the entry list, so per-entry checks run
  write_file(out + "/names/-dash", "4");
  write_file(out + "/tiny/f3", "");
  diffs = compare_trees(*dir_ / "src", out, caps_->root, caps_->xattrs);
  const std::string all = join_lines(diffs);
  for (const char* want : {"one: mode", "page+1: content differs", "sub: mtime",
                           "hard-2: ", "link-rel: symlink target", "tiny/f3: size"})
    EXPECT_NE(all.find(want), std::string::npos) << want << " not reported in:\n" << all;
}

TEST_F(EdgeTree, ExtractOneSubtree) {
  CliResult x = run_inspect({"extract", image_, *dir_ / "sub-out", "/sub"});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_TRUE(std::filesystem::exists(*dir_ / "sub-out/hard-3") ||
              std::filesystem::exists(*dir_ / "sub-out/sub/hard-3"))
      << x.out << x.err;
}

TEST_F(EdgeTree, VerifyIsClean) {
  CliResult v = run_inspect({"verify", "-t", "2", image_});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

TEST_F(EdgeTree, ReaderReadsMatchTheSource) {
  auto img = Image::open(image_);
  PageDecoder dec;
  std::mt19937 rng(5);
  for (const char* rel : {"page", "page+1", "pages+tail", "big", "dup-b", "random", "zeros-inside",
                          "all-zero", "one", "tiny/f17", "hard-2"}) {
    uint32_t ino = img->resolve(std::string("/") + rel);
    ASSERT_NE(ino, 0u) << rel;
    auto want = read_bytes(src(rel));
    ASSERT_EQ(img->inode(ino).size, want.size()) << rel;
    std::vector<uint8_t> got(want.size());
    ASSERT_EQ(img->read(ino, 0, got.size(), got.data(), dec), want.size()) << rel;
    EXPECT_TRUE(got == want) << rel;
    for (int i = 0; i < 20 && !want.empty(); ++i) {  // random ranges, crossing page boundaries
      uint64_t off = rng() % want.size(), len = rng() % 200000;
      std::vector<uint8_t> part(len);
      size_t n = img->read(ino, off, len, part.data(), dec);
      ASSERT_EQ(n, std::min<uint64_t>(len, want.size() - off)) << rel;
      EXPECT_TRUE(std::equal(part.begin(), part.begin() + n, want.begin() + off)) << rel << " @" << off;
    }
  }
}

TEST_F(EdgeTree, SparseFilePastFourGiB) {
  auto img = Image::open(image_);
  uint32_t ino = img->resolve("/sparse-5g");
  ASSERT_NE(ino, 0u);
  EXPECT_EQ(img->inode(ino).size, 5ull << 30);
  EXPECT_TRUE(img->mode(ino) & format::kInodeSparse);
  uint64_t pages = 0;
  for (uint64_t i = 0; i < img->logical_pages(ino); ++i)
    pages += img->page_ref(ino, i).kind != PageRef::kHole;
  EXPECT_LE(pages, 4u);  // 5 GiB of holes cost no pages
  PageDecoder dec;
  std::vector<uint8_t> got(70000);
  ASSERT_EQ(img->read(ino, (4ull << 30) + 100, got.size(), got.data(), dec), got.size());
  int fd = open(src("sparse-5g").c_str(), O_RDONLY);
  std::vector<uint8_t> want(70000);
  ASSERT_EQ(pread(fd, want.data(), want.size(), (4ll << 30) + 100), 70000);
  close(fd);
  EXPECT_TRUE(got == want);
}

TEST_F(EdgeTree, DedupeTailsAndHolesAreUsed) {
  auto img = Image::open(image_);
  auto ref = [&](const char* path, uint64_t page) { return img->page_ref(img->resolve(path), page); };
  // dup-b repeats dup-a: its pages share dup-a's bytes and say so.
  for (uint64_t i = 0; i < 4; ++i) {
    PageRef a = ref("/dup-a", i), b = ref("/dup-b", i);
    ASSERT_EQ(b.kind, PageRef::kPage);
    EXPECT_EQ(img->pages()[a.entry].offset, img->pages()[b.entry].offset);
    EXPECT_TRUE(img->pages()[b.entry].flags & format::kPageDeduped);
  }
  // Small files are tails inside shared packs: 2,000 tiny files take a handful of pages.
  EXPECT_EQ(ref("/tiny/f1", 0).kind, PageRef::kTail);
  uint64_t packs = 0;
  for (auto& e : img->pages()) packs += (e.flags & format::kPageTailPack) != 0;
  EXPECT_LE(packs, 10u);
  // Zero pages are holes, whether the source had holes or not.
  EXPECT_EQ(ref("/zeros-inside", 1).kind, PageRef::kHole);
  EXPECT_EQ(ref("/all-zero", 0).kind, PageRef::kHole);
  EXPECT_EQ(ref("/all-zero", 3).kind, PageRef::kHole);
  // Incompressible data is stored as is.
  EXPECT_EQ(img->pages()[ref("/random", 0).entry].codec, format::kCodecStored);
  EXPECT_EQ(img->pages()[ref("/page", 0).entry].codec, format::kCodecGDeflate);
}

TEST_F(EdgeTree, MetadataLooksRight) {
  auto img = Image::open(image_);
  EXPECT_EQ(img->symlink_target(img->resolve("/link-long")), std::string(1000, 'L'));
  EXPECT_EQ(img->symlink_target(img->resolve("/link-dangling")), "does/not/exist");
  EXPECT_EQ(img->resolve("/hard-1"), img->resolve("/sub/hard-3"));
  EXPECT_EQ(img->attr(img->resolve("/hard-1")).nlink, 3u);
  EXPECT_NE(img->resolve("/names/" + std::string(255, 'n')), 0u);
  EXPECT_NE(img->resolve("/names/new\nline"), 0u);
  EXPECT_NE(img->resolve("/deep/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15/d16/d17/d18/d19/d20/"
                         "d21/d22/d23/d24/d25/d26/d27/d28/d29/d30/d31/d32/d33/d34/d35/d36/d37/d38/d39/leaf"),
            0u);
  EXPECT_EQ(img->resolve("/missing"), 0u);
  EXPECT_EQ(img->resolve("/page/child"), 0u);
  EXPECT_EQ(img->attr(img->resolve("/one")).mtime_nsec, 123456789u);
  EXPECT_EQ(img->attr(img->resolve("/page")).mtime_sec, -86400 * 365);
  if (caps_->xattrs) {
    EXPECT_EQ(img->xattrs(img->resolve("/page")).size(), 2u);
    EXPECT_EQ(img->attr(img->resolve("/random")).xattr, img->attr(img->resolve("/page+1")).xattr);
  }
}

TEST(TinyFiles, TenThousandTinyFilesShareFewPages) {
  TempDir dir("tiny");
  std::filesystem::create_directory(dir / "src");
  for (int i = 0; i < 10000; ++i) write_text_file(dir / ("src/f" + std::to_string(i)), 50 + i % 100, i);
  CliResult r = run_mkfs({"-q", "--no-dedupe", dir / "src", dir / "img"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto img = Image::open(dir / "img");
  // ~1 MB of tails in 64 KiB packs: about 16 pages, not 10,000.
  EXPECT_LE(img->pages().size(), 20u);
  EXPECT_LT(std::filesystem::file_size(dir / "img"), 1500000u);
}

// Equal tails far apart: 140 packs of unique tails, then the same files again in shuffled order, so
// that dedupe checks candidates all over the image (more packs than mkfs keeps decoded) and each copy
// still shares the first one's bytes.
TEST(TinyFiles, EqualTailsAcrossManyPacksAreShared) {
  TempDir dir("tails");
  std::filesystem::create_directories(dir / "one/a");
  std::filesystem::create_directories(dir / "two/a");
  std::filesystem::create_directories(dir / "two/b");
  constexpr int kFiles = 6000;
  std::vector<int> order(kFiles);
  for (int i = 0; i < kFiles; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  for (int i = 0; i < kFiles; ++i) {
    // Appended, not concatenated: GCC 12 warns falsely (-Wrestrict) on "literal" + std::to_string.
    std::string name = "f", copy = "g";
    name += std::to_string(i);
    copy += std::to_string(order[i]);
    write_text_file(dir / ("one/a/" + name), 1500, i);
    write_text_file(dir / ("two/a/" + name), 1500, i);
    write_text_file(dir / ("two/b/" + copy), 1500, i);
  }
  ASSERT_EQ(run_mkfs({"-q", dir / "one", dir / "one.gdfs"}).code, 0);
  CliResult r = run_mkfs({"-q", dir / "two", dir / "two.gdfs"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The second copy costs metadata only: under 8 bytes of data per file more.
  const auto one = std::filesystem::file_size(dir / "one.gdfs");
  const auto two = std::filesystem::file_size(dir / "two.gdfs");
  EXPECT_LT(two, one + 200000u) << one << " vs " << two;
  CliResult x = run_inspect({"extract", dir / "two.gdfs", dir / "out"});
  ASSERT_EQ(x.code, 0) << x.err;
  const auto diffs = compare_trees(dir / "two", dir / "out", false, false);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
}

TEST(Determinism, ThreadCountDoesNotChangeTheImage) {
  TempDir dir("determinism");
  std::filesystem::create_directory(dir / "src");
  make_edge_tree(dir / "src");
  ASSERT_EQ(run_mkfs({"-q", "-t", "1", dir / "src", dir / "t1"}).code, 0);
  ASSERT_EQ(run_mkfs({"-q", "-t", "2", dir / "src", dir / "t2"}).code, 0);
  ASSERT_EQ(run_mkfs({"-q", "-t", "5", dir / "src", dir / "t5"}).code, 0);
  auto t1 = read_bytes(dir / "t1");
  EXPECT_TRUE(t1 == read_bytes(dir / "t2"));
  EXPECT_TRUE(t1 == read_bytes(dir / "t5"));
}

TEST(PageSize, SmallPagesRoundTrip) {
  TempDir dir("pagesize");
  std::filesystem::create_directory(dir / "src");
  write_text_file(dir / "src/a", 100000, 1);
  write_text_file(dir / "src/b", 5000, 2);
  write_file(dir / "src/z", std::string(20000, '\0') + "end");
  ASSERT_EQ(run_mkfs({"-q", "--page-size", "4096", dir / "src", dir / "img"}).code, 0);
  auto img = Image::open(dir / "img");
  EXPECT_EQ(img->page_size(), 4096u);
  ASSERT_EQ(run_inspect({"extract", dir / "img", dir / "out"}).code, 0);
  EXPECT_TRUE(compare_trees(dir / "src", dir / "out", true, false).empty());
}

}  // namespace
}  // namespace gdfs::test
