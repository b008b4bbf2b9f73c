// mkfs.gdfs when the source tree misbehaves under it: an entry that vanishes between the scan and its
// read, a file replaced by another, a read or lstat that fails, a directory that cannot be listed, a
// file that shrinks or grows while it is packed. The races are made deterministic by the test seam of
// mkfs/source_hook.h: the hook changes the tree, or fails the call, just before the system call.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cli_util.h"
#include "gdfs/image.h"
#include "mkfs/source_hook.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using mkfs::SourceOp;

class MkfsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "src/sub");
    write_text_file(dir_ / "src/a.txt", 150000, 1);  // two full pages and a tail
    write_text_file(dir_ / "src/b.o", 3000, 2);      // one small file: the prefetcher reads it
    write_text_file(dir_ / "src/sub/c.txt", 70000, 3);
    write_text_file(dir_ / "src/sub/dup.txt", 70000, 3);
    mkfs::set_source_hook([this](SourceOp op, std::string_view rel) { return on_call(op, rel); });
  }
  void TearDown() override { mkfs::set_source_hook({}); }

  // Makes call number `nth` (from 1, counted per run) of `op` on `rel` run `act`, then fail with
  // `error` (0: the real system call goes ahead, on whatever `act` left behind).
  void on(SourceOp op, std::string rel, int error, std::function<void()> act = {}, int nth = 1) {
    faults_.push_back({op, std::move(rel), error, std::move(act), nth, 0});
  }

  // mkfs.gdfs -q --mtime 0 [extra...] src IMAGE: fixed mtimes, since the hooks change the tree's.
  CliResult mkfs(const std::string& image, std::vector<std::string> extra = {}) {
    for (Fault& f : faults_) f.calls = 0;
    std::vector<std::string> args{"-q", "--mtime", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(dir_ / "src");
    args.push_back(image);
    return run_mkfs(args);
  }
  std::string src(const std::string& rel) {
    const std::vector<uint8_t> b = read_bytes(dir_ / ("src/" + rel));
    return {b.begin(), b.end()};
  }
  // The file's bytes as the image holds them (its inode size, checked against the bytes read).
  std::string stored(const std::string& image, const std::string& rel) {
    const auto img = Image::open(image);
    const uint32_t ino = img->resolve(rel);
    EXPECT_NE(ino, 0u) << rel;
    CliResult r = run_inspect({"cat", image, rel});
    EXPECT_EQ(r.code, 0) << r.err;
    if (ino != 0) {
      EXPECT_EQ(img->inode(ino).size, r.out.size()) << rel;
    }
    return r.out;
  }
  bool in_image(const std::string& image, const std::string& rel) {
    return Image::open(image)->resolve(rel) != 0;
  }
  // The lines of `err` that contain every one of `words`.
  static size_t lines_with(const std::string& err, std::vector<std::string> words) {
    size_t n = 0;
    for (size_t at = 0; at < err.size();) {
      const size_t end = std::min(err.find('\n', at), err.size());
      const std::string line = err.substr(at, end - at);
      bool all = true;
      for (const std::string& w : words) all = all && line.find(w) != std::string::npos;
      n += all;
      at = end + 1;
    }
    return n;
  }
  void expect_verifies(const std::string& image) {
    CliResult v = run_inspect({"verify", image});
    EXPECT_EQ(v.code, 0) << v.out << v.err;
  }
  void truncate_src(const std::string& rel, off_t size) {
    ASSERT_EQ(::truncate((dir_ / ("src/" + rel)).c_str(), size), 0);
  }
  void clear_faults() { faults_.clear(); }
  void append_src(const std::string& rel, const std::string& bytes) {
    std::ofstream f(dir_ / ("src/" + rel), std::ios::binary | std::ios::app);
    f << bytes;
  }

  TempDir dir_{"mkfs-errors"};

 private:
  struct Fault {
    SourceOp op;
    std::string rel;
    int error;
    std::function<void()> act;
    int nth, calls;
  };
  // Called by mkfs, from the prefetcher's threads too.
  int on_call(SourceOp op, std::string_view rel) {
    std::lock_guard lock(mu_);
    for (Fault& f : faults_) {
      if (f.op != op || f.rel != rel || ++f.calls != f.nth) continue;
      if (f.act) f.act();
      return f.error;
    }
    return 0;
  }
  std::mutex mu_;
  std::vector<Fault> faults_;
};

