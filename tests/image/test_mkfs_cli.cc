// mkfs.gdfs options and behaviour: overwrite rules, atomicity on errors, --ignore-errors, exclusion,
// owner and time overrides, SOURCE_DATE_EPOCH, labels, JSON summary, dedupe switch, bad arguments.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;

class Mkfs : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "src/sub");
    write_text_file(dir_ / "src/a.txt", 150000, 1);
    write_text_file(dir_ / "src/b.o", 3000, 2);
    write_text_file(dir_ / "src/sub/c.txt", 70000, 3);
    write_text_file(dir_ / "src/sub/dup.txt", 70000, 3);
  }
  std::vector<std::string> names(const std::string& image) {
    auto img = Image::open(image);
    std::vector<std::string> out;
    std::vector<std::pair<uint32_t, std::string>> stack{{format::kRootIno, ""}};
    while (!stack.empty()) {
      auto [ino, path] = stack.back();
      stack.pop_back();
      for (auto& d : img->dirents(ino)) {
        std::string p = path + "/" + std::string(img->name(d));
        out.push_back(p);
        if (img->type(d.ino) == format::kTypeDir) stack.push_back({d.ino, p});
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // Files left in the output directory besides `keep`: a failed run must leave none.
  std::vector<std::string> leftovers(const std::string& keep = "") {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(dir_ / "out"))
      if (e.path().filename() != keep) out.push_back(e.path().filename());
    return out;
  }
  void SetUpOut() { fs::create_directories(dir_ / "out"); }
  TempDir dir_{"mkfs"};
};

TEST_F(Mkfs, RefusesToOverwriteWithoutForce) {
  SetUpOut();
  write_file(dir_ / "out/img", "precious");
  CliResult r = run_mkfs({"-q", dir_ / "src", dir_ / "out/img"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("img"), std::string::npos) << r.err;
  EXPECT_TRUE(read_bytes(dir_ / "out/img") == std::vector<uint8_t>({'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'}));
  EXPECT_EQ(run_mkfs({"-q", "--force", dir_ / "src", dir_ / "out/img"}).code, 0);
  EXPECT_NO_THROW(Image::open(dir_ / "out/img"));
  EXPECT_TRUE(leftovers("img").empty());
}

// An unreadable file fails the run, naming the path, and leaves no image and no temporary file.
// Root reads everything, so the run happens in a child that drops to an unprivileged uid.
TEST_F(Mkfs, UnreadableFileIsAnErrorAndLeavesNothing) {
  SetUpOut();
  write_text_file(dir_ / "src/secret", 1000, 4);
  chmod((dir_ / "src/secret").c_str(), 0);
  auto run_as_nobody = [&](std::vector<std::string> args) {
    if (geteuid() != 0) return run_mkfs(args);
    chmod(dir_.path().c_str(), 0777);
    chmod((dir_ / "out").c_str(), 0777);
    for (auto& e : fs::recursive_directory_iterator(dir_ / "src"))
      chmod(e.path().c_str(), e.is_directory() ? 0755 : 0644);
    chmod((dir_ / "src/secret").c_str(), 0);
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {  // the child reports its stderr through the pipe, then its exit code
      close(fds[0]);
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(99);
      CliResult r = run_mkfs(args);
      if (write(fds[1], r.err.data(), r.err.size()) < 0) _exit(98);
      _exit(r.code);
    }
    close(fds[1]);
    CliResult r;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) r.err.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  };
  CliResult failed = run_as_nobody({"-q", dir_ / "src", dir_ / "out/img"});
  EXPECT_EQ(failed.code, 1);
  EXPECT_NE(failed.err.find("'secret'"), std::string::npos) << failed.err;
  EXPECT_TRUE(leftovers().empty()) << leftovers()[0];
  CliResult skipped = run_as_nobody({"-q", "--ignore-errors", dir_ / "src", dir_ / "out/img"});
  EXPECT_EQ(skipped.code, 2);
  EXPECT_NE(skipped.err.find("'secret'"), std::string::npos) << skipped.err;
  auto n = names(dir_ / "out/img");
  EXPECT_EQ(std::count(n.begin(), n.end(), "/secret"), 0);
  EXPECT_EQ(std::count(n.begin(), n.end(), "/a.txt"), 1);
  EXPECT_EQ(run_inspect({"verify", dir_ / "out/img"}).code, 0);
}

// The image may be written inside the tree it packs: it never packs itself or its temporary file.
TEST_F(Mkfs, ImageInsideTheSourceTree) {
  ASSERT_EQ(run_mkfs({"-q", dir_ / "src", dir_ / "src/self.img"}).code, 0);
  EXPECT_EQ(names(dir_ / "src/self.img"),
            (std::vector<std::string>{"/a.txt", "/b.o", "/sub", "/sub/c.txt", "/sub/dup.txt"}));
  ASSERT_EQ(run_mkfs({"-q", "--force", dir_ / "src", dir_ / "src/self.img"}).code, 0);  // replacing it, too
  EXPECT_EQ(names(dir_ / "src/self.img").size(), 5u);
}

TEST_F(Mkfs, ErrorMessageNamesTheUnreadablePath) {
  if (geteuid() == 0) GTEST_SKIP() << "covered by UnreadableFileIsAnErrorAndLeavesNothing as root";
  SetUpOut();
  write_text_file(dir_ / "src/secret", 1000, 4);
  chmod((dir_ / "src/secret").c_str(), 0);
  CliResult r = run_mkfs({"-q", dir_ / "src", dir_ / "out/img"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("secret"), std::string::npos) << r.err;
}

TEST_F(Mkfs, Exclude) {
  ASSERT_EQ(run_mkfs({"-q", "--exclude", "*.o", "--exclude", "sub/dup*", dir_ / "src", dir_ / "img"}).code,
            0);
  EXPECT_EQ(names(dir_ / "img"), (std::vector<std::string>{"/a.txt", "/sub", "/sub/c.txt"}));
}

// --exclude-from: a file of patterns, as rsync reads one (comments, blank lines and CR LF line ends).
TEST_F(Mkfs, ExcludeFrom) {
  write_file(dir_ / "patterns", "# build output\r\n*.o\r\n\nsub/dup*\n");
  CliResult r = run_mkfs({"-q", "--exclude-from", dir_ / "patterns", dir_ / "src", dir_ / "img"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(names(dir_ / "img"), (std::vector<std::string>{"/a.txt", "/sub", "/sub/c.txt"}));
  r = run_mkfs({"-q", "--exclude-from", dir_ / "missing", dir_ / "src", dir_ / "img2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--exclude-from: cannot read '" + dir_ / "missing" + "': No such file"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "img2"));
}

TEST_F(Mkfs, OwnerOverrides) {
  ASSERT_EQ(run_mkfs({"-q", "--uid", "7", "--gid", "8", dir_ / "src", dir_ / "img"}).code, 0);
  auto img = Image::open(dir_ / "img");
  for (uint32_t ino = 1; ino <= img->inode_count(); ++ino) {
    EXPECT_EQ(img->attr(ino).uid, 7u);
    EXPECT_EQ(img->attr(ino).gid, 8u);
  }
  ASSERT_EQ(run_mkfs({"-q", "--all-root", dir_ / "src", dir_ / "img2"}).code, 0);
  auto img2 = Image::open(dir_ / "img2");
  for (uint32_t ino = 1; ino <= img2->inode_count(); ++ino) EXPECT_EQ(img2->attr(ino).uid, 0u);
}

TEST_F(Mkfs, MtimeAndSourceDateEpoch) {
  ASSERT_EQ(run_mkfs({"-q", "--mtime", "1234567", dir_ / "src", dir_ / "img"}).code, 0);
  auto img = Image::open(dir_ / "img");
  for (uint32_t ino = 1; ino <= img->inode_count(); ++ino) EXPECT_EQ(img->attr(ino).mtime_sec, 1234567);
  EXPECT_EQ(img->superblock().time_sec, 1234567);

  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  utimensat(AT_FDCWD, (dir_ / "src/a.txt").c_str(), old, 0);
  setenv("SOURCE_DATE_EPOCH", "2000000", 1);
  CliResult r = run_mkfs({"-q", dir_ / "src", dir_ / "img2"});
  unsetenv("SOURCE_DATE_EPOCH");
  ASSERT_EQ(r.code, 0) << r.err;
  auto img2 = Image::open(dir_ / "img2");
  EXPECT_EQ(img2->superblock().time_sec, 2000000);
  EXPECT_EQ(img2->attr(img2->resolve("/a.txt")).mtime_sec, 1000);   // older: kept
  EXPECT_EQ(img2->attr(img2->resolve("/b.o")).mtime_sec, 2000000);  // newer: clamped
}

TEST_F(Mkfs, DefaultTimestampIsTheNewestMtime) {
  struct timespec t[2] = {{1500000000, 0}, {1500000000, 0}};
  for (auto& e : fs::recursive_directory_iterator(dir_ / "src")) utimensat(AT_FDCWD, e.path().c_str(), t, 0);
  utimensat(AT_FDCWD, (dir_ / "src").c_str(), t, 0);
  ASSERT_EQ(run_mkfs({"-q", dir_ / "src", dir_ / "img"}).code, 0);
  EXPECT_EQ(Image::open(dir_ / "img")->superblock().time_sec, 1500000000);
}

TEST_F(Mkfs, LabelAndJsonSummary) {
  CliResult r = run_mkfs({"--json", "--label", "my volume", dir_ / "src", dir_ / "img"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.is_object());
  EXPECT_EQ(std::string(Image::open(dir_ / "img")->superblock().label), "my volume");
  CliResult info = run_inspect({"info", dir_ / "img"});
  EXPECT_NE(info.out.find("my volume"), std::string::npos) << info.out;
  EXPECT_NE(run_mkfs({"-q", "--label", std::string(65, 'x'), dir_ / "src", dir_ / "img3"}).code, 0);
}

TEST_F(Mkfs, TextSummaryMentionsTheEssentials) {
  CliResult r = run_mkfs({dir_ / "src", dir_ / "img"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* word : {"files", "ratio", "dedupe", "tail"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << " missing from:\n" << r.out;
}

TEST_F(Mkfs, NoDedupeStoresEveryPage) {
  ASSERT_EQ(run_mkfs({"-q", "--no-dedupe", dir_ / "src", dir_ / "img"}).code, 0);
  auto img = Image::open(dir_ / "img");
  for (auto& e : img->pages()) EXPECT_FALSE(e.flags & format::kPageDeduped);
  ASSERT_EQ(run_mkfs({"-q", dir_ / "src", dir_ / "img2"}).code, 0);
  auto img2 = Image::open(dir_ / "img2");
  size_t deduped = 0;
  for (auto& e : img2->pages()) deduped += (e.flags & format::kPageDeduped) != 0;
  EXPECT_EQ(deduped, 1u);  // sub/dup.txt's one full page
  EXPECT_LT(fs::file_size(dir_ / "img2"), fs::file_size(dir_ / "img"));
}

// --tail-pack-limit N: a last partial page of more than N bytes is a page of the file's own; 0 packs none.
TEST_F(Mkfs, TailPackLimitGivesLargerTailsTheirOwnPage) {
  write_text_file(dir_ / "src/empty-tail", 2 * 65536, 4);  // no tail at all
  for (const uint32_t limit : {0u, 5000u}) {
    const std::string image = dir_ / ("img" + std::to_string(limit));
    ASSERT_EQ(run_mkfs({"-q", "--tail-pack-limit", std::to_string(limit), dir_ / "src", image}).code, 0);
    auto img = Image::open(image);
    PageDecoder dec;
    for (const char* rel : {"a.txt", "b.o", "sub/c.txt", "sub/dup.txt", "empty-tail"}) {
      const uint32_t ino = img->resolve(std::string("/") + rel);
      const format::Inode& in = img->inode(ino);
      const uint64_t tail = in.size % 65536;
      EXPECT_EQ(in.tail_entry != format::kNone, tail > 0 && tail <= limit) << rel << " limit " << limit;
      const std::vector<uint8_t> want = read_bytes(dir_ / (std::string("src/") + rel));
      std::vector<uint8_t> got(want.size());
      ASSERT_EQ(img->read(ino, 0, got.size(), got.data(), dec), want.size()) << rel;
      EXPECT_EQ(got, want) << rel << " limit " << limit;
    }
    EXPECT_EQ(img->superblock().compat & format::kCompatTailPack ? 1 : 0, limit ? 1 : 0) << limit;
  }
  EXPECT_NE(run_mkfs({"-q", "--tail-pack-limit", "65537", dir_ / "src", dir_ / "bad"}).code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

TEST_F(Mkfs, BadArgumentsAreRefused) {
  EXPECT_NE(run_mkfs({"-q", "-l", "13", dir_ / "src", dir_ / "img"}).code, 0);
  EXPECT_NE(run_mkfs({"-q", "--page-size", "3000", dir_ / "src", dir_ / "img"}).code, 0);
  EXPECT_EQ(run_mkfs({"-q", "--uid", "4294967295", dir_ / "src", dir_ / "img"}).code, 2);  // (uid_t)-1
  EXPECT_EQ(run_mkfs({"-q", "--gid", "-1", dir_ / "src", dir_ / "img"}).code, 2);
  EXPECT_NE(run_mkfs({"-q", "--page-size", "131072", dir_ / "src", dir_ / "img"}).code, 0);
  EXPECT_NE(run_mkfs({"-q", dir_ / "missing", dir_ / "img"}).code, 0);
  EXPECT_NE(run_mkfs({"-q", dir_ / "src/a.txt", dir_ / "img"}).code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "img"));
}

// --help fits an 80-column terminal: every line of it, option descriptions and footer included.
// The image file is whole 4 KiB blocks, so that it backs a loop device as it is (a loop device drops a
// partial last sector): the device reads as the file does.
TEST_F(Mkfs, TheImageFileIsWholeBlocksAndReadsAsALoopDevice) {
  ASSERT_EQ(run_mkfs({"-q", dir_ / "src", dir_ / "img"}).code, 0);
  const uint64_t size = fs::file_size(dir_ / "img");
  EXPECT_EQ(size % 4096, 0u) << size;
  const uint64_t image_size = Image::open(dir_ / "img")->superblock().image_size;
  EXPECT_LE(image_size, size);
  EXPECT_GT(image_size + 4096, size) << "more padding than one block needs";
  if (geteuid() != 0) GTEST_SKIP() << "loop devices need root";
  std::string device;
  if (FILE* p = ::popen(("losetup -f --show --read-only '" + dir_ / "img" + "' 2>/dev/null").c_str(), "r")) {
    char line[256] = {};
    if (std::fgets(line, sizeof line, p) != nullptr) device = line;
    ::pclose(p);
  }
  while (!device.empty() && device.back() == '\n') device.pop_back();
  if (device.empty()) GTEST_SKIP() << "no loop device could be set up (losetup -f)";
  const CliResult v = run_inspect({"verify", device});
  EXPECT_EQ(std::system(("losetup -d " + device).c_str()), 0);
  EXPECT_EQ(v.code, 0) << v.err;
}

// A tree deeper than PATH_MAX fails (its entries cannot be named), with one message of bounded length
// that shows both ends of the path, and leaves no image.
TEST_F(Mkfs, ATreeDeeperThanPathMaxFailsWithAShortMessage) {
  const std::string top = dir_ / "deep";
  fs::create_directory(top);
  int fd = open(top.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 500; ++i) {  // 500 * 11 bytes: past PATH_MAX, made relative to each parent
    ASSERT_EQ(mkdirat(fd, "dddddddddd", 0755), 0);
    const int next = openat(fd, "dddddddddd", O_RDONLY | O_DIRECTORY);
    close(fd);
    ASSERT_GE(fd = next, 0);
  }
  close(fd);
  SetUpOut();
  const CliResult r = run_mkfs({"-q", top, dir_ / "out/img"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_LT(r.err.size(), 1500u) << r.err.substr(0, 300);
  EXPECT_NE(r.err.find("File name too long"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("...ddd"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(a path of "), std::string::npos) << r.err;
  EXPECT_TRUE(leftovers().empty());
  // Removing it needs the same care (std::filesystem manages the depth).
  fs::remove_all(top);
}

TEST_F(Mkfs, HelpFitsIn80Columns) {
  CliResult r = run_mkfs({"--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_NE(r.out.find("--ignore-errors"), std::string::npos) << r.out;
  size_t lines = 0;
  for (size_t at = 0; at < r.out.size(); ++lines) {
    const size_t end = std::min(r.out.find('\n', at), r.out.size());
    EXPECT_LE(end - at, 80u) << "too wide: '" << r.out.substr(at, end - at) << "'";
    at = end + 1;
  }
  EXPECT_GT(lines, 20u) << r.out;  // the whole help was looked at, not an error message
}

TEST_F(Mkfs, EveryLevelRoundTrips) {
  for (int level = 1; level <= 12; level += 3) {
    const std::string img = dir_ / ("img" + std::to_string(level));
    ASSERT_EQ(run_mkfs({"-q", "-l", std::to_string(level), dir_ / "src", img}).code, 0);
    EXPECT_EQ(Image::open(img)->superblock().mkfs_level, static_cast<uint32_t>(level));
    EXPECT_EQ(run_inspect({"verify", img}).code, 0) << level;
  }
}

}  // namespace
}  // namespace gdfs::test
