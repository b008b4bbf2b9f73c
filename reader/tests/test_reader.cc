// The public Reader (gdfs/reader.h), label unit: the edge-case tree read through the library and
// compared with its source; batch reads; many threads; errors with their errno; and device reads over a
// stand-in device (host memory posing as device memory), including one that fails and garbles pages.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "cli_util.h"
#include "device/device_memory.h"
#include "gdfs/log.h"
#include "gdfs/machine.h"
#include "gdfs/reader.h"
#include "key_util.h"
#include "testing.h"
#include "tree_util.h"

namespace gdfs {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using test::TempDir;

Bytes slurp(const std::string& path, uint64_t off = 0, size_t len = SIZE_MAX) {
  std::ifstream f(path, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(off));
  Bytes b;
  char buf[1 << 16];
  while (b.size() < len) {
    f.read(buf, static_cast<std::streamsize>(std::min<size_t>(sizeof buf, len - b.size())));
    if (f.gcount() <= 0) break;
    b.insert(b.end(), buf, buf + f.gcount());
  }
  return b;
}

int errno_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ImageError& e) {
    return e.code();
  }
  return 0;
}

class ReaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("reader");
    fs::create_directories(*dir_ / "src");
    test::make_edge_tree(*dir_ / "src");
    // Files whose pages straddle every kind of boundary: several pages and a tail, a copy (dedupe).
    test::write_text_file(*dir_ / "src/multi", 5 * 65536 + 1234, 7);
    fs::copy_file(*dir_ / "src/multi", *dir_ / "src/multi-copy");
    ASSERT_EQ(test::run_mkfs({"-q", *dir_ / "src", *dir_ / "img"}).code, 0);
    // Every file's last partial page a page of its own, as a dataset's image is made.
    ASSERT_EQ(test::run_mkfs({"-q", "--tail-pack-limit", "0", *dir_ / "src", *dir_ / "img-nopack"}).code, 0);
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::unique_ptr<Reader> open(const std::string& img = *dir_ / "img") {
    ReaderOptions o;
    o.threads = 2;
    o.decoder = DecoderChoice::kCpu;
    return Reader::open(img, o);
  }
  // Regular files of the source tree (relative paths), skipping the 5 GiB sparse one for whole reads.
  static std::vector<std::string> regular_files() {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(*dir_ / "src"))
      if (fs::is_regular_file(e.symlink_status()))
        out.push_back(e.path().lexically_relative(*dir_ / "src").string());
    return out;
  }
  static TempDir* dir_;
};
TempDir* ReaderTest::dir_ = nullptr;

// Log lines quote names from images and replies from servers: every sink gets them escaped, one line
// that cannot drive a terminal.
TEST(Log, LinesReachTheSinkEscaped) {
  std::vector<std::string> lines;
  set_log_sink([&](LogLevel, std::string_view line) { lines.emplace_back(line); });
  log_line(LogLevel::kError, "bad page [path /a\nb\x1b[2J\xff] caf\xc3\xa9");
  set_log_sink(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "bad page [path /a\\x0ab\\x1b[2J\\xff] caf\xc3\xa9");
}

TEST_F(ReaderTest, WalkMatchesTheSourceTree) {
  auto r = open();
  std::map<std::string, FileStat> seen;
  r->walk([&](const std::string& path, const FileStat& st) { seen[path] = st; });
  size_t entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(*dir_ / "src")) {
    ++entries;
    std::string rel = e.path().lexically_relative(*dir_ / "src").string();
    rel.insert(rel.begin(), '/');  // not "/" + s: GCC 12 warns falsely (-Wrestrict) on that
    auto it = seen.find(rel);
    ASSERT_NE(it, seen.end()) << rel;
    struct stat st {};
    ASSERT_EQ(lstat(e.path().c_str(), &st), 0);
    EXPECT_EQ(it->second.mode, st.st_mode) << rel;
    if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
      EXPECT_EQ(it->second.size, uint64_t(st.st_size)) << rel;
    }
    EXPECT_EQ(it->second.mtime_ns, int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec) << rel;
    EXPECT_EQ(it->second.nlink, st.st_nlink) << rel;
    if (S_ISLNK(st.st_mode)) {
      EXPECT_EQ(r->readlink(rel), fs::read_symlink(e.path()).string()) << rel;
    }
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      EXPECT_EQ(it->second.rdev, st.st_rdev) << rel;
    }
  }
  EXPECT_EQ(seen.size(), entries);
}

TEST_F(ReaderTest, EveryFileReadsAsItsSource) {
  auto r = open();
  for (const std::string& rel : regular_files()) {
    const FileStat st = r->stat("/" + rel);
    if (st.size > (64u << 20)) continue;  // the 5 GiB sparse file: ranges below
    Bytes got(st.size);
    ASSERT_EQ(r->read("/" + rel, 0, got.size(), got.data()), got.size()) << rel;
    ASSERT_EQ(got, slurp(*dir_ / ("src/" + rel))) << rel;
  }
}

TEST_F(ReaderTest, SparseFileHolesAndDataPast4GiB) {
  auto r = open();
  std::string sparse;
  for (const std::string& rel : regular_files())
    if (r->stat("/" + rel).size > (4ull << 30)) sparse = rel;
  ASSERT_FALSE(sparse.empty());
  const uint64_t size = r->stat("/" + sparse).size;
  for (uint64_t off : {uint64_t{0}, uint64_t{1} << 20, (uint64_t{4} << 30) - 100, size - 70000, size - 10}) {
    Bytes got(100000);
    const size_t n = r->read("/" + sparse, off, got.size(), got.data());
    got.resize(n);
    EXPECT_EQ(got, slurp(*dir_ / ("src/" + sparse), off, 100000)) << off;
  }
}