// A file unlinked between the scan and its read: fatal without --ignore-errors, naming it; skipped with
// it, exit 2, and the image is the one the tree without that file gives. Both a small file (read by the
// prefetcher) and a multi-page one (read by the packer).
TEST_F(MkfsErrors, VanishedFileIsSkipped) {
  for (const std::string rel : {"b.o", "a.txt"}) {
    SCOPED_TRACE(rel);
    const std::string saved = src(rel);
    on(SourceOp::kOpen, rel, 0, [this, rel] { fs::remove(dir_ / ("src/" + rel)); });
    CliResult failed = mkfs(dir_ / "failed.img");
    EXPECT_EQ(failed.code, 1);
    EXPECT_EQ(lines_with(failed.err, {"'" + rel + "'", std::strerror(ENOENT)}), 1u) << failed.err;
    EXPECT_FALSE(fs::exists(dir_ / "failed.img"));

    write_file(dir_ / ("src/" + rel), saved);
    const std::string image = dir_ / ("skipped-" + rel);
    CliResult r = mkfs(image, {"--ignore-errors"});
    ASSERT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lines_with(r.err, {"'" + rel + "'", std::strerror(ENOENT), "skipped"}), 1u) << r.err;
    EXPECT_FALSE(in_image(image, "/" + rel));
    EXPECT_EQ(stored(image, "/sub/c.txt"), src("sub/c.txt"));
    expect_verifies(image);

    clear_faults();  // the file is gone now: the same tree, packed without a hook
    const std::string plain = dir_ / ("plain-" + rel);
    ASSERT_EQ(mkfs(plain).code, 0);
    EXPECT_EQ(read_bytes(image), read_bytes(plain)) << "a file skipped before its first read leaves no trace";
    write_file(dir_ / ("src/" + rel), saved);
  }
}

// EIO from the first read of a small file, and from the second read of a large one (after its first
// page went to the pipeline): skipped, and what was already packed of it does not break the image.
TEST_F(MkfsErrors, ReadErrorIsSkipped) {
  on(SourceOp::kRead, "b.o", EIO);
  on(SourceOp::kRead, "a.txt", EIO, {}, 2);
  CliResult failed = mkfs(dir_ / "failed.img");
  EXPECT_EQ(failed.code, 1);
  EXPECT_EQ(lines_with(failed.err, {"'a.txt'", std::strerror(EIO)}), 1u) << failed.err;  // packed first
  EXPECT_FALSE(fs::exists(dir_ / "failed.img"));

  CliResult r = mkfs(dir_ / "img", {"--ignore-errors", "-t", "3"});
  ASSERT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines_with(r.err, {"'b.o'", std::strerror(EIO), "skipped"}), 1u) << r.err;
  EXPECT_EQ(lines_with(r.err, {"'a.txt'", std::strerror(EIO), "skipped"}), 1u) << r.err;
  EXPECT_FALSE(in_image(dir_ / "img", "/a.txt"));
  EXPECT_FALSE(in_image(dir_ / "img", "/b.o"));
  EXPECT_EQ(stored(dir_ / "img", "/sub/c.txt"), src("sub/c.txt"));
  EXPECT_EQ(stored(dir_ / "img", "/sub/dup.txt"), src("sub/dup.txt"));
  expect_verifies(dir_ / "img");
  ASSERT_EQ(mkfs(dir_ / "again", {"--ignore-errors", "-t", "1"}).code, 2);
  EXPECT_EQ(read_bytes(dir_ / "img"), read_bytes(dir_ / "again"))
      << "the same tree and errors, the same image";
}

// A file replaced by another (same name, another inode) after the scan is not the file the scan saw:
// skipped, not packed with the new file's contents under the old one's size.
TEST_F(MkfsErrors, ReplacedFileIsSkipped) {
  on(SourceOp::kOpen, "sub/c.txt", 0, [this] {
    write_file(dir_ / "src/new", "another file");
    fs::rename(dir_ / "src/new", dir_ / "src/sub/c.txt");
  });
  CliResult r = mkfs(dir_ / "img", {"--ignore-errors"});
  ASSERT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines_with(r.err, {"'sub/c.txt'", "replaced", "skipped"}), 1u) << r.err;
  EXPECT_FALSE(in_image(dir_ / "img", "/sub/c.txt"));
  EXPECT_EQ(stored(dir_ / "img", "/sub/dup.txt"), src("sub/dup.txt"));
  expect_verifies(dir_ / "img");
}

