// Damaged and crafted images: truncation, bit flips in every region, and offsets pointing out of range
// behind valid checksums. info, verify, cat and extract must give a clear error that names the image,
// exit 1, and never crash, hang or hand out wrong bytes. (scripts/sanitize runs these under ASan too.)
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "cli_util.h"
#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

using Bytes = std::vector<uint8_t>;

class Corrupt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("corrupt");
    std::filesystem::create_directories(*dir_ / "src/d");
    write_text_file(*dir_ / "src/a", 3 * 65536 + 500, 1);  // three pages and a tail
    write_text_file(*dir_ / "src/d/b", 100000, 2);
    write_file(*dir_ / "src/d/small", "small file\n");
    symlink("a", (*dir_ / "src/link").c_str());
    CliResult r = run_mkfs({"-q", *dir_ / "src", *dir_ / "good.img"});
    ASSERT_EQ(r.code, 0) << r.err;
    good_ = new Bytes(read_bytes(*dir_ / "good.img"));
  }
  static void TearDownTestSuite() {
    delete good_;
    delete dir_;
  }
  static format::Superblock sb(const Bytes& b) {
    format::Superblock s;
    std::memcpy(&s, b.data(), sizeof s);
    return s;
  }
  // Writes `b` as an image and runs one inspect command on it.
  static CliResult inspect(const Bytes& b, std::vector<std::string> args) {
    const std::string path = *dir_ / "bad.img";
    write_bytes(path, b);
    for (auto& a : args) {
      if (a == "IMG") a = path;
    }
    return run_inspect(args);
  }
  // info, verify, cat and extract all fail with a message naming the image.
  static void expect_refused(const Bytes& b, const std::string& what, const std::string& why = "") {
    std::filesystem::remove_all(*dir_ / "x");
    for (auto args : std::vector<std::vector<std::string>>{
             {"info", "IMG"}, {"verify", "IMG"}, {"cat", "IMG", "/a"}, {"extract", "IMG", *dir_ / "x"}}) {
      CliResult r = inspect(b, args);
      EXPECT_EQ(r.code, 1) << what << ": " << args[0] << "\n" << r.out << r.err;
      EXPECT_NE(r.err.find("bad.img"), std::string::npos) << what << ": " << args[0] << ": " << r.err;
      if (!why.empty()) {
        EXPECT_NE(r.err.find(why), std::string::npos) << what << ": " << r.err;
      }
    }
  }
  // Recomputes both checksums, so a crafted change reaches the structural checks.
  static void reseal(Bytes& b) {
    format::Superblock s = sb(b);
    if (s.meta_offset + s.meta_size <= b.size())
      s.meta_checksum = checksum64(b.data() + s.meta_offset, s.meta_size);
    s.sb_checksum = checksum64(&s, offsetof(format::Superblock, sb_checksum));
    std::memcpy(b.data(), &s, sizeof s);
  }
  template <typename T>
  static T* table(Bytes& b, format::Section sec, size_t i = 0) {
    return reinterpret_cast<T*>(b.data() + sb(b).sections[sec].offset) + i;
  }
  static uint32_t type_of(Bytes& b, size_t inode_index) {
    return table<format::Attr>(b, format::kSecAttrs,
                               table<format::Inode>(b, format::kSecInodes, inode_index)->attr)
               ->mode &
           format::kTypeMask;
  }
  static inline TempDir* dir_ = nullptr;
  static inline Bytes* good_ = nullptr;
};

TEST_F(Corrupt, GoodImageIsAccepted) {
  EXPECT_EQ(inspect(*good_, {"verify", "IMG"}).code, 0);
  CliResult c = inspect(*good_, {"cat", "IMG", "/d/small"});
  EXPECT_EQ(c.code, 0);
  EXPECT_EQ(c.out, "small file\n");
}

TEST_F(Corrupt, Truncation) {
  const format::Superblock s = sb(*good_);
  for (uint64_t cut :
       {uint64_t{0}, uint64_t{1}, uint64_t{511}, uint64_t{512}, uint64_t{4096}, s.data_offset + 100,
        s.meta_offset, s.meta_offset + s.meta_size / 2, s.image_size - 1}) {
    Bytes b(good_->begin(), good_->begin() + static_cast<ptrdiff_t>(cut));
    expect_refused(b, "truncated at " + std::to_string(cut));
  }
}

