// Python bytecode in archive builds (mkfs/bytecode_hold.h): a compiled file's tail waits for its source
// and is packed after it, so that an archive in name order gives an image as small as its tree's; the
// hold is bounded, and what never pairs is packed all the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "archive_util.h"
#include "bytecode_hold.h"
#include "cli_util.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using mkfs::BytecodeHold;

TEST(BytecodeHold, SourceOfAMemberPath) {
  EXPECT_EQ(BytecodeHold::source_of("pkg/__pycache__/m.cpython-311.pyc"), "pkg/m.py");
  EXPECT_EQ(BytecodeHold::source_of("a/b/__pycache__/m.cpython-311.opt-2.pyc"), "a/b/m.py");
  EXPECT_EQ(BytecodeHold::source_of("__pycache__/m.cpython-311.pyc"), "m.py");
  EXPECT_EQ(BytecodeHold::source_of("pkg/x__pycache__/m.cpython-311.pyc"), "");
  EXPECT_EQ(BytecodeHold::source_of("pkg/m.cpython-311.pyc"), "");  // not in a __pycache__
  EXPECT_EQ(BytecodeHold::source_of("pkg/__pycache__/m.pyc"), "");  // no tag
  EXPECT_EQ(BytecodeHold::source_of("m.cpython-311.pyc"), "");
  EXPECT_EQ(BytecodeHold::source_of("pkg/__pycache__"), "");
}

TEST(BytecodeHold, TakesInArrivalOrderDropsAndStaysBounded) {
  BytecodeHold h;
  const std::vector<uint8_t> tail(40000, 7);
  EXPECT_TRUE(h.hold("a.py", {1, "__pycache__/a.x.pyc", tail, true}).empty());
  EXPECT_TRUE(h.hold("a.py", {2, "__pycache__/a.x.opt-1.pyc", tail, true}).empty());
  EXPECT_TRUE(h.hold("b.py", {3, "__pycache__/b.x.pyc", tail, true}).empty());
  EXPECT_EQ(h.bytes_for("a.py"), 80000u);
  h.drop(3);  // packed again: nothing of it is held
  EXPECT_EQ(h.bytes_for("b.py"), 0u);
  const auto a = h.take("a.py");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].node, 1u);
  EXPECT_EQ(a[1].node, 2u);
  EXPECT_EQ(a[1].path, "__pycache__/a.x.opt-1.pyc");
  EXPECT_TRUE(h.take("a.py").empty());

  // Past the bound the oldest come out, to be packed where they stand.
  const uint64_t n = BytecodeHold::kMaxBytes / tail.size();
  for (uint32_t i = 0; i < n; ++i)
    EXPECT_TRUE(h.hold(std::to_string(i) + ".py", {10 + i, "p", tail, true}).empty());
  const auto out = h.hold("last", {5, "p", tail, true});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].node, 10u);
  EXPECT_EQ(h.bytes_for("0.py"), 0u);
  const auto rest = h.take_all();
  ASSERT_EQ(rest.size(), n);
  EXPECT_EQ(rest.back().node, 5u);
  EXPECT_TRUE(h.take_all().empty());
}

uint64_t tail_entry(const Image& img, const std::string& path) {
  const PageRef r = img.page_ref(img.resolve(path), 0);
  EXPECT_EQ(r.kind, PageRef::kTail) << path;
  return r.entry;
}

class ArchiveBytecode : public ::testing::Test {
 protected:
  void SetUp() override {
    make_python_package(dir_ / "src", 24, true);
    ASSERT_EQ(run_mkfs({"-q", dir_ / "src", dir_ / "tree.gdfs"}).code, 0);
  }
  // The package's paths with the bytecode (and its directory) before the sources, as tar --sort=name
  // writes them ("__pycache__" sorts before lowercase names); or the sources first, but after one
  // module's bytecode (tar's directory order can give either, file by file).
  std::vector<std::string> paths(bool bytecode_first) const {
    std::vector<std::string> cache, sources, out;
    for (const std::string& p : inode_order(dir_ / "src")) {
      if (p == "." || p == "pkg")
        out.push_back(p);
      else
        (p.find("__pycache__") != std::string::npos ? cache : sources).push_back(p);
    }
    std::sort(cache.begin(), cache.end());
    std::sort(sources.begin(), sources.end());
    if (bytecode_first) {
      out.insert(out.end(), cache.begin(), cache.end());
      out.insert(out.end(), sources.begin(), sources.end());
    } else {
      out.insert(out.end(), cache.begin(), cache.begin() + 2);  // __pycache__ and one module's bytecode
      out.insert(out.end(), sources.begin(), sources.end());
      out.insert(out.end(), cache.begin() + 2, cache.end());
    }
    return out;
  }
  std::string build(bool bytecode_first) {
    const std::string name = bytecode_first ? "first" : "after";
    write_tree_archive(dir_ / "src", paths(bytecode_first), dir_ / (name + ".tar"), kPax);
    const CliResult r = run_mkfs({"-q", dir_ / (name + ".tar"), dir_ / (name + ".gdfs")});
    EXPECT_EQ(r.code, 0) << r.err;
    CliResult x = run_inspect({"extract", dir_ / (name + ".gdfs"), dir_ / (name + ".out")});
    EXPECT_EQ(x.code, 0) << x.err;
    const auto diffs = compare_trees(dir_ / "src", dir_ / (name + ".out"), false, false);
    EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
    return dir_ / (name + ".gdfs");
  }
  TempDir dir_{"archive-bytecode"};
};

