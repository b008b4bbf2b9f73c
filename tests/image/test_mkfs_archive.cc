// mkfs.gdfs from an archive: an archive in inode order gives the same bytes as its tree, any archive
// reads the same, every format libarchive reads works (and standard input), and bad archives fail
// with the member named and no image left, or are skipped with --ignore-errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <locale.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "archive_util.h"
#include "cli_util.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;

bool same_bytes(const std::string& a, const std::string& b) {
  return read_bytes(a) == read_bytes(b);
}

bool have(const char* command) {
  return std::system((std::string("command -v ") + command + " >/dev/null 2>&1").c_str()) == 0;
}

// The edge-case tree of the round-trip tests, its image, and the image extracted. Sockets cannot be
// archived (tar and cpio have no type for them), so the directory build leaves it out too.
class ArchiveEdge : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("archive-edge");
    fs::create_directory(*dir_ / "src");
    caps_ = new TreeCaps(make_edge_tree(*dir_ / "src"));
    CliResult r = run_mkfs({"-q", "--exclude", "socket", *dir_ / "src", *dir_ / "dir.gdfs"});
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_EQ(run_inspect({"extract", *dir_ / "dir.gdfs", *dir_ / "dir-out"}).code, 0);
  }
  static void TearDownTestSuite() {
    delete caps_;
    delete dir_;
  }
  static std::vector<std::string> members() {
    std::vector<std::string> order = inode_order(*dir_ / "src");
    order.erase(std::remove(order.begin(), order.end(), "socket"), order.end());
    return order;
  }
  static inline TempDir* dir_ = nullptr;
  static inline TreeCaps* caps_ = nullptr;
};

