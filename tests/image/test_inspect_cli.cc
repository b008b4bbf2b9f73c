// gdfs-inspect subcommands on a small known image: info, ls, pages, stats (text and --json), cat.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

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

// `extract IMG DIR` in a child process whose files may not grow past `limit` bytes: with SIGXFSZ at its
// default the child is killed mid-file (like the SIGPIPE of issue 24), else its writes fail with EFBIG.
// Returns the exit status, or minus the signal that ended it; `err` gets its error output.
int extract_limited(const std::string& image, const std::string& dir, rlim_t limit, bool kill,
                    std::string& err) {
  const std::string err_path = dir + ".err";
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit rl{limit, limit};
    signal(SIGXFSZ, kill ? SIG_DFL : SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(99);
    const CliResult r = run_inspect({"extract", image, dir});
    const rlimit none{RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &none);  // raising the soft limit back is allowed up to the hard one
    write_file(err_path, r.err);
    _exit(r.code);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  const std::vector<uint8_t> bytes = read_bytes(err_path);
  err.assign(bytes.begin(), bytes.end());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

// Every regular file under `out` either is a marked temporary or equals its source under `src`.
// Returns how many temporaries there are.
int check_no_partial_files(const std::string& src, const std::string& out) {
  int temps = 0;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (name.find(".gdfs-tmp-") != std::string::npos && name[0] == '.') {
      ++temps;
      continue;
    }
    const std::string rel = fs::relative(e.path(), out).string();
    EXPECT_TRUE(read_bytes(e.path()) == read_bytes(src + "/" + rel)) << rel << " is partial";
  }
  return temps;
}

// Issue 24: killed midway, extract left a file with wrong contents under its real name.
TEST_F(Inspect, ExtractKilledMidwayLeavesOnlyCompleteFiles) {
  const std::string out = *dir_ / "killed";
  std::string err;
  // Every file but `small` (300 bytes) is bigger than the limit: the first of them kills the child.
  ASSERT_EQ(extract_limited(image_, out, 100000, true, err), -SIGXFSZ) << err;
  EXPECT_EQ(check_no_partial_files(*dir_ / "src", out), 1);  // the file being written when it died
}

TEST_F(Inspect, ExtractFailureRemovesTheTemporaryAndNamesThePath) {
  const std::string out = *dir_ / "efbig";
  std::string err;
  ASSERT_EQ(extract_limited(image_, out, 100000, false, err), 1) << err;
  EXPECT_NE(err.find(strerror(EFBIG)), std::string::npos) << err;
  EXPECT_NE(err.find(out + "/"), std::string::npos) << err;  // the local path that failed
  EXPECT_EQ(check_no_partial_files(*dir_ / "src", out), 0);
  EXPECT_TRUE(fs::exists(out + "/small"));  // what fits was extracted
}

TEST_F(Inspect, ExtractYieldsTheSourceTreeAndNoTemporaries) {
  const std::string out = *dir_ / "whole";
  CliResult r = run_inspect({"extract", image_, out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(compare_trees(*dir_ / "src", out, false, false), std::vector<std::string>{});
  EXPECT_EQ(check_no_partial_files(*dir_ / "src", out), 0);
}

// A second image with what the first lacks: names that are not UTF-8, and symlinks of every kind.
class InspectOdd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("inspect-odd");
    const std::string src = *dir_ / "src";
    fs::create_directories(src + "/docs/sub");
    write_file(src + "/docs/f", "the contents\n");
    write_file(src + "/" + kBadName, "latin-1 name\n");
    for (const auto& [link, target] : std::vector<std::pair<std::string, std::string>>{
             {"rel", "docs/f"},
             {"abs", "/docs/f"},
             {"chain", "rel"},
             {"dirlink", "docs"},
             {"docs/sub/up", "../f"},
             {"escape", "../../../docs/f"},  // above the image root is the root, as at /
             {"loop1", "loop2"},
             {"loop2", "loop1"},
             {"dangling", "nowhere"},
             {"badtarget", kBadName}})
      symlink(target.c_str(), (src + "/" + link).c_str());
    image_ = *dir_ / "img";
    CliResult r = run_mkfs({"-q", src, image_});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static inline const std::string kBadName = "caf\xe9 \xff\xfe";  // Latin-1, and bytes never in UTF-8
  static inline TempDir* dir_ = nullptr;
  static inline std::string image_;
};

std::string unbase64(const std::string& s) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t v = 0;
  int bits = 0;
  for (char c : s) {
    if (c == '=') break;
    v = v << 6 | static_cast<uint32_t>(kAlphabet.find(c));
    if ((bits += 6) >= 8) out.push_back(static_cast<char>((v >> (bits -= 8)) & 0xff));
  }
  return out;
}

// Issue 24: --json replaced the invalid bytes of names by U+FFFD, so the name could not be recovered.
TEST_F(InspectOdd, LsJsonNamesRoundTripThroughBase64) {
  const json j = inspect_json({"ls", image_, "/"});
  bool found_bad = false, found_target = false;
  for (const json& e : j["entries"]) {
    const std::string name = e["name"];
    if (e.contains("name_b64")) {
      EXPECT_EQ(unbase64(e["name_b64"]), kBadName) << e.dump();
      found_bad = true;
    } else {
      EXPECT_EQ(name.find("\xef\xbf\xbd"), std::string::npos) << "U+FFFD without name_b64: " << e.dump();
    }
    if (e.contains("target_b64")) {
      EXPECT_EQ(e["name"], "badtarget");
      EXPECT_EQ(unbase64(e["target_b64"]), kBadName);
      found_target = true;
    }
  }
  EXPECT_TRUE(found_bad && found_target) << j.dump();
  const json one = inspect_json({"ls", image_, "/" + kBadName});  // the path given, too
  EXPECT_EQ(unbase64(one["path_b64"]), "/" + kBadName) << one.dump();
  EXPECT_EQ(unbase64(one["entries"][0]["name_b64"]), "/" + kBadName) << one.dump();
  EXPECT_FALSE(inspect_json({"ls", image_, "/docs"}).contains("path_b64"));  // UTF-8 as before
}

// Issue 24: cat on a symlink said "not a regular file"; it follows links, inside the image, like cat(1).
TEST_F(InspectOdd, CatFollowsSymlinksInsideTheImage) {
  for (const std::string path : {"/rel", "/abs", "/chain", "/dirlink/f", "/docs/sub/up", "/escape",
                                 "/dirlink/sub/../f", "dirlink/./sub/up"}) {
    const CliResult r = run_inspect({"cat", image_, path});
    EXPECT_EQ(r.code, 0) << path << ": " << r.err;
    EXPECT_EQ(r.out, "the contents\n") << path;
  }
  EXPECT_EQ(run_inspect({"cat", image_, "/badtarget"}).out, "latin-1 name\n");
  // pages shows the pages cat reads.
  const json via_link = inspect_json({"pages", image_, "/rel"}),
             file = inspect_json({"pages", image_, "/docs/f"});
  EXPECT_EQ(via_link["inode"], file["inode"]);
  EXPECT_EQ(via_link["pages"], file["pages"]);
  const CliResult loop = run_inspect({"cat", image_, "/loop1"});
  EXPECT_EQ(loop.code, 1);
  EXPECT_NE(loop.err.find("too many levels of symbolic links"), std::string::npos) << loop.err;
  for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
           {"/dangling", "no such file"}, {"/docs/f/x", "not a directory"}, {"/rel/x", "not a directory"}}) {
    const CliResult r = run_inspect({"cat", image_, path});
    EXPECT_EQ(r.code, 1) << path;
    EXPECT_NE(r.err.find(why), std::string::npos) << path << ": " << r.err;
  }
  const CliResult dir = run_inspect({"cat", image_, "/dirlink"});
  EXPECT_EQ(dir.code, 1);
  EXPECT_NE(dir.err.find("not a regular file"), std::string::npos) << dir.err;
}