// Each module's source and bytecode share a tail pack, and the image is about the size of the tree's.
void expect_paired(const std::string& img_path, const std::string& tree_path) {
  auto img = Image::open(img_path);
  for (int i = 0; i < 24; ++i) {
    const std::string name = "mod" + std::to_string(i);
    EXPECT_EQ(tail_entry(*img, "/pkg/" + name + ".py"),
              tail_entry(*img, "/pkg/__pycache__/" + name + ".cpython-311.pyc"))
        << name;
  }
  const auto archive = fs::file_size(img_path), tree = fs::file_size(tree_path);
  EXPECT_LT(archive * 1000, tree * 1005) << archive << " vs " << tree;
}

TEST_F(ArchiveBytecode, BytecodeBeforeItsSourceIsPackedAfterIt) {
  expect_paired(build(true), dir_ / "tree.gdfs");
}

TEST_F(ArchiveBytecode, SourceBeforeItsBytecodeWaitsForIt) {
  expect_paired(build(false), dir_ / "tree.gdfs");
}

// Without pairing, the same package as a tar is larger: the pairing is what makes it the tree's size.
TEST_F(ArchiveBytecode, UnpairedBytecodeReadsBackTheSameButLarger) {
  make_python_package(dir_ / "apart", 24, false);
  write_tree_archive(dir_ / "apart", inode_order(dir_ / "apart"), dir_ / "apart.tar", kPax);
  ASSERT_EQ(run_mkfs({"-q", dir_ / "apart.tar", dir_ / "apart.gdfs"}).code, 0);
  CliResult x = run_inspect({"extract", dir_ / "apart.gdfs", dir_ / "apart.out"});
  ASSERT_EQ(x.code, 0) << x.err;
  const auto diffs = compare_trees(dir_ / "apart", dir_ / "apart.out", false, false);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
  const auto paired = fs::file_size(build(true)), apart = fs::file_size(dir_ / "apart.gdfs");
  EXPECT_LT(paired * 100, apart * 90) << paired << " vs " << apart;
}

// A later file whose tail equals a bytecode tail laid out last in the open pack shares it, at the
// offset that tail gets when the pack is closed.
TEST(ArchiveBytecodeShared, TailsSharedWithLateBytecodeReadBack) {
  TempDir dir("archive-bytecode-shared");
  const std::string src = dir / "src";
  fs::create_directories(src + "/pkg/__pycache__");
  write_text_file(src + "/pkg/m.py", 9000, 1);
  const std::string pyc = fake_bytecode(read_text(src + "/pkg/m.py"), 0);
  write_file(src + "/pkg/__pycache__/m.cpython-311.pyc", pyc);
  write_file(src + "/pkg/__pycache__/m.cpython-311.opt-1.pyc", pyc);
  write_file(src + "/pkg/z.copy", pyc);
  write_text_file(src + "/pkg/zz.txt", 3000, 2);
  std::vector<std::string> order = {".",
                                    "pkg",
                                    "pkg/__pycache__",
                                    "pkg/__pycache__/m.cpython-311.opt-1.pyc",
                                    "pkg/__pycache__/m.cpython-311.pyc",
                                    "pkg/m.py",
                                    "pkg/z.copy",
                                    "pkg/zz.txt"};
  write_tree_archive(src, order, dir / "t.tar", kPax);
  const CliResult r = run_mkfs({"-q", dir / "t.tar", dir / "t.gdfs"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto img = Image::open(dir / "t.gdfs");
  EXPECT_EQ(tail_entry(*img, "/pkg/m.py"), tail_entry(*img, "/pkg/__pycache__/m.cpython-311.pyc"));
  CliResult x = run_inspect({"extract", dir / "t.gdfs", dir / "out"});
  ASSERT_EQ(x.code, 0) << x.err;
  const auto diffs = compare_trees(src, dir / "out", false, false);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
}

}  // namespace
}  // namespace gdfs::test
