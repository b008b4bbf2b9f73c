// gdfs-inspect extract --archive: the image as tar (pax), gzip'd tar, cpio, zip and a pax stream, read
// back with libarchive's reader and compared entry by entry with the image itself (paths, types,
// modes, owners, mtimes, sizes, xattrs, symlink and hardlink targets, device numbers, the exact bytes);
// GNU tar and bsdtar unpack the tar into the source tree again; a damaged page fails the extraction
// and leaves no archive behind.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "archive_format.h"
#include "cli_util.h"
#include "gdfs/image.h"
#include "tree_util.h"
#include "walk.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;

// One entry as libarchive's reader sees it.
struct ReadEntry {
  unsigned type = 0, perm = 0;
  int64_t uid = 0, gid = 0, mtime = 0;
  long mtime_nsec = 0;
  int64_t size = 0;
  bool size_set = false;
  std::string symlink, hardlink, data;
  unsigned rdev_major = 0, rdev_minor = 0;
  std::map<std::string, std::string> xattrs;
  int sparse_regions = 0;
};

using ReadArchive = std::map<std::string, ReadEntry>;

std::string str(const char* s) {
  return s ? s : "";
}

// Reads every entry of archive `a` (already opened); "" when fine, else what went wrong.
std::string read_entries(archive* a, ReadArchive& out) {
  archive_entry* e = nullptr;
  int r;
  while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
    std::string path = str(archive_entry_pathname(e));
    if (!path.empty() && path.back() == '/') path.pop_back();  // zip and tar mark directories so
    ReadEntry& x = out[path];
    x.type = archive_entry_filetype(e);
    x.perm = archive_entry_perm(e);
    x.uid = archive_entry_uid(e);
    x.gid = archive_entry_gid(e);
    x.mtime = archive_entry_mtime(e);
    x.mtime_nsec = archive_entry_mtime_nsec(e);
    x.size_set = archive_entry_size_is_set(e);
    x.size = archive_entry_size(e);
    x.symlink = str(archive_entry_symlink(e));
    x.hardlink = str(archive_entry_hardlink(e));
    x.rdev_major = archive_entry_rdevmajor(e);
    x.rdev_minor = archive_entry_rdevminor(e);
    const char* name;
    const void* value;
    size_t len;
    archive_entry_xattr_reset(e);
    while (archive_entry_xattr_next(e, &name, &value, &len) == ARCHIVE_OK)
      x.xattrs[name] = std::string(static_cast<const char*>(value), len);
    x.sparse_regions = archive_entry_sparse_count(e);
    char buf[65536];
    la_ssize_t got;
    while ((got = archive_read_data(a, buf, sizeof buf)) > 0) x.data.append(buf, static_cast<size_t>(got));
    if (got < 0) return path + ": " + str(archive_error_string(a));
  }
  if (r != ARCHIVE_EOF) return "bad archive: " + str(archive_error_string(a));
  return "";
}

struct ReaderFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

std::unique_ptr<archive, ReaderFree> new_reader() {
  std::unique_ptr<archive, ReaderFree> a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_all(a.get());
  return a;
}

std::string read_file_archive(const std::string& path, ReadArchive& out) {
  auto a = new_reader();
  if (archive_read_open_filename(a.get(), path.c_str(), 65536) != ARCHIVE_OK)
    return "cannot open " + path + ": " + str(archive_error_string(a.get()));
  return read_entries(a.get(), out);
}

std::string read_memory_archive(const std::string& bytes, ReadArchive& out) {
  auto a = new_reader();
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    return "cannot open: " + str(archive_error_string(a.get()));
  return read_entries(a.get(), out);
}

// What each format keeps.
struct Kind {
  bool nsec = false;      // nanosecond mtimes (pax)
  bool xattrs = false;    // pax
  bool specials = true;   // fifos and devices (not zip)
  bool tar_links = true;  // later names are hardlink entries to the first, which has the data
};

std::string contents(const Image& img, uint32_t ino) {
  const uint64_t size = img.inode(ino).size;
  std::string s(size, '\0');
  PageDecoder dec;
  if (size > 0) {
    EXPECT_EQ(img.read(ino, 0, size, reinterpret_cast<uint8_t*>(s.data()), dec), size);
  }
  return s;
}

