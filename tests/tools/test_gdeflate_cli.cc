// The gdeflate command line, run in-process: round trips through files and standard streams, raw
// pages, exit codes and messages.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "gdfs/gdeflate.h"
#include "gdfs/gdeflate_container.h"
#include "tools_test_util.h"

namespace gdfs::tools_test {
namespace {

namespace fs = std::filesystem;
namespace gd = gdfs::gdeflate;

struct CliResult {
  int code;
  std::string out, err;
};

CliResult gdeflate(std::vector<std::string> args, const std::string& stdin_data = "") {
  args.insert(args.begin(), "gdeflate");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::istringstream in(stdin_data);
  std::ostringstream out, err;
  const int code = tools::gdeflate_main(static_cast<int>(args.size()), argv.data(), in, out, err);
  return {code, out.str(), err.str()};
}

std::string as_string(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

class Cli : public testing::Test {
 protected:
  void SetUp() override {
    const auto* t = testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("gdfs_cli_" + std::string(t->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    data_ = mixed_data(200000, 3);
    write_file(Path("in"), data_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  size_t FilesInDir() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
  Bytes data_;
};

TEST_F(Cli, FileRoundTrip) {
  for (const char* level : {"0", "1", "9"}) {
    CliResult r = gdeflate({"compress", "-l", level, "-t", "3", Path("in"), Path("c")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_file(Path("c")), gd::compress_container(data_, std::stoi(level), 1));
    r = gdeflate({"decompress", "-t", "2", Path("c"), Path("d")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_file(Path("d")), data_);
    EXPECT_TRUE(r.out.empty() && r.err.empty());
  }
}

TEST_F(Cli, RawPage) {
  const Bytes page(data_.begin(), data_.begin() + 65536);
  write_file(Path("page"), page);
  ASSERT_EQ(gdeflate({"compress", "--raw", "-l", "6", Path("page"), Path("p.gdf")}).code, 0);
  const CliResult r = gdeflate({"decompress", "--raw", "--size", "65536", Path("p.gdf"), Path("p.out")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_file(Path("p.out")), page);
}

TEST_F(Cli, RawRefusesMoreThanOnePage) {
  const CliResult r = gdeflate({"compress", "--raw", Path("in"), Path("c")});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "gdeflate: error: " + Path("in"))) << r.err;
  EXPECT_TRUE(contains(r.err, "raw page")) << r.err;
  EXPECT_FALSE(fs::exists(Path("c")));
}

TEST_F(Cli, RawWrongSizeIsAnError) {
  write_file(Path("page"), Bytes(data_.begin(), data_.begin() + 1000));
  ASSERT_EQ(gdeflate({"compress", "--raw", Path("page"), Path("p.gdf")}).code, 0);
  const CliResult r = gdeflate({"decompress", "--raw", "--size", "999", Path("p.gdf"), Path("p.out")});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "not a raw GDeflate page of 999 bytes")) << r.err;
}

TEST_F(Cli, StdinAndStdout) {
  CliResult c = gdeflate({"compress", "-", "-"}, as_string(data_));
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out, as_string(gd::compress_container(data_, gd::kDefaultLevel, 1)));
  const CliResult d = gdeflate({"decompress", "-", "-"}, c.out);
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(d.out, as_string(data_));
}

TEST_F(Cli, EmptyInput) {
  const CliResult c = gdeflate({"compress", "-", "-"}, "");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out.size(), gd::kContainerHeaderBytes);
  const CliResult d = gdeflate({"decompress", "-", "-"}, c.out);
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_TRUE(d.out.empty());
}

TEST_F(Cli, DevNullOutput) {
  EXPECT_EQ(gdeflate({"compress", Path("in"), "/dev/null"}).code, 0);
  ASSERT_EQ(gdeflate({"compress", Path("in"), Path("c")}).code, 0);
  EXPECT_EQ(gdeflate({"decompress", Path("c"), "/dev/null"}).code, 0);
}

TEST_F(Cli, OverwritesAndLeavesNoTemporaries) {
  write_file(Path("c"), Bytes(10, 1));
  ASSERT_EQ(gdeflate({"compress", Path("in"), Path("c")}).code, 0);
  EXPECT_EQ(gd::decompress_container(read_file(Path("c"))), data_);
  EXPECT_EQ(FilesInDir(), 2u);
}

TEST_F(Cli, MissingInput) {
  const CliResult r = gdeflate({"compress", Path("nope"), Path("c")});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "gdeflate: error: cannot open '" + Path("nope") + "'")) << r.err;
}

TEST_F(Cli, CorruptContainerLeavesNoOutput) {
  ASSERT_EQ(gdeflate({"compress", Path("in"), Path("c")}).code, 0);
  Bytes c = read_file(Path("c"));
  c.push_back(0);
  write_file(Path("c"), c);
  const CliResult r = gdeflate({"decompress", Path("c"), Path("d")});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "gdeflate: error: " + Path("c") + ": ")) << r.err;
  EXPECT_TRUE(contains(r.err, "trailing")) << r.err;
  EXPECT_FALSE(fs::exists(Path("d")));
}

