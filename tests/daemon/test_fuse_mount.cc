// The daemon end to end (label `fuse`): mount images built from real trees and check what readers see
// against the source: the whole edge-case tree, random reads, 16 concurrent readers, io_uring off,
// a corrupt page, bad images, unmounting by every route, and the mount helper. Skips, with the reason,
// where FUSE mounts are impossible.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <tuple>

#include "cli_util.h"
#include "gdfs/image.h"
#include "gdfs/mount_counters.h"
#include "key_util.h"
#include "mount_util.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// The random-read tree: compressible text, incompressible bytes (stored pages), zero runs, a sparse
// file, and many small files that end up in tail packs.
void make_data_tree(const std::string& dir, std::map<std::string, Bytes>& files) {
  fs::create_directories(dir + "/small");
  write_text_file(dir + "/text", 5 * 1000 * 1000 + 123, 7);
  std::mt19937_64 rng(42);
  Bytes random(3 * 65536 + 4097);
  for (auto& b : random) b = static_cast<uint8_t>(rng());
  write_bytes(dir + "/random", random);
  Bytes mixed(2 << 20, 0);
  for (size_t i = 1 << 20; i < mixed.size(); ++i) mixed[i] = static_cast<uint8_t>("gdfs mixed "[i % 11]);
  write_bytes(dir + "/mixed", mixed);
  {
    const int fd = open((dir + "/sparse").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, "data after a hole", 17, 3 << 20), 17);
    ASSERT_EQ(ftruncate(fd, (5 << 20) + 7), 0);
    close(fd);
  }
  for (int i = 0; i < 100; ++i) write_text_file(dir + "/small/f" + std::to_string(i), 10 + i * 37, i);
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().string().substr(dir.size())] = read_bytes(e.path());
}

class Fuse : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fuse_unavailable().empty()) return;
    dir_ = new TempDir("fuse");
    fs::create_directories(*dir_ / "edge");
    caps_ = new TreeCaps(make_edge_tree(*dir_ / "edge"));
    files_ = new std::map<std::string, Bytes>;
    make_data_tree(*dir_ / "data", *files_);
    ASSERT_EQ(run_mkfs({"-q", *dir_ / "edge", *dir_ / "edge.img"}).code, 0);
    ASSERT_EQ(run_mkfs({"-q", *dir_ / "data", *dir_ / "data.img"}).code, 0);
    // A tree for walks: 8 directories of 25 small files; in two of them the files are in a subdirectory.
    for (int d = 0; d < 8; ++d) {
      const std::string sub = *dir_ / ("walk/d" + std::to_string(d) + (d % 4 == 1 ? "/sub" : ""));
      fs::create_directories(sub);
      for (int i = 0; i < 25; ++i)
        write_text_file(sub + "/f" + std::to_string(i), 100 + (d * 25 + i) * 53 % 9000, d * 25 + i);
    }
    ASSERT_EQ(run_mkfs({"-q", *dir_ / "walk", *dir_ / "walk.img"}).code, 0);
  }
  static void TearDownTestSuite() {
    delete files_;
    delete caps_;
    delete dir_;
  }
  void SetUp() override {
    const std::string why = fuse_unavailable();
    if (!why.empty()) GTEST_SKIP() << "FUSE mounts unavailable: " << why;
  }
  // A fresh mount point for each mount.
  static std::string mount_point() {
    static int n = 0;
    const std::string p = *dir_ / ("mnt" + std::to_string(n++));
    fs::create_directories(p);
    return p;
  }
  static std::unique_ptr<Mount> mount(const std::string& image, const std::string& opts = "") {
    return std::make_unique<Mount>(image, mount_point(), opts);
  }
  // With `direct` (O_DIRECT) every read reaches the daemon instead of the kernel's page cache.
  static Bytes pread_bytes(const std::string& path, uint64_t off, size_t len, int* err = nullptr,
                           bool direct = false) {
    Bytes out(len);
    const int fd = open(path.c_str(), O_RDONLY | (direct ? O_DIRECT : 0));
    if (fd < 0) {
      if (err) *err = errno;
      return {};
    }
    const ssize_t n = pread(fd, out.data(), len, static_cast<off_t>(off));
    if (err) *err = n < 0 ? errno : 0;
    close(fd);
    out.resize(n < 0 ? 0 : size_t(n));
    return out;
  }
  static Bytes expected(const std::string& rel, uint64_t off, size_t len) {
    const Bytes& src = files_->at(rel);
    if (off >= src.size()) return {};
    return Bytes(src.begin() + off, src.begin() + off + std::min<uint64_t>(len, src.size() - off));
  }
  // `count` reads of random files at random offsets and lengths (some past the end), checked.
  static void random_reads(const std::string& mnt, uint64_t seed, int count, bool direct = false) {
    std::mt19937_64 rng(seed);
    std::vector<std::string> names;
    for (const auto& [name, bytes] : *files_) names.push_back(name);
    for (int i = 0; i < count; ++i) {
      const std::string& name = names[rng() % names.size()];
      const uint64_t size = files_->at(name).size();
      const uint64_t off = rng() % (size + 1000);
      const size_t len = (rng() % 4 == 0) ? rng() % (1600 << 10) : rng() % 70000;
      Bytes got = pread_bytes(mnt + name, off, len, nullptr, direct);
      ASSERT_EQ(got, expected(name, off, len)) << name << " at " << off << " +" << len;
    }
  }
  // The counters through the root's ioctl (gdfs/mount_counters.h), which every mount answers.
  static nlohmann::json stats(const std::string& mnt) {
    std::vector<char> buf(kStatsIoctlBytes);
    const int fd = open(mnt.c_str(), O_RDONLY | O_DIRECTORY);
    const int n = fd < 0 ? -1 : ioctl(fd, kStatsIoctl, buf.data());
    if (fd >= 0) close(fd);
    if (n <= 0) return {};
    return nlohmann::json::parse(std::string(buf.data(), size_t(n)));
  }
  static nlohmann::json stats_xattr(const std::string& mnt) {
    char buf[4096];
    const ssize_t n = getxattr(mnt.c_str(), kStatsXattr, buf, sizeof buf);
    if (n <= 0) return {};
    return nlohmann::json::parse(std::string(buf, size_t(n)));
  }

  // The counters once store_ahead_bytes has reached `bytes` (or after 10 s): the daemon pushes after it
  // has replied, so a reader can be back before the push has landed.
  static nlohmann::json stats_after_pushes(const std::string& mnt, uint64_t bytes) {
    nlohmann::json s = stats(mnt);
    for (int i = 0; i < 1000 && s.value("store_ahead_bytes", uint64_t{0}) < bytes; ++i) {
      usleep(10000);
      s = stats(mnt);
    }
    return s;
  }

  static TempDir* dir_;
  static TreeCaps* caps_;
  static std::map<std::string, Bytes>* files_;
};
TempDir* Fuse::dir_ = nullptr;
TreeCaps* Fuse::caps_ = nullptr;
std::map<std::string, Bytes>* Fuse::files_ = nullptr;

