// The C API (gdfs/reader_c.h, label `unit`): the edge-case tree read through it and compared with its
// source, every error path (ENOENT, ENOTDIR, EISDIR, EINVAL, ERANGE, EIO on a damaged page, ENOTSUP for
// device reads without a device) with its per-thread message, batch reads, options and counters, and
// device reads through a stand-in device.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli_util.h"
#include "device/device_memory.h"
#include "gdfs/image.h"
#include "gdfs/reader_c.h"
#include "testing.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// Closes a handle at scope exit.
struct Handle {
  explicit Handle(gdfs_reader* r) : r(r) {}
  ~Handle() { gdfs_close(r); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  gdfs_reader* r;
};

std::string last_error() {
  return gdfs_last_error();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class ReaderC : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("reader-c");
    fs::create_directories(*dir_ / "src");
    caps_ = new TreeCaps(make_edge_tree(*dir_ / "src"));
    for (const std::string& note : caps_->notes) std::printf("note: %s\n", note.c_str());
    CliResult r = run_mkfs({"-q", *dir_ / "src", *dir_ / "img"});
    ASSERT_EQ(r.code, 0) << r.err;
    // A copy with one stored page of /pages+tail damaged (page 1 of 3 full pages and a tail).
    Bytes b = read_bytes(*dir_ / "img");
    {
      auto img = Image::open(*dir_ / "img");
      const PageRef ref = img->page_ref(img->resolve("/pages+tail"), 1);
      ASSERT_EQ(ref.kind, PageRef::kPage);
      const format::PageEntry& e = img->pages()[ref.entry];
      b[e.offset + e.csize / 2] ^= 0x40;
    }
    write_bytes(*dir_ / "bad.img", b);
  }
  static void TearDownTestSuite() {
    delete caps_;
    delete dir_;
  }
  static gdfs_reader* open(const std::string& name = "img", const gdfs_options* opt = nullptr) {
    gdfs_reader* r = gdfs_open((*dir_ / name).c_str(), opt);
    EXPECT_NE(r, nullptr) << last_error();
    return r;
  }
  static std::string src(const std::string& rel) { return *dir_ / ("src" + rel); }
  static Bytes source_bytes(const std::string& rel, uint64_t off, size_t len) {
    Bytes b(len);
    const int fd = ::open(src(rel).c_str(), O_RDONLY);
    const ssize_t n = pread(fd, b.data(), len, static_cast<off_t>(off));
    ::close(fd);
    b.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return b;
  }
  static uint32_t lookup(gdfs_reader* r, const std::string& path) {
    uint32_t ino = 0;
    EXPECT_EQ(gdfs_lookup(r, path.c_str(), &ino), 0) << path << ": " << last_error();
    return ino;
  }

  static inline TempDir* dir_ = nullptr;
  static inline TreeCaps* caps_ = nullptr;
};

int collect(void* ctx, const char* name, size_t len, uint32_t, uint32_t) {
  EXPECT_EQ(std::strlen(name), len);
  static_cast<std::vector<std::string>*>(ctx)->emplace_back(name, len);
  return 0;
}

TEST_F(ReaderC, MetadataMatchesTheSource) {
  Handle h(open());
  int entries = 0;
  for (auto it = fs::recursive_directory_iterator(src("")); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().string().substr(src("").size());
    struct stat st;
    ASSERT_EQ(lstat(it->path().c_str(), &st), 0);
    const uint32_t ino = lookup(h.r, rel);
    gdfs_stat_t g;
    ASSERT_EQ(gdfs_stat(h.r, ino, &g), 0) << last_error();
    EXPECT_EQ(g.ino, ino);
    EXPECT_EQ(g.mode, st.st_mode) << rel;
    EXPECT_EQ(g.uid, st.st_uid) << rel;
    EXPECT_EQ(g.gid, st.st_gid) << rel;
    EXPECT_EQ(g.mtime_ns, int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec) << rel;
    if (!S_ISDIR(st.st_mode)) {
      EXPECT_EQ(g.nlink, st.st_nlink) << rel;
    }
    if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
      EXPECT_EQ(g.size, uint64_t(st.st_size)) << rel;
    }
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      EXPECT_EQ(g.rdev, st.st_rdev) << rel;
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(4096, '\0');
      size_t len = 0;
      ASSERT_EQ(gdfs_readlink(h.r, ino, target.data(), target.size(), &len), 0) << last_error();
      EXPECT_EQ(target.substr(0, len), fs::read_symlink(it->path()).string());
      EXPECT_EQ(target[len], '\0');
    }
    if (S_ISDIR(st.st_mode)) {
      std::vector<std::string> got, want;
      ASSERT_EQ(gdfs_list(h.r, ino, collect, &got), 0) << last_error();
      for (const auto& e : fs::directory_iterator(it->path())) want.push_back(e.path().filename().string());
      std::sort(want.begin(), want.end());  // std::string order is byte order, as the image's
      EXPECT_EQ(got, want) << rel;
    }
    ++entries;
  }
  EXPECT_GT(entries, 2000);
}