TEST_F(ReaderTest, BatchOfRandomRangesAcrossFiles) {
  auto r = open();
  const auto files = regular_files();
  std::mt19937_64 rng(5);
  std::vector<ReadRequest> reqs(256);
  std::vector<Bytes> bufs(reqs.size());
  std::vector<std::string> names(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    names[i] = files[rng() % files.size()];
    const FileStat st = r->stat("/" + names[i]);
    reqs[i].ino = st.ino;
    reqs[i].offset = st.size ? rng() % (st.size > (64u << 20) ? (64u << 20) : st.size) : 0;
    reqs[i].length = 1 + rng() % 100000;
    bufs[i].resize(reqs[i].length);
    reqs[i].dst = bufs[i].data();
  }
  r->read_batch(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    ASSERT_EQ(reqs[i].error, 0) << reqs[i].message;
    bufs[i].resize(reqs[i].bytes);
    EXPECT_EQ(bufs[i], slurp(*dir_ / ("src/" + names[i]), reqs[i].offset, reqs[i].length)) << names[i];
  }
}

TEST_F(ReaderTest, EightThreadsShareOneReader) {
  auto r = open();
  const Bytes truth = slurp(*dir_ / "src/multi");
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < 200; ++i) {
        const uint64_t off = rng() % truth.size();
        Bytes got(1 + rng() % 70000);
        got.resize(r->read(t % 2 ? "/multi" : "/multi-copy", off, got.size(), got.data()));
        if (!std::equal(got.begin(), got.end(), truth.begin() + static_cast<long>(off))) ++bad;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(ReaderTest, ErrorsCarryTheirErrno) {
  auto r = open();
  EXPECT_EQ(errno_of([&] { r->lookup("/no/such/file"); }), ENOENT);
  EXPECT_EQ(errno_of([&] { r->lookup("/multi/below"); }), ENOTDIR);
  EXPECT_EQ(errno_of([&] { r->list("/multi"); }), ENOTDIR);
  EXPECT_EQ(errno_of([&] { r->readlink("/multi"); }), EINVAL);
  Bytes b(10);
  EXPECT_EQ(errno_of([&] { r->read("/", 0, 10, b.data()); }), EISDIR);
  EXPECT_EQ(errno_of([&] { r->stat(uint32_t{0}); }), ENOENT);
  EXPECT_EQ(r->read("/multi", 1u << 30, 10, b.data()), 0u);  // past the end: nothing, no error
}

TEST_F(ReaderTest, CorruptPageIsEioNamingIt_OthersStillRead) {
  Bytes img = test::read_bytes(*dir_ / "img");
  uint32_t ino = 0;
  {
    auto image = Image::open(*dir_ / "img");
    ino = image->resolve("/multi");
    img[image->pages()[image->page_ref(ino, 2).entry].offset + 5] ^= 0x40;
  }
  test::write_bytes(*dir_ / "bad", img);
  auto r = open(*dir_ / "bad");
  Bytes b(65536 * 4);
  try {
    r->read("/multi", 0, b.size(), b.data());
    FAIL() << "read of a damaged page succeeded";
  } catch (const ImageError& e) {
    EXPECT_EQ(e.code(), EIO);
    const std::string what = e.what();
    EXPECT_NE(what.find(*dir_ / "bad"), std::string::npos) << what;
    EXPECT_NE(what.find("inode " + std::to_string(ino) + " (page 2)"), std::string::npos) << what;
    EXPECT_NE(what.find("/multi"), std::string::npos) << what;
  }
  EXPECT_EQ(r->read("/multi", 0, 2 * 65536, b.data()), 2u * 65536);  // the pages before it
  const Bytes truth = slurp(*dir_ / "src/multi-copy");
  // The copy shares the damaged page (dedupe), so it fails too; a batch fails only what needs it.
  std::vector<ReadRequest> reqs(2);
  Bytes a(100), c(100);
  reqs[0].ino = r->lookup("/multi-copy");
  reqs[0].offset = 2 * 65536 + 10;
  reqs[0].length = 100;
  reqs[0].dst = a.data();
  reqs[1].ino = reqs[0].ino;
  reqs[1].offset = 10;
  reqs[1].length = 100;
  reqs[1].dst = c.data();
  r->read_batch(reqs);
  EXPECT_EQ(reqs[0].error, EIO);
  EXPECT_NE(reqs[0].message.find("(page 2)"), std::string::npos) << reqs[0].message;
  EXPECT_EQ(reqs[1].error, 0);
  EXPECT_TRUE(std::equal(c.begin(), c.end(), truth.begin() + 10));
}

// Access::kOnce: the same bytes as a normal batch for ranges of every shape (inside a page, across pages,
// whole files, holes, tails, the deduplicated copy), with whole pages decoded in place and never cached.
TEST_F(ReaderTest, ReadOnceBatchesReadTheSameBytes) {
  auto r = open();
  std::vector<std::string> files;
  for (const std::string& f : regular_files())
    if (r->stat("/" + f).size < (64u << 20)) files.push_back(f);
  std::mt19937_64 rng(11);
  std::vector<ReadRequest> reqs;
  std::vector<Bytes> bufs;
  std::vector<std::string> names;
  auto add = [&](const std::string& name, uint64_t off, size_t len) {
    ReadRequest q;
    q.ino = r->lookup("/" + name);
    q.offset = off;
    q.length = len;
    reqs.push_back(q);
    bufs.emplace_back(len);
    names.push_back(name);
  };
  for (const std::string& f : files) add(f, 0, r->stat("/" + f).size + 1);  // whole files
  for (int i = 0; i < 300; ++i) {
    const std::string& f = files[rng() % files.size()];
    const uint64_t size = r->stat("/" + f).size;
    const uint64_t off = size ? rng() % size : 0;
    add(f, off, 1 + rng() % (3 * 65536));
  }
  add("multi", 65536, 2 * 65536);  // whole pages at a page boundary, twice in one batch
  add("multi-copy", 65536, 2 * 65536);
  for (size_t i = 0; i < reqs.size(); ++i) reqs[i].dst = bufs[i].data();
  r->read_batch(reqs, Access::kOnce);
  for (size_t i = 0; i < reqs.size(); ++i) {
    ASSERT_EQ(reqs[i].error, 0) << reqs[i].message;
    bufs[i].resize(reqs[i].bytes);
    EXPECT_EQ(bufs[i], slurp(*dir_ / ("src/" + names[i]), reqs[i].offset, reqs[i].length))
        << names[i] << " at " << reqs[i].offset;
  }
}

TEST_F(ReaderTest, ReadOnceLeavesWholePagesOutOfTheCacheAndUsesCachedOnes) {
  ReaderOptions o;
  o.threads = 2;
  o.decoder = DecoderChoice::kCpu;
  o.readahead = 0;  // the single read below must cache its page alone
  auto r = Reader::open(*dir_ / "img", o);
  const Bytes truth = slurp(*dir_ / "src/multi");
  Bytes b(truth.size());
  ReadRequest q;
  q.ino = r->lookup("/multi");
  q.length = b.size();
  q.dst = b.data();
  r->read_batch({&q, 1}, Access::kOnce);
  ASSERT_EQ(q.error, 0) << q.message;
  EXPECT_EQ(b, truth);
  // Five whole pages went to `b`; only the tail's pack, shared with other files, was cached.
  EXPECT_EQ(r->counters().at("cache_pages"), 1u);
  EXPECT_EQ(r->counters().at("cache_misses"), 6u);
  // Pages a normal read cached are copied from there, not decoded again.
  Bytes page(65536);
  r->read("/multi", 2 * 65536, page.size(), page.data());
  const uint64_t decoded = r->counters().at("pages_decoded_cpu");
  std::fill(b.begin(), b.end(), 0);
  r->read_batch({&q, 1}, Access::kOnce);
  ASSERT_EQ(q.error, 0) << q.message;
  EXPECT_EQ(b, truth);
  EXPECT_EQ(r->counters().at("pages_decoded_cpu"), decoded + 4);  // not page 2, nor the tail's pack
}

TEST_F(ReaderTest, ReadOnceOfADamagedPageIsEioAndTheOtherRequestsStillRead) {
  Bytes img = test::read_bytes(*dir_ / "img");
  {
    auto image = Image::open(*dir_ / "img");
    const uint32_t ino = image->resolve("/multi");
    img[image->pages()[image->page_ref(ino, 3).entry].offset + 9] ^= 0x10;
  }
  test::write_bytes(*dir_ / "bad-once", img);
  auto r = open(*dir_ / "bad-once");
  const Bytes truth = slurp(*dir_ / "src/multi");
  std::vector<ReadRequest> reqs(3);
  std::vector<Bytes> bufs{Bytes(truth.size()), Bytes(2 * 65536), Bytes(65536)};
  const uint64_t offsets[] = {0, 0, 4 * 65536};
  for (size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].ino = r->lookup("/multi");
    reqs[i].offset = offsets[i];
    reqs[i].length = bufs[i].size();
    reqs[i].dst = bufs[i].data();
  }
  r->read_batch(reqs, Access::kOnce);
  EXPECT_EQ(reqs[0].error, EIO);
  EXPECT_NE(reqs[0].message.find("(page 3)"), std::string::npos) << reqs[0].message;
  ASSERT_EQ(reqs[1].error, 0) << reqs[1].message;
  ASSERT_EQ(reqs[2].error, 0) << reqs[2].message;
  EXPECT_TRUE(std::equal(bufs[1].begin(), bufs[1].end(), truth.begin()));
  EXPECT_TRUE(std::equal(bufs[2].begin(), bufs[2].end(), truth.begin() + 4 * 65536));
  EXPECT_EQ(r->counters().at("cache_pages"), 1u);  // the tail's pack; a failed page is never cached
}

