// Packing order (mkfs/data_order.h): Python bytecode follows its source into the same tail pack, and
// the image reads back the same whatever the order.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "cli_util.h"
#include "data_order.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

uint64_t tail_entry(const Image& img, const std::string& path) {
  const PageRef r = img.page_ref(img.resolve(path), 0);
  EXPECT_EQ(r.kind, PageRef::kTail) << path;
  return r.entry;
}

TEST(CompiledName, SourceOfABytecodeFile) {
  EXPECT_EQ(mkfs::pyc_source_name("mod.cpython-311.pyc"), "mod.py");
  EXPECT_EQ(mkfs::pyc_source_name("mod.cpython-311.opt-1.pyc"), "mod.py");
  EXPECT_EQ(mkfs::pyc_source_name("mod.cpython-312.opt-2.pyc"), "mod.py");
  EXPECT_EQ(mkfs::pyc_source_name("__init__.pypy39.pyc"), "__init__.py");
  EXPECT_EQ(mkfs::pyc_source_name("a.b.cpython-311.pyc"), "a.b.py");  // a source name with a dot
  EXPECT_EQ(mkfs::pyc_source_name("mod.pyc"), "");                    // no tag: not a cache file
  EXPECT_EQ(mkfs::pyc_source_name(".cpython-311.pyc"), "");           // no name
  EXPECT_EQ(mkfs::pyc_source_name("mod..pyc"), "");                   // an empty tag
  EXPECT_EQ(mkfs::pyc_source_name("mod.cpython-311.py"), "");
  EXPECT_EQ(mkfs::pyc_source_name(".pyc"), "");
  EXPECT_EQ(mkfs::pyc_source_name(""), "");
}

TEST(DataOrder, BytecodeSharesItsSourcesPackAndTheImageIsSmaller) {
  TempDir dir("data-order");
  make_python_package(dir / "paired", 24, true);
  make_python_package(dir / "apart", 24, false);
  ASSERT_EQ(run_mkfs({"-q", dir / "paired", dir / "paired.gdfs"}).code, 0);
  ASSERT_EQ(run_mkfs({"-q", dir / "apart", dir / "apart.gdfs"}).code, 0);

  auto img = Image::open(dir / "paired.gdfs");
  for (int i = 0; i < 24; ++i) {
    const std::string name = "mod" + std::to_string(i);
    const std::string py = "/pkg/" + name + ".py", pyc = "/pkg/__pycache__/" + name + ".cpython-311.pyc";
    EXPECT_EQ(tail_entry(*img, py), tail_entry(*img, pyc)) << name;
  }
  // The same bytes where the names do not pair them: the bytecode packed a breadth-first level later,
  // away from its source, compresses worse.
  const auto paired = std::filesystem::file_size(dir / "paired.gdfs");
  const auto apart = std::filesystem::file_size(dir / "apart.gdfs");
  EXPECT_LT(paired * 100, apart * 90) << paired << " vs " << apart;

  for (const char* tree : {"paired", "apart"}) {
    const std::string out = dir / (std::string(tree) + ".out");
    CliResult x = run_inspect({"extract", dir / (std::string(tree) + ".gdfs"), out});
    ASSERT_EQ(x.code, 0) << x.err;
    const auto diffs = compare_trees(dir / tree, out, false, false);
    EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
  }
}