TEST_F(Corrupt, SuperblockBitFlips) {
  for (size_t i = 0; i < format::kSuperblockSize; i += 3) {
    Bytes b = *good_;
    b[i] ^= static_cast<uint8_t>(1u << (i % 8));
    CliResult r = inspect(b, {"info", "IMG"});
    EXPECT_EQ(r.code, 1) << "byte " << i;
    EXPECT_NE(r.err.find("bad.img"), std::string::npos) << r.err;
  }
}

TEST_F(Corrupt, MetadataBitFlips) {
  const format::Superblock s = sb(*good_);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200; ++i) {
    Bytes b = *good_;
    b[s.meta_offset + rng() % s.meta_size] ^= static_cast<uint8_t>(1u << (rng() % 8));
    CliResult r = inspect(b, {"info", "IMG"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("metadata checksum"), std::string::npos) << r.err;
  }
  Bytes b = *good_;
  b[s.meta_offset] ^= 1;
  expect_refused(b, "metadata flip", "metadata checksum");
}

TEST_F(Corrupt, PageDataFlipFailsOnlyThatFile) {
  auto img = Image::open(*dir_ / "good.img");
  const format::PageEntry& e = img->pages()[img->page_ref(img->resolve("/a"), 1).entry];
  Bytes b = *good_;
  b[e.offset + e.csize / 2] ^= 0x10;
  EXPECT_EQ(inspect(b, {"info", "IMG"}).code, 0);  // metadata is intact
  CliResult v = inspect(b, {"verify", "IMG"});
  EXPECT_EQ(v.code, 1) << v.out;
  EXPECT_NE((v.out + v.err).find("/a"), std::string::npos) << v.out << v.err;
  CliResult c = inspect(b, {"cat", "IMG", "/a"});
  EXPECT_EQ(c.code, 1);
  EXPECT_NE(c.err.find("inode " + std::to_string(img->resolve("/a"))), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("page 1"), std::string::npos) << c.err;
  EXPECT_LT(c.out.size(), 65536u);  // page 0 at most; never the damaged page's bytes
  CliResult ok = inspect(b, {"cat", "IMG", "/d/b"});
  EXPECT_EQ(ok.code, 0);
  EXPECT_TRUE(Bytes(ok.out.begin(), ok.out.end()) == read_bytes(*dir_ / "src/d/b"));
  std::filesystem::remove_all(*dir_ / "x");
  EXPECT_EQ(inspect(b, {"extract", "IMG", *dir_ / "x"}).code, 1);
  EXPECT_TRUE(read_bytes(*dir_ / "x/d/b") == read_bytes(*dir_ / "src/d/b"));
}

TEST_F(Corrupt, PageDataFlipsNeverPassVerify) {
  auto img = Image::open(*dir_ / "good.img");
  std::mt19937_64 rng(2);
  for (int i = 0; i < 40; ++i) {
    const format::PageEntry& e = img->pages()[rng() % img->pages().size()];
    Bytes b = *good_;
    b[e.offset + rng() % e.csize] ^= static_cast<uint8_t>(1u << (rng() % 8));
    EXPECT_EQ(inspect(b, {"verify", "IMG"}).code, 1) << "flip " << i;
  }
}

