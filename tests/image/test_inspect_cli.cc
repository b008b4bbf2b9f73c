// gdfs-inspect subcommands on a small known image: info, ls, pages, stats (text and --json), cat.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Inspect : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("inspect");
    fs::create_directories(*dir_ / "src/docs");
    write_text_file(*dir_ / "src/docs/manual.txt", 4 * 65536 + 100, 1);  // 4 pages + a tail
    write_text_file(*dir_ / "src/docs/copy.txt", 4 * 65536 + 100, 1);    // deduped pages and tail
    write_text_file(*dir_ / "src/small", 300, 2);
    write_file(*dir_ / "src/holes", std::string(65536, 'a') + std::string(2 * 65536, '\0') + "end");
    symlink("docs/manual.txt", (*dir_ / "src/link").c_str());
    image_ = *dir_ / "img";
    CliResult r = run_mkfs({"-q", *dir_ / "src", image_});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static inline TempDir* dir_ = nullptr;
  static inline std::string image_;
};

TEST_F(Inspect, Info) {
  CliResult r = run_inspect({"info", image_});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* word : {"2.0", "65536", "dedupe", "tail", "bytes stored", "in memory"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  json j = inspect_json({"info", image_});
  ASSERT_TRUE(j.is_object());
  // Every section's stored and inflated size: the stored ones and the block table add up to the
  // metadata region exactly, the inflated ones to at most the inflated metadata (padding between).
  const json& sz = j["sizes"];
  ASSERT_EQ(sz["sections"].size(), 9u);
  uint64_t stored = sz["metadata_block_table"], memory = 0;
  for (const auto& [name, s] : sz["sections"].items()) {
    stored += s["stored"].get<uint64_t>();
    memory += s["memory"].get<uint64_t>();
    if (s["memory"] == 0) {
      EXPECT_EQ(s["stored"], 0) << name;
    }
  }
  EXPECT_EQ(stored, sz["metadata"].get<uint64_t>());
  EXPECT_LE(memory, sz["metadata_memory"].get<uint64_t>());
  EXPECT_GT(memory + 8 * 9, sz["metadata_memory"].get<uint64_t>());
  EXPECT_EQ(sz["metadata_block_table"], 8 * sz["metadata_blocks"].get<uint64_t>());
}

TEST_F(Inspect, Ls) {
  CliResult r = run_inspect({"ls", image_});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("docs"), std::string::npos);
  EXPECT_NE(r.out.find("small"), std::string::npos);
  CliResult l = run_inspect({"ls", "-l", image_, "/"});
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.out.find("-> docs/manual.txt"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("lrwxrwxrwx"), std::string::npos) << l.out;
  CliResult sub = run_inspect({"ls", image_, "/docs"});
  EXPECT_NE(sub.out.find("manual.txt"), std::string::npos);
  EXPECT_EQ(sub.out.find("small"), std::string::npos);
  EXPECT_TRUE(inspect_json({"ls", image_, "/docs"}).dump().find("copy.txt") != std::string::npos);
  EXPECT_EQ(run_inspect({"ls", image_, "/nope"}).code, 1);
}

TEST_F(Inspect, PagesJsonHasOneObjectPerPageInFileOrder) {
  // copy.txt sorts first, so manual.txt is the one whose pages are deduplicated.
  json j = inspect_json({"pages", image_, "/docs/manual.txt"});
  ASSERT_TRUE(j.contains("pages"));
  ASSERT_EQ(j["pages"].size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    const json& p = j["pages"][i];
    EXPECT_EQ(p["index"], i);
    EXPECT_EQ(p["file_offset"], i * 65536);
    EXPECT_TRUE(p.contains("image_offset") && p.contains("codec") && p.contains("checksum") &&
                p.contains("ratio"));
  }
  auto has_flag = [](const json& p, const char* f) {
    for (auto& x : p["flags"])
      if (x == f) return true;
    return false;
  };
  EXPECT_TRUE(has_flag(j["pages"][0], "dedupe")) << j["pages"][0].dump();
  EXPECT_TRUE(has_flag(j["pages"][4], "tail")) << j["pages"][4].dump();
  json h = inspect_json({"pages", image_, "/holes"});
  ASSERT_EQ(h["pages"].size(), 4u);
  EXPECT_EQ(h["pages"][1]["codec"], "hole");
  EXPECT_EQ(h["pages"][0]["codec"], "gdeflate");
}

TEST_F(Inspect, PagesText) {
  CliResult r = run_inspect({"pages", image_, "/docs/manual.txt"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gdeflate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tail"), std::string::npos) << r.out;
  EXPECT_EQ(run_inspect({"pages", image_, "/docs"}).code, 1);  // not a regular file
}

TEST_F(Inspect, Stats) {
  CliResult r = run_inspect({"stats", image_});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("manual.txt"), std::string::npos) << r.out;  // among the largest files
  json j = inspect_json({"stats", image_});
  EXPECT_TRUE(j.is_object());
  EXPECT_NE(j.dump().find("dedupe"), std::string::npos);
}

TEST_F(Inspect, Cat) {
  CliResult r = run_inspect({"cat", image_, "/docs/manual.txt"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto want = read_bytes(*dir_ / "src/docs/manual.txt");
  EXPECT_TRUE(std::vector<uint8_t>(r.out.begin(), r.out.end()) == want);
  CliResult h = run_inspect({"cat", image_, "/holes"});
  EXPECT_TRUE(std::vector<uint8_t>(h.out.begin(), h.out.end()) == read_bytes(*dir_ / "src/holes"));
  EXPECT_EQ(run_inspect({"cat", image_, "/missing"}).code, 1);
}

TEST_F(Inspect, UsageErrors) {
  EXPECT_EQ(run_inspect({}).code, 2);
  EXPECT_EQ(run_inspect({"frobnicate", image_}).code, 2);
}

}  // namespace
}  // namespace gdfs::test
