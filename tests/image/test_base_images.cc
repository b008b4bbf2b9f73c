// Images built on an older image (mkfs.gdfs --base): reuse decided by content, copied or layered
// (FORMAT.md 4.3), chains of layers, flatten, and every way a base can be wrong: missing, replaced,
// moved, damaged, or named by a crafted image.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli_util.h"
#include "gdfs/image.h"
#include "mkfs/base.h"
#include "mkfs/pipeline.h"
#include "tests/fuzz/image_surgery.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;

class BaseImages : public ::testing::Test {
 protected:
  // v1: 300 small text files in 3 folders, two multi-page files, a sparse file. v2 (in src2): one file
  // edited in its middle, one appended to, one removed, one renamed, one new, a new large file.
  void SetUp() override {
    for (const char* d : {"src/a", "src/b", "src/c"}) fs::create_directories(dir_ / d);
    for (int i = 0; i < 300; ++i) {
      std::string name = "src/";
      name += "abc"[i % 3];
      name += "/f" + std::to_string(i) + ".txt";
      write_text_file(dir_ / name, 200 + (i * 37) % 9000, i);
    }
    write_text_file(dir_ / "src/big1", 1000000, 1001);
    write_text_file(dir_ / "src/big2", 400000, 1002);
    {
      std::ofstream f(dir_ / "src/sparse", std::ios::binary);
      f.seekp(5 << 20);
      f << "end of a sparse file";
    }
    ASSERT_EQ(run_mkfs({"-q", dir_ / "src", dir_ / "v1.gdfs"}).code, 0);
    fs::copy(dir_ / "src", dir_ / "src2", fs::copy_options::recursive);
    {
      std::fstream f(dir_ / "src2/big1", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(500000);
      f << "an edit in the middle of a page";
    }
    std::ofstream(dir_ / "src2/big2", std::ios::app) << "appended";
    fs::remove(dir_ / "src2/a/f0.txt");
    fs::rename(dir_ / "src2/b/f1.txt", dir_ / "src2/c/renamed.txt");
    write_file(dir_ / "src2/a/new.txt", "a new file");
    write_text_file(dir_ / "src2/big3", 300000, 1003);
  }
  nlohmann::json build(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    CliResult r = run_mkfs(std::move(args));
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }
  // Extracts `image` (with `extra` options) and compares it with `tree`.
  void expect_reads_as(const std::string& image, const std::string& tree,
                       std::vector<std::string> extra = {}) {
    const std::string out = dir_ / ("out-" + std::to_string(++outs_));
    std::vector<std::string> args{"extract", image, out};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult x = run_inspect(args);
    ASSERT_EQ(x.code, 0) << x.err;
    const auto diffs = compare_trees(tree, out, false, false);
    EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
    std::vector<std::string> verify{"verify", image};
    verify.insert(verify.end(), extra.begin(), extra.end());
    CliResult v = run_inspect(verify);
    EXPECT_EQ(v.code, 0) << v.out << v.err;
  }
  TempDir dir_{"base"};
  int outs_ = 0;
};

TEST_F(BaseImages, CopiedBuildReadsLikeAFullBuildAndReusesWhatDidNotChange) {
  // Twice in the new tree: its reused pages must be shared, not copied twice.
  fs::copy_file(dir_ / "src2/big1", dir_ / "src2/c/big1-twin");
  const auto full = build({dir_ / "src2", dir_ / "full.gdfs"});
  const auto copy = build({"--base", dir_ / "v1.gdfs", dir_ / "src2", dir_ / "copy.gdfs"});
  expect_reads_as(dir_ / "copy.gdfs", dir_ / "src2");
  // big1 (15 full pages, one edited), big2 (6, its tail changed): 20 full pages are OLD's. The small
  // files, renamed one included, are tails in OLD's packs.
  EXPECT_GE(copy["base"]["reused_pages"].get<uint64_t>(), 20u);
  EXPECT_GE(copy["base"]["tails"].get<uint64_t>(), 295u);
  // Reused packs keep the bytes of the tails that went away: a little larger than a full build.
  const double ratio =
      static_cast<double>(fs::file_size(dir_ / "copy.gdfs")) / fs::file_size(dir_ / "full.gdfs");
  EXPECT_LT(ratio, 1.05);
  EXPECT_EQ(Image::open(dir_ / "copy.gdfs")->layers().size(), 0u);
  EXPECT_EQ(Image::open(dir_ / "copy.gdfs")->superblock().minor, 0);
  (void)full;
}

// Tails are looked for at their own path in OLD first; OLD's tails are indexed by content (every tail
// pack decoded) only when a path OLD does not have comes, and a renamed file is still found that way.
TEST_F(BaseImages, TailsAreFoundByPathFirstAndByContentOnlyForNewPaths) {
  fs::copy(dir_ / "src", dir_ / "edited", fs::copy_options::recursive);
  write_text_file(dir_ / "edited/a/f3.txt", 5000, 99);  // an edit: another length
  const auto same_paths = build({"--base", dir_ / "v1.gdfs", dir_ / "edited", dir_ / "edited.gdfs"});
  expect_reads_as(dir_ / "edited.gdfs", dir_ / "edited");
  EXPECT_EQ(same_paths["base"]["indexed_tails"].get<uint64_t>(), 0u);
  EXPECT_GE(same_paths["base"]["tails"].get<uint64_t>(), 299u);
  fs::rename(dir_ / "edited/b", dir_ / "edited/b-moved");  // 100 files at new paths, same bytes
  const auto moved = build({"--base", dir_ / "v1.gdfs", dir_ / "edited", dir_ / "moved.gdfs"});
  expect_reads_as(dir_ / "moved.gdfs", dir_ / "edited");
  EXPECT_GE(moved["base"]["indexed_tails"].get<uint64_t>(), 300u);
  EXPECT_GE(moved["base"]["tails"].get<uint64_t>(), 299u);
}

// The tails of paths OLD does not have wait until the end of the data pass, while the workers index
// OLD's packs as they confirm the other tails; which packs they reached must not show in the image. Moved
// files (found by content), new files and a new copy of an old file, built on 1, 2 and 5 threads: the
// same bytes every time, and the tree's contents.
TEST_F(BaseImages, TailsAtNewPathsGiveTheSameImageOnAnyThreadCount) {
  fs::copy(dir_ / "src", dir_ / "edited", fs::copy_options::recursive);
  fs::rename(dir_ / "edited/b", dir_ / "edited/b-moved");
  write_text_file(dir_ / "edited/c/new1.txt", 7000, 501);
  write_text_file(dir_ / "edited/new2.txt", 3000, 502);
  fs::copy_file(dir_ / "edited/c/f2.txt", dir_ / "edited/c/copy-of-f2.txt");
  std::vector<std::vector<uint8_t>> images;
  for (const char* threads : {"1", "2", "5"}) {
    const std::string out = dir_ / (std::string("t") + threads + ".gdfs");
    const auto j = build({"-t", threads, "--base", dir_ / "v1.gdfs", dir_ / "edited", out});
    EXPECT_GE(j["base"]["tails"].get<uint64_t>(), 300u) << threads;  // 299 old tails and the copy
    EXPECT_GE(j["base"]["indexed_tails"].get<uint64_t>(), 300u) << threads;
    images.push_back(read_bytes(out));
  }
  EXPECT_TRUE(images[1] == images[0]);
  EXPECT_TRUE(images[2] == images[0]);
  expect_reads_as(dir_ / "t2.gdfs", dir_ / "edited");
}

// Without tail packs on both sides, a file's short last page is a page like the others: found in the
// base by its content, its renamed copy included, and reused.
TEST_F(BaseImages, ShortLastPagesAreReusedWithoutTailPacks) {
  ASSERT_EQ(run_mkfs({"-q", "--tail-pack-limit", "0", dir_ / "src", dir_ / "v1-nopack.gdfs"}).code, 0);
  const auto copy = build({"--tail-pack-limit", "0", "--base", dir_ / "v1-nopack.gdfs", dir_ / "src2",
                           dir_ / "copy-nopack.gdfs"});
  expect_reads_as(dir_ / "copy-nopack.gdfs", dir_ / "src2");
  // The 298 small files still there (renamed one included) and big1's and big2's unchanged full pages.
  EXPECT_GE(copy["base"]["reused_pages"].get<uint64_t>(), 298u + 20u);
  EXPECT_EQ(copy["base"]["tails"].get<uint64_t>(), 0u);
}

TEST_F(BaseImages, LayeredImageHoldsOnlyNewPagesAndReadsTheSame) {
  build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  expect_reads_as(dir_ / "v2.gdfs", dir_ / "src2");
  const auto img = Image::open(dir_ / "v2.gdfs");
  ASSERT_EQ(img->layers().size(), 1u);
  EXPECT_EQ(img->layers()[0].hint, "v1.gdfs");
  EXPECT_EQ(img->superblock().minor, format::kMinorLayers);
  EXPECT_TRUE(img->superblock().incompat & format::kIncompatLayers);
  // New bytes: one edited page, big2's new tail, big3 (300 kB of text), a few tails: far below v1.
  EXPECT_LT(img->superblock().data_size, fs::file_size(dir_ / "v1.gdfs") / 3);
  const auto info = inspect_json({"info", dir_ / "v2.gdfs"});
  ASSERT_EQ(info["layers"].size(), 1u);
  EXPECT_EQ(info["layers"][0]["hint"], "v1.gdfs");
  EXPECT_GT(info["layers"][0]["page_entries"].get<uint64_t>(), 20u);
}

TEST_F(BaseImages, ChainsOfLayersFlattenToAStandaloneImage) {
  build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  fs::copy(dir_ / "src2", dir_ / "src3", fs::copy_options::recursive);
  write_text_file(dir_ / "src3/big4", 200000, 1004);
  fs::remove(dir_ / "src3/big3");
  build({"--base", dir_ / "v2.gdfs", "--layered", dir_ / "src3", dir_ / "v3.gdfs"});
  expect_reads_as(dir_ / "v3.gdfs", dir_ / "src3");
  // big1 lives in v1 and v2, big4 in v3: v3 names both of its ancestors.
  EXPECT_EQ(Image::open(dir_ / "v3.gdfs")->layers().size(), 2u);

  CliResult f = run_inspect({"flatten", dir_ / "v3.gdfs", dir_ / "flat.gdfs"});
  ASSERT_EQ(f.code, 0) << f.err;
  fs::create_directory(dir_ / "alone");
  fs::rename(dir_ / "flat.gdfs", dir_ / "alone/flat.gdfs");
  const auto flat = Image::open(dir_ / "alone/flat.gdfs");
  EXPECT_EQ(flat->layers().size(), 0u);
  EXPECT_EQ(flat->superblock().minor, 0);
  EXPECT_FALSE(flat->superblock().incompat & format::kIncompatLayers);
  expect_reads_as(dir_ / "alone/flat.gdfs", dir_ / "src3");
  // Flatten refuses to overwrite, as mkfs does.
  EXPECT_NE(run_inspect({"flatten", dir_ / "v3.gdfs", dir_ / "alone/flat.gdfs"}).code, 0);
}

TEST_F(BaseImages, ReuseIsDecidedByContentNotByName) {
  // Same names, sizes and mtimes, other bytes: nothing of it may be taken from OLD.
  fs::copy(dir_ / "src", dir_ / "same-names", fs::copy_options::recursive);
  for (int i = 0; i < 300; i += 3)
    write_text_file(dir_ / ("same-names/a/f" + std::to_string(i) + ".txt"), 200 + (i * 37) % 9000, i + 7);
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "src")) {
    const fs::path twin = dir_ / "same-names" / fs::relative(e.path(), dir_ / "src");
    fs::last_write_time(twin, fs::last_write_time(e.path()));
  }
  build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "same-names", dir_ / "v2.gdfs"});
  expect_reads_as(dir_ / "v2.gdfs", dir_ / "same-names");
}

