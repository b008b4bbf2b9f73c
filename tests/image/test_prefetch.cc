// mkfs's small-file prefetcher (mkfs/prefetch.h): bytes come back in the order given, across the
// window's wrap, with any number of reader threads; a file replaced after the scan is an error at its
// own turn, not before; stopping early (an error elsewhere) joins cleanly.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cli_util.h"
#include "mkfs/diag.h"
#include "mkfs/prefetch.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

using mkfs::ScanNode;

class PrefetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("prefetch");
    o_.source = dir_->path();
  }
  // Writes file `i` (1..300 bytes, distinct contents) and returns its node as the scan would.
  ScanNode add_file(size_t i) {
    std::string rel = "f";
    rel += std::to_string(i);
    write_file(*dir_ / rel, content(i));
    return node_of(rel);
  }
  ScanNode node_of(const std::string& rel) {
    struct stat st {};
    EXPECT_EQ(::lstat((*dir_ / rel).c_str(), &st), 0);
    ScanNode n;
    n.mode = st.st_mode;
    n.size = static_cast<uint64_t>(st.st_size);
    n.dev = st.st_dev;
    n.ino = st.st_ino;
    n.path = rel;
    return n;
  }
  // 1..300 bytes, different for every i. (Appended, not concatenated: GCC 12's -Wrestrict misfires on
  // string + to_string.)
  static std::string content(size_t i) {
    std::string s(1 + i % 300, static_cast<char>('a' + i % 26));
    s.append(std::to_string(i));
    return s;
  }

  std::unique_ptr<TempDir> dir_;
  mkfs::Options o_;
};

TEST_F(PrefetchTest, BytesComeBackInOrderAcrossTheWindow) {
  std::vector<ScanNode> nodes;
  for (size_t i = 0; i < 3 * mkfs::Prefetcher::kWindow + 7; ++i) nodes.push_back(add_file(i));
  std::vector<const ScanNode*> files;
  for (const ScanNode& n : nodes) files.push_back(&n);
  for (const unsigned threads : {1u, 2u, 5u}) {
    mkfs::Prefetcher p(o_, files, threads);
    std::vector<uint8_t> out;
    for (size_t i = 0; i < nodes.size(); ++i) {
      p.take(out);
      ASSERT_EQ(std::string(out.begin(), out.end()), content(i))
          << "file " << i << ", " << threads << " threads";
    }
    EXPECT_THROW(p.take(out), std::logic_error);
  }
}

TEST_F(PrefetchTest, AReplacedFileFailsAtItsTurn) {
  std::vector<ScanNode> nodes;
  for (size_t i = 0; i < 10; ++i) nodes.push_back(add_file(i));
  // File 6 is replaced after the scan: same name, another inode (made while the old one still exists,
  // so that the file system cannot hand its number out again).
  write_file(*dir_ / "new", content(6));
  ASSERT_EQ(::rename((*dir_ / "new").c_str(), (*dir_ / "f6").c_str()), 0);
  std::vector<const ScanNode*> files;
  for (const ScanNode& n : nodes) files.push_back(&n);
  mkfs::Prefetcher p(o_, files, 2);
  std::vector<uint8_t> out;
  for (size_t i = 0; i < 6; ++i) {
    p.take(out);
    EXPECT_EQ(std::string(out.begin(), out.end()), content(i));
  }
  try {
    p.take(out);
    FAIL() << "no error for the replaced file";
  } catch (const mkfs::MkfsError& e) {
    EXPECT_NE(std::string(e.what()).find("f6"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("replaced"), std::string::npos) << e.what();
  }
  p.take(out);  // the files after it are still there
  EXPECT_EQ(std::string(out.begin(), out.end()), content(7));
}

TEST_F(PrefetchTest, StoppingEarlyJoins) {
  std::vector<ScanNode> nodes;
  for (size_t i = 0; i < 2 * mkfs::Prefetcher::kWindow; ++i) nodes.push_back(add_file(i));
  std::vector<const ScanNode*> files;
  for (const ScanNode& n : nodes) files.push_back(&n);
  {
    mkfs::Prefetcher p(o_, files, 2);
    std::vector<uint8_t> out;
    p.take(out);
  }  // the readers are blocked on a full window: the destructor must still return
  mkfs::Prefetcher none(o_, {}, 2);
}

}  // namespace
}  // namespace gdfs::test