TEST_F(Fuse, WholeEdgeTreeMatchesSource) {
  auto m = mount(*dir_ / "edge.img");
  ASSERT_TRUE(m->ok()) << m->error();
  for (const auto& note : caps_->notes) std::cout << "edge tree: " << note << "\n";
  const std::vector<std::string> diffs = compare_trees(*dir_ / "edge", m->dir(), caps_->root, caps_->xattrs);
  for (const auto& d : diffs) ADD_FAILURE() << d;
  EXPECT_TRUE(diffs.empty());
  // Hardlinks share one stable inode number; statfs answers for the image.
  struct statvfs sv {};
  ASSERT_EQ(statvfs(m->dir().c_str(), &sv), 0);
  EXPECT_GT(sv.f_blocks, 0u);
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

TEST_F(Fuse, RandomReadsMatchSource) {
  auto m = mount(*dir_ / "data.img");
  ASSERT_TRUE(m->ok()) << m->error();
  random_reads(m->dir(), 1, 1500);
  const nlohmann::json s = stats(m->dir());
  EXPECT_GT(s.value("reads", 0), 0);
  EXPECT_GT(s.value("cache_misses", 0), 0);
  EXPECT_EQ(s.value("read_errors", 1), 0);
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

// What a reply hands the kernel whole, the kernel's page cache keeps: the daemon lets go of those pages
// (and reuses their memory) instead of caching them twice. O_DIRECT reads keep theirs: the kernel does not.
TEST_F(Fuse, PagesHandedOverWholeLeaveTheDaemonsCache) {
  auto m = mount(*dir_ / "data.img");
  ASSERT_TRUE(m->ok()) << m->error();
  const Bytes& text = files_->at("/text");
  Bytes got;
  for (uint64_t off = 0; off < text.size(); off += 1 << 20) {
    const Bytes part = pread_bytes(m->dir() + "/text", off, 1 << 20);
    got.insert(got.end(), part.begin(), part.end());
  }
  ASSERT_EQ(got, text);
  const nlohmann::json s1 = stats(m->dir());
  const uint64_t pages = text.size() >> 16;
  EXPECT_GE(s1.value("pages_released", uint64_t{0}), pages / 2) << s1.dump();
  EXPECT_LE(s1.value("cache_bytes", uint64_t{1} << 40), text.size() / 2) << s1.dump();
  // Read again: the kernel answers, the bytes are the same.
  EXPECT_EQ(pread_bytes(m->dir() + "/text", 0, text.size()), text);
  // O_DIRECT: every page stays cached in the daemon.
  EXPECT_EQ(pread_bytes(m->dir() + "/text", 1 << 20, 1 << 20, nullptr, true),
            expected("/text", 1 << 20, 1 << 20));
  const nlohmann::json s2 = stats(m->dir());
  EXPECT_EQ(s2.value("pages_released", uint64_t{0}), s1.value("pages_released", uint64_t{0})) << s2.dump();
  EXPECT_GE(s2.value("cache_pages", uint64_t{0}), s1.value("cache_pages", uint64_t{0}) + 16) << s2.dump();
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

TEST_F(Fuse, SixteenConcurrentReadersWithEviction) {
  // A 1 MiB cache holds 16 pages: readers evict each other's pages and race on the same pages in flight.
  auto m = mount(*dir_ / "data.img", "cache_size=1M,threads=3,readahead=256K");
  ASSERT_TRUE(m->ok()) << m->error();
  std::vector<std::thread> readers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 16; ++t) {
    readers.emplace_back([&, t] {
      if (t % 2) {
        random_reads(m->dir(), 100 + t, 300, /*direct=*/true);
      } else {
        // Sequential whole-file reads in 128 KiB steps: the readahead path under contention.
        for (const auto& [name, bytes] : *files_) {
          if (bytes.size() < 65536) continue;
          Bytes got;
          for (uint64_t off = 0; off < bytes.size(); off += 131072) {
            Bytes part = pread_bytes(m->dir() + name, off, 131072, nullptr, t % 4 == 0);
            got.insert(got.end(), part.begin(), part.end());
          }
          if (got != bytes) ++failures;
        }
      }
      if (::testing::Test::HasFailure()) ++failures;
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(m->alive());
  const nlohmann::json s = stats(m->dir());
  EXPECT_GT(s.value("readahead_pages", 0), 0);
  // The O_DIRECT readers' requests reach the daemon (those past the end of a file the kernel answers).
  EXPECT_GE(s.value("reads", 0), 1000);
  EXPECT_LE(s.value("cache_bytes", 1u << 30), 1u << 20);
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

TEST_F(Fuse, WithoutUringResultsAreIdentical) {
  auto with = mount(*dir_ / "data.img");
  auto without = mount(*dir_ / "data.img", "uring=0");
  ASSERT_TRUE(with->ok()) << with->error();
  ASSERT_TRUE(without->ok()) << without->error();
  std::mt19937_64 rng(9);
  for (int i = 0; i < 300; ++i) {
    auto it = files_->begin();
    std::advance(it, rng() % files_->size());
    const uint64_t off = rng() % (it->second.size() + 1);
    const size_t len = rng() % 300000;
    const Bytes a = pread_bytes(with->dir() + it->first, off, len);
    ASSERT_EQ(a, pread_bytes(without->dir() + it->first, off, len)) << it->first << " at " << off;
    ASSERT_EQ(a, expected(it->first, off, len));
  }
  EXPECT_EQ(stats(without->dir()).value("fetcher", ""), "pread");
  EXPECT_EQ(stats(without->dir()).value("uring_submits", 1), 0);
  EXPECT_EQ(with->unmount(), 0) << with->log();
  EXPECT_EQ(without->unmount(), 0) << without->log();
}

TEST_F(Fuse, CountersAreReadableAndNotListed) {
  auto m = mount(*dir_ / "data.img", "xattr=1");
  ASSERT_TRUE(m->ok()) << m->error();
  const Bytes whole = pread_bytes(m->dir() + "/text", 0, 6 << 20);
  ASSERT_EQ(whole, files_->at("/text"));
  const nlohmann::json s = stats(m->dir());
  ASSERT_TRUE(s.is_object());
  for (const char* key : {"reads", "bytes_served", "cache_hits", "cache_misses", "pages_decoded_cpu",
                          "pages_decoded_gpu", "gpu_batches", "gpu_fallback_pages", "gpu_small_reads",
                          "decode_ns", "fetch_ops", "coalesced_reads", "uring_submits"})
    EXPECT_TRUE(s.contains(key)) << key;
  EXPECT_GE(s.value("bytes_served", 0u), whole.size());
  EXPECT_GT(s.value("pages_decoded_cpu", 0), 0);
  // The same counters as the xattr, on a mount that answers xattrs.
  const nlohmann::json x = stats_xattr(m->dir());
  ASSERT_TRUE(x.is_object());
  EXPECT_GE(x.value("bytes_served", 0u), whole.size());
  char names[1024];
  const ssize_t n = listxattr(m->dir().c_str(), names, sizeof names);
  EXPECT_EQ(std::string(names, size_t(std::max<ssize_t>(n, 0))).find("gdfs.stats"), std::string::npos);
  // The gdfs-inspect view of the same counters.
  CliResult r = run_inspect({"counters", m->dir()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cache hits"), std::string::npos) << r.out;
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

// Without xattrs to serve (an image that has none, or xattr=0), getxattr is answered ENOSYS once and the
// kernel asks no more: ls -l's two xattrs of every file cost no round trip. The counters stay readable
// through the ioctl; an image with xattrs serves them under the default.
TEST_F(Fuse, XattrsOffLeaveTheKernelToAnswerAndCountersStayReadable) {
  const fs::path src = *dir_ / "xattr-src";
  fs::create_directories(src);
  write_file(src / "f", "contents");
  const bool can_set = setxattr((src / "f").c_str(), "user.k", "v", 1, 0) == 0;
  ASSERT_EQ(run_mkfs({"-q", src, *dir_ / "xattr.img"}).code, 0);
  auto xattr_errno = [](const std::string& path, const char* name) {
    char buf[64];
    return getxattr(path.c_str(), name, buf, sizeof buf) < 0 ? errno : 0;
  };
  {
    auto m = mount(*dir_ / "data.img");  // no xattrs in it: off under the default
    ASSERT_TRUE(m->ok()) << m->error();
    const uint64_t before = stats(m->dir()).value("reads", uint64_t{0});
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(xattr_errno(m->dir() + "/text", "security.selinux"), EOPNOTSUPP);
      EXPECT_EQ(xattr_errno(m->dir() + "/text", "system.posix_acl_access"), ENODATA);  // no ACL
    }
    EXPECT_EQ(xattr_errno(m->dir(), kStatsXattr), EOPNOTSUPP);
    EXPECT_EQ(listxattr((m->dir() + "/text").c_str(), nullptr, 0), 0);
    const nlohmann::json s = stats(m->dir());
    ASSERT_TRUE(s.is_object());
    EXPECT_EQ(s.value("reads", uint64_t{0}), before);
    CliResult r = run_inspect({"counters", m->dir()});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("cache hits"), std::string::npos) << r.out;
    // Any other ioctl, and the counters' anywhere but the root, are refused.
    const int fd = open((m->dir() + "/text").c_str(), O_RDONLY);
    std::vector<char> buf(kStatsIoctlBytes);
    EXPECT_EQ(ioctl(fd, kStatsIoctl, buf.data()), -1);
    close(fd);
    EXPECT_EQ(m->unmount(), 0) << m->log();
  }
  if (!can_set) GTEST_SKIP() << "user xattrs cannot be set under " << src;
  for (const std::string opts : {"", "xattr=0"}) {
    auto m = mount(*dir_ / "xattr.img", opts);
    ASSERT_TRUE(m->ok()) << m->error();
    char v[8] = {};
    const ssize_t n = getxattr((m->dir() + "/f").c_str(), "user.k", v, sizeof v);
    const int error = errno;
    const ssize_t listed = listxattr((m->dir() + "/f").c_str(), nullptr, 0);
    if (opts.empty()) {
      EXPECT_EQ(std::string(v, size_t(std::max<ssize_t>(n, 0))), "v");
      EXPECT_EQ(listed, ssize_t(sizeof "user.k"));
    } else {
      EXPECT_EQ(n, -1);
      EXPECT_EQ(error, EOPNOTSUPP);
      EXPECT_EQ(listed, 0) << "names listed that getxattr refuses";
    }
    EXPECT_TRUE(stats(m->dir()).is_object()) << opts;
    EXPECT_EQ(m->unmount(), 0) << m->log();
  }
}

TEST_F(Fuse, DecoderChoiceFollowsTheGpu) {
  // auto mounts with or without a usable GPU and names the decoder it took; cpu never tries the GPU.
  auto m = mount(*dir_ / "data.img", "decoder=auto");
  ASSERT_TRUE(m->ok()) << m->error();
  EXPECT_EQ(pread_bytes(m->dir() + "/text", 0, 3 << 20), expected("/text", 0, 3 << 20));
  const std::string decoder = stats(m->dir()).value("decoder", "");
  EXPECT_EQ(m->unmount(), 0) << m->log();
  auto c = mount(*dir_ / "data.img", "decoder=cpu");
  ASSERT_TRUE(c->ok()) << c->error();
  EXPECT_EQ(stats(c->dir()).value("decoder", ""), "cpu");
  EXPECT_EQ(c->log().find("GPU"), std::string::npos) << c->log();
  EXPECT_EQ(c->unmount(), 0) << c->log();
  // gpu insists: without a usable GPU it is one line and exit status 1 before anything is mounted.
  auto g = mount(*dir_ / "data.img", "decoder=gpu");
  if (decoder == "gpu") {
    ASSERT_TRUE(g->ok()) << g->error();
    EXPECT_EQ(stats(g->dir()).value("decoder", ""), "gpu");
    EXPECT_EQ(g->unmount(), 0) << g->log();
    return;
  }
  EXPECT_EQ(decoder, "cpu");
  EXPECT_NE(m->log().find("no usable GPU ("), std::string::npos) << m->log();
  EXPECT_FALSE(g->ok());
  EXPECT_NE(g->error().find("status 1"), std::string::npos) << g->error();
  EXPECT_NE(g->log().find("gdfs: -o decoder=gpu: no usable GPU ("), std::string::npos) << g->log();
  EXPECT_FALSE(is_gdfs_mount(g->dir()));
}

TEST_F(Fuse, SparseFileSeeksAndReadsZeros) {
  auto m = mount(*dir_ / "data.img");
  ASSERT_TRUE(m->ok()) << m->error();
  const int fd = open((m->dir() + "/sparse").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(lseek(fd, 0, SEEK_DATA), 3 << 20);
  EXPECT_EQ(lseek(fd, 0, SEEK_HOLE), 0);
  EXPECT_EQ(lseek(fd, (3 << 20) + 5, SEEK_HOLE), (3 << 20) + 65536);
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_LT(st.st_blocks * 512, st.st_size / 2);
  close(fd);
  EXPECT_EQ(pread_bytes(m->dir() + "/sparse", 0, 5 << 20), expected("/sparse", 0, 5 << 20));
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

TEST_F(Fuse, WritesAreRefusedReadOnly) {
  auto m = mount(*dir_ / "data.img");
  ASSERT_TRUE(m->ok()) << m->error();
  EXPECT_EQ(open((m->dir() + "/text").c_str(), O_WRONLY), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(mkdir((m->dir() + "/new").c_str(), 0755), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(unlink((m->dir() + "/text").c_str()), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(open((m->dir() + "/nope").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

// data.img with one byte damaged in the middle of page 1 of /text. Page data is outside the metadata
// checksum, so the image mounts; the page's own checksums catch it.
// data.img with one byte of `path`'s page `page` flipped, as IMAGE_NAME in `dir`.
std::string write_bad_image(const std::string& dir, const std::string& path = "/text", uint64_t page = 1,
                            const std::string& image_name = "bad.img") {
  Bytes img = read_bytes(dir + "/data.img");
  uint64_t at = 0;
  {
    auto image = Image::open(dir + "/data.img");
    const PageRef ref = image->page_ref(image->resolve(path), page);
    const format::PageEntry& e = image->pages()[ref.entry];
    at = e.offset + e.csize / 2;
  }
  img[at] ^= 0x20;
  write_bytes(dir + "/" + image_name, img);
  return dir + "/" + image_name;
}

TEST_F(Fuse, CorruptPageGivesEioAndTheRestStillServes) {
  auto m = mount(write_bad_image(dir_->path()));
  ASSERT_TRUE(m->ok()) << m->error();
  int err = 0;
  pread_bytes(m->dir() + "/text", 65536 + 10, 100, &err);
  EXPECT_EQ(err, EIO);
  // A read spanning the bad page fails, or (the kernel retries page by page) stops short before it:
  // either way no byte of the bad page, and no wrong byte, reaches the reader.
  const Bytes spanning = pread_bytes(m->dir() + "/text", 0, 2 << 20, &err);
  if (err == 0) {
    EXPECT_LE(spanning.size(), 65536u);
    EXPECT_EQ(spanning, expected("/text", 0, spanning.size()));
  } else {
    EXPECT_EQ(err, EIO);
  }
  EXPECT_EQ(pread_bytes(m->dir() + "/text", 0, 1000), expected("/text", 0, 1000));  // page 0 is fine
  for (const auto& [name, bytes] : *files_) {
    if (name == "/text") continue;
    EXPECT_EQ(pread_bytes(m->dir() + name, 0, bytes.size() + 1), bytes) << name;
  }
  EXPECT_TRUE(m->alive());
  const std::string log = m->log();
  EXPECT_NE(log.find("bad.img: inode"), std::string::npos) << log;
  EXPECT_NE(log.find("(page 1)"), std::string::npos) << log;
  EXPECT_NE(log.find("[path /text]"), std::string::npos) << log;
  EXPECT_GE(stats(m->dir()).value("read_errors", 0), 2);
  EXPECT_EQ(m->unmount(), 0) << log;
}

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path);
  return bool(std::getline(in, out));
}

// Reads as fio's psync randread makes them: 4 KiB preads on one descriptor with POSIX_FADV_RANDOM, so
// the kernel reads no further ahead than the page asked for.
class RandomFile {
 public:
  explicit RandomFile(const std::string& path) : fd_(open(path.c_str(), O_RDONLY)) {
    if (fd_ >= 0) posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
  }
  ~RandomFile() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool ok() const { return fd_ >= 0; }
  // 4 KiB at `off`; `err` gets errno (0 on success).
  Bytes read4k(uint64_t off, int& err) const {
    Bytes out(4096);
    const ssize_t n = pread(fd_, out.data(), out.size(), static_cast<off_t>(off));
    err = n < 0 ? errno : 0;
    out.resize(n < 0 ? 0 : size_t(n));
    return out;
  }

 private:
  int fd_;
};

// After a 4 KiB read, the rest of the image page it touched is in the kernel's page cache: reads of the
// next 4 KiB and of the 4 KiB before it are answered without reaching the daemon. Off, both reach it.
TEST_F(Fuse, StoreAheadServesTheRestOfThePageFromTheKernel) {
  for (const bool on : {true, false}) {
    auto m = mount(*dir_ / "data.img", on ? "" : "store_ahead=0");
    ASSERT_TRUE(m->ok()) << m->error();
    struct stat st {};
    ASSERT_EQ(stat((m->dir() + "/text").c_str(), &st), 0);
    const uint64_t page = uint64_t(st.st_blksize);
    ASSERT_GE(page, 16384u) << "the image's pages must hold several kernel pages";
    RandomFile f(m->dir() + "/text");
    ASSERT_TRUE(f.ok());
    const uint64_t first = 5 * page + 8192;
    int err = 0;
    EXPECT_EQ(f.read4k(first, err), expected("/text", first, 4096));
    const nlohmann::json s1 = on ? stats_after_pushes(m->dir(), page - 4096) : stats(m->dir());
    EXPECT_EQ(f.read4k(first + 4096, err), expected("/text", first + 4096, 4096));
    EXPECT_EQ(f.read4k(first - 4096, err), expected("/text", first - 4096, 4096));
    const nlohmann::json s2 = stats(m->dir());
    if (on) {
      EXPECT_EQ(s2.value("reads", 0), s1.value("reads", 0)) << "the neighbours reached the daemon";
      EXPECT_EQ(s1.value("store_ahead_bytes", 0u), page - 4096);
    } else {
      EXPECT_EQ(s2.value("reads", 0), s1.value("reads", 0) + 2);
      EXPECT_EQ(s2.value("store_ahead_bytes", 1u), 0u);
    }
    // The last page of the file: stored up to the end, never past it.
    const uint64_t size = uint64_t(st.st_size), last = (size - 1) / 4096 * 4096;
    const uint64_t last_page = (last - 4096) / page * page;
    ASSERT_EQ(last / page * page, last_page) << "both reads must fall in the file's last page";
    EXPECT_EQ(f.read4k(last - 4096, err), expected("/text", last - 4096, 4096));
    const uint64_t pushed = (page - 4096) + (last - 4096 - last_page) + (size - last);
    const nlohmann::json s3 = on ? stats_after_pushes(m->dir(), pushed) : stats(m->dir());
    if (on) {
      EXPECT_EQ(s3.value("store_ahead_bytes", 0u), pushed);
    }
    EXPECT_EQ(f.read4k(last, err), expected("/text", last, 4096));
    EXPECT_EQ(stats(m->dir()).value("reads", 0), s3.value("reads", 0) + (on ? 0 : 1));
    ASSERT_EQ(stat((m->dir() + "/text").c_str(), &st), 0);
    EXPECT_EQ(uint64_t(st.st_size), size);
    // Everything read through the page cache afterwards still matches the source.
    EXPECT_EQ(pread_bytes(m->dir() + "/text", 0, size), files_->at("/text"));
    f.close();  // an open file keeps the mount busy
    EXPECT_EQ(m->unmount(), 0) << m->log();
  }
}

// A damaged page is EIO for a 4 KiB read of it, and nothing of it is pushed: the next 4 KiB of the same
// page reaches the daemon again and is EIO too. Its good neighbour page pushes only its own bytes.
TEST_F(Fuse, StoreAheadNeverPushesADamagedPage) {
  auto m = mount(write_bad_image(dir_->path()));
  ASSERT_TRUE(m->ok()) << m->error();
  RandomFile f(m->dir() + "/text");
  ASSERT_TRUE(f.ok());
  int err = 0;
  const uint64_t page = 65536;  // write_bad_image damages /text's page 1
  EXPECT_TRUE(f.read4k(page + 8192, err).empty());
  EXPECT_EQ(err, EIO);
  const nlohmann::json s1 = stats(m->dir());
  EXPECT_EQ(s1.value("store_ahead_bytes", 1u), 0u);
  EXPECT_TRUE(f.read4k(page + 4096, err).empty());
  EXPECT_EQ(err, EIO);
  EXPECT_GT(stats(m->dir()).value("read_errors", 0), s1.value("read_errors", 0));
  // The last 4 KiB of page 0: page 0's other 60 KiB are pushed, and page 1 still fails.
  EXPECT_EQ(f.read4k(page - 4096, err), expected("/text", page - 4096, 4096));
  const nlohmann::json s2 = stats_after_pushes(m->dir(), page - 4096);
  EXPECT_EQ(s2.value("store_ahead_bytes", 0u), page - 4096);
  EXPECT_EQ(f.read4k(0, err), expected("/text", 0, 4096));
  EXPECT_TRUE(f.read4k(page, err).empty());
  EXPECT_EQ(err, EIO);
  const nlohmann::json s3 = stats(m->dir());
  EXPECT_EQ(s3.value("reads", 0), s2.value("reads", 0));  // page 0 came from the kernel
  EXPECT_GT(s3.value("read_errors", 0), s2.value("read_errors", 0));
  EXPECT_EQ(s3.value("store_ahead_bytes", 0u), page - 4096);
  EXPECT_TRUE(m->alive());
  f.close();
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

// Reads every file of directory `rel` whole, in the order readdir lists them (as tar does), pausing
// `pause_ms` after each so that walk-ahead can keep ahead. Per file: its bytes, or empty with `errors`
// holding its errno.
std::vector<std::pair<std::string, Bytes>> walk_dir(const std::string& mnt, const std::string& rel,
                                                    std::map<std::string, int>& errors, int pause_ms) {
  std::vector<std::string> names;
  DIR* d = opendir((mnt + rel).c_str());
  if (!d) return {};
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  closedir(d);
  std::vector<std::pair<std::string, Bytes>> out;
  for (const std::string& name : names) {
    const std::string path = rel + "/" + name;
    Bytes b(70000);
    const int fd = open((mnt + path).c_str(), O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, b.data(), b.size());
    if (n < 0) errors[path] = errno;
    if (fd >= 0) close(fd);
    b.resize(n < 0 ? 0 : size_t(n));
    out.emplace_back(path, std::move(b));
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  return out;
}

// A walk through a directory of 100 small files: after its first reads, walk-ahead has pushed the next
// files whole into the kernel's page cache, so most of them never reach the daemon. Off, each does.
TEST_F(Fuse, WalkAheadServesADirectoryWalkFromTheKernel) {
  for (const bool on : {true, false}) {
    auto m = mount(*dir_ / "data.img", on ? "" : "walk_ahead=0");
    ASSERT_TRUE(m->ok()) << m->error();
    const nlohmann::json s0 = stats(m->dir());
    std::map<std::string, int> errors;
    const auto got = walk_dir(m->dir(), "/small", errors, 5);
    ASSERT_EQ(got.size(), 100u);
    EXPECT_TRUE(errors.empty());
    for (const auto& [path, bytes] : got) EXPECT_EQ(bytes, files_->at(path)) << path;
    const nlohmann::json s = stats(m->dir());
    const uint64_t pushed = s.value("walk_ahead_files", 0u) - s0.value("walk_ahead_files", 0u);
    // Every push is a read through the library too: what reached the daemon as requests is the rest.
    const uint64_t requests = s.value("reads", 0u) - s0.value("reads", 0u) - pushed;
    if (on) {
      EXPECT_GE(pushed, 60u);
      EXPECT_LE(requests, 40u) << pushed << " pushed";
      EXPECT_GT(s.value("walk_ahead_bytes", 0u), 0u);
    } else {
      EXPECT_EQ(pushed, 0u);
      EXPECT_EQ(requests, 100u);
    }
    EXPECT_EQ(m->unmount(), 0) << m->log();
  }
}

// Reads every file under `rel` as tar does: list a directory, then read its entries in that order,
// descending into each subdirectory where it comes. Each file's bytes against `src`; returns the count.
size_t walk_tree(const std::string& mnt, const std::string& src, const std::string& rel) {
  size_t files = 0;
  std::map<std::string, int> errors;
  for (const auto& [path, bytes] : walk_dir(mnt, rel, errors, 1)) {
    if (fs::is_directory(mnt + path)) {
      EXPECT_EQ(errors[path], EISDIR) << path;  // walk_dir reads every entry
      files += walk_tree(mnt, src, path);
    } else {
      EXPECT_FALSE(errors.contains(path)) << path << ": " << errors[path];
      EXPECT_EQ(bytes, read_bytes(src + path)) << path;
      ++files;
    }
  }
  return files;
}

// A tar-like walk through several directories: once the walk is seen, each directory's files are pushed
// when the kernel has listed it, before the walker reads the first one.
TEST_F(Fuse, WalkAheadPushesEachListedDirectoryOfAWalk) {
  auto m = mount(*dir_ / "walk.img");
  ASSERT_TRUE(m->ok()) << m->error();
  EXPECT_EQ(walk_tree(m->dir(), *dir_ / "walk", ""), 200u);
  const nlohmann::json s = stats(m->dir());
  const uint64_t pushed = s.value("walk_ahead_files", 0u);
  const uint64_t requests = s.value("reads", 0u) - pushed;
  EXPECT_GE(pushed, 150u);
  EXPECT_LE(requests, 40u) << pushed << " pushed";
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

// A walk over a damaged tail pack: the files in it are EIO for the walker (never pushed, never wrong
// bytes), every other file is right, and the daemon goes on serving.
TEST_F(Fuse, WalkAheadNeverPushesADamagedPage) {
  auto m = mount(write_bad_image(dir_->path(), "/small/f50", 0, "bad-tail.img"));
  ASSERT_TRUE(m->ok()) << m->error();
  std::map<std::string, int> errors;
  const auto got = walk_dir(m->dir(), "/small", errors, 2);
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(errors.count("/small/f50"), 1u);
  for (const auto& [path, error] : errors) EXPECT_EQ(error, EIO) << path;
  for (const auto& [path, bytes] : got) {
    if (!errors.count(path)) {
      EXPECT_EQ(bytes, files_->at(path)) << path;
    }
  }
  EXPECT_LT(errors.size(), 100u);
  EXPECT_GT(stats(m->dir()).value("walk_ahead_files", 0u), 0u);
  EXPECT_TRUE(m->alive());
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

// As root, the daemon widens the mount's kernel readahead to one full request (or to its own readahead
// when that is smaller), so a sequential reader gets 1 MiB requests instead of 128 KiB ones.
TEST_F(Fuse, KernelReadaheadFollowsTheDaemons) {
  if (geteuid() != 0) GTEST_SKIP() << "read_ahead_kb is root's to set";
  for (const auto& [opts, kb] : {std::pair{"", 1024}, std::pair{"readahead=256K", 256}}) {
    auto m = mount(*dir_ / "data.img", opts);
    ASSERT_TRUE(m->ok()) << m->error();
    struct stat st {};
    ASSERT_EQ(stat(m->dir().c_str(), &st), 0);
    const std::string bdi = "/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" +
                            std::to_string(minor(st.st_dev)) + "/read_ahead_kb";
    std::string text;
    ASSERT_TRUE(read_text(bdi, text)) << bdi;
    EXPECT_EQ(std::stoi(text), kb) << opts;
    EXPECT_EQ(m->unmount(), 0) << m->log();
  }
}

// Whether a process with uid and gid `id` may open `path` for reading: a forked child drops to it.
bool opens_as(const std::string& path, uid_t id) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(id) != 0 || setuid(id) != 0) _exit(2);
    const int fd = open(path.c_str(), O_RDONLY);
    _exit(fd >= 0 ? 0 : errno == EACCES ? 1 : 3);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
    ADD_FAILURE() << "the child checking " << path << " as " << id << " failed: " << status;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// -o uid=, gid= and umask= change what every inode shows, and the kernel checks access against that.
// As root the mount shows uid 1234 and lets others in (allow_other) to check that; otherwise it shows
// the mounting user, who must still pass the directories.
TEST_F(Fuse, UidGidAndUmaskOverrideEveryInode) {
  const bool root = geteuid() == 0;
  const uid_t uid = root ? 1234 : geteuid();
  const gid_t gid = root ? 5678 : getegid();
  auto m = mount(*dir_ / "data.img", "uid=" + std::to_string(uid) + ",gid=" + std::to_string(gid) +
                                         ",umask=027" + (root ? ",allow_other" : ""));
  ASSERT_TRUE(m->ok()) << m->error();
  size_t checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(*dir_ / "data")) {
    const std::string rel = e.path().string().substr((*dir_ / "data").size());
    struct stat src = {};
    struct stat got = {};
    ASSERT_EQ(lstat(e.path().c_str(), &src), 0);
    ASSERT_EQ(lstat((m->dir() + rel).c_str(), &got), 0) << rel;
    EXPECT_EQ(got.st_uid, uid) << rel;
    EXPECT_EQ(got.st_gid, gid) << rel;
    EXPECT_EQ(got.st_mode, src.st_mode & ~mode_t{027}) << rel;
    ++checked;
  }
  EXPECT_GT(checked, 100u);
  struct stat top = {};
  ASSERT_EQ(stat(m->dir().c_str(), &top), 0);
  EXPECT_EQ(top.st_uid, uid);
  if (root) {
    // Other users may pass the test's folder (mkdtemp made it 0700) to reach the mount.
    ASSERT_EQ(chmod(dir_->path().c_str(), 0711), 0);
    const std::string text = m->dir() + "/text";
    EXPECT_TRUE(opens_as(text, uid)) << "the owner the mount shows reads it";
    EXPECT_FALSE(opens_as(text, 4321)) << "umask 027 leaves others nothing";
  }
  EXPECT_EQ(m->unmount(), 0) << m->log();
}

TEST_F(Fuse, BadImagesAreRefusedBeforeMounting) {
  Bytes img = read_bytes(*dir_ / "data.img");
  write_bytes(*dir_ / "truncated.img", Bytes(img.begin(), img.begin() + img.size() / 2));
  Bytes meta = img;
  format::Superblock sb;
  std::memcpy(&sb, img.data(), sizeof sb);
  meta[sb.image_size - 100] ^= 1;  // inside the metadata: its checksum fails
  write_bytes(*dir_ / "meta.img", meta);
  write_bytes(*dir_ / "garbage.img", Bytes(10000, 0x5a));
  for (const std::string name : {"missing.img", "truncated.img", "meta.img", "garbage.img"}) {
    const std::string mnt = mount_point();
    std::string out;
    EXPECT_EQ(run_command({gdfs_binary(), "-f", *dir_ / name, mnt}, &out), 1) << name;
    EXPECT_NE(out.find(name), std::string::npos) << out;
    EXPECT_FALSE(is_gdfs_mount(mnt)) << name;
  }
  std::string out;
  EXPECT_EQ(run_command({gdfs_binary(), "-f", *dir_ / "data.img", *dir_ / "no-such-dir"}, &out), 1) << out;
  EXPECT_EQ(run_command({gdfs_binary(), "-o", "cache_size=lots", *dir_ / "data.img", mount_point()}, &out),
            1);
  EXPECT_NE(out.find("cache_size"), std::string::npos) << out;
}

// One line of output, which names the reason.
void expect_one_line(const std::string& out, const std::string& needle) {
  EXPECT_NE(out.find(needle), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

// Signed images (docs/SECURITY.md): with -o trusted_key= the daemon refuses an image not signed by the
// key before mounting, with one line saying why, and a page whose bytes are not the signed ones is EIO,
// logged as such.
TEST_F(Fuse, TrustedKeyRefusesOtherImagesAndAlteredPagesAreEio) {
  const KeyPair key = make_key_pair(*dir_ / "publisher");
  ASSERT_EQ(run_mkfs({"-q", "--sign", key.priv, *dir_ / "data", *dir_ / "signed.img"}).code, 0);
  const std::string trusted = "trusted_key=" + key.pub;
  {
    auto m = mount(*dir_ / "signed.img", trusted);
    ASSERT_TRUE(m->ok()) << m->error();
    for (const auto& [name, bytes] : *files_)
      EXPECT_EQ(pread_bytes(m->dir() + name, 0, bytes.size() + 1), bytes) << name;
    EXPECT_EQ(m->unmount(), 0);
  }
  std::string out;
  const std::string mnt = mount_point();
  EXPECT_EQ(run_command({gdfs_binary(), "-f", "-o", trusted, *dir_ / "data.img", mnt}, &out), 1);
  expect_one_line(out, "the image is not signed");
  EXPECT_FALSE(is_gdfs_mount(mnt));
  Bytes img = read_bytes(*dir_ / "signed.img");
  {
    auto image = Image::open(*dir_ / "signed.img");
    const format::PageEntry& e = image->pages()[image->page_ref(image->resolve("/text"), 1).entry];
    img[e.offset + e.csize / 2] ^= 0x20;
  }
  write_bytes(*dir_ / "altered.img", img);
  auto m = mount(*dir_ / "altered.img", trusted);
  ASSERT_TRUE(m->ok()) << m->error();
  int err = 0;
  pread_bytes(m->dir() + "/text", 65536 + 10, 100, &err, true);
  EXPECT_EQ(err, EIO);
  EXPECT_EQ(pread_bytes(m->dir() + "/text", 0, 1000), expected("/text", 0, 1000));
  EXPECT_NE(m->log().find("signed digest"), std::string::npos) << m->log();
  EXPECT_EQ(m->unmount(), 0);
}

// Issue 24: `gdfs IMG IMG` mounted over the image, after which every use of it failed with EIO.
TEST_F(Fuse, MountPointMustBeADirectoryOtherThanTheImage) {
  const std::string self = *dir_ / "self.img";
  fs::copy_file(*dir_ / "data.img", self);
  const std::string plain = *dir_ / "plain-file";
  write_bytes(plain, Bytes(10, 'x'));
  for (const auto& [image, mnt, why] :
       {std::tuple<std::string, std::string, std::string>{self, self, "the image itself"},
        {*dir_ / "data.img", plain, "not a directory"}}) {
    std::string out;
    // Without -f: an old daemon that mounted there returned 0 at once (and is unmounted below).
    EXPECT_EQ(run_command({gdfs_binary(), image, mnt}, &out), 1) << mnt;
    expect_one_line(out, why);
    if (is_gdfs_mount(mnt)) run_command({"fusermount3", "-u", "-z", mnt});
    EXPECT_FALSE(is_gdfs_mount(mnt)) << mnt;
  }
  EXPECT_EQ(read_bytes(self), read_bytes(*dir_ / "data.img"));  // the image is still there to read
}

// Issue 24: after kill -9, a new mount went on top of the dead one (or failed in libfuse's realpath).
TEST_F(Fuse, DeadMountIsClearedBeforeMountingAgain) {
  auto dead = mount(*dir_ / "data.img");
  ASSERT_TRUE(dead->ok()) << dead->error();
  const std::string mnt = dead->dir();
  struct Detach {  // whatever fails below, no mount (dead or live) is left behind
    std::string dir;
    ~Detach() {
      for (int i = 0; i < 8 && gdfs_mount_count(dir) > 0; ++i) run_command({"fusermount3", "-u", "-z", dir});
    }
  } detach{mnt};
  ASSERT_EQ(kill(dead->pid(), SIGKILL), 0);
  dead->wait_exit();
  struct stat st;
  ASSERT_NE(stat(mnt.c_str(), &st), 0);
  ASSERT_EQ(errno, ENOTCONN);
  std::string out;
  ASSERT_EQ(run_command({gdfs_binary(), *dir_ / "data.img", mnt}, &out), 0) << out;
  expect_one_line(out, "cleared a dead gdfs mount");
  EXPECT_EQ(gdfs_mount_count(mnt), 1);
  EXPECT_EQ(pread_bytes(mnt + "/small/f7", 0, 4096), files_->at("/small/f7"));
  EXPECT_EQ(run_command({"fusermount3", "-u", mnt}), 0);
  for (int i = 0; i < 500 && !find_processes({gdfs_binary(), mnt}).empty(); ++i) usleep(20000);
  EXPECT_TRUE(find_processes({gdfs_binary(), mnt}).empty());
}

TEST_F(Fuse, DaemonizesAndLeavesNoProcessAfterUnmount) {
  const std::string mnt = mount_point();
  std::string out;
  ASSERT_EQ(run_command({gdfs_binary(), *dir_ / "data.img", mnt}, &out), 0) << out;
  ASSERT_TRUE(is_gdfs_mount(mnt));
  const std::vector<pid_t> pids = find_processes({gdfs_binary(), mnt});
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_EQ(pread_bytes(mnt + "/small/f3", 0, 4096), files_->at("/small/f3"));
  ASSERT_EQ(run_command({"fusermount3", "-u", mnt}), 0);
  for (int i = 0; i < 500 && kill(pids[0], 0) == 0 && !find_processes({gdfs_binary(), mnt}).empty(); ++i)
    usleep(20000);
  EXPECT_TRUE(find_processes({gdfs_binary(), mnt}).empty()) << "daemon still running after unmount";
  EXPECT_FALSE(is_gdfs_mount(mnt));
}

TEST_F(Fuse, SigtermAndSigintUnmountCleanly) {
  for (int sig : {SIGTERM, SIGINT}) {
    auto m = mount(*dir_ / "data.img");
    ASSERT_TRUE(m->ok()) << m->error();
    EXPECT_EQ(pread_bytes(m->dir() + "/random", 0, 100), expected("/random", 0, 100));
    ASSERT_EQ(kill(m->pid(), sig), 0);
    EXPECT_EQ(m->wait_exit(), 0) << m->log();
    EXPECT_FALSE(is_gdfs_mount(m->dir()));
  }
}

TEST_F(Fuse, MountHelperMountsLikeMountDashT) {
  // fuse3's mount.fuse3, run under the name mount.fuse.gdfs, is what `mount -t fuse.gdfs` and fstab
  // lines use: it runs `gdfs IMAGE DIR -o OPTIONS` from PATH.
  const std::string helper = "/sbin/mount.fuse3";
  if (access(helper.c_str(), X_OK) != 0) GTEST_SKIP() << helper << " not installed";
  const std::string bin = *dir_ / "bin";
  fs::create_directories(bin);
  fs::create_symlink(helper, bin + "/mount.fuse.gdfs");
  fs::create_symlink(gdfs_binary(), bin + "/gdfs");
  const std::string mnt = mount_point();
  const std::string path = "PATH=" + bin + ":/usr/sbin:/usr/bin:/sbin:/bin";
  std::string out;
  ASSERT_EQ(run_command({"env", path, bin + "/mount.fuse.gdfs", *dir_ / "data.img", mnt, "-o",
                         "ro,nodev,cache_size=8M"},
                        &out),
            0)
      << out;
  ASSERT_TRUE(is_gdfs_mount(mnt));
  EXPECT_EQ(pread_bytes(mnt + "/mixed", 0, 3 << 20), files_->at("/mixed"));
  EXPECT_EQ(stats(mnt).value("cache_capacity", 0), 8 << 20);
  EXPECT_EQ(run_command({"fusermount3", "-u", mnt}), 0);
  EXPECT_FALSE(is_gdfs_mount(mnt));
}

}  // namespace
}  // namespace gdfs::test