// A source and its bytecode that fit in one pack but not in the rest of the current one start a new
// pack; the bytecode's tail lies after the pack's other tails.
TEST(DataOrder, AGroupStartsANewPackAndBytecodeGoesLast) {
  TempDir dir("data-order-pack");
  const std::string src = dir / "src";
  std::filesystem::create_directories(src + "/__pycache__");
  write_text_file(src + "/a.txt", 50000, 1);
  write_text_file(src + "/m.py", 12000, 2);
  write_file(src + "/__pycache__/m.cpython-311.pyc", fake_bytecode(read_text(src + "/m.py"), 0));
  write_text_file(src + "/n.txt", 3000, 3);
  ASSERT_LT(std::filesystem::file_size(src + "/__pycache__/m.cpython-311.pyc"), 12000u);
  ASSERT_EQ(run_mkfs({"-q", src, dir / "img"}).code, 0);
  auto img = Image::open(dir / "img");
  // Alone, m.py would have fit after a.txt (62,000 bytes); with its bytecode it would not.
  EXPECT_NE(tail_entry(*img, "/a.txt"), tail_entry(*img, "/m.py"));
  EXPECT_EQ(tail_entry(*img, "/m.py"), tail_entry(*img, "/__pycache__/m.cpython-311.pyc"));
  EXPECT_EQ(tail_entry(*img, "/m.py"), tail_entry(*img, "/n.txt"));
  const auto offset = [&](const char* p) { return img->page_ref(img->resolve(p), 0).offset; };
  EXPECT_EQ(offset("/m.py"), 0u);
  EXPECT_EQ(offset("/n.txt"), 12000u);  // packed after the bytecode, laid out before it
  EXPECT_EQ(offset("/__pycache__/m.cpython-311.pyc"), 15000u);
  CliResult x = run_inspect({"extract", dir / "img", dir / "out"});
  ASSERT_EQ(x.code, 0) << x.err;
  const auto diffs = compare_trees(src, dir / "out", false, false);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
}

// Files that only look paired, or are paired twice, are each packed once, and equal tails are still
// shared, also between bytecode tails waiting for the end of their pack.
TEST(DataOrder, OddTreesRoundTrip) {
  TempDir dir("data-order-odd");
  const std::string src = dir / "src";
  std::filesystem::create_directories(src + "/__pycache__");
  std::filesystem::create_directories(src + "/sub/__pycache__");
  write_text_file(src + "/m.py", 5000, 1);
  const std::string code = fake_bytecode(read_text(src + "/m.py"), 0);
  write_file(src + "/__pycache__/m.cpython-311.pyc", code);
  write_file(src + "/__pycache__/m.cpython-311.opt-1.pyc", code);  // equal tails, both late
  write_file(src + "/__pycache__/orphan.cpython-311.pyc", code);   // no source
  std::filesystem::create_hard_link(src + "/__pycache__/m.cpython-311.pyc",
                                    src + "/sub/__pycache__/s.cpython-311.pyc");
  write_text_file(src + "/sub/s.py", 3000, 2);  // its bytecode is already m.py's
  std::filesystem::create_symlink("m.py", src + "/l.py");
  std::filesystem::create_hard_link(src + "/__pycache__/m.cpython-311.pyc",
                                    src + "/__pycache__/l.cpython-311.pyc");
  std::filesystem::create_directory(src + "/d.py");  // a directory named like a source
  write_file(src + "/__pycache__/d.cpython-311.pyc", "x");
  // Sparse bytecode whose record must still come out sorted by inode.
  {
    const std::string sparse = src + "/__pycache__/big.cpython-311.pyc";
    write_text_file(sparse, 70000, 9);
    ASSERT_EQ(::truncate(sparse.c_str(), 300000), 0);
    write_text_file(src + "/big.py", 1000, 4);
    const std::string z = src + "/z";
    write_text_file(z, 70000, 10);
    ASSERT_EQ(::truncate(z.c_str(), 300000), 0);
  }
  CliResult r = run_mkfs({"-q", src, dir / "img"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto img = Image::open(dir / "img");
  EXPECT_EQ(img->page_ref(img->resolve("/__pycache__/m.cpython-311.opt-1.pyc"), 0).offset,
            img->page_ref(img->resolve("/__pycache__/m.cpython-311.pyc"), 0).offset);
  EXPECT_EQ(img->page_ref(img->resolve("/__pycache__/big.cpython-311.pyc"), 2).kind, PageRef::kHole);
  EXPECT_EQ(img->page_ref(img->resolve("/z"), 2).kind, PageRef::kHole);
  CliResult x = run_inspect({"extract", dir / "img", dir / "out"});
  ASSERT_EQ(x.code, 0) << x.err;
  const auto diffs = compare_trees(src, dir / "out", false, false);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
  EXPECT_EQ(run_inspect({"verify", dir / "img"}).code, 0);
}

}  // namespace
}  // namespace gdfs::test