TEST_F(ReaderC, ReadsMatchTheSource) {
  gdfs_options opt;
  gdfs_options_init(&opt);
  opt.cache_size = 1 << 20;  // small: misses and evictions too
  Handle h(open("img", &opt));
  int files = 0;
  for (auto it = fs::recursive_directory_iterator(src("")); it != fs::recursive_directory_iterator(); ++it) {
    if (!fs::is_regular_file(it->symlink_status()) || it->file_size() > (64u << 20)) continue;
    const std::string rel = it->path().string().substr(src("").size());
    const Bytes want = source_bytes(rel, 0, it->file_size());
    Bytes got(want.size() + 10, 0xee);
    size_t n = 1;
    ASSERT_EQ(gdfs_read(h.r, lookup(h.r, rel), 0, got.size(), got.data(), &n), 0) << last_error();
    ASSERT_EQ(n, want.size()) << rel;
    got.resize(n);
    ASSERT_TRUE(got == want) << rel;
    ++files;
  }
  EXPECT_GT(files, 2000);
  // Random ranges of the larger files, and the 5 GiB sparse file around its data and in its holes.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 300; ++i) {
    const std::string rel =
        std::vector<std::string>{"/big", "/pages+tail", "/random", "/zeros-inside"}[rng() % 4];
    const uint64_t size = fs::file_size(src(rel));
    const uint64_t off = rng() % (size + 100);
    const size_t len = rng() % (300 << 10);
    Bytes got(len);
    size_t n = 0;
    ASSERT_EQ(gdfs_read(h.r, lookup(h.r, rel), off, len, got.data(), &n), 0) << last_error();
    got.resize(n);
    ASSERT_TRUE(got == source_bytes(rel, off, len)) << rel << " " << off << " " << len;
  }
  const uint32_t sparse = lookup(h.r, "/sparse-5g");
  for (uint64_t off : {uint64_t{0}, uint64_t{1} << 20, (uint64_t{4} << 30) - 5, (uint64_t{4} << 30) + 60000,
                       (uint64_t{5} << 30) - 1000}) {
    Bytes got(200000);
    size_t n = 0;
    ASSERT_EQ(gdfs_read(h.r, sparse, off, got.size(), got.data(), &n), 0) << last_error();
    got.resize(n);
    EXPECT_TRUE(got == source_bytes("/sparse-5g", off, 200000)) << off;
  }
}

