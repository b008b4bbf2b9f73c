// Damaged and crafted images: truncation, bit flips in every region, offsets pointing out of range
// behind valid checksums, and a crafted metadata block table or block. Records are edited in the
// inflated metadata and encoded again (tests/fuzz/image_surgery.h), as a faulty writer would do. info,
// verify, cat and extract must give a clear error that names the image, exit 1, and never crash, hang or hand
// out wrong bytes. (scripts/sanitize runs these under ASan too.)
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "cli_util.h"
#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/image.h"
#include "tests/fuzz/image_surgery.h"
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
    // Enough entries that the inode table's block is GDeflate, not stored: the block tests need one.
    std::filesystem::create_directories(*dir_ / "src/many");
    for (int i = 0; i < 200; ++i) write_file(*dir_ / ("src/many/f" + std::to_string(i)), "x\n");
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
  // Recomputes every checksum, so a crafted change to the superblock or the stored metadata reaches the
  // checks behind them.
  static void reseal(Bytes& b) { surgery::reseal(b); }
  // The good image with its inflated records edited, encoded again and resealed.
  static Bytes with_records(const std::function<void(surgery::Unpacked&)>& edit) {
    surgery::Unpacked u = surgery::unpack_image(*good_);
    edit(u);
    return surgery::repack_image(*good_, u);
  }
  // Entry i of the stored metadata's block table.
  static format::MetaBlock* block(Bytes& b, size_t i) {
    return reinterpret_cast<format::MetaBlock*>(b.data() + sb(b).meta_offset) + i;
  }
  static uint32_t type_of(surgery::Unpacked& u, size_t inode_index) {
    const uint32_t attr = u.record<format::Inode>(format::kSecInodes, inode_index)->attr;
    return u.record<format::Attr>(format::kSecAttrs, attr)->mode & format::kTypeMask;
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

// Superblock damage behind a valid checksum.
TEST_F(Corrupt, CraftedSuperblocksAreRefused) {
  using namespace format;
  struct Case {
    const char* what;
    std::function<void(Superblock&)> edit;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"unknown incompat bit", [](Superblock& s) { s.incompat |= 1ull << 40; }, "incompat"},
      {"major version 3", [](Superblock& s) { s.major = 3; }, "not supported"},
      {"major version 1", [](Superblock& s) { s.major = 1; }, "made by an older mkfs.gdfs; rebuild"},
      // Issue 24: 0.0 was called "made by an older mkfs.gdfs", but no mkfs.gdfs ever wrote it.
      {"version 0.0",
       [](Superblock& s) {
         s.major = 0;
         s.minor = 0;
       },
       "format version 0.0 is invalid"},
      {"page size 2^20", [](Superblock& s) { s.page_log2 = 20; }, "page size"},
      {"image size past the file", [](Superblock& s) { s.image_size += 1 << 20; }, "truncated"},
      {"section out of range", [](Superblock& s) { s.sections[kSecPages].size += 1ull << 40; }, "section 3"},
      {"section moved", [](Superblock& s) { s.sections[kSecBlob].offset += 8; }, "section 8"},
      {"reserved section slot used", [](Superblock& s) { s.sections[10].size = 8; }, "section 10"},
      {"inflated size past the sections", [](Superblock& s) { s.meta_usize += 8; }, "inflated metadata size"},
      {"inflated size huge",
       [](Superblock& s) {
         s.sections[kSecBlob].size += 1ull << 36;
         s.meta_usize += 1ull << 36;
       },
       "too large"},
      {"more than 512-fold",
       [](Superblock& s) {
         const uint64_t grow = s.meta_size * 512;
         s.sections[kSecBlob].size += grow;
         s.meta_usize += grow;
         s.meta_blocks +=
             static_cast<uint32_t>((s.sections[kSecBlob].size + kMetaBlockSize - 1) / kMetaBlockSize -
                                   (s.sections[kSecBlob].size - grow + kMetaBlockSize - 1) / kMetaBlockSize);
       },
       "512-fold"},
      {"block count", [](Superblock& s) { s.meta_blocks += 1; }, "block count"},
      {"inflated checksum", [](Superblock& s) { s.meta_ucheck ^= 1; }, "inflated metadata checksum"},
  };
  for (const Case& c : cases) {
    Bytes b = *good_;
    format::Superblock s = sb(b);
    c.edit(s);
    std::memcpy(b.data(), &s, sizeof s);
    if (std::string(c.what) == "inflated checksum") {
      surgery::put_superblock(b, s);  // the stored checksum stays valid; only the inflated one is wrong
    } else {
      reseal(b);
    }
    expect_refused(b, c.what, c.why);
  }
}