TEST_F(ArchiveEdge, ArchiveInInodeOrderGivesTheSameImage) {
  write_tree_archive(*dir_ / "src", members(), *dir_ / "ordered.tar", kPax);
  CliResult r = run_mkfs({"-q", *dir_ / "ordered.tar", *dir_ / "ordered.gdfs"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(same_bytes(*dir_ / "dir.gdfs", *dir_ / "ordered.gdfs"));
}

// image -> tar -> image -> tar: extract --archive keeps everything a pax archive holds (the root as
// "./" included), so the image built from its archive gives back the same archive, byte for byte.
TEST_F(ArchiveEdge, ImageToTarToImageToTarIsTheSameTar) {
  CliResult x = run_inspect({"extract", *dir_ / "dir.gdfs", "--archive", *dir_ / "one.tar"});
  ASSERT_EQ(x.code, 0) << x.err;
  CliResult r = run_mkfs({"-q", *dir_ / "one.tar", *dir_ / "one.gdfs"});
  ASSERT_EQ(r.code, 0) << r.err;
  x = run_inspect({"extract", *dir_ / "one.gdfs", "--archive", *dir_ / "two.tar"});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_TRUE(same_bytes(*dir_ / "one.tar", *dir_ / "two.tar"));
  EXPECT_GT(fs::file_size(*dir_ / "one.tar"), 0u);
}

// Reversed: every child before its directory (implied first, named later) and data in reverse inode
// order. Compressed too, and read from standard input.
TEST_F(ArchiveEdge, ArchiveInAnyOrderReadsTheSame) {
  std::vector<std::string> order = members();
  std::reverse(order.begin(), order.end());
  write_tree_archive(*dir_ / "src", order, *dir_ / "reversed.tar.gz",
                     {ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, {ARCHIVE_FILTER_GZIP}});
  CliResult r = run_mkfs({"-q", *dir_ / "reversed.tar.gz", *dir_ / "reversed.gdfs"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(run_inspect({"verify", *dir_ / "reversed.gdfs"}).code, 0);
  ASSERT_EQ(run_inspect({"extract", *dir_ / "reversed.gdfs", *dir_ / "reversed-out"}).code, 0);
  const auto diffs = compare_trees(*dir_ / "dir-out", *dir_ / "reversed-out", caps_->root, caps_->xattrs);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
  EXPECT_FALSE(same_bytes(*dir_ / "dir.gdfs", *dir_ / "reversed.gdfs"));  // data order differs
}

// A small tree that every format can hold: whole-second mtimes (ustar, cpio and zip keep no more), a
// hard link, a symlink, an empty file, a file with a hole, nested directories.
void make_small_tree(const std::string& d) {
  fs::create_directories(d + "/b/c");
  write_text_file(d + "/a.txt", 150000, 1);
  write_text_file(d + "/b/c/deep.txt", 3000, 2);
  write_file(d + "/b/empty", "");
  write_text_file(d + "/b/tiny", 17, 3);
  symlink("../a.txt", (d + "/b/link").c_str());
  link((d + "/a.txt").c_str(), (d + "/b/hard").c_str());
  const int fd = open((d + "/holes").c_str(), O_WRONLY | O_CREAT, 0600);
  pwrite(fd, "data in the middle", 18, 700000);
  ftruncate(fd, 2000000);
  close(fd);
  for (const std::string& rel : inode_order(d)) {
    const struct timespec t[2] = {{1600000000 + static_cast<time_t>(rel.size()), 0},
                                  {1600000000 + static_cast<time_t>(rel.size()), 0}};
    utimensat(AT_FDCWD, (d + "/" + rel).c_str(), t, AT_SYMLINK_NOFOLLOW);
  }
}

class ArchiveFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directory(dir_ / "src");
    make_small_tree(dir_ / "src");
  }
  // mkfs of `archive` reads the same as mkfs of the tree (without the entries in `excludes`).
  void expect_same_as_tree(const std::string& archive, std::vector<std::string> excludes = {},
                           bool owners = true) {
    std::vector<std::string> args{"-q"};
    for (const auto& x : excludes) args.insert(args.end(), {"--exclude", x});
    args.insert(args.end(), {dir_ / "src", dir_ / "dir.gdfs"});
    ASSERT_EQ(run_mkfs(args).code, 0);
    CliResult r = run_mkfs({"-q", archive, dir_ / "arc.gdfs"});
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_EQ(run_inspect({"extract", dir_ / "dir.gdfs", dir_ / "dir-out"}).code, 0);
    ASSERT_EQ(run_inspect({"extract", dir_ / "arc.gdfs", dir_ / "arc-out"}).code, 0);
    const auto diffs = compare_trees(dir_ / "dir-out", dir_ / "arc-out", owners, false);
    EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
  }
  void expect_kind(const ArchiveKind& kind, const std::string& name) {
    write_tree_archive(dir_ / "src", inode_order(dir_ / "src"), dir_ / name, kind);
    expect_same_as_tree(dir_ / name);
  }
  TempDir dir_{"archive-formats"};
};

TEST_F(ArchiveFormats, Ustar) {
  expect_kind({ARCHIVE_FORMAT_TAR_USTAR, {}}, "t.tar");
}
TEST_F(ArchiveFormats, Pax) {
  expect_kind(kPax, "t.tar");
}
TEST_F(ArchiveFormats, TarGz) {
  expect_kind({ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, {ARCHIVE_FILTER_GZIP}}, "t.tgz");
}
TEST_F(ArchiveFormats, TarZst) {
  expect_kind({ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, {ARCHIVE_FILTER_ZSTD}}, "t.tar.zst");
}
TEST_F(ArchiveFormats, TarXz) {
  expect_kind({ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, {ARCHIVE_FILTER_XZ}}, "t.tar.xz");
}
TEST_F(ArchiveFormats, CpioNewc) {
  expect_kind({ARCHIVE_FORMAT_CPIO_SVR4_NOCRC, {}}, "t.cpio");
}

// Zip has no hard links: the tree is compared without its link.
TEST_F(ArchiveFormats, Zip) {
  std::vector<std::string> order = inode_order(dir_ / "src");
  order.erase(std::remove(order.begin(), order.end(), "b/hard"), order.end());
  write_tree_archive(dir_ / "src", order, dir_ / "t.zip", {ARCHIVE_FORMAT_ZIP, {}});
  expect_same_as_tree(dir_ / "t.zip", {"hard"});
}

// GNU tar's own sparse format, written by GNU tar in its own (directory) order.
TEST_F(ArchiveFormats, GnuTarSparse) {
  if (!have("tar")) GTEST_SKIP() << "GNU tar is not installed";
  const std::string cmd =
      "tar -C '" + dir_ / "src" + "' --format=gnu --sparse --numeric-owner -cf '" + dir_ / "gnu.tar" + "' .";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  expect_same_as_tree(dir_ / "gnu.tar");
  const auto pages = inspect_json({"info", dir_ / "arc.gdfs"});
  EXPECT_TRUE(pages.is_object());
}

TEST_F(ArchiveFormats, CpioCommand) {
  if (!have("cpio")) GTEST_SKIP() << "cpio is not installed";
  const std::string cmd =
      "cd '" + dir_ / "src" + "' && find . | cpio --quiet -o -H newc > '" + dir_ / "c.cpio" + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  expect_same_as_tree(dir_ / "c.cpio");
}

TEST_F(ArchiveFormats, StandardInput) {
  write_tree_archive(dir_ / "src", inode_order(dir_ / "src"), dir_ / "t.tar.zst",
                     {ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, {ARCHIVE_FILTER_ZSTD}});
  const int saved = dup(STDIN_FILENO);
  const int fd = open((dir_ / "t.tar.zst").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  dup2(fd, STDIN_FILENO);
  close(fd);
  CliResult r = run_mkfs({"-q", "-", dir_ / "stdin.gdfs"});
  dup2(saved, STDIN_FILENO);
  close(saved);
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(run_mkfs({"-q", dir_ / "t.tar.zst", dir_ / "file.gdfs"}).code, 0);
  EXPECT_TRUE(same_bytes(dir_ / "stdin.gdfs", dir_ / "file.gdfs"));
}

// --base works for an archive SOURCE too: the archive of the tree an image was built from reuses
// every one of its pages, and the new image reads the same.
TEST_F(ArchiveFormats, BaseImageIsReusedByAnArchiveBuild) {
  ASSERT_EQ(run_mkfs({"-q", dir_ / "src", dir_ / "v1.gdfs"}).code, 0);
  write_tree_archive(dir_ / "src", inode_order(dir_ / "src"), dir_ / "t.tar", kPax);
  CliResult r = run_mkfs({"--json", "--base", dir_ / "v1.gdfs", dir_ / "t.tar", dir_ / "v2.gdfs"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_GT(summary["base"]["reused_pages"].get<uint64_t>(), 0u) << r.out;
  EXPECT_EQ(summary["tails"]["packs"], 0) << r.out;  // every tail found in the base's packs
  ASSERT_EQ(run_inspect({"extract", dir_ / "v1.gdfs", dir_ / "v1-out"}).code, 0);
  ASSERT_EQ(run_inspect({"extract", dir_ / "v2.gdfs", dir_ / "v2-out"}).code, 0);
  const auto diffs = compare_trees(dir_ / "v1-out", dir_ / "v2-out", true, false);
  EXPECT_TRUE(diffs.empty()) << join_lines(diffs);
}

// Members no real tree gives: implied directories, duplicates, bad paths and links.
class ArchiveMembers : public ::testing::Test {
 protected:
  CliResult mkfs(const std::vector<Member>& members, std::vector<std::string> extra = {}) {
    write_members(members, dir_ / "m.tar");
    extra.insert(extra.begin(), "-q");
    extra.insert(extra.end(), {dir_ / "m.tar", image()});
    return run_mkfs(extra);
  }
  // A failed build: exit 1, one error line naming the archive and `member`, no image or temp file.
  void expect_error(const CliResult& r, const std::string& member, const std::string& what) {
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("archive '" + dir_ / "m.tar" + "': member '" + member + "': "), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(image()));
    for (const auto& e : fs::directory_iterator(dir_.path()))
      EXPECT_EQ(e.path().filename().string().find(".gdfs-tmp"), std::string::npos) << e.path();
  }
  std::string image() const { return dir_ / "m.gdfs"; }
  std::string cat(const std::string& path) {
    CliResult r = run_inspect({"cat", image(), path});
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  }
  struct stat extracted(const std::string& rel) {
    if (!fs::exists(dir_ / "out")) {
      EXPECT_EQ(run_inspect({"extract", image(), dir_ / "out"}).code, 0);
    }
    struct stat st {};
    EXPECT_EQ(lstat((dir_ / ("out/" + rel)).c_str(), &st), 0) << rel;
    return st;
  }
  TempDir dir_{"archive-members"};
};

TEST_F(ArchiveMembers, ImpliedDirectoriesGetTheImageTime) {
  ASSERT_EQ(mkfs({{"a/b/c.txt", 'f', "deep", 0600, 1700000000}, {"z.txt", 'f', "z", 0644, 1500000000}}).code,
            0);
  EXPECT_EQ(cat("/a/b/c.txt"), "deep");
  for (const char* dir : {".", "a", "a/b"}) {
    const struct stat st = extracted(dir);
    EXPECT_EQ(st.st_mode, S_IFDIR | 0755u) << dir;
    EXPECT_EQ(st.st_uid, 0u) << dir;
    EXPECT_EQ(st.st_mtime, 1700000000) << dir;  // the newest mtime of the archive
  }
}

TEST_F(ArchiveMembers, ImpliedDirectoriesTakeOwnerOverridesAndMtime) {
  ASSERT_EQ(mkfs({{"a/c.txt", 'f', "x"}}, {"--uid", "7", "--gid", "8", "--mtime", "1234"}).code, 0);
  const struct stat st = extracted("a");
  EXPECT_EQ(st.st_uid, 7u);
  EXPECT_EQ(st.st_gid, 8u);
  EXPECT_EQ(st.st_mtime, 1234);
}

TEST_F(ArchiveMembers, NamedDirectoryAfterItsChildrenKeepsThemAndTakesItsAttributes) {
  ASSERT_EQ(mkfs({{"d/x", 'f', "x"}, {"d", 'd', "", 0700, 1400000000}}).code, 0);
  EXPECT_EQ(cat("/d/x"), "x");
  const struct stat st = extracted("d");
  EXPECT_EQ(st.st_mode, S_IFDIR | 0700u);
  EXPECT_EQ(st.st_mtime, 1400000000);
}

TEST_F(ArchiveMembers, LaterDuplicateWins) {
  ASSERT_EQ(mkfs({{"f", 'f', "first"},
                  {"x", 'd', ""},
                  {"x/in", 'f', "gone"},
                  {"y", 'f', "a file"},
                  {"f", 'f', "second"},
                  {"x", 'f', "now a file"},
                  {"y", 'd', ""},
                  {"y/in", 'f', "kept"}})
                .code,
            0);
  EXPECT_EQ(cat("/f"), "second");
  EXPECT_EQ(cat("/x"), "now a file");
  EXPECT_EQ(cat("/y/in"), "kept");
  EXPECT_TRUE(S_ISDIR(extracted("y").st_mode));
}

TEST_F(ArchiveMembers, LeadingSlashIsStrippedWithAWarning) {
  write_members({{"/abs/file", 'f', "abs"}, {"/abs/other", 'f', "o"}}, dir_ / "m.tar");
  CliResult r = run_mkfs({dir_ / "m.tar", image()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("removing leading '/' from member names"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // once per archive
  EXPECT_EQ(cat("/abs/file"), "abs");
}

// pax stores names as UTF-8; mkfs keeps their bytes whatever its locale (the tests run in "C"), and
// says nothing about them.
TEST_F(ArchiveMembers, Utf8NamesAreKeptAsTheyAre) {
  const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  if (utf8 == locale_t{}) GTEST_SKIP() << "no C.UTF-8 locale to write the archive in";
  const locale_t old = uselocale(utf8);  // libarchive's writer converts names from this thread's locale
  write_members({{"caf\xc3\xa9/na\xc3\xafve.txt", 'f', "utf-8"}}, dir_ / "m.tar");
  uselocale(old);
  freelocale(utf8);
  CliResult r = run_mkfs({dir_ / "m.tar", image()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(cat("/caf\xc3\xa9/na\xc3\xafve.txt"), "utf-8");
}

TEST_F(ArchiveMembers, DotDotIsAnError) {
  expect_error(mkfs({{"ok", 'f', "1"}, {"x/../../evil", 'f', "2"}}), "x/../../evil", "'..'");
}

TEST_F(ArchiveMembers, HardLinkToAMissingMemberIsAnError) {
  expect_error(mkfs({{"ok", 'f', "1"}, {"h", 'h', "nowhere"}}), "h", "hard link to 'nowhere'");
}

TEST_F(ArchiveMembers, HardLinkToADirectoryIsAnError) {
  expect_error(mkfs({{"d", 'd', ""}, {"h", 'h', "d"}}), "h", "hard link to a directory");
}

TEST_F(ArchiveMembers, ParentThatIsNotADirectoryIsAnError) {
  expect_error(mkfs({{"f", 'f', "1"}, {"f/x", 'f', "2"}}), "f/x", "'f' is not a directory");
}

TEST_F(ArchiveMembers, TruncatedMemberIsAnError) {
  write_members({{"small", 'f', "s"}, {"big", 'f', std::string(300000, 'b')}}, dir_ / "m.tar");
  fs::resize_file(dir_ / "m.tar", 150000);
  CliResult r = run_mkfs({"-q", dir_ / "m.tar", image()});
  expect_error(r, "big", "");
}

TEST_F(ArchiveMembers, CorruptCompressedMemberIsAnError) {
  write_members({{"a.txt", 'f', "fine"}, {"b.txt", 'f', std::string(100000, 'q') + "end"}}, dir_ / "m.tar",
                {ARCHIVE_FORMAT_ZIP, {}});
  std::vector<uint8_t> bytes = read_bytes(dir_ / "m.tar");
  // b.txt's deflated data follows its local header's name and extra field (whose length is the two
  // bytes before the name); damage the data.
  const std::string name = "b.txt";
  const auto at = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
  ASSERT_NE(at, bytes.end());
  const size_t extra = at[-2] | (size_t{at[-1]} << 8);
  const auto data = at + static_cast<ptrdiff_t>(name.size() + extra);
  for (ptrdiff_t i = 4; i < 24; ++i) data[i] ^= 0x5a;
  write_bytes(dir_ / "m.tar", bytes);
  expect_error(run_mkfs({"-q", dir_ / "m.tar", image()}), "b.txt", "");
}

TEST_F(ArchiveMembers, IgnoreErrorsSkipsBadMembers) {
  write_members({{"ok", 'f', "1"}, {"x/../evil", 'f', "2"}, {"h", 'h', "nowhere"}, {"ok2", 'f', "3"}},
                dir_ / "m.tar");
  CliResult r = run_mkfs({"--json", "--ignore-errors", dir_ / "m.tar", image()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["skipped"], 2) << r.out;
  EXPECT_NE(r.err.find("member 'x/../evil'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("member 'h'"), std::string::npos) << r.err;
  EXPECT_EQ(cat("/ok2"), "3");
  EXPECT_EQ(run_inspect({"cat", image(), "/h"}).code, 1);
}

TEST_F(ArchiveMembers, IgnoreErrorsKeepsWhatPrecedesATruncation) {
  write_members({{"small", 'f', "s"}, {"big", 'f', std::string(300000, 'b')}}, dir_ / "m.tar");
  fs::resize_file(dir_ / "m.tar", 150000);
  CliResult r = run_mkfs({"-q", "--ignore-errors", dir_ / "m.tar", image()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(cat("/small"), "s");
  EXPECT_EQ(run_inspect({"cat", image(), "/big"}).code, 1);
}

// Garbage after a good member (what a damaged compressed stream inflates to) reads as header after
// header without a name: skipped, but not one per 512-byte block to the end.
TEST_F(ArchiveMembers, IgnoreErrorsGivesUpOnEndlessNamelessHeaders) {
  write_members({{"ok", 'f', "1"}}, dir_ / "m.tar");
  std::vector<uint8_t> bytes = read_bytes(dir_ / "m.tar");
  // Up to the end of the member's data block: no end marker.
  size_t end = bytes.size();
  while (end > 0 && bytes[end - 1] == 0) --end;
  bytes.resize((end + 511) / 512 * 512);
  uint32_t seed = 7;
  for (int i = 0; i < 3000 * 512; ++i) {
    seed = seed * 1664525u + 1013904223u;
    bytes.push_back(static_cast<uint8_t>(seed >> 24));
  }
  write_bytes(dir_ / "m.tar", bytes);
  CliResult r = run_mkfs({"-q", "--ignore-errors", dir_ / "m.tar", image()});
  EXPECT_EQ(r.code, 2) << r.err.substr(0, 2000);
  EXPECT_LT(std::count(r.err.begin(), r.err.end(), '\n'), 1100);
  EXPECT_NE(r.err.find("the rest of the archive cannot be read"), std::string::npos) << r.err.substr(0, 2000);
  // A header without a name is placed by the last member that had one, never called "member '.'".
  EXPECT_NE(r.err.find("the member after 'ok': its path name cannot be read"), std::string::npos)
      << r.err.substr(0, 2000);
  EXPECT_EQ(r.err.find("member '.'"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_EQ(cat("/ok"), "1");
}

TEST_F(ArchiveMembers, ExcludeMatchesMemberPathsAndTheirDirectories) {
  ASSERT_EQ(mkfs({{"keep/a", 'f', "1"}, {"build/x/y.o", 'f', "2"}, {"keep/b.o", 'f', "3"}},
                 {"--exclude", "build", "--exclude", "*.o"})
                .code,
            0);
  EXPECT_EQ(cat("/keep/a"), "1");
  EXPECT_EQ(run_inspect({"cat", image(), "/keep/b.o"}).code, 1);
  extracted("keep");
  EXPECT_FALSE(fs::exists(dir_ / "out/build"));
}

TEST_F(ArchiveMembers, NotAnArchiveIsAnError) {
  write_file(dir_ / "m.tar", "just some text, not an archive\n");
  CliResult r = run_mkfs({"-q", dir_ / "m.tar", image()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot read archive '" + dir_ / "m.tar" + "'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(image()));
}

// "-" on a terminal is a forgotten pipe: refused at once (as tar does), never a wait for typed input.
TEST_F(ArchiveMembers, StandardInputOnATerminalIsRefused) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
    GTEST_SKIP() << "no pseudo-terminal here: " << std::strerror(errno);
  const std::string out = image();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a mkfs that waits on the terminal ends here, by SIGALRM, and fails the test
    const int slave = ::open(ptsname(master), O_RDWR | O_NOCTTY);
    if (slave < 0 || dup2(slave, STDIN_FILENO) < 0) _exit(3);
    const CliResult r = run_mkfs({"-q", "-", out});
    _exit(r.code == 1 && r.err.find("refusing to read an archive from a terminal") != std::string::npos ? 0
                                                                                                        : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  close(master);
  ASSERT_TRUE(WIFEXITED(status)) << "mkfs ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(out));
}

// An image is no archive; the message says how to build from one.
TEST_F(ArchiveMembers, AnImageAsSourceSaysHowToBuildFromIt) {
  ASSERT_EQ(mkfs({{"a/b", 'f', "bee"}}).code, 0);
  const std::string again = dir_ / "again.gdfs";
  CliResult r = run_mkfs({"-q", image(), again});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is a gdfs image, not a directory or an archive"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--archive - | mkfs.gdfs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(again));
}

// The permission bits (and type) of each of `paths` in `image`.
std::vector<uint32_t> modes(const std::string& image, const std::vector<std::string>& paths) {
  auto img = Image::open(image);
  std::vector<uint32_t> out;
  for (const std::string& p : paths) out.push_back(img->mode(img->resolve("/" + p)));
  return out;
}

// --chmod changes every inode but symlinks, from a tree and from its archive alike (implied directories
// too), as chmod(1) would; a MODE chmod would refuse is a usage error.
TEST(ArchiveModes, ChmodAppliesToTreesArchivesAndImpliedDirectories) {
  TempDir dir("chmod");
  fs::create_directories(dir / "src/d");
  write_text_file(dir / "src/d/f", 5000, 1);
  write_text_file(dir / "src/s", 3000, 2);
  write_text_file(dir / "src/p", 3000, 3);
  fs::create_symlink("s", dir / "src/l");
  const auto set = [&](const char* p, fs::perms m) { fs::permissions(dir / ("src/" + std::string(p)), m); };
  using P = fs::perms;
  set("d", P(0775) | P::set_gid);  // as a shared project directory: = keeps it, as chmod does
  set("d/f", P(0664));
  set("s", P(0775));
  set("p", P(0600));
  const std::vector<std::string> paths{"d", "d/f", "s", "p", "l"};
  write_tree_archive(dir / "src", paths, dir / "src.tar", kPax);
  write_tree_archive(dir / "src", {"d/f", "s"}, dir / "implied.tar", kPax);  // d only implied
  struct Case {
    std::string mode;
    std::vector<uint32_t> want;  // d, d/f, s, p, l
  };
  const uint32_t link = S_IFLNK | 0777;
  const std::vector<Case> cases{
      {"u+w,go-w,a+rX", {S_IFDIR | 02755, S_IFREG | 0644, S_IFREG | 0755, S_IFREG | 0644, link}},
      {"0640", {S_IFDIR | 02640, S_IFREG | 0640, S_IFREG | 0640, S_IFREG | 0640, link}},
      {"00640", {S_IFDIR | 0640, S_IFREG | 0640, S_IFREG | 0640, S_IFREG | 0640, link}},
      {"a=r,u+w", {S_IFDIR | 02644, S_IFREG | 0644, S_IFREG | 0644, S_IFREG | 0644, link}},
      {"go=", {S_IFDIR | 02700, S_IFREG | 0600, S_IFREG | 0700, S_IFREG | 0600, link}},
      {"g-s,go=", {S_IFDIR | 0700, S_IFREG | 0600, S_IFREG | 0700, S_IFREG | 0600, link}},
  };
  for (const Case& c : cases) {
    for (const std::string& source : {dir / "src", dir / "src.tar"}) {
      CliResult r = run_mkfs({"-q", "--force", "--chmod", c.mode, source, dir / "img.gdfs"});
      ASSERT_EQ(r.code, 0) << c.mode << " " << source << ": " << r.err;
      EXPECT_EQ(modes(dir / "img.gdfs", paths), c.want) << c.mode << " " << source;
    }
  }
  // An implied directory starts as 0755.
  ASSERT_EQ(run_mkfs({"-q", "--force", "--chmod", "go=", dir / "implied.tar", dir / "img.gdfs"}).code, 0);
  EXPECT_EQ(modes(dir / "img.gdfs", {"d"}), std::vector<uint32_t>{S_IFDIR | 0700});
  for (const char* bad : {"z+r", "u+q", "g=u", "u", "12345", "000640", "8", "u+r,"}) {
    CliResult r = run_mkfs({"-q", "--force", "--chmod", bad, dir / "src", dir / "bad.gdfs"});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--chmod"), std::string::npos) << bad << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "bad.gdfs"));
}

// The xattr names of `path` in the image.
std::set<std::string> xattr_names(const Image& img, const std::string& path) {
  std::set<std::string> out;
  for (const format::XattrPair& p : img.xattrs(img.resolve(path))) out.emplace(img.xattr_key(p));
  return out;
}

// --no-xattrs and --exclude-xattr leave out the same xattrs of a tree and of its archive, on files with
// data, empty files and directories.
TEST(ArchiveXattrs, NoXattrsAndExcludeXattrApplyToTreesAndArchives) {
  TempDir dir("xattr-filter");
  const std::vector<std::string> paths{"d", "empty", "f"};
  fs::create_directories(dir / "src/d");
  write_text_file(dir / "src/f", 150000, 1);
  write_file(dir / "src/empty", "");
  for (const std::string& p : paths)
    for (const char* key : {"user.keep", "user.drop1", "user.drop2"})
      if (::setxattr((dir / ("src/" + p)).c_str(), key, "v", 1, 0) != 0)
        GTEST_SKIP() << "no user xattrs on " << dir.path() << ": " << std::strerror(errno);
  write_tree_archive(dir / "src", paths, dir / "src.tar", kPax);
  const std::set<std::string> all{"user.drop1", "user.drop2", "user.keep"}, kept{"user.keep"};
  for (const std::string& source : {dir / "src", dir / "src.tar"}) {
    SCOPED_TRACE(source);
    const std::vector<std::pair<std::vector<std::string>, std::set<std::string>>> cases{
        {{}, all}, {{"--exclude-xattr", "user.drop*"}, kept}, {{"--no-xattrs"}, {}}};
    for (const auto& [options, want] : cases) {
      std::vector<std::string> args{"-q", "--force"};
      args.insert(args.end(), options.begin(), options.end());
      args.insert(args.end(), {source, dir / "img.gdfs"});
      CliResult r = run_mkfs(args);
      ASSERT_EQ(r.code, 0) << r.err;
      auto img = Image::open(dir / "img.gdfs");
      for (const std::string& p : paths) EXPECT_EQ(xattr_names(*img, "/" + p), want) << p;
      EXPECT_EQ(img->has_xattrs(), !want.empty());
    }
  }
}

}  // namespace
}  // namespace gdfs::test