TEST_F(ReaderC, OpenFailures) {
  errno = 0;
  EXPECT_EQ(gdfs_open((*dir_ / "missing.img").c_str(), nullptr), nullptr);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(gdfs_last_errno(), ENOENT);
  EXPECT_TRUE(contains(last_error(), "missing.img")) << last_error();

  EXPECT_EQ(gdfs_open(src("").c_str(), nullptr), nullptr);
  EXPECT_EQ(errno, EISDIR);

  EXPECT_EQ(gdfs_open(src("/page").c_str(), nullptr), nullptr);  // a file, but not an image
  EXPECT_EQ(errno, EIO);
  EXPECT_TRUE(contains(last_error(), "src/page")) << last_error();

  EXPECT_EQ(gdfs_open(nullptr, nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);

  gdfs_options opt;
  gdfs_options_init(&opt);
  opt.decoder = 7;
  EXPECT_EQ(gdfs_open((*dir_ / "img").c_str(), &opt), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_TRUE(contains(last_error(), "decoder")) << last_error();

  opt.decoder = GDFS_DECODER_GPU;  // opens only where a GPU is usable; else EINVAL saying why
  gdfs_reader* r = gdfs_open((*dir_ / "img").c_str(), &opt);
  if (r) {
    gdfs_close(r);
  } else {
    EXPECT_EQ(errno, EINVAL);
    EXPECT_TRUE(contains(last_error(), "no usable GPU")) << last_error();
  }
  gdfs_close(nullptr);  // harmless
}

TEST_F(ReaderC, LookupFollowFollowsASymlinkAtTheEnd) {
  Handle h(open());
  uint32_t link = 0, target = 0, page = lookup(h.r, "/page");
  ASSERT_EQ(gdfs_lookup(h.r, "/link-rel", &link), 0) << last_error();
  ASSERT_EQ(gdfs_lookup_follow(h.r, "/link-rel", &target), 0) << last_error();
  EXPECT_NE(link, page);
  EXPECT_EQ(target, page);
  ASSERT_EQ(gdfs_lookup_follow(h.r, "/page", &target), 0) << last_error();
  EXPECT_EQ(target, page);
  // Targets resolve inside the image: /etc/passwd of link-abs is not the host's.
  EXPECT_EQ(gdfs_lookup_follow(h.r, "/link-abs", &target), ENOENT);
  EXPECT_EQ(gdfs_lookup_follow(h.r, "/link-dangling", &target), ENOENT);
  EXPECT_TRUE(contains(last_error(), "/link-dangling")) << last_error();
  EXPECT_EQ(gdfs_lookup(h.r, "/link-rel/", &target), ENOTDIR);  // a trailing "/" asks for a directory
  EXPECT_EQ(gdfs_lookup_follow(h.r, nullptr, &target), EINVAL);
}

TEST_F(ReaderC, XattrsAsTheSourceHasThem) {
  if (!caps_->xattrs) GTEST_SKIP() << "the test filesystem refuses user xattrs";
  Handle h(open());
  const uint32_t page = lookup(h.r, "/page");
  size_t len = 0;
  EXPECT_EQ(gdfs_listxattr(h.r, page, nullptr, 0, &len), ERANGE);  // the size it needs
  std::string names(len + 1, 'x');
  ASSERT_EQ(gdfs_listxattr(h.r, page, names.data(), names.size(), &len), 0) << last_error();
  names.resize(len);
  std::vector<std::string> got;
  for (size_t at = 0; at < names.size(); at = names.find('\0', at) + 1) got.push_back(names.c_str() + at);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"user.empty", "user.mime"}));
  char value[64];
  ASSERT_EQ(gdfs_getxattr(h.r, page, "user.mime", value, sizeof value, &len), 0) << last_error();
  EXPECT_EQ(std::string(value, len), "text/plain");
  ASSERT_EQ(gdfs_getxattr(h.r, page, "user.empty", value, sizeof value, &len), 0) << last_error();
  EXPECT_EQ(len, 0u);
  ASSERT_EQ(gdfs_getxattr(h.r, lookup(h.r, "/big"), "user.binary", value, sizeof value, &len), 0);
  EXPECT_EQ(std::string(value, len), std::string("\0\x01\xff\n", 4));  // NULs in a value: len says
  EXPECT_EQ(gdfs_getxattr(h.r, page, "user.nope", value, sizeof value, &len), ENODATA);
  EXPECT_TRUE(contains(last_error(), "user.nope")) << last_error();
  EXPECT_EQ(gdfs_getxattr(h.r, page, "user.mime", value, 3, &len), ERANGE);
  EXPECT_EQ(gdfs_getxattr(h.r, page, nullptr, value, sizeof value, &len), EINVAL);
  EXPECT_EQ(gdfs_listxattr(h.r, 1u << 30, value, sizeof value, &len), ENOENT);
}