TEST_F(BaseImages, AMissingOrReplacedBaseIsRefusedAndAMovedOneCanBeNamed) {
  build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  fs::rename(dir_ / "v1.gdfs", dir_ / "moved.gdfs");
  CliResult r = run_inspect({"ls", dir_ / "v2.gdfs"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("base image 1 '" + (dir_ / "v1.gdfs") + "' cannot be opened"), std::string::npos)
      << r.err;
  // Another image where the base should be: refused, never read.
  fs::copy(dir_ / "moved.gdfs", dir_ / "keep.gdfs");
  ASSERT_EQ(run_mkfs({"-q", dir_ / "src2", dir_ / "v1.gdfs"}).code, 0);
  r = run_inspect({"ls", dir_ / "v2.gdfs"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("is not the image this one was built on"), std::string::npos) << r.err;
  // Named by the caller, found by identity: the wrong candidate is passed over.
  expect_reads_as(dir_ / "v2.gdfs", dir_ / "src2",
                  {"--base", dir_ / "v1.gdfs", "--base", dir_ / "moved.gdfs"});
  // --base before IMAGE and PATH takes one value: IMAGE is not read as a second base.
  r = run_inspect({"ls", "--base", dir_ / "moved.gdfs", dir_ / "v2.gdfs", "/"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_inspect({"cat", "--base", dir_ / "moved.gdfs", dir_ / "v2.gdfs", "/a/new.txt"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "a new file");
}

// A layered image written over its own base (or an image further down the chain) would refer to itself,
// and the base would be gone: refused, with both left as they were. A copied build may replace its base.
TEST_F(BaseImages, ALayeredImageNeverReplacesItsBase) {
  build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  const auto size_of = [&](const char* name) { return fs::file_size(dir_ / name); };
  const uintmax_t v1 = size_of("v1.gdfs"), v2 = size_of("v2.gdfs");
  CliResult r =
      run_mkfs({"-q", "--force", "--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v1.gdfs"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("is the base image: a layered image refers to its bases"), std::string::npos) << r.err;
  r = run_mkfs({"-q", "--force", "--base", dir_ / "v2.gdfs", "--layered", dir_ / "src2", dir_ / "v1.gdfs"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("is an image the base is layered on"), std::string::npos) << r.err;
  EXPECT_EQ(size_of("v1.gdfs"), v1);
  EXPECT_EQ(size_of("v2.gdfs"), v2);
  expect_reads_as(dir_ / "v2.gdfs", dir_ / "src2");
  // Not layered: the new image stands alone, so it may take its base's place.
  build({"--force", "--base", dir_ / "v1.gdfs", dir_ / "src2", dir_ / "v1.gdfs"});
  expect_reads_as(dir_ / "v1.gdfs", dir_ / "src2");
}

TEST_F(BaseImages, ABaseThatIsAFifoIsRefusedWithoutWaiting) {
  build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  fs::remove(dir_ / "v1.gdfs");
  ASSERT_EQ(mkfifo((dir_ / "v1.gdfs").c_str(), 0600), 0);
  CliResult r = run_inspect({"ls", dir_ / "v2.gdfs"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("not a regular file or block device"), std::string::npos) << r.err;
}

TEST_F(BaseImages, DamageInTheBaseIsAnErrorNeverWrongBytes) {
  build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  // Flip a byte in every page of v1 that v2 uses: superblocks and metadata stay valid.
  const auto v2 = Image::open(dir_ / "v2.gdfs");
  auto v1 = read_bytes(dir_ / "v1.gdfs");
  for (const format::PageEntry& e : v2->stored_pages())
    if (e.layer == 1) v1[e.offset + e.csize / 2] ^= 0x40;
  write_bytes(dir_ / "v1.gdfs", v1);
  CliResult x = run_inspect({"cat", dir_ / "v2.gdfs", "/big1"});
  EXPECT_NE(x.code, 0);
  EXPECT_NE(x.err.find("inode"), std::string::npos) << x.err;
  EXPECT_NE(x.err.find("checksum"), std::string::npos) << x.err;
  CliResult v = run_inspect({"verify", dir_ / "v2.gdfs"});
  EXPECT_NE(v.code, 0);
  // A base whose pages went bad is not a source of pages for a new build either: nothing is reused.
  const auto again = build({"--base", dir_ / "v1.gdfs", dir_ / "src2", dir_ / "v2b.gdfs"});
  EXPECT_EQ(again["base"]["reused_pages"].get<uint64_t>(), 0u);
  expect_reads_as(dir_ / "v2b.gdfs", dir_ / "src2");
}

TEST_F(BaseImages, BaseOfAnotherPageSizeIsRefused) {
  CliResult r =
      run_mkfs({"-q", "--base", dir_ / "v1.gdfs", "--page-size", "16384", dir_ / "src2", dir_ / "v2.gdfs"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--page-size 65536"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "v2.gdfs"));
  r = run_mkfs({"-q", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  EXPECT_NE(r.code, 0) << "--layered needs --base";
}

TEST_F(BaseImages, ManyEqualFilesShareOneTailOfTheBase) {
  for (int i = 0; i < 500; ++i)
    fs::copy_file(dir_ / "src2/a/f3.txt", dir_ / ("src2/b/same" + std::to_string(i)));
  const auto j = build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
  EXPECT_GE(j["base"]["tails"].get<uint64_t>(), 795u);
  expect_reads_as(dir_ / "v2.gdfs", dir_ / "src2");
}

// The fallback when a tail's hash matched but its bytes do not (or the base pack no longer decodes):
// the pack is stored again with every checked tail's own bytes at its offset.
TEST(BasePackChecks, AMismatchStoresThePackPatchedWithTheNewBytes) {
  const std::vector<uint8_t> old_pack{'a', 'a', 'a', 'b', 'b', 'c', 'c', 'c'};
  mkfs::PageJob job;
  job.base_entry = 7;
  job.tail_checks = {{0, {'a', 'a', 'a'}}, {5, {'c', 'c', 'c'}}};
  EXPECT_TRUE(mkfs::Base::tails_match(job, true, true, old_pack));
  EXPECT_EQ(job.base_entry, 7u);
  // Every check holds, but the pack may not be reused (an x86-filtered pack under --no-x86-filter).
  EXPECT_FALSE(mkfs::Base::tails_match(job, true, false, old_pack));
  EXPECT_EQ(job.raw, old_pack);
  EXPECT_EQ(job.base_entry, format::kNone);
  job.base_entry = 7;
  job.tail_checks.push_back({3, {'B', 'b'}});
  EXPECT_FALSE(mkfs::Base::tails_match(job, true, true, old_pack));
  EXPECT_EQ(job.raw, (std::vector<uint8_t>{'a', 'a', 'a', 'B', 'b', 'c', 'c', 'c'}));
  EXPECT_EQ(job.base_entry, format::kNone);
  job.raw.clear();
  job.tail_checks = {{5, {'c', 'c', 'c'}}};
  EXPECT_FALSE(mkfs::Base::tails_match(job, false, true, old_pack));  // OLD unreadable: only what is known
  EXPECT_EQ(job.raw, (std::vector<uint8_t>{0, 0, 0, 0, 0, 'c', 'c', 'c'}));
}

// Crafted layer tables: each refused at open with a message, before any base is opened.
class CraftedLayers : public BaseImages {
 protected:
  void SetUp() override {
    BaseImages::SetUp();
    build({"--base", dir_ / "v1.gdfs", "--layered", dir_ / "src2", dir_ / "v2.gdfs"});
    good_ = read_bytes(dir_ / "v2.gdfs");
  }
  std::string open_error(const surgery::Bytes& bytes) {
    write_bytes(dir_ / "bad.gdfs", bytes);
    try {
      Image::open(dir_ / "bad.gdfs");
    } catch (const ImageError& e) {
      return e.what();
    }
    return "";
  }
  // The layer region's bytes changed by `edit`, its checksum recomputed.
  surgery::Bytes with_layers(const std::function<void(uint8_t*)>& edit) {
    surgery::Bytes b = good_;
    format::Superblock sb = surgery::superblock(b);
    edit(b.data() + sb.layers_offset);
    sb.layers_checksum = checksum64(b.data() + sb.layers_offset, sb.layers_size);
    surgery::put_superblock(b, sb);
    return b;
  }
  surgery::Bytes good_;
};

TEST_F(CraftedLayers, EachIsRefusedWithAReason) {
  auto sb_edit = [&](const std::function<void(format::Superblock&)>& f) {
    surgery::Bytes b = good_;
    format::Superblock sb = surgery::superblock(b);
    f(sb);
    surgery::put_superblock(b, sb);
    return b;
  };
  EXPECT_NE(open_error(sb_edit([](auto& s) { s.layer_count = 0; })).find("bad layer table"),
            std::string::npos);
  EXPECT_NE(open_error(sb_edit([](auto& s) { s.layer_count = 17; })).find("bad layer table"),
            std::string::npos);
  EXPECT_NE(open_error(sb_edit([](auto& s) { s.layers_offset += 8; })).find("bad layer table"),
            std::string::npos);
  EXPECT_NE(open_error(sb_edit([](auto& s) {
              s.incompat &= ~format::kIncompatLayers;
            })).find("layer fields set without the layers feature bit"),
            std::string::npos);
  EXPECT_NE(
      open_error(sb_edit([](auto& s) { s.layers_checksum ^= 1; })).find("layer table checksum mismatch"),
      std::string::npos);
  auto ref = [](uint8_t* p) { return reinterpret_cast<format::LayerRef*>(p); };
  EXPECT_NE(open_error(with_layers([&](uint8_t* p) { ref(p)->hint_len = 5000; })).find("bad location hint"),
            std::string::npos);
  // A hint may not send the reader elsewhere: an absolute path or a URL of another host.
  EXPECT_NE(open_error(with_layers([&](uint8_t* p) { p[ref(p)->hint] = '/'; })).find("not a relative path"),
            std::string::npos);
  EXPECT_NE(open_error(with_layers([&](uint8_t* p) {
              std::memcpy(p + ref(p)->hint, "s3://", 5);
            })).find("not a relative path"),
            std::string::npos);
  EXPECT_NE(open_error(with_layers([&](uint8_t* p) {
              ref(p)->data_size = ref(p)->image_size;
            })).find("bad base regions"),
            std::string::npos);
  // A page entry naming a layer that does not exist, or bytes outside its base's data region.
  surgery::Unpacked u = surgery::unpack_image(good_);
  u.record<format::PageEntry>(format::kSecPages, 0)->layer = 2;
  EXPECT_NE(open_error(surgery::repack_image(good_, u)).find("bad layer"), std::string::npos);
  u = surgery::unpack_image(good_);
  auto* e = u.record<format::PageEntry>(format::kSecPages, 0);
  size_t i = 0;
  while (e->layer != 1) e = u.record<format::PageEntry>(format::kSecPages, ++i);
  const format::LayerRef base = *ref(good_.data() + surgery::superblock(good_).layers_offset);
  e->offset = base.data_offset + base.data_size;
  EXPECT_NE(open_error(surgery::repack_image(good_, u)).find("outside the data region"), std::string::npos);
}

// A hint is untrusted text that messages quote: an escape sequence in it reaches the terminal escaped.
TEST_F(CraftedLayers, AHintIsQuotedEscaped) {
  auto ref = [](uint8_t* p) { return reinterpret_cast<format::LayerRef*>(p); };
  write_bytes(dir_ / "bad.gdfs", with_layers([&](uint8_t* p) { p[ref(p)->hint] = '\x1b'; }));
  const CliResult r = run_inspect({"ls", dir_ / "bad.gdfs"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("\\x1b1.gdfs' cannot be opened"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gdfs::test