// The stored metadata's block table and blocks, crafted behind valid checksums: refused with a clear
// message, never a crash or an allocation the image's size does not justify.
TEST_F(Corrupt, CraftedMetadataBlocksAreRefused) {
  using namespace format;
  Bytes good = *good_;
  ASSERT_GE(sb(good).meta_blocks, 2u);
  ASSERT_EQ(block(good, 0)->codec, kCodecGDeflate);
  struct Case {
    const char* what;
    std::function<void(Bytes&)> edit;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"unknown block codec", [](Bytes& b) { block(b, 0)->codec = 9; }, "unknown codec"},
      {"bitpack block", [](Bytes& b) { block(b, 0)->codec = kCodecBitpack; }, "unknown codec"},
      {"reserved bytes", [](Bytes& b) { block(b, 1)->reserved[2] = 1; }, "reserved"},
      {"block past the region", [](Bytes& b) { block(b, 0)->csize = 0x10000; }, "metadata block 0"},
      {"block size huge", [](Bytes& b) { block(b, 0)->csize = 0xFFFFFFF0u; }, "larger than its bound"},
      {"block size zero", [](Bytes& b) { block(b, 0)->csize = 0; }, "too small"},
      {"stored block of the wrong size", [](Bytes& b) { block(b, 0)->codec = kCodecStored; }, "wrong size"},
      {"garbage block",
       [](Bytes& b) {
         const size_t at = sb(b).meta_offset + sb(b).meta_blocks * sizeof(MetaBlock);
         std::memset(b.data() + format::align_up(at, 4), 0xFF, block(b, 0)->csize);
       },
       "does not decode"},
      {"bytes after the last block",
       [](Bytes& b) {
         b.insert(b.end(), 4, 0);
         Superblock s = sb(b);
         s.meta_size += 4, s.image_size += 4;
         std::memcpy(b.data(), &s, sizeof s);
       },
       "after its last block"},
  };
  for (const Case& c : cases) {
    Bytes b = *good_;
    c.edit(b);
    reseal(b);
    expect_refused(b, c.what, c.why);
  }
}

// Structural damage to the records behind valid checksums: what a faulty or hostile writer could
// produce.
TEST_F(Corrupt, CraftedRecordsAreRefused) {
  using namespace format;
  using U = surgery::Unpacked;
  struct Case {
    const char* what;
    std::function<void(U&)> edit;
  };
  const std::vector<Case> cases = {
      {"page offset past the data", [](U& u) { u.record<PageEntry>(kSecPages)->offset = 1ull << 50; }},
      {"page offset misaligned", [](U& u) { u.record<PageEntry>(kSecPages)->offset += 2; }},
      {"page csize huge", [](U& u) { u.record<PageEntry>(kSecPages)->csize = 0xFFFFFFF0u; }},
      {"page usize zero", [](U& u) { u.record<PageEntry>(kSecPages)->usize = 0; }},
      {"unknown codec", [](U& u) { u.record<PageEntry>(kSecPages)->codec = 9; }},
      {"root not a directory",
       [](U& u) { u.record<Attr>(kSecAttrs, u.record<Inode>(kSecInodes)->attr)->mode = 0100644; }},
      {"bad attribute index", [](U& u) { u.record<Inode>(kSecInodes, 1)->attr = 1u << 30; }},
      {"attribute with an unknown type", [](U& u) { u.record<Attr>(kSecAttrs)->mode = 0170644; }},
      {"attribute with bad nanoseconds", [](U& u) { u.record<Attr>(kSecAttrs)->mtime_nsec = 1000000000; }},
      {"root entries out of range", [](U& u) { u.record<Inode>(kSecInodes)->dirent_count = 1u << 30; }},
      {"dirent to a bad inode", [](U& u) { u.record<Dirent>(kSecDirents)->ino = 1u << 30; }},
      {"dirent to the root", [](U& u) { u.record<Dirent>(kSecDirents)->ino = 1; }},
      {"dirent name out of the blob", [](U& u) { u.record<Dirent>(kSecDirents)->name = 1u << 30; }},
      {"names unsorted",
       [](U& u) {
         std::swap(u.record<Dirent>(kSecDirents, 0)->name, u.record<Dirent>(kSecDirents, 1)->name);
       }},
      {"bad xattr index", [](U& u) { u.record<Attr>(kSecAttrs)->xattr = 77; }},
      {"file size past its pages",
       [](U& u) {
         for (size_t i = 0; i < u.sb.inode_count; ++i)
           if (type_of(u, i) == kTypeReg) u.record<Inode>(kSecInodes, i)->size += 1ull << 40;
       }},
      {"directories share entries",
       [](U& u) {
         Inode* root = u.record<Inode>(kSecInodes, 0);
         for (size_t i = 1; i < u.sb.inode_count; ++i) {
           Inode* in = u.record<Inode>(kSecInodes, i);
           if (type_of(u, i) == kTypeDir)
             in->first_dirent = root->first_dirent, in->dirent_count = root->dirent_count;
         }
       }},
      {"tail offset past its pack",
       [](U& u) {
         for (size_t i = 0; i < u.sb.inode_count; ++i) {
           Inode* in = u.record<Inode>(kSecInodes, i);
           if (type_of(u, i) == kTypeReg && in->tail_entry != kNone) in->tail_offset = 70000;
         }
       }},
  };
  // The surgery itself is sound: an unedited round trip is accepted.
  EXPECT_EQ(inspect(with_records([](U&) {}), {"verify", "IMG"}).code, 0);
  for (const Case& c : cases) expect_refused(with_records(c.edit), c.what);
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