TEST_F(ReaderC, MetadataErrorsNameWhatFailed) {
  Handle h(open());
  uint32_t ino = 99;
  EXPECT_EQ(gdfs_lookup(h.r, "/sub/nope", &ino), ENOENT);
  EXPECT_EQ(gdfs_last_errno(), ENOENT);
  EXPECT_TRUE(contains(last_error(), "img")) << last_error();
  EXPECT_TRUE(contains(last_error(), "/sub/nope")) << last_error();
  EXPECT_EQ(gdfs_lookup(h.r, "/page/x", &ino), ENOTDIR);
  EXPECT_TRUE(contains(last_error(), "/page/x")) << last_error();
  EXPECT_EQ(gdfs_lookup(h.r, "", &ino), ENOENT);  // as stat(""): no name is not the root
  EXPECT_EQ(gdfs_lookup_follow(h.r, "", &ino), ENOENT);

  gdfs_stat_t st;
  EXPECT_EQ(gdfs_stat(h.r, 0, &st), ENOENT);
  EXPECT_EQ(gdfs_stat(h.r, 1u << 30, &st), ENOENT);
  EXPECT_TRUE(contains(last_error(), "inode " + std::to_string(1u << 30))) << last_error();

  std::vector<std::string> names;
  EXPECT_EQ(gdfs_list(h.r, lookup(h.r, "/page"), collect, &names), ENOTDIR);
  EXPECT_TRUE(contains(last_error(), "/page")) << last_error();
  EXPECT_TRUE(names.empty());

  char buf[8];
  size_t len = 0;
  EXPECT_EQ(gdfs_readlink(h.r, lookup(h.r, "/page"), buf, sizeof buf, &len), EINVAL);
  EXPECT_TRUE(contains(last_error(), "not a symbolic link")) << last_error();
  EXPECT_EQ(gdfs_readlink(h.r, lookup(h.r, "/link-long"), buf, sizeof buf, &len), ERANGE);
  EXPECT_EQ(len, 1000u);  // the caller learns the size it needs
  std::string target(len + 1, 'x');
  EXPECT_EQ(gdfs_readlink(h.r, lookup(h.r, "/link-long"), target.data(), target.size(), &len), 0);
  EXPECT_EQ(target, std::string(1000, 'L') + '\0');

  EXPECT_EQ(gdfs_lookup(h.r, nullptr, &ino), EINVAL);
  EXPECT_EQ(gdfs_lookup(nullptr, "/", &ino), EINVAL);
  EXPECT_EQ(gdfs_stat(h.r, 1, nullptr), EINVAL);
  EXPECT_EQ(gdfs_list(h.r, 1, nullptr, nullptr), EINVAL);
}

TEST_F(ReaderC, ListStopsWhenTheCallbackSaysSo) {
  Handle h(open());
  struct Ctx {
    int calls = 0;
  } ctx;
  auto stop_at_three = [](void* c, const char*, size_t, uint32_t, uint32_t) -> int {
    return ++static_cast<Ctx*>(c)->calls == 3 ? 42 : 0;
  };
  EXPECT_EQ(gdfs_list(h.r, lookup(h.r, "/"), stop_at_three, &ctx), 42);
  EXPECT_EQ(ctx.calls, 3);
}

TEST_F(ReaderC, ReadErrors) {
  Handle h(open());
  std::vector<uint8_t> buf(100);
  size_t got = 7;
  EXPECT_EQ(gdfs_read(h.r, lookup(h.r, "/sub"), 0, buf.size(), buf.data(), &got), EISDIR);
  EXPECT_EQ(got, 0u);
  EXPECT_TRUE(contains(last_error(), "/sub")) << last_error();
  EXPECT_EQ(gdfs_read(h.r, 1u << 30, 0, buf.size(), buf.data(), &got), ENOENT);
  EXPECT_EQ(gdfs_read(h.r, lookup(h.r, "/page"), 0, buf.size(), nullptr, &got), EINVAL);
  // Past the end: nothing, and no error.
  EXPECT_EQ(gdfs_read(h.r, lookup(h.r, "/page"), 1 << 20, buf.size(), buf.data(), &got), 0);
  EXPECT_EQ(got, 0u);
}

TEST_F(ReaderC, DamagedPageIsEioNamingImagePathAndPage) {
  Handle h(open("bad.img"));
  const uint32_t ino = lookup(h.r, "/pages+tail");
  std::vector<uint8_t> buf(65536);
  size_t got = 0;
  EXPECT_EQ(gdfs_read(h.r, ino, 65536 + 10, 100, buf.data(), &got), EIO);
  EXPECT_EQ(gdfs_last_errno(), EIO);
  const std::string msg = last_error();
  EXPECT_TRUE(contains(msg, "bad.img")) << msg;
  EXPECT_TRUE(contains(msg, "/pages+tail")) << msg;
  EXPECT_TRUE(contains(msg, "page 1")) << msg;
  // The pages around it, and other files, still read.
  ASSERT_EQ(gdfs_read(h.r, ino, 0, 65536, buf.data(), &got), 0) << last_error();
  EXPECT_TRUE(Bytes(buf.begin(), buf.end()) == source_bytes("/pages+tail", 0, 65536));
  ASSERT_EQ(gdfs_read(h.r, ino, 2 * 65536, 65536, buf.data(), &got), 0) << last_error();
  EXPECT_TRUE(Bytes(buf.begin(), buf.end()) == source_bytes("/pages+tail", 2 * 65536, 65536));
  ASSERT_EQ(gdfs_read(h.r, lookup(h.r, "/page"), 0, 65536, buf.data(), &got), 0) << last_error();
  EXPECT_EQ(got, 65536u);

  // One batch: the bad page fails only the request that needs it.
  std::vector<uint8_t> a(300000), b(1000), c(10), d(10);
  gdfs_request reqs[4] = {
      {ino, 0, a.size(), a.data(), 0, 0},
      {lookup(h.r, "/big"), 5000, b.size(), b.data(), 0, 0},
      {lookup(h.r, "/sub"), 0, c.size(), c.data(), 0, 0},
      {1u << 30, 0, d.size(), d.data(), 0, 0},
  };
  EXPECT_EQ(gdfs_read_batch(h.r, reqs, 4), EIO);  // the first failure
  EXPECT_TRUE(contains(last_error(), "page 1")) << last_error();
  EXPECT_EQ(reqs[0].error, EIO);
  EXPECT_EQ(reqs[0].bytes, 0u);
  EXPECT_EQ(reqs[1].error, 0);
  EXPECT_EQ(reqs[1].bytes, b.size());
  EXPECT_TRUE(b == source_bytes("/big", 5000, 1000));
  EXPECT_EQ(reqs[2].error, EISDIR);
  EXPECT_EQ(reqs[3].error, ENOENT);
}