// ---- device reads -----------------------------------------------------------------------------------

// A faulty device: every other decoded page is reported bad and its bytes garbled, as a broken kernel
// might. The reader must decode those on the CPU and still deliver exact bytes.
TEST_F(ReaderTest, OpenFailuresCarryTheErrnoOfOpen) {
  EXPECT_EQ(errno_of([&] { Reader::open(*dir_ / "no-such-image"); }), ENOENT);
  EXPECT_EQ(errno_of([&] { Reader::open(*dir_ / "src"); }), EISDIR);
  const std::string junk = *dir_ / "junk";
  std::ofstream(junk) << "not an image";
  EXPECT_EQ(errno_of([&] { Reader::open(junk); }), EIO);
  ReaderOptions many;
  many.threads = kMaxThreads + 1;  // never a crash when threads cannot be had: refused before any starts
  EXPECT_EQ(errno_of([&] { Reader::open(*dir_ / "img", many); }), EINVAL);
  // A URL of a scheme gdfs does not fetch is named as one, not only "No such file or directory".
  try {
    Reader::open("ftp://user:secret@host/x.gdfs");
    ADD_FAILURE() << "an ftp:// URL opened";
  } catch (const ImageError& e) {
    EXPECT_EQ(e.code(), ENOTSUP);
    EXPECT_EQ(std::string(e.what()),
              "ftp://host/x.gdfs: cannot open: no such file, and ftp:// is not a URL scheme "
              "gdfs reads (http://, https://, s3://)");
  }
}

// ---- the default cache size under a memory cgroup (a container) ---------------------------------------