// Every entry of the image below the root is in `got` with the image's metadata and bytes (what `kind`
// keeps of them); nothing else is.
void expect_matches_image(const Image& img, const ReadArchive& got, const Kind& kind,
                          const std::string& what) {
  std::set<std::string> seen;
  std::map<uint32_t, std::vector<std::string>> names;  // hardlinked inode -> its names, in walk order
  // The root is "./".
  if (const auto root = got.find("."); root != got.end()) {
    seen.insert(".");
    EXPECT_EQ(root->second.type, format::kTypeDir) << what;
    EXPECT_EQ(root->second.perm, img.attr(format::kRootIno).mode & 07777u) << what;
    EXPECT_EQ(root->second.mtime, img.attr(format::kRootIno).mtime_sec) << what;
  } else {
    ADD_FAILURE() << what << ": no ./ entry";
  }
  struct Visit {
    uint32_t ino;
    std::string path;
  };
  std::vector<Visit> order;  // the walk's order: depth first, each directory's entries by name
  inspect::walk(img, format::kRootIno, "", [&](const inspect::Entry& e) {
    order.push_back({e.ino, e.path});
    return true;
  });
  for (const Visit& e : order) [&] {
    const std::string path(e.path);
    const format::Attr& at = img.attr(e.ino);
    const uint32_t type = at.mode & format::kTypeMask;
    const bool special = type == format::kTypeFifo || type == format::kTypeChr || type == format::kTypeBlk;
    if (special && !kind.specials) {
      EXPECT_FALSE(got.contains(path)) << what << ": " << path;
      return;
    }
    const auto it = got.find(path);
    if (it == got.end()) {
      ADD_FAILURE() << what << ": " << path << " is missing";
      return;
    }
    seen.insert(path);
    const ReadEntry& x = it->second;
    const std::string where = what + ": " + path;
    if (x.hardlink.empty()) {  // a tar hardlink entry has no type of its own
      EXPECT_EQ(x.type, type) << where;
    }
    EXPECT_EQ(x.perm, at.mode & 07777u) << where;
    EXPECT_EQ(x.uid, at.uid) << where;
    EXPECT_EQ(x.gid, at.gid) << where;
    EXPECT_EQ(x.mtime, at.mtime_sec) << where;
    if (kind.nsec) {
      EXPECT_EQ(x.mtime_nsec, static_cast<long>(at.mtime_nsec)) << where;
    }
    if (kind.xattrs) {
      std::map<std::string, std::string> want;
      for (const format::XattrPair& p : img.xattrs(e.ino))
        want[std::string(img.xattr_key(p))] = std::string(img.xattr_value(p));
      EXPECT_EQ(x.xattrs, want) << where;
    }
    if (type == format::kTypeLnk) {
      EXPECT_EQ(x.symlink, img.symlink_target(e.ino)) << where;
    }
    if (type == format::kTypeChr || type == format::kTypeBlk) {
      EXPECT_EQ(x.rdev_major, img.inode(e.ino).rdev_major) << where;
      EXPECT_EQ(x.rdev_minor, img.inode(e.ino).rdev_minor) << where;
    }
    if (at.nlink > 1 && type != format::kTypeDir) {
      names[e.ino].push_back(path);
    } else if (type == format::kTypeReg) {
      EXPECT_EQ(x.size, static_cast<int64_t>(img.inode(e.ino).size)) << where;
      EXPECT_TRUE(x.data == contents(img, e.ino)) << where << ": contents differ";
    }
  }();
  // Hardlinks: tar gives the data to the first name and makes the others hardlinks to it; newc cpio gives
  // it to one name; zip to every name. Whatever names hold data hold exactly the file's bytes.
  for (const auto& [ino, group] : names) {
    const std::string bytes = img.type(ino) == format::kTypeReg ? contents(img, ino) : "";
    int with_data = 0;
    for (size_t i = 0; i < group.size(); ++i) {
      const ReadEntry& x = got.at(group[i]);
      const std::string where = what + ": " + group[i];
      if (!x.hardlink.empty()) {
        EXPECT_NE(std::find(group.begin(), group.end(), x.hardlink), group.end())
            << where << " -> " << x.hardlink;
      }
      if (kind.tar_links) {
        EXPECT_EQ(x.hardlink, i == 0 ? "" : group[0]) << where;
      }
      if (x.size > 0 || bytes.empty()) {
        ++with_data;
        EXPECT_TRUE(x.data == bytes) << where << ": contents differ";
      }
    }
    EXPECT_GE(with_data, 1) << what << ": no name of inode " << ino << " holds its data";
  }
  for (const auto& [path, x] : got) EXPECT_TRUE(seen.contains(path)) << what << ": unexpected entry " << path;
}