TEST_F(ReaderC, BatchReadsMatchTheSource) {
  Handle h(open());
  std::vector<Bytes> bufs;
  std::vector<gdfs_request> reqs;
  std::vector<std::pair<std::string, uint64_t>> what;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 64; ++i) {
    const std::string rel = i % 5 == 0 ? "/tiny/f" + std::to_string(rng() % 2000) : "/big";
    const uint64_t off = rel == "/big" ? rng() % (5 << 20) : 0;
    bufs.emplace_back(rng() % 200000);
    reqs.push_back({lookup(h.r, rel), off, bufs.back().size(), bufs.back().data(), 0, 0});
    what.emplace_back(rel, off);
  }
  for (int access : {GDFS_ACCESS_NORMAL, GDFS_ACCESS_ONCE}) {
    for (size_t i = 0; i < reqs.size(); ++i) {
      std::fill(bufs[i].begin(), bufs[i].end(), 0xEE);
      reqs[i].length = bufs[i].size();
      reqs[i].dst = bufs[i].data();
    }
    ASSERT_EQ(gdfs_read_batch_access(h.r, reqs.data(), reqs.size(), access), 0) << last_error();
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(reqs[i].error, 0);
      const Bytes got(bufs[i].begin(), bufs[i].begin() + static_cast<long>(reqs[i].bytes));
      EXPECT_TRUE(got == source_bytes(what[i].first, what[i].second, reqs[i].length))
          << what[i].first << " access " << access;
    }
  }
  EXPECT_EQ(gdfs_read_batch(h.r, nullptr, 0), 0);
  EXPECT_EQ(gdfs_read_batch_access(h.r, reqs.data(), 1, 7), EINVAL);
  EXPECT_NE(std::string(last_error()).find("GDFS_ACCESS_ONCE"), std::string::npos) << last_error();
}

TEST_F(ReaderC, LastErrorIsPerThread) {
  Handle h(open());
  uint32_t ino;
  ASSERT_EQ(gdfs_lookup(h.r, "/here-not", &ino), ENOENT);
  std::string other;
  int other_code = -1;
  std::thread t([&] {
    other = gdfs_last_error();
    other_code = gdfs_last_errno();
    uint32_t i;
    EXPECT_EQ(gdfs_lookup(h.r, "/page/below", &i), ENOTDIR);
  });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(other_code, 0);
  EXPECT_TRUE(contains(last_error(), "/here-not")) << last_error();  // the other thread's failure is its own
  EXPECT_EQ(gdfs_last_errno(), ENOENT);
  ASSERT_EQ(gdfs_lookup(h.r, "/page", &ino), 0);
  EXPECT_TRUE(contains(last_error(), "/here-not"));  // success leaves it, as errno
}