TEST_F(Cli, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"compress", Path("in")},
      {"compress", "-l", "13", Path("in"), Path("c")},
      {"compress", "--bogus", Path("in"), Path("c")},
      {"decompress", "--raw", Path("in"), Path("c")},
      {"decompress", "--size", "10", Path("in"), Path("c")},
      {"decompress", "--raw", "--size", "65537", Path("in"), Path("c")},
      {"bench", "-l", "13", Path("in")},
      {"bench", "-l", "1,,6", Path("in")},
      {"bench", "--decoder", "neon", Path("in")},
      {"bench", "--paired", "0", Path("in")},
      {"bench"},
      {"compress", "", Path("c")},
      {"bench", ""},
  };
  for (const auto& args : bad) {
    const CliResult r = gdeflate(args);
    EXPECT_EQ(r.code, 2) << testing::PrintToString(args);
    EXPECT_TRUE(contains(r.err, "gdeflate: error: ")) << r.err;
  }
  EXPECT_FALSE(fs::exists(Path("c")));
}

TEST_F(Cli, HelpAndVersion) {
  CliResult r = gdeflate({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "compress") && contains(r.out, "bench")) << r.out;
  r = gdeflate({"decompress", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "--size")) << r.out;
  r = gdeflate({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "gdeflate ")) << r.out;
}

TEST_F(Cli, Bench) {
  const CliResult r = gdeflate({"bench", "--min-time", "0", "-l", "0,1", Path("in"), "-"}, "some stdin text");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "2 file(s), 200015 bytes in 5 pages")) << r.out;
  EXPECT_TRUE(contains(r.out, "| gdfs GDeflate | 1 |")) << r.out;
  EXPECT_TRUE(contains(r.out, "| ours / libdeflate | 1 |")) << r.out;
  EXPECT_TRUE(contains(r.out, "machine: ")) << r.out;
}

// Paired timing reports the same rows (sizes do not depend on how time is taken) and says how it timed.
TEST_F(Cli, BenchPairedTimesTheSameRows) {
  const CliResult passes = gdeflate({"bench", "--min-time", "0", "-l", "1", Path("in")});
  const CliResult paired = gdeflate({"bench", "--paired", "2", "-l", "1", Path("in")});
  ASSERT_EQ(paired.code, 0) << paired.err;
  EXPECT_TRUE(contains(paired.out, "fastest of 2 rounds (--paired)")) << paired.out;
  EXPECT_FALSE(contains(passes.out, "--paired")) << passes.out;
  const auto ratio_cell = [](const std::string& out, const std::string& row) {
    const size_t at = out.find(row);
    return at == std::string::npos ? std::string("missing") : out.substr(at + row.size(), 5);
  };
  for (const char* row : {"| gdfs GDeflate | 1 | ", " DEFLATE | 1 | ", "| ours / libdeflate | 1 | "})
    EXPECT_EQ(ratio_cell(paired.out, row), ratio_cell(passes.out, row)) << row << "\n" << paired.out;
}

TEST_F(Cli, BenchForcesTheScalarDecoder) {
  const CliResult r = gdeflate({"bench", "--min-time", "0", "-l", "1", "--decoder", "Scalar", Path("in")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "gdfs decoder: scalar")) << r.out;  // any case, as the help says
}

// A decoder that does not exist is named with every one that does (a byte-sized enum once cut the list
// short at its first value).
TEST_F(Cli, AnUnknownDecoderListsThemAll) {
  const CliResult r = gdeflate({"bench", "--decoder", "neon", Path("in")});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--decoder: neon not in {auto,scalar,avx2,avx512}")) << r.err;
}

// nvCOMP's host codec is loaded only when asked for (tests/interop runs the bench with it); a library
// that cannot be loaded is an error before any output, and "none" leaves it out.
TEST_F(Cli, BenchWithAnUnloadableNvcompLibraryIsAnError) {
  const CliResult r = gdeflate({"bench", "--min-time", "0", "--nvcomp-cpu", Path("missing.so"), Path("in")});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "cannot load " + Path("missing.so"))) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(Cli, BenchNvcompNoneLeavesItOut) {
  const CliResult r = gdeflate({"bench", "--min-time", "0", "-l", "1", "--nvcomp-cpu", "none", Path("in")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "| ours / libdeflate | 1 |")) << r.out;
  EXPECT_FALSE(contains(r.out, "nvCOMP")) << r.out;
}

TEST_F(Cli, BenchEmptyInputIsAnError) {
  const CliResult r = gdeflate({"bench", "-"}, "");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "no data")) << r.err;
}

}  // namespace
}  // namespace gdfs::tools_test