// No marked temporary (".NAME.gdfs-tmp-XXXXXX") in `dir`.
bool no_temporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".gdfs-tmp-") != std::string::npos) return false;
  }
  return true;
}

// A unix socket at `path` (the listening socket itself is closed again; the node stays).
void make_socket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path) << path;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  EXPECT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
  close(fd);
}

bool have(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null").c_str()) == 0;
}

class ExtractArchive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("extract-archive");
    const std::string src = *dir_ / "src";
    fs::create_directories(src + "/d/e/f");
    write_file(src + "/empty", "");
    write_text_file(src + "/d/multi", 3 * 65536 + 100, 1);  // three pages and a tail
    write_text_file(src + "/d/e/f/deep", 1000, 2);
    // A hole in the middle: one page of data, three pages never written, a tail.
    write_file(src + "/holes", std::string(65536, 'a'));
    {
      FILE* f = fopen((src + "/holes").c_str(), "r+");
      ASSERT_NE(f, nullptr);
      fseek(f, 4 * 65536, SEEK_SET);
      fputs("end of a sparse file", f);
      fclose(f);
    }
    symlink("d/multi", (src + "/link").c_str());
    symlink("../../empty", (src + "/d/e/up").c_str());
    write_text_file(src + "/d/linked", 70000, 3);
    link((src + "/d/linked").c_str(), (src + "/hard1").c_str());
    link((src + "/d/linked").c_str(), (src + "/d/e/hard2").c_str());
    ASSERT_EQ(mkfifo((src + "/fifo").c_str(), 0640), 0);
    chmod((src + "/empty").c_str(), 0600);
    write_file(src + "/setuid", "#!/bin/sh\n");
    chmod((src + "/setuid").c_str(), 04755);
    if (lsetxattr((src + "/d/multi").c_str(), "user.note", "multi page", 10, 0) == 0 &&
        lsetxattr((src + "/d").c_str(), "user.dir", "\x01\x02", 2, 0) == 0) {
      xattrs_ = true;
    } else {
      notes_ += "no user xattrs on this filesystem (" + std::string(strerror(errno)) + "); ";
    }
    if (geteuid() == 0) {
      root_ = true;
      ASSERT_EQ(mknod((src + "/null").c_str(), S_IFCHR | 0620, makedev(1, 3)), 0);
      ASSERT_EQ(lchown((src + "/d/multi").c_str(), 1234, 5678), 0);
      ASSERT_EQ(lchown((src + "/link").c_str(), 42, 43), 0);
    } else {
      notes_ += "not root: no device node, no foreign owners; ";
    }
    // Nanosecond mtimes, children before their directories (creating them changes a directory's).
    for (const char* p : {"d/multi", "holes", "link", "fifo", "d/e/f/deep", "d/e/f", "d/e", "d"}) {
      const timespec t[2] = {{1600000000, 123456789}, {1600000000 + 7, 987654321}};
      ASSERT_EQ(utimensat(AT_FDCWD, (src + "/" + p).c_str(), t, AT_SYMLINK_NOFOLLOW), 0) << p;
    }
    image_ = *dir_ / "img.gdfs";
    CliResult r = run_mkfs({"-q", src, image_});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }

  void SetUp() override {
    if (!notes_.empty()) std::cout << "[ NOTE     ] " << notes_ << "\n";
  }

  // extract --archive FILE (more args after it), then FILE read back and compared with the image.
  static void check_file(const std::string& name, const Kind& kind, std::vector<std::string> more = {}) {
    const std::string out = *dir_ / name;
    std::vector<std::string> args = {"extract", image_, "--archive", out};
    args.insert(args.end(), more.begin(), more.end());
    const CliResult r = run_inspect(args);
    ASSERT_EQ(r.code, 0) << r.err;
    ReadArchive got;
    ASSERT_EQ(read_file_archive(out, got), "");
    auto img = Image::open(image_);
    expect_matches_image(*img, got, kind, name);
    EXPECT_TRUE(no_temporaries(dir_->path()));
  }

  static inline TempDir* dir_ = nullptr;
  static inline std::string image_, notes_;
  static inline bool xattrs_ = false, root_ = false;
};