TEST_F(Inspect, UsageErrors) {
  EXPECT_EQ(run_inspect({}).code, 2);
  // A mistyped subcommand is named, with those there are, not "A subcommand is required".
  const CliResult typo = run_inspect({"stat", image_, "/"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("gdfs-inspect: error: unknown subcommand 'stat' (info, ls, pages,"),
            std::string::npos)
      << typo.err;
  // A subcommand's usage error points at that subcommand's --help.
  const CliResult missing = run_inspect({"info"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("IMAGE is required\nRun 'gdfs-inspect info --help' for usage."),
            std::string::npos)
      << missing.err;
  const CliResult both = run_inspect({"extract", image_});
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("Run 'gdfs-inspect extract --help'"), std::string::npos) << both.err;
}

// A full target: the extraction stops at the first entry that cannot be written, with one message for it
// and one saying where it stopped, not one per remaining entry; no temporary file is left. An archive
// says why it could not be written, and mkfs names the image it could not write, not its temporary file.
TEST_F(Inspect, AFullTargetStopsTheExtractionAtOnce) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string tiny = *dir_ / "tiny";
  fs::create_directories(tiny);
  if (mount("tmpfs", tiny.c_str(), "tmpfs", 0, "size=128k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs: " << std::strerror(errno);
  const CliResult tree = run_inspect({"extract", image_, tiny + "/out"});
  const CliResult archive = run_inspect({"extract", image_, "--archive", tiny + "/x.tar"});
  fs::create_directories(*dir_ / "noise");
  {
    std::ofstream noise(*dir_ / "noise/r.bin", std::ios::binary);  // incompressible: more than the tmpfs
    std::mt19937_64 rng(7);
    for (int i = 0; i < 256 * 1024 / 8; ++i) {
      const uint64_t v = rng();
      noise.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
  const CliResult image = run_mkfs({"-q", *dir_ / "noise", tiny + "/y.gdfs"});  // mkfs names its image
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(tiny)) {
    const std::string name = e.path().filename();
    if (name.find("gdfs-tmp") != std::string::npos || name.find(".tmp.") != std::string::npos)
      left.push_back(e.path());
  }
  umount2(tiny.c_str(), MNT_DETACH);
  EXPECT_EQ(tree.code, 1);
  size_t cannot_write = 0;
  for (size_t at = 0; (at = tree.err.find("cannot write", at)) != std::string::npos; ++at) ++cannot_write;
  EXPECT_EQ(cannot_write, 1u) << tree.err;
  EXPECT_NE(
      tree.err.find(tiny + "/out: No space left on device; extraction stopped at " + tiny + "/out/docs/"),
      std::string::npos)
      << tree.err;
  EXPECT_EQ(archive.code, 1);
  EXPECT_NE(archive.err.find("cannot write " + tiny + "/x.tar: No space left on device"), std::string::npos)
      << archive.err;
  EXPECT_EQ(image.code, 1);
  EXPECT_NE(image.err.find("cannot write '" + tiny + "/y.gdfs': No space left on device"), std::string::npos)
      << image.err;
  EXPECT_FALSE(fs::exists(tiny + "/y.gdfs"));
  EXPECT_TRUE(left.empty()) << left.front();
}

// Output that cannot be written (a full disk, a closed pipe) fails the run, as for ls and cat.
TEST_F(Inspect, OutputThatCannotBeWrittenFailsTheRun) {
  struct Full : std::streambuf {
    int overflow(int) override { return traits_type::eof(); }
  } full;
  std::ostream out(&full);
  auto run = [&](auto main, std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::ostringstream err;
    const int code = main(static_cast<int>(args.size()), argv.data(), out, err);
    out.clear();
    return std::pair{code, err.str()};
  };
  for (const std::vector<std::string>& args : {std::vector<std::string>{"gdfs-inspect", "ls", image_, "/"},
                                               {"gdfs-inspect", "info", "--json", image_},
                                               {"gdfs-inspect", "cat", image_, "/small"}}) {
    const auto [code, err] = run(gdfs::tools::inspect_main, args);
    EXPECT_EQ(code, 1) << testing::PrintToString(args);
    EXPECT_NE(err.find("cannot write"), std::string::npos) << err;
  }
  const std::string image = *dir_ / "summary-lost.gdfs";
  const auto [code, err] = run(gdfs::mkfs::mkfs_main, {"mkfs.gdfs", "--json", *dir_ / "src", image});
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("cannot write the output (the image was written)"), std::string::npos) << err;
  EXPECT_EQ(run_inspect({"verify", image}).code, 0);
}

// An empty value is a mistake (an unset shell variable), never "not given": a key that is "" must not
// verify or build without a signature, a SOURCE that is "" must not read the tree from /.
TEST_F(Inspect, AnEmptyValueIsAUsageErrorNeverTheDefault) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> inspect = {
      {{"verify", "--key", "", image_}, "--key is empty"},
      {{"verify", "--base", "", image_}, "--base is empty"},
      {{"info", ""}, "IMAGE is empty"},
      {{"ls", image_, ""}, "PATH is empty"},
      {{"extract", image_, "--archive", ""}, "--archive is empty"},
  };
  for (const auto& [args, message] : inspect) {
    const CliResult r = run_inspect(args);
    EXPECT_EQ(r.code, 2) << testing::PrintToString(args);
    EXPECT_NE(r.err.find("gdfs-inspect: error: " + message), std::string::npos) << r.err;
  }
  const std::string out = *dir_ / "empty-values.gdfs";
  const std::vector<std::pair<std::vector<std::string>, std::string>> mkfs = {
      {{"-q", "--sign", "", *dir_ / "src", out}, "--sign is empty"},
      {{"-q", "", out}, "SOURCE is empty"},
      {{"-q", *dir_ / "src", ""}, "IMAGE is empty"},
      {{"-q", "--exclude", "", *dir_ / "src", out}, "--exclude is empty"},
  };
  for (const auto& [args, message] : mkfs) {
    const CliResult r = run_mkfs(args);
    EXPECT_EQ(r.code, 2) << testing::PrintToString(args);
    EXPECT_NE(r.err.find("mkfs.gdfs: error: " + message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // A label may be empty: it is the same as none.
  const CliResult labelled = run_mkfs({"-q", "--label", "", *dir_ / "src", out});
  EXPECT_EQ(labelled.code, 0) << labelled.err;
  EXPECT_EQ(inspect_json({"info", out})["label"], "");
}

}  // namespace
}  // namespace gdfs::test