// Structural damage behind valid checksums: what a faulty or hostile writer could produce.
TEST_F(Corrupt, CraftedRecordsAreRefused) {
  using namespace format;
  struct Case {
    const char* what;
    std::function<void(Bytes&)> edit;
  };
  const std::vector<Case> cases = {
      {"unknown incompat bit",
       [](Bytes& b) { reinterpret_cast<Superblock*>(b.data())->incompat |= 1ull << 40; }},
      {"major version 2", [](Bytes& b) { reinterpret_cast<Superblock*>(b.data())->major = 2; }},
      {"page size 2^20", [](Bytes& b) { reinterpret_cast<Superblock*>(b.data())->page_log2 = 20; }},
      {"image size past the file",
       [](Bytes& b) { reinterpret_cast<Superblock*>(b.data())->image_size += 8; }},
      {"section out of range",
       [](Bytes& b) { reinterpret_cast<Superblock*>(b.data())->sections[kSecPages].size += 1ull << 40; }},
      {"page offset past the data", [](Bytes& b) { table<PageEntry>(b, kSecPages)->offset = 1ull << 50; }},
      {"page offset misaligned", [](Bytes& b) { table<PageEntry>(b, kSecPages)->offset += 2; }},
      {"page csize huge", [](Bytes& b) { table<PageEntry>(b, kSecPages)->csize = 0xFFFFFFF0u; }},
      {"page usize zero", [](Bytes& b) { table<PageEntry>(b, kSecPages)->usize = 0; }},
      {"unknown codec", [](Bytes& b) { table<PageEntry>(b, kSecPages)->codec = 9; }},
      {"root not a directory",
       [](Bytes& b) { table<Attr>(b, kSecAttrs, table<Inode>(b, kSecInodes)->attr)->mode = 0100644; }},
      {"bad attribute index", [](Bytes& b) { table<Inode>(b, kSecInodes, 1)->attr = 1u << 30; }},
      {"attribute with an unknown type", [](Bytes& b) { table<Attr>(b, kSecAttrs)->mode = 0170644; }},
      {"attribute with bad nanoseconds",
       [](Bytes& b) { table<Attr>(b, kSecAttrs)->mtime_nsec = 1000000000; }},
      {"root entries out of range", [](Bytes& b) { table<Inode>(b, kSecInodes)->b = 1u << 30; }},
      {"dirent to a bad inode", [](Bytes& b) { table<Dirent>(b, kSecDirents)->ino = 1u << 30; }},
      {"dirent to the root", [](Bytes& b) { table<Dirent>(b, kSecDirents)->ino = 1; }},
      {"dirent name out of the blob", [](Bytes& b) { table<Dirent>(b, kSecDirents)->name = 1u << 30; }},
      {"names unsorted",
       [](Bytes& b) {
         std::swap(table<Dirent>(b, kSecDirents, 0)->name, table<Dirent>(b, kSecDirents, 1)->name);
       }},
      {"bad xattr index", [](Bytes& b) { table<Attr>(b, kSecAttrs)->xattr = 77; }},
      {"file size past its pages",
       [](Bytes& b) {
         for (size_t i = 0; i < sb(b).inode_count; ++i)
           if (type_of(b, i) == format::kTypeReg) table<Inode>(b, kSecInodes, i)->size += 1ull << 40;
       }},
      {"directories share entries",
       [](Bytes& b) {
         Inode* root = table<Inode>(b, kSecInodes, 0);
         for (size_t i = 1; i < sb(b).inode_count; ++i) {
           Inode* in = table<Inode>(b, kSecInodes, i);
           if (type_of(b, i) == format::kTypeDir) in->a = root->a, in->b = root->b;
         }
       }},
      {"tail offset past its pack",
       [](Bytes& b) {
         for (size_t i = 0; i < sb(b).inode_count; ++i) {
           Inode* in = table<Inode>(b, kSecInodes, i);
           if (type_of(b, i) == format::kTypeReg && in->b != kNone) in->c = 70000;
         }
       }},
  };
  for (const Case& c : cases) {
    Bytes b = *good_;
    c.edit(b);
    reseal(b);
    expect_refused(b, c.what);
  }
}

TEST_F(Corrupt, UnknownIncompatBitIsNamed) {
  Bytes b = *good_;
  reinterpret_cast<format::Superblock*>(b.data())->incompat |= 1ull << 5;
  reseal(b);
  CliResult r = inspect(b, {"info", "IMG"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("incompat"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0x20"), std::string::npos) << r.err;
}

TEST_F(Corrupt, RandomGarbageAndEmptyFiles) {
  std::mt19937 rng(3);
  for (size_t n : {0, 10, 512, 4096, 70000}) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    expect_refused(b, "garbage of " + std::to_string(n) + " bytes");
  }
  CliResult r = run_inspect({"info", *dir_ / "does-not-exist.img"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("does-not-exist.img"), std::string::npos);
}

}  // namespace
}  // namespace gdfs::test