TEST_F(ExtractArchive, TarIsPaxWithEverything) {
  check_file("all.tar", Kind{.nsec = true, .xattrs = true});
  ReadArchive got;
  ASSERT_EQ(read_file_archive(*dir_ / "all.tar", got), "");
  EXPECT_GT(got.at("holes").sparse_regions, 0);  // the hole stays a hole
  if (xattrs_) {
    EXPECT_EQ(got.at("d/multi").xattrs.at("user.note"), "multi page");
  }
  if (root_) {
    EXPECT_EQ(got.at("d/multi").uid, 1234);
  }
}

TEST_F(ExtractArchive, GzipTar) {
  check_file("all.tar.gz", Kind{.nsec = true, .xattrs = true});
}

TEST_F(ExtractArchive, ZstdTarFromTheName) {
  check_file("all.tar.zst", Kind{.nsec = true, .xattrs = true});
}

TEST_F(ExtractArchive, GnutarAndUstar) {
  check_file("gnu.tar", Kind{}, {"--format", "gnutar"});
  check_file("ustar.tar.xz", Kind{}, {"--format", "ustar"});
}

TEST_F(ExtractArchive, CpioIsNewc) {
  check_file("all.cpio", Kind{.tar_links = false});
}

// tar cannot hold a socket: it is left out with a warning, the rest is written. cpio keeps it.
TEST(ExtractArchiveSockets, TarLeavesThemOutCpioKeepsThem) {
  TempDir dir("extract-archive-sock");
  fs::create_directories(dir / "src");
  write_file(dir / "src/f", "file\n");
  make_socket(dir / "src/sock");
  ASSERT_EQ(run_mkfs({"-q", dir / "src", dir / "img"}).code, 0);
  CliResult r = run_inspect({"extract", dir / "img", "--archive", dir / "s.tar"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("sock: left out"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 entries left out"), std::string::npos) << r.err;
  ReadArchive got;
  ASSERT_EQ(read_file_archive(dir / "s.tar", got), "");
  EXPECT_EQ(got.size(), 2u);  // ./ and f
  EXPECT_TRUE(got.contains("f"));
  r = run_inspect({"extract", dir / "img", "--archive", dir / "s.cpio"});
  ASSERT_EQ(r.code, 0) << r.err;
  got.clear();
  ASSERT_EQ(read_file_archive(dir / "s.cpio", got), "");
  ASSERT_TRUE(got.contains("sock"));
  EXPECT_EQ(got.at("sock").type, unsigned{AE_IFSOCK});
}

TEST_F(ExtractArchive, ZipLeavesOutWhatZipCannotHold) {
  const std::string out = *dir_ / "all.zip";
  const CliResult r = run_inspect({"extract", image_, "--archive", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("fifo: left out"), std::string::npos) << r.err;
  ReadArchive got;
  ASSERT_EQ(read_file_archive(out, got), "");
  auto img = Image::open(image_);
  expect_matches_image(*img, got, Kind{.specials = false, .tar_links = false}, "zip");
}

TEST_F(ExtractArchive, StdoutIsAPaxStream) {
  const CliResult r = run_inspect({"extract", image_, "--archive", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  ReadArchive got;
  ASSERT_EQ(read_memory_archive(r.out, got), "");
  auto img = Image::open(image_);
  expect_matches_image(*img, got, Kind{.nsec = true, .xattrs = true}, "stdout");
}

TEST_F(ExtractArchive, PathSelectsASubtreeOrOneFile) {
  CliResult r = run_inspect({"extract", image_, "/d/e", "--archive", "-", "--format", "cpio"});
  ASSERT_EQ(r.code, 0) << r.err;
  ReadArchive got;
  ASSERT_EQ(read_memory_archive(r.out, got), "");
  EXPECT_EQ(got.size(), 5u);  // ./, f, f/deep, up, hard2
  EXPECT_TRUE(got.contains("."));
  ASSERT_TRUE(got.contains("f/deep"));
  EXPECT_TRUE(got.at("hard2").hardlink.empty());  // its other names are not in the archive: it has the data
  EXPECT_EQ(got.at("hard2").data.size(), 70000u);
  r = run_inspect({"extract", image_, "/d/multi", "-a", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  got.clear();
  ASSERT_EQ(read_memory_archive(r.out, got), "");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at("multi").data.size(), 3u * 65536 + 100);
}

// GNU tar and bsdtar unpack the pax archive into the source tree (the root directory is "./", which
// the tools apply to the folder they unpack into; its mtime is not compared, as compare_trees does not
// compare the roots).
TEST_F(ExtractArchive, TarToolsUnpackTheSourceTree) {
  const std::string tar = *dir_ / "tools.tar";
  ASSERT_EQ(run_inspect({"extract", image_, "--archive", tar}).code, 0);
  auto unpack = [&](const std::string& name, const std::string& cmd) {
    const std::string out = *dir_ / name;
    fs::create_directories(out);
    ASSERT_EQ(std::system(("cd " + out + " && " + cmd + " -f " + tar + " 2>/dev/null").c_str()), 0) << cmd;
    std::vector<std::string> diffs;
    for (const std::string& d : compare_trees(*dir_ / "src", out, root_, xattrs_)) {
      if (d.rfind(": ", 0) != 0) diffs.push_back(d);  // ": mtime" is the roots'
    }
    EXPECT_EQ(diffs, std::vector<std::string>{}) << cmd;
    // And diff(1) on the contents, where it exists (it cannot compare fifos and devices).
    if (have("diff")) {
      EXPECT_EQ(std::system(("diff -r -x fifo -x null " + *dir_ / "src" + " " + out).c_str()), 0);
    }
  };
  if (have("tar")) {
    EXPECT_EQ(std::system(("tar -tvf " + tar + " >/dev/null 2>&1").c_str()), 0);
    unpack("gnu-tar", "tar --xattrs --xattrs-include='*' --numeric-owner -xp");
  } else {
    std::cout << "[ SKIPPED  ] no tar\n";
  }
  if (have("bsdtar")) {
    unpack("bsdtar", "bsdtar --xattrs --numeric-owner -xp");
  } else {
    std::cout << "[ SKIPPED  ] no bsdtar\n";
  }
}

// A page that fails its checks ends the extraction with an error naming the inode and the path, and no
// archive appears (nor its temporary); to a stream, the archive is left without its trailer.
TEST_F(ExtractArchive, DamagedPageLeavesNoArchive) {
  auto img = Image::open(image_);
  const uint32_t ino = img->resolve("/d/multi");
  const format::PageEntry& e = img->pages()[img->page_ref(ino, 1).entry];
  std::vector<uint8_t> bytes = read_bytes(image_);
  bytes[e.offset + e.csize / 2] ^= 0x10;
  const std::string bad = *dir_ / "bad.gdfs", outdir = *dir_ / "bad-out";
  write_bytes(bad, bytes);
  fs::create_directories(outdir);
  for (const std::string name : {"x.tar", "x.tar.gz", "x.zip", "x.cpio"}) {
    const CliResult r = run_inspect({"extract", bad, "--archive", outdir + "/" + name});
    EXPECT_EQ(r.code, 1) << name;
    EXPECT_NE(r.err.find("inode " + std::to_string(ino)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("/d/multi"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(outdir + "/" + name)) << name;
  }
  EXPECT_TRUE(fs::is_empty(outdir));
  // To a stream: exit 1, and whatever came out before the error lacks the damaged file (libarchive
  // writes whole blocks, no trailer after an error, so a reader sees a truncated archive at most).
  const CliResult s = run_inspect({"extract", bad, "--archive", "-"});
  EXPECT_EQ(s.code, 1);
  EXPECT_NE(s.err.find("inode " + std::to_string(ino)), std::string::npos) << s.err;
  ReadArchive got;
  if (read_memory_archive(s.out, got).empty()) {
    EXPECT_TRUE(!got.contains("d/multi") || got.at("d/multi").data.size() < 3u * 65536 + 100);
  }
}

TEST_F(ExtractArchive, ExistingArchiveIsReplacedWhole) {
  const std::string out = *dir_ / "replaced.tar";
  write_file(out, "old contents");
  ASSERT_EQ(run_inspect({"extract", image_, "--archive", out}).code, 0);
  ReadArchive got;
  ASSERT_EQ(read_file_archive(out, got), "");
  EXPECT_TRUE(got.contains("d/multi"));
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0044u, 0u);  // a new file's mode, not the temporary's 0600
}

TEST_F(ExtractArchive, UsageErrors) {
  EXPECT_EQ(run_inspect({"extract", image_}).code, 2);                                     // no target
  EXPECT_EQ(run_inspect({"extract", image_, "out", "/d", "--archive", "x.tar"}).code, 2);  // both
  EXPECT_EQ(run_inspect({"extract", image_, "out", "--format", "zip"}).code, 2);           // no --archive
  EXPECT_EQ(run_inspect({"extract", image_, "-a", "-", "--format", "rar"}).code, 2);
  EXPECT_EQ(run_inspect({"extract", image_, "-a", "-", "--compress", "brotli"}).code, 2);
  const CliResult r = run_inspect({"extract", image_, "/missing", "--archive", *dir_ / "missing.tar"});
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(fs::exists(*dir_ / "missing.tar"));
}

// A 1 GiB file of one data page in pax: a sparse map, not 1 GiB of zeros.
TEST(ExtractArchiveSparse, PaxKeepsAGibibyteHoleOut) {
  TempDir dir("extract-archive-sparse");
  fs::create_directories(dir / "src");
  {
    FILE* f = fopen((dir / "src/big").c_str(), "w");
    ASSERT_NE(f, nullptr);
    fseek(f, 512l << 20, SEEK_SET);
    fputs("data in the middle", f);
    ASSERT_EQ(ftruncate(fileno(f), 1l << 30), 0);
    fclose(f);
  }
  ASSERT_EQ(run_mkfs({"-q", dir / "src", dir / "img"}).code, 0);
  ASSERT_EQ(run_inspect({"extract", dir / "img", "--archive", dir / "big.tar"}).code, 0);
  EXPECT_LT(fs::file_size(dir / "big.tar"), 1u << 20);
  auto a = new_reader();
  ASSERT_EQ(archive_read_open_filename(a.get(), (dir / "big.tar").c_str(), 65536), ARCHIVE_OK);
  archive_entry* e = nullptr;
  ASSERT_EQ(archive_read_next_header(a.get(), &e), ARCHIVE_OK);
  EXPECT_STREQ(archive_entry_pathname(e), "./");  // the root comes first
  ASSERT_EQ(archive_read_next_header(a.get(), &e), ARCHIVE_OK);
  EXPECT_EQ(archive_entry_size(e), 1l << 30);
  // The data blocks: one page at 512 MiB, its first bytes the file's.
  const void* block;
  size_t len;
  la_int64_t off;
  std::string data;
  int64_t data_at = -1;
  while (archive_read_data_block(a.get(), &block, &len, &off) == ARCHIVE_OK) {
    if (len == 0) continue;
    if (data_at < 0) data_at = off;
    data.append(static_cast<const char*>(block), len);
  }
  EXPECT_EQ(data_at, 512l << 20);
  EXPECT_EQ(data.rfind("data in the middle", 0), 0u);
  EXPECT_LE(data.size(), 65536u);
}

TEST(ArchiveFormat, FromNameFormatAndCompress) {
  using inspect::choose_archive_format;
  auto is = [](const inspect::ArchiveFormat& f, const char* format, const char* filter) {
    return f.format == format && f.filter == filter;
  };
  EXPECT_TRUE(is(choose_archive_format("-", "", ""), "pax", "none"));
  EXPECT_TRUE(is(choose_archive_format("a.tar", "", ""), "pax", "none"));
  EXPECT_TRUE(is(choose_archive_format("a.tar.gz", "", ""), "pax", "gzip"));
  EXPECT_TRUE(is(choose_archive_format("a.tgz", "", ""), "pax", "gzip"));
  EXPECT_TRUE(is(choose_archive_format("dir.x/a.tar.zst", "", ""), "pax", "zstd"));
  EXPECT_TRUE(is(choose_archive_format("a.tar.xz", "", ""), "pax", "xz"));
  EXPECT_TRUE(is(choose_archive_format("a.cpio", "", ""), "newc", "none"));
  EXPECT_TRUE(is(choose_archive_format("a.zip", "", ""), "zip", "none"));
  EXPECT_TRUE(is(choose_archive_format("a.data", "", ""), "pax", "none"));
  EXPECT_TRUE(is(choose_archive_format("a.tar.gz", "gnutar", ""), "gnutar", "gzip"));
  EXPECT_TRUE(is(choose_archive_format("a.tar.gz", "", "none"), "pax", "none"));
  EXPECT_TRUE(is(choose_archive_format("-", "cpio", "zstd"), "newc", "zstd"));
  EXPECT_TRUE(is(choose_archive_format("-", "odc", ""), "cpio", "none"));
  EXPECT_TRUE(is(choose_archive_format("-", "tar", ""), "pax", "none"));
}

}  // namespace
}  // namespace gdfs::test