// A directory that cannot be listed is left out with everything in it; an entry whose lstat fails is
// left out. As root chmod 000 cannot make either happen, so the seam fails the calls.
TEST_F(MkfsErrors, UnlistableDirectoryAndFailedLstatAreSkipped) {
  on(SourceOp::kListDir, "sub", EACCES);
  on(SourceOp::kStat, "b.o", EIO);
  CliResult failed = mkfs(dir_ / "failed.img");
  EXPECT_EQ(failed.code, 1);
  EXPECT_EQ(lines_with(failed.err, {"'b.o'", std::strerror(EIO)}), 1u) << failed.err;
  CliResult r = mkfs(dir_ / "img", {"--ignore-errors"});
  ASSERT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines_with(r.err, {"'sub'", std::strerror(EACCES), "skipped"}), 1u) << r.err;
  EXPECT_EQ(lines_with(r.err, {"'b.o'", std::strerror(EIO), "skipped"}), 1u) << r.err;
  EXPECT_FALSE(in_image(dir_ / "img", "/sub"));
  EXPECT_FALSE(in_image(dir_ / "img", "/b.o"));
  EXPECT_EQ(stored(dir_ / "img", "/a.txt"), src("a.txt"));
  expect_verifies(dir_ / "img");
}

// Every kind of per-entry error at once: one "(skipped)" line for each, a count at the end, exit 2.
TEST_F(MkfsErrors, EverySkippedEntryIsListed) {
  on(SourceOp::kOpen, "b.o", 0, [this] { fs::remove(dir_ / "src/b.o"); });
  on(SourceOp::kRead, "a.txt", EIO);
  on(SourceOp::kListDir, "sub", EIO);
  CliResult r = mkfs(dir_ / "img", {"--ignore-errors"});
  ASSERT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines_with(r.err, {"skipped"}), 3u) << r.err;
  for (const char* rel : {"'b.o'", "'a.txt'", "'sub'"})
    EXPECT_EQ(lines_with(r.err, {rel, "skipped"}), 1u) << r.err;
  EXPECT_EQ(lines_with(r.err, {"3 entries"}), 1u) << r.err;
  EXPECT_EQ(Image::open(dir_ / "img")->inode_count(), 1u) << "only the root is left";
  expect_verifies(dir_ / "img");
}

// Files that shrink between the scan and their read, or while they are read, are stored as read, with a
// warning naming them; their inode size is the bytes stored. Exit 0: nothing was left out.
TEST_F(MkfsErrors, ShrunkFileIsStoredAsRead) {
  const std::string a = src("a.txt"), b = src("b.o"), c = src("sub/c.txt");
  on(SourceOp::kOpen, "a.txt", 0, [this] { truncate_src("a.txt", 100000); });
  on(SourceOp::kOpen, "b.o", 0, [this] { truncate_src("b.o", 1000); });
  on(
      SourceOp::kRead, "sub/c.txt", 0, [this] { truncate_src("sub/c.txt", 66000); }, 2);  // mid-read
  CliResult r = mkfs(dir_ / "img");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* rel : {"'a.txt'", "'b.o'", "'sub/c.txt'"})
    EXPECT_EQ(lines_with(r.err, {"warning", rel, "changed as we read it"}), 1u) << r.err;
  EXPECT_EQ(stored(dir_ / "img", "/a.txt"), a.substr(0, 100000));
  EXPECT_EQ(stored(dir_ / "img", "/b.o"), b.substr(0, 1000));
  EXPECT_EQ(stored(dir_ / "img", "/sub/c.txt"), c.substr(0, 66000));
  EXPECT_EQ(stored(dir_ / "img", "/sub/dup.txt"), src("sub/dup.txt"));
  expect_verifies(dir_ / "img");
}

// A file emptied after the scan is stored empty.
TEST_F(MkfsErrors, FileEmptiedAfterTheScanIsStoredEmpty) {
  on(SourceOp::kOpen, "b.o", 0, [this] { truncate_src("b.o", 0); });
  on(SourceOp::kOpen, "a.txt", 0, [this] { truncate_src("a.txt", 0); });
  CliResult r = mkfs(dir_ / "img");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines_with(r.err, {"warning", "'b.o'", "changed as we read it"}), 1u) << r.err;
  EXPECT_EQ(stored(dir_ / "img", "/b.o"), "");
  EXPECT_EQ(stored(dir_ / "img", "/a.txt"), "");
  expect_verifies(dir_ / "img");
}