TEST_F(ReaderC, OptionsReachTheReaderAndCountersAreJson) {
  gdfs_options opt;
  gdfs_options_init(&opt);
  EXPECT_EQ(opt.readahead, uint64_t{4} << 20);
  EXPECT_EQ(opt.decoder, GDFS_DECODER_AUTO);
  opt.threads = 3;
  opt.decoder = GDFS_DECODER_CPU;
  opt.cache_size = 8 << 20;
  opt.readahead = 0;
  Handle h(open("img", &opt));
  std::vector<uint8_t> buf(1000);
  size_t got = 0;
  ASSERT_EQ(gdfs_read(h.r, lookup(h.r, "/big"), 0, buf.size(), buf.data(), &got), 0);
  size_t len = 0;
  EXPECT_EQ(gdfs_stats_json(h.r, nullptr, 0, &len), ERANGE);
  ASSERT_GT(len, 10u);
  std::string json(len + 1, '\0');
  ASSERT_EQ(gdfs_stats_json(h.r, json.data(), json.size(), &len), 0) << last_error();
  json.resize(len);
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_TRUE(contains(json, "\"threads\":3")) << json;
  EXPECT_TRUE(contains(json, "\"decoder\":\"cpu\"")) << json;
  EXPECT_TRUE(contains(json, "\"cache_capacity\":" + std::to_string(8 << 20))) << json;
  EXPECT_TRUE(contains(json, "\"reads\":1")) << json;
  EXPECT_TRUE(contains(json, "\"readahead_pages\":0")) << json;
}

TEST_F(ReaderC, DeviceReadsWithoutADeviceAreEnotsup) {
  gdfs_options opt;
  gdfs_options_init(&opt);
  opt.decoder = GDFS_DECODER_CPU;
  Handle h(open("img", &opt));
  testing::set_device_memory(testing::reader_of(h.r), nullptr);  // as on a machine without CUDA or a GPU
  EXPECT_EQ(gdfs_device_reads(h.r), ENOTSUP);
  EXPECT_TRUE(contains(last_error(), "not supported here")) << last_error();
  std::vector<uint8_t> buf(100);
  size_t got = 5;
  EXPECT_EQ(gdfs_read_device(h.r, lookup(h.r, "/page"), 0, buf.size(), buf.data(), nullptr, &got), ENOTSUP);
  EXPECT_EQ(got, 0u);
  EXPECT_TRUE(contains(last_error(), "not supported here")) << last_error();
  gdfs_request req{lookup(h.r, "/page"), 0, buf.size(), buf.data(), 0, 0};
  EXPECT_EQ(gdfs_read_batch_device(h.r, &req, 1, nullptr), ENOTSUP);
}

TEST_F(ReaderC, DeviceReadsThroughAStandInDevice) {
  for (bool decode : {false, true}) {
    Handle h(open());
    // Host memory posing as device memory: the C calls reach Reader::read_device and back.
    testing::set_device_memory(testing::reader_of(h.r), engine::make_standin_device_memory(decode));
    ASSERT_EQ(gdfs_device_reads(h.r), 0) << last_error();
    const uint32_t ino = lookup(h.r, "/pages+tail");
    Bytes buf(300000, 0xee);
    size_t got = 0;
    ASSERT_EQ(gdfs_read_device(h.r, ino, 1000, buf.size(), buf.data(), nullptr, &got), 0) << last_error();
    buf.resize(got);
    EXPECT_TRUE(buf == source_bytes("/pages+tail", 1000, 300000));

    Bytes a(70000), b(20), c(20);
    gdfs_request reqs[4] = {{lookup(h.r, "/big"), 65530, a.size(), a.data(), 0, 0},
                            {lookup(h.r, "/one"), 0, b.size(), b.data(), 0, 0},
                            {lookup(h.r, "/sub"), 0, c.size(), c.data(), 0, 0},
                            {1u << 30, 0, c.size(), c.data(), 0, 0}};
    EXPECT_EQ(gdfs_read_batch_device(h.r, reqs, 4, nullptr), EISDIR) << last_error();
    EXPECT_EQ(reqs[0].error, 0);
    EXPECT_TRUE(a == source_bytes("/big", 65530, 70000));
    EXPECT_EQ(reqs[1].bytes, 1u);
    EXPECT_EQ(b[0], 'x');
    EXPECT_EQ(reqs[2].error, EISDIR);
    EXPECT_EQ(reqs[3].error, ENOENT);
  }
  Handle bad(open("bad.img"));
  testing::set_device_memory(testing::reader_of(bad.r), engine::make_standin_device_memory(true));
  Bytes buf(200000);
  size_t got = 0;
  EXPECT_EQ(gdfs_read_device(bad.r, lookup(bad.r, "/pages+tail"), 0, buf.size(), buf.data(), nullptr, &got),
            EIO);
  EXPECT_TRUE(contains(last_error(), "page 1")) << last_error();
}

}  // namespace
}  // namespace gdfs::test