void write_text(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(MachineLimits, TheLowestMemoryLimitOnTheWayUpToTheRootCounts) {
  TempDir dir("memlimit");
  const std::string root = dir.path();
  constexpr uint64_t kGiB = uint64_t{1} << 30, kPhysical = 64 * kGiB;
  // cgroup v2: a limit two levels up, "max" below it, none at the root.
  write_text(root + "/pods/a/memory.max", std::to_string(2 * kGiB) + "\n");
  write_text(root + "/pods/a/c1/memory.max", "max\n");
  EXPECT_EQ(machine::memory_limit("0::/pods/a/c1\n", root, kPhysical), 2 * kGiB);
  EXPECT_EQ(machine::memory_limit("0::/pods\n", root, kPhysical), kPhysical);
  EXPECT_EQ(machine::memory_limit("0::/\n", root, kPhysical), kPhysical);
  // cgroup v1 (a hybrid host): the memory controller's hierarchy, on a line that may name several.
  write_text(root + "/memory/docker/x/memory.limit_in_bytes", std::to_string(kGiB / 2) + "\n");
  write_text(root + "/memory/docker/memory.limit_in_bytes", "9223372036854771712\n");  // v1's "none"
  const std::string v1 = "12:pids:/docker/x\n4:memory,hugetlb:/docker/x\n0::/\n";
  EXPECT_EQ(machine::memory_limit(v1, root, kPhysical), kGiB / 2);
  // Physical memory below every limit; and what is not a number is no limit.
  EXPECT_EQ(machine::memory_limit("0::/pods/a/c1\n", root, kGiB), kGiB);
  write_text(root + "/odd/memory.max", "12abc\n");
  for (const char* text : {"0::/odd\n", "0::relative\n", "garbage\n", "", "4:memory:/absent\n"})
    EXPECT_EQ(machine::memory_limit(text, root, kPhysical), kPhysical) << text;
}

TEST(MachineLimits, CpuQuotasOnTheWayUpToTheRootCount) {
  TempDir dir("cpulimit");
  const std::string root = dir.path();
  write_text(root + "/pods/a/cpu.max", "250000 100000\n");  // 2.5 CPUs: 3 threads
  write_text(root + "/pods/a/c1/cpu.max", "max 100000\n");
  EXPECT_EQ(machine::cpu_limit("0::/pods/a/c1\n", root, 64), 3u);
  EXPECT_EQ(machine::cpu_limit("0::/pods/a/c1\n", root, 2), 2u);
  EXPECT_EQ(machine::cpu_limit("0::/pods\n", root, 64), 64u);
  write_text(root + "/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "50000\n");  // half a CPU: 1
  write_text(root + "/cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n");
  write_text(root + "/cpu,cpuacct/docker/cpu.cfs_quota_us", "-1\n");
  write_text(root + "/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(machine::cpu_limit("3:cpu,cpuacct:/docker/x\n0::/\n", root, 64), 1u);
  for (const char* odd : {"0 100000\n", "max\n", "100000 0\n", "x y\n"}) {
    write_text(root + "/odd/cpu.max", odd);
    EXPECT_EQ(machine::cpu_limit("0::/odd\n", root, 8), 8u) << odd;
  }
}

// What `measure` returns in a forked child once `enter` (which changes what the child may use) succeeded
// there; nullopt when it did not (the machine does not let it: a skip). The test fails where the child
// could not report otherwise.
std::optional<uint64_t> in_child(const std::function<bool()>& enter, uint64_t (*measure)()) {
  int fds[2];
  if (pipe(fds) != 0) return ADD_FAILURE() << "pipe", std::nullopt;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (!enter()) _exit(2);
    const uint64_t v = measure();
    _exit(write(fds[1], &v, sizeof v) == sizeof v ? 0 : 1);
  }
  close(fds[1]);
  uint64_t v = 0;
  const bool got = read(fds[0], &v, sizeof v) == sizeof v;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return std::nullopt;
  EXPECT_TRUE(got && WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child exited with " << status;
  return v;
}

// A process allowed one CPU (its affinity) sizes its thread pools for one.
TEST(MachineLimits, AnAffinityOfOneCpuIsOneThread) {
  if (machine::usable_cpus() < 2) GTEST_SKIP() << "one CPU already";
  const auto one_cpu = [] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
    return sched_setaffinity(0, sizeof one, &one) == 0;
  };
  const auto cpus = in_child(one_cpu, [] { return uint64_t{machine::usable_cpus()}; });
  if (!cpus) GTEST_SKIP() << "sched_setaffinity refused one CPU";
  EXPECT_EQ(*cpus, 1u);
}

// What `measure` returns in a child process in a new cgroup below `hierarchy` (a cgroup file system's
// folder) with `settings` (file, value) written first; nullopt (with the reason in `why`) where such a
// cgroup cannot be made here.
std::optional<uint64_t> in_new_cgroup(const std::string& hierarchy,
                                      const std::vector<std::pair<std::string, std::string>>& settings,
                                      uint64_t (*measure)(), std::string& why) {
  if (geteuid() != 0) return why = "making a cgroup needs root", std::nullopt;
  const std::string group = hierarchy + "/gdfs-test-" + std::to_string(getpid());
  std::error_code ec;
  if (!fs::create_directory(group, ec)) return why = "cannot make a cgroup at " + group, std::nullopt;
  for (const auto& [file, value] : settings) {
    std::ofstream f(group + "/" + file);
    if (!(f << value << std::flush)) {
      fs::remove(group, ec);
      return why = "cannot write " + group + "/" + file, std::nullopt;
    }
  }
  const auto join = [&] {
    return static_cast<bool>(std::ofstream(group + "/cgroup.procs") << getpid() << std::flush);
  };
  const auto v = in_child(join, measure);
  fs::remove(group, ec);
  if (!v) why = "cannot move a process into " + group;
  return v;
}

// A process in a memory cgroup with a 1 GiB limit gets a cache of an eighth of that, not of the machine's
// memory. Needs root and cgroup v1's memory controller (a hybrid host) or v2's at /sys/fs/cgroup.
TEST(MachineLimits, AProcessInAMemoryCgroupSizesItsCacheFromTheLimit) {
  // A limit above the new cgroup (a container's, at the root of its cgroup namespace) would decide.
  if (machine::memory_limit() < (uint64_t{2} << 30)) GTEST_SKIP() << "this process may use less than 2 GiB";
  const bool v1 = fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  if (!v1) std::ofstream("/sys/fs/cgroup/cgroup.subtree_control") << "+memory";
  std::string why;
  const auto size = in_new_cgroup(
      v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup",
      {{v1 ? "memory.limit_in_bytes" : "memory.max", "1073741824"}}, [] { return default_cache_size(); },
      why);
  if (!size) GTEST_SKIP() << why;
  EXPECT_EQ(*size, uint64_t{128} << 20) << "an eighth of the cgroup's 1 GiB";
}

// A process in a cgroup with a CPU quota of half a CPU sizes its thread pools for one.
TEST(MachineLimits, AProcessInACpuCgroupGetsThreadsForItsQuota) {
  if (machine::usable_cpus() < 2) GTEST_SKIP() << "one CPU already";
  const bool v1 = fs::exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  if (!v1) std::ofstream("/sys/fs/cgroup/cgroup.subtree_control") << "+cpu";
  const std::vector<std::pair<std::string, std::string>> half =
      v1 ? std::vector<std::pair<std::string, std::string>>{{"cpu.cfs_period_us", "100000"},
                                                            {"cpu.cfs_quota_us", "50000"}}
         : std::vector<std::pair<std::string, std::string>>{{"cpu.max", "50000 100000"}};
  std::string why;
  const auto cpus = in_new_cgroup(
      v1 ? "/sys/fs/cgroup/cpu" : "/sys/fs/cgroup", half, [] { return uint64_t{machine::usable_cpus()}; },
      why);
  if (!cpus) GTEST_SKIP() << why;
  EXPECT_EQ(*cpus, 1u);
}

TEST(ErrorCode, OneMappingForEveryFrontEnd) {
  EXPECT_EQ(error_code(ImageError("x")), EIO);
  EXPECT_EQ(error_code(ImageError("x", ENOENT)), ENOENT);
  EXPECT_EQ(error_code(std::bad_alloc()), ENOMEM);
  EXPECT_EQ(error_code(std::invalid_argument("x")), EINVAL);
  EXPECT_EQ(error_code(std::length_error("x")), EINVAL);
  EXPECT_EQ(error_code(std::system_error(EACCES, std::generic_category())), EACCES);
  EXPECT_EQ(error_code(std::runtime_error("x")), EIO);
}

TEST(DecoderChoiceNames, ParseAndNameRoundTrip) {
  for (DecoderChoice c : {DecoderChoice::kAuto, DecoderChoice::kCpu, DecoderChoice::kGpu})
    EXPECT_EQ(parse_decoder_choice(decoder_choice_name(c)), c);
  EXPECT_FALSE(parse_decoder_choice("GPU").has_value());
  EXPECT_FALSE(parse_decoder_choice("").has_value());
}

TEST_F(ReaderTest, LookupInADirectoryAndPathOfAnInode) {
  auto r = open();
  EXPECT_EQ(r->lookup(format::kRootIno, "multi"), r->lookup("/multi"));
  EXPECT_EQ(r->lookup(format::kRootIno, "no-such-name"), 0u);  // a negative entry, not an error
  EXPECT_EQ(errno_of([&] { r->lookup(r->lookup("/multi"), "x"); }), ENOTDIR);
  EXPECT_EQ(r->path(format::kRootIno), "/");
  size_t n = 0;
  r->walk([&](const std::string& path, const FileStat& st) {
    // A file with several links may be named by any of them: it must lead back to the same inode.
    EXPECT_EQ(r->lookup(r->path(st.ino)), st.ino) << path;
    if (st.nlink == 1 || (st.mode & format::kTypeMask) == format::kTypeDir) {
      EXPECT_EQ(r->path(st.ino), path);
    }
    ++n;
  });
  EXPECT_GT(n, 10u);
}

TEST_F(ReaderTest, StatCountsBlocksAsTheKernelWould) {
  auto r = open();
  for (const std::string& rel : regular_files()) {
    const FileStat st = r->stat("/" + rel);
    EXPECT_EQ(st.blksize, r->image().page_size());
    // Never more than the size; less where pages are holes (mkfs makes zero pages holes).
    EXPECT_LE(st.blocks, (st.size + 511) / 512) << rel;
  }
  for (const char* dense : {"/multi", "/multi-copy"}) {  // text: no zero page
    const FileStat st = r->stat(dense);
    EXPECT_EQ(st.blocks, (st.size + 511) / 512) << dense;
  }
  EXPECT_EQ(r->stat("/all-zero").blocks, 0u);  // all holes
  EXPECT_GT(r->stat("/all-zero").size, 0u);
  EXPECT_EQ(r->stat("/").blocks, (r->stat("/").size + 511) / 512);
}

TEST_F(ReaderTest, SeekDataAndHoleWalkTheSparseFile) {
  auto r = open();
  std::string sparse;
  for (const std::string& rel : regular_files())
    if (r->stat("/" + rel).size > (4ull << 30)) sparse = "/" + rel;
  ASSERT_FALSE(sparse.empty());
  const uint32_t ino = r->lookup(sparse);
  const uint64_t size = r->stat(ino).size;
  uint64_t off = 0, data_bytes = 0;
  int regions = 0;
  Bytes got(4096), zeros(4096, 0);
  while (off < size) {
    uint64_t data = 0;
    if (errno_of([&] { data = r->seek(ino, off, Seek::kData); }) == ENXIO) {
      EXPECT_EQ(r->read(ino, off, got.size(), got.data()), std::min<uint64_t>(got.size(), size - off));
      break;
    }
    ASSERT_GE(data, off);
    if (data > off) {  // a hole reads as zeros, in the image as in the source
      const size_t n = r->read(ino, off, got.size(), got.data());
      EXPECT_TRUE(std::equal(got.begin(), got.begin() + n, zeros.begin())) << off;
      EXPECT_EQ(Bytes(got.begin(), got.begin() + n), slurp(*dir_ / ("src" + sparse), off, n)) << off;
    }
    const uint64_t hole = r->seek(ino, data, Seek::kHole);
    ASSERT_GT(hole, data);
    data_bytes += hole - data;
    ++regions;
    off = hole;
  }
  EXPECT_GE(regions, 2);
  EXPECT_LT(data_bytes, size / 100);
  EXPECT_EQ(errno_of([&] { r->seek(ino, size, Seek::kData); }), ENXIO);
  EXPECT_EQ(errno_of([&] { r->seek(ino, size, Seek::kHole); }), ENXIO);
  EXPECT_EQ(errno_of([&] { r->seek(format::kRootIno, 0, Seek::kData); }), EINVAL);
  const uint32_t dense = r->lookup("/multi");
  EXPECT_EQ(r->seek(dense, 5, Seek::kData), 5u);
  EXPECT_EQ(r->seek(dense, 5, Seek::kHole), r->stat(dense).size);  // the end counts as a hole
}

TEST_F(ReaderTest, ReadViewHoldsTheSameBytesAsACopy) {
  auto r = open();
  const uint32_t ino = r->lookup("/multi");
  ReadView view;
  for (auto [off, len] : {std::pair<uint64_t, size_t>{0, 100}, {65000, 200000}, {5 * 65536, 5000}}) {
    Bytes copy(len), gathered(len);
    const size_t n = r->read(ino, off, len, copy.data());
    ASSERT_EQ(r->read(ino, off, len, view), n);
    EXPECT_EQ(view.copy_to(gathered.data()), n);
    EXPECT_TRUE(std::equal(copy.begin(), copy.begin() + n, gathered.begin())) << off;
    size_t sum = 0;
    for (const iovec& p : view.pieces()) sum += p.iov_len;
    EXPECT_EQ(sum, n);
    if (len > 65536) {
      EXPECT_GT(view.pieces().size(), 1u);  // pieces of several pages, not one copy
    }
  }
  view.clear();
  EXPECT_EQ(view.size(), 0u);
  EXPECT_TRUE(view.pieces().empty());
}

// The rest of the pages a read touched (what the daemon pushes into the page cache): the file's own bytes
// from the first page's start to the range, and from the range to the last page's end or the end of the
// file; for page-packed tails, holes and dedupe copies alike.
TEST_F(ReaderTest, PageRestIsTheRestOfTheTouchedPages) {
  auto r = open();
  ReadView view;
  PageRest rest;
  for (const std::string& rel : regular_files()) {
    const std::string path = "/" + rel;
    const uint32_t ino = r->lookup(path);
    const uint64_t size = r->stat(ino).size, ps = r->image().page_size();
    for (auto [off, len] : {std::pair<uint64_t, size_t>{0, 1},
                            {4096, 4096},
                            {ps - 10, 20},
                            {ps + 100, 3000},
                            {size / 2, 4096},
                            {size ? size - 1 : 0, 1},
                            {3ull << 20, 4096}}) {
      if (off >= size) continue;
      const size_t n = r->read(ino, off, len, view, &rest);
      const uint64_t first = off / ps * ps, page_end = std::min(size, (off + n + ps - 1) / ps * ps);
      EXPECT_EQ(rest.before_offset, first) << path << " at " << off;
      EXPECT_EQ(rest.after_offset, off + n) << path << " at " << off;
      Bytes before(rest.before.size()), after(rest.after.size());
      rest.before.copy_to(before.data());
      rest.after.copy_to(after.data());
      EXPECT_EQ(before, slurp(*dir_ / ("src/" + rel), first, off - first)) << path << " at " << off;
      EXPECT_EQ(after, slurp(*dir_ / ("src/" + rel), off + n, page_end - off - n)) << path << " at " << off;
    }
  }
  // Without a PageRest the view alone is filled, as before.
  EXPECT_EQ(r->read(r->lookup("/multi"), 10, 10, view, nullptr), 10u);
}

TEST_F(ReaderTest, CountersByNameAgreeWithTheJson) {
  auto r = open();
  Bytes b(1000);
  r->read("/multi", 0, b.size(), b.data());
  const std::map<std::string, uint64_t> c = r->counters();
  EXPECT_GT(c.at("cache_misses"), 0u);
  EXPECT_GT(c.at("pages_decoded_cpu"), 0u);
  EXPECT_GT(c.at("cache_capacity"), 0u);
  const std::string json = r->stats_json();
  for (const auto& [name, value] : c) EXPECT_NE(json.find("\"" + name + "\":"), std::string::npos) << name;
}

class FaultyDevice final : public engine::DeviceMemory {
 public:
  FaultyDevice() : inner_(engine::make_standin_device_memory(true)) {}
  std::string describe() const override { return "faulty stand-in"; }
  bool can_decode() const override { return true; }
  uint8_t* scratch(size_t n, std::string& err) override { return inner_->scratch(n, err); }
  bool upload(void* d, const void* s, size_t n, void* st, std::string& e) override {
    return inner_->upload(d, s, n, st, e);
  }
  bool zero(void* d, size_t n, void* st, std::string& e) override { return inner_->zero(d, n, st, e); }
  bool copy(void* d, const void* s, size_t n, void* st, std::string& e) override {
    return inner_->copy(d, s, n, st, e);
  }
  bool decode(std::span<const gpu::DevicePage> pages, std::span<PageStatus> results, void* st,
              std::string& e) override {
    if (!inner_->decode(pages, results, st, e)) return false;
    for (size_t i = 0; i < pages.size(); i += 2) {
      std::memset(pages[i].out, 0x5A, pages[i].out_size);
      results[i] = PageStatus::kBadData;
    }
    garbled += (pages.size() + 1) / 2;
    return true;
  }
  bool sync(void* st, std::string& e) override { return inner_->sync(st, e); }
  size_t garbled = 0;

 private:
  std::unique_ptr<engine::DeviceMemory> inner_;
};

// Ranges that start and end inside pages, whole pages, tails in tail packs, holes, deduplicated pages.
std::vector<std::pair<std::string, std::pair<uint64_t, size_t>>> device_ranges(Reader& r) {
  std::vector<std::pair<std::string, std::pair<uint64_t, size_t>>> out = {
      {"/multi", {0, 5 * 65536 + 1234}},      // whole file: whole pages and a tail
      {"/multi", {65536, 2 * 65536}},         // exactly two whole pages
      {"/multi", {100, 3 * 65536}},           // starts and ends inside pages
      {"/multi", {5 * 65536 + 1000, 10000}},  // inside the tail, clipped at end of file
      {"/multi-copy", {70000, 130000}},       // dedupe pages
  };
  r.walk([&](const std::string& path, const FileStat& st) {
    if (!S_ISREG(st.mode)) return;
    if (st.size > (4ull << 30)) {  // the sparse file: a hole, and data past 4 GiB
      out.push_back({path, {1 << 20, 200000}});
      out.push_back({path, {st.size - 100000, 100000}});
    } else if (st.size > 0 && st.size < 4096 && out.size() < 40) {
      out.push_back({path, {st.size / 3, st.size}});  // small files live in tail packs
    }
  });
  return out;
}

void expect_device_reads_match(Reader& r) {
  for (const auto& [path, range] : device_ranges(r)) {
    const auto [off, len] = range;
    Bytes host(len), dev(len + 64, 0xEE);  // a guard band after the range must stay untouched
    const size_t want = r.read(path, off, len, host.data());
    const size_t got = r.read_device(r.lookup(path), off, len, dev.data());
    ASSERT_EQ(got, want) << path << " @" << off;
    EXPECT_TRUE(std::equal(host.begin(), host.begin() + static_cast<long>(want), dev.begin()))
        << path << " @" << off;
    EXPECT_TRUE(
        std::all_of(dev.begin() + static_cast<long>(want), dev.end(), [](uint8_t b) { return b == 0xEE; }))
        << path << " @" << off << ": wrote past the range";
  }
}

TEST_F(ReaderTest, DeviceReadsThroughADecodingDevice) {
  auto r = open();
  testing::set_device_memory(*r, engine::make_standin_device_memory(true));
  expect_device_reads_match(*r);
  EXPECT_GT(r->counters().at("pages_decoded_gpu"), 0u);
}

// An image without tail packs: each file's last partial page is a page shorter than the page size,
// read whole into the destination by device reads and by Access::kOnce batches alike.
TEST_F(ReaderTest, ShortLastPagesOfAnImageWithoutTailPacks) {
  auto r = open(*dir_ / "img-nopack");
  for (const Access access : {Access::kNormal, Access::kOnce}) {
    for (const std::string& f : regular_files()) {
      const FileStat st = r->stat("/" + f);
      if (st.size >= (64u << 20)) continue;
      Bytes got(st.size);
      ReadRequest q;
      q.ino = st.ino;
      q.length = got.size();
      q.dst = got.data();
      r->read_batch({&q, 1}, access);
      ASSERT_EQ(q.error, 0) << q.message;
      EXPECT_EQ(got, slurp(*dir_ / ("src/" + f))) << f;
    }
  }
  testing::set_device_memory(*r, engine::make_standin_device_memory(true));
  expect_device_reads_match(*r);
}

// A signed image read with its key: device reads match host reads, and a page whose stored bytes differ
// from their signed digest fails the device read that needs it (the digest replaces the stored checksum
// there, as on the host path) while the others still read.
TEST_F(ReaderTest, DeviceReadsOfASignedImageCheckEveryPagesDigest) {
  const test::KeyPair key = test::make_key_pair(*dir_ / "key");
  ASSERT_EQ(test::run_mkfs({"-q", *dir_ / "src", *dir_ / "signed", "--sign", key.priv}).code, 0);
  ReaderOptions o;
  o.threads = 2;
  o.decoder = DecoderChoice::kCpu;
  o.source.trusted_key = key.pub;
  auto r = Reader::open(*dir_ / "signed", o);
  testing::set_device_memory(*r, engine::make_standin_device_memory(true));
  expect_device_reads_match(*r);

  Bytes img = test::read_bytes(*dir_ / "signed");
  {
    auto image = Image::open(*dir_ / "signed");
    img[image->pages()[image->page_ref(image->resolve("/multi"), 2).entry].offset + 5] ^= 0x40;
  }
  test::write_bytes(*dir_ / "signed-bad", img);
  auto bad = Reader::open(*dir_ / "signed-bad", o);
  testing::set_device_memory(*bad, engine::make_standin_device_memory(true));
  Bytes dev(4 * 65536);
  try {
    bad->read_device(bad->lookup("/multi"), 0, dev.size(), dev.data());
    FAIL() << "a device read of a page that does not match its digest succeeded";
  } catch (const ImageError& e) {  // refused before any codec saw the bytes
    EXPECT_EQ(e.code(), EIO);
    EXPECT_NE(std::string(e.what()).find("(page 2): stored bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bad->read_device(bad->lookup("/multi"), 0, 2 * 65536, dev.data()), 2u * 65536);
  const Bytes truth = slurp(*dir_ / "src/multi", 0, 2 * 65536);
  EXPECT_TRUE(std::equal(truth.begin(), truth.end(), dev.begin()));
}

// A walk through a signed image by one reader: its pages are fetched and checked against their digests
// on the pool, ahead of the reader, and decoded from there; a page off its digest is never kept there:
// the read that needs it fails on the digest, and every other file reads right.
TEST_F(ReaderTest, AWalkThroughASignedImageIsCheckedAheadAndAPageOffItsDigestStillFails) {
  const test::KeyPair key = test::make_key_pair(*dir_ / "walk-key");
  TempDir tmp("reader-walk");
  for (int i = 0; i < 200; ++i) {
    const std::string name = std::to_string(1000 + i);  // "f" + to_string trips GCC 12's -Wrestrict
    test::write_text_file(tmp.path() + "/f" + name, 2000 + (i * 7919) % 70000, i);
  }
  ASSERT_EQ(test::run_mkfs({"-q", tmp.path(), tmp / "signed", "--sign", key.priv}).code, 0);
  const std::string victim = "/f1100";
  Bytes img = test::read_bytes(tmp / "signed");
  {
    auto image = Image::open(tmp / "signed");
    img[image->pages()[image->page_ref(image->resolve(victim), 0).entry].offset + 9] ^= 0x01;
  }
  test::write_bytes(tmp / "signed-bad", img);
  ReaderOptions o;
  o.threads = 2;
  o.decoder = DecoderChoice::kCpu;
  o.source.trusted_key = key.pub;
  for (const std::string name : {"signed", "signed-bad"}) {
    auto r = Reader::open(tmp / name, o);
    std::vector<std::string> failed;
    r->walk([&](const std::string& path, const FileStat& st) {
      if (!S_ISREG(st.mode)) return;
      Bytes got(st.size);
      try {
        got.resize(r->read(st.ino, 0, st.size, got.data()));
        EXPECT_EQ(got, slurp(tmp / path.substr(1))) << path;
      } catch (const ImageError& e) {
        EXPECT_EQ(e.code(), EIO);
        EXPECT_NE(std::string(e.what()).find("stored bytes"), std::string::npos) << e.what();
        failed.push_back(path);
      }
      testing::wait_readahead(*r);
    });
    const auto c = r->counters();
    // On a quiet machine 140 of 144 pages; how many depends on the pool keeping up, since a saturated
    // pool drops stretches by design (seen once in a full parallel test run: 53 of 145).
    EXPECT_GT(c.at("decoded_ahead_pages"), 0u) << name;
    if (name == "signed") {
      EXPECT_TRUE(failed.empty());
    } else {
      EXPECT_NE(std::find(failed.begin(), failed.end(), victim), failed.end());
    }
  }
}

TEST_F(ReaderTest, DeviceReadsThroughACopyOnlyDevice) {
  auto r = open();
  testing::set_device_memory(*r, engine::make_standin_device_memory(false));
  expect_device_reads_match(*r);
  EXPECT_EQ(r->counters().at("pages_decoded_gpu"), 0u);
}

TEST_F(ReaderTest, PagesTheDeviceFailsAreDecodedOnTheCpu) {
  auto r = open();
  auto dev = std::make_unique<FaultyDevice>();
  FaultyDevice* faulty = dev.get();
  testing::set_device_memory(*r, std::move(dev));
  expect_device_reads_match(*r);
  EXPECT_GT(faulty->garbled, 0u);
}

TEST_F(ReaderTest, DeviceBatchFailsOnlyTheRangesThatNeedABadPage) {
  Bytes img = test::read_bytes(*dir_ / "img");
  {
    auto image = Image::open(*dir_ / "img");
    img[image->pages()[image->page_ref(image->resolve("/multi"), 1).entry].offset + 9] ^= 0x01;
  }
  test::write_bytes(*dir_ / "bad-dev", img);
  auto r = open(*dir_ / "bad-dev");
  testing::set_device_memory(*r, engine::make_standin_device_memory(true));
  std::vector<ReadRequest> reqs(2);
  Bytes a(1000), b(1000);
  reqs[0].ino = r->lookup("/multi");
  reqs[0].offset = 65536 + 5;
  reqs[0].length = a.size();
  reqs[0].dst = a.data();
  reqs[1].ino = reqs[0].ino;
  reqs[1].offset = 3 * 65536;
  reqs[1].length = b.size();
  reqs[1].dst = b.data();
  r->read_batch_device(reqs);
  EXPECT_EQ(reqs[0].error, EIO);
  EXPECT_NE(reqs[0].message.find("(page 1)"), std::string::npos) << reqs[0].message;
  EXPECT_EQ(reqs[1].error, 0) << reqs[1].message;
  EXPECT_EQ(b, slurp(*dir_ / "src/multi", 3 * 65536, 1000));
}

TEST_F(ReaderTest, DeviceReadsWithoutADeviceSayNotSupported) {
  auto r = open();
  std::string how;
  if (r->device_reads(how)) GTEST_SKIP() << "a device is usable here (" << how << ")";
  EXPECT_FALSE(how.empty());
  Bytes b(10);
  EXPECT_EQ(errno_of([&] { r->read_device(r->lookup("/multi"), 0, 10, b.data()); }), ENOTSUP);
}

}  // namespace
}  // namespace gdfs

namespace gdfs {
namespace {

// A layered image (FORMAT.md 4.3) through the whole read path: pages from the image and from its base
// in one batch, found where the image says or where the caller says.
TEST(LayeredReader, ReadsPagesFromTheImageAndItsBase) {
  TempDir dir("layered-reader");
  fs::create_directories(dir / "src/d");
  for (int i = 0; i < 40; ++i)
    test::write_text_file(dir / ("src/d/f" + std::to_string(i)), 3000 + i * 911, i);
  test::write_text_file(dir / "src/big", 9 * 65536 + 77, 99);
  ASSERT_EQ(test::run_mkfs({"-q", dir / "src", dir / "v1.gdfs"}).code, 0);
  {
    std::fstream f(dir / "src/big", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4 * 65536 + 10);
    f << "changed";
  }
  test::write_text_file(dir / "src/d/new", 70000, 1234);
  ASSERT_EQ(test::run_mkfs({"-q", "--base", dir / "v1.gdfs", "--layered", dir / "src", dir / "v2.gdfs"}).code,
            0);
  fs::create_directory(dir / "elsewhere");
  fs::rename(dir / "v1.gdfs", dir / "elsewhere/v1.gdfs");
  ReaderOptions o;
  o.threads = 2;
  o.decoder = DecoderChoice::kCpu;
  EXPECT_THROW(Reader::open(dir / "v2.gdfs", o), ImageError);
  o.source.bases = {dir / "elsewhere/v1.gdfs"};
  auto r = Reader::open(dir / "v2.gdfs", o);
  std::vector<std::string> files{"big", "d/new"};
  for (int i = 0; i < 40; ++i) files.push_back("d/f" + std::to_string(i));
  std::vector<ReadRequest> reqs(files.size());
  std::vector<Bytes> bufs(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const FileStat st = r->stat("/" + files[i]);
    bufs[i].resize(st.size);
    reqs[i] = ReadRequest{};
    reqs[i].ino = st.ino;
    reqs[i].length = st.size;
    reqs[i].dst = bufs[i].data();
  }
  r->read_batch(reqs);
  for (size_t i = 0; i < files.size(); ++i) {
    ASSERT_EQ(reqs[i].error, 0) << reqs[i].message;
    EXPECT_EQ(bufs[i], slurp(dir / ("src/" + files[i]))) << files[i];
  }
  Bytes mid(100000);
  ASSERT_EQ(r->read("/big", 4 * 65536 - 50000, mid.size(), mid.data()), mid.size());
  EXPECT_EQ(mid, slurp(dir / "src/big", 4 * 65536 - 50000, mid.size()));
}

}  // namespace
}  // namespace gdfs