// Files that grow are stored with the size the scan saw (what was there when the tree was walked), with
// a warning, whether they grew before their read or during it.
TEST_F(MkfsErrors, GrownFileIsStoredAtItsScannedSize) {
  const std::string a = src("a.txt"), b = src("b.o"), c = src("sub/c.txt");
  on(SourceOp::kOpen, "a.txt", 0, [this] { append_src("a.txt", std::string(5000, 'x')); });
  on(SourceOp::kOpen, "b.o", 0, [this] { append_src("b.o", "more"); });
  on(
      SourceOp::kRead, "sub/c.txt", 0, [this] { append_src("sub/c.txt", "more"); }, 2);  // mid-read
  CliResult r = mkfs(dir_ / "img");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* rel : {"'a.txt'", "'b.o'", "'sub/c.txt'"})
    EXPECT_EQ(lines_with(r.err, {"warning", rel, "changed as we read it"}), 1u) << r.err;
  EXPECT_EQ(stored(dir_ / "img", "/a.txt"), a);
  EXPECT_EQ(stored(dir_ / "img", "/b.o"), b);
  EXPECT_EQ(stored(dir_ / "img", "/sub/c.txt"), c);
  expect_verifies(dir_ / "img");
}

// The scan lists directories on several threads (mkfs/scan_list.h) but decides in one order: the
// messages, their order, the inode numbers and the image are the same for any --threads. A tree of 40
// directories with hard links across them, and failures in several of them.
TEST_F(MkfsErrors, ScanResultAndMessagesDoNotDependOnThreads) {
  const auto named = [](const char* prefix, int n) {
    std::string s(prefix);  // not "literal" + std::string, which GCC 12 warns about (-Wrestrict)
    s += std::to_string(n);
    return s;
  };
  const fs::path root = fs::path(dir_.path()) / "src";
  for (int d = 0; d < 40; ++d) {
    const fs::path dir = root / "many" / named("d", d);
    fs::create_directories(dir / "inner");
    for (int f = 0; f < 12; ++f)
      write_text_file(dir / named("f", f), 100 + 37 * static_cast<uint64_t>(f),
                      static_cast<uint32_t>(d * 100 + f));
    write_text_file(dir / "inner/x", 5000, static_cast<uint32_t>(d));
    if (d > 0) fs::create_hard_link(root / "many/d0/f1", dir / "link");
  }
  for (int d : {3, 17, 31}) on(SourceOp::kStat, "many/" + named("d", d) + "/f5", EIO);
  for (int d : {8, 25}) on(SourceOp::kListDir, "many/" + named("d", d) + "/inner", EACCES);
  on(SourceOp::kListDir, "many/d39", EIO);
  std::vector<CliResult> runs;
  for (int threads : {1, 2, 7})
    runs.push_back(mkfs(dir_ / named("t", threads), {"--ignore-errors", "-t", std::to_string(threads)}));
  ASSERT_EQ(runs[0].code, 2) << runs[0].err;
  EXPECT_EQ(lines_with(runs[0].err, {"skipped"}), 6u) << runs[0].err;
  // Breadth-first, in name order: d17 before d3 before d31, and every file before the inner directories.
  EXPECT_LT(runs[0].err.find("many/d17/f5"), runs[0].err.find("many/d3/f5")) << runs[0].err;
  EXPECT_LT(runs[0].err.find("many/d31/f5"), runs[0].err.find("many/d25/inner")) << runs[0].err;
  const std::vector<uint8_t> one = read_bytes(dir_ / "t1");
  for (size_t i : {1, 2}) {
    const std::string t = i == 1 ? "t2" : "t7";
    EXPECT_EQ(runs[i].code, 2) << t;
    EXPECT_EQ(runs[i].err, runs[0].err) << t;
    EXPECT_TRUE(read_bytes(dir_ / t) == one) << t;
  }
  const auto img = Image::open(dir_ / "t1");
  EXPECT_EQ(img->resolve("/many/d5/link"), img->resolve("/many/d0/f1"));
  EXPECT_EQ(img->resolve("/many/d3/f5"), 0u);
  EXPECT_EQ(img->resolve("/many/d8/inner"), 0u);
  EXPECT_NE(img->resolve("/many/d9/inner/x"), 0u);
  EXPECT_EQ(stored(dir_ / "t1", "/many/d12/f7"), src("many/d12/f7"));
  expect_verifies(dir_ / "t1");
}

}  // namespace
}  // namespace gdfs::test
