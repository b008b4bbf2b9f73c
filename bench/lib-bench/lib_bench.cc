// gdfs-lib-bench: the same read workloads through the reader library or through a mount point, with one
// timing loop, so the two compare like with like (bench/run-lib runs both, cold and warm).
//
//   gdfs-lib-bench lib IMAGE   [options]   reads with gdfs::Reader (one per process, CPU decoder)
//   gdfs-lib-bench mount DIR   [options]   reads the files under DIR with open/pread
//
// Workloads (--workload, several comma-separated, run in order in one process, so "warm" is the second
// pass of anything in the same process):
//   tree        every regular file, whole, in walk order (1 MiB reads)       -> MB/s of file bytes
//   big         the largest file, whole, 1 MiB reads                          -> MB/s
//   rand4k      random 4 KiB reads in the largest file, --threads threads     -> reads/s
//   rand64k     random 64 KiB reads in the largest file, --threads threads    -> reads/s
//   batch       256 random 64 KiB ranges of random files: one read_batch (lib) or 256 preads (mount),
//               --threads threads each doing batches                           -> ranges/s
//   rand        random reads of --size bytes in the largest file, --threads threads -> reads/s
// Library options (lib only): --decoder cpu|gpu|auto (cpu), --gpu-min-bytes N, --cache BYTES (the
// decoded-page cache; small keeps reads missing it), --readahead BYTES. With --decoder gpu and a small
// cache, `rand` at several sizes against --decoder cpu finds the request size where the GPU starts to win
// (bench/run-gpu-read).
// Each line printed: "<via> <workload> <threads> <value> <unit> <bytes> <seconds> <cpu-seconds>", the last
// this process's user and system time over the workload (the library's threads included). Every byte read
// through the library is compared with --verify DIR (the source tree) when given.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gdfs/reader.h"
#include "gdfs/unique_fd.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct File {
  std::string rel;  // "/a/b"
  uint64_t size = 0;
  uint32_t ino = 0;  // lib only
};

struct Options {
  std::string via, target, verify;
  std::vector<std::string> workloads{"tree"};
  unsigned threads = 1;
  double seconds = 2.0;
  size_t size = 1 << 20;  // the rand workload's read size
  gdfs::ReaderOptions reader;
};

// One way of reading: the library, or POSIX calls on the mount.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::vector<File> files() = 0;
  // A file held open across reads, as a real reader would (an fd on the mount; the inode in the library).
  virtual intptr_t open(const File& f) = 0;
  virtual void close(intptr_t) {}
  virtual size_t read(intptr_t h, const File& f, uint64_t off, size_t len, uint8_t* dst) = 0;
  // Many ranges: the library's one batch call; POSIX reads them one by one.
  virtual void read_many(const std::vector<const File*>& f, const std::vector<uint64_t>& off, size_t len,
                         std::vector<std::vector<uint8_t>>& bufs) = 0;
};

class LibBackend final : public Backend {
 public:
  LibBackend(const std::string& image, const gdfs::ReaderOptions& o) : reader_(gdfs::Reader::open(image, o)) {
    std::fprintf(stderr, "# decoder %s\n", reader_->decoder_name());
  }
  // The reader's counters at the end, for the raw log (where did the pages come from).
  ~LibBackend() override {
    std::string line;
    for (const auto& [name, value] : reader_->counters())
      if (value) line += " " + name + "=" + std::to_string(value);
    std::fprintf(stderr, "# counters:%s\n", line.c_str());
  }
  std::vector<File> files() override {
    std::vector<File> out;
    reader_->walk([&](const std::string& path, const gdfs::FileStat& st) {
      if (S_ISREG(st.mode)) out.push_back(File{path, st.size, st.ino});
    });
    return out;
  }
  intptr_t open(const File& f) override { return f.ino; }
  size_t read(intptr_t, const File& f, uint64_t off, size_t len, uint8_t* dst) override {
    return reader_->read(f.ino, off, len, dst);
  }
  void read_many(const std::vector<const File*>& f, const std::vector<uint64_t>& off, size_t len,
                 std::vector<std::vector<uint8_t>>& bufs) override {
    std::vector<gdfs::ReadRequest> reqs(f.size());
    for (size_t i = 0; i < f.size(); ++i) {
      reqs[i].ino = f[i]->ino;
      reqs[i].offset = off[i];
      reqs[i].length = len;
      reqs[i].dst = bufs[i].data();
    }
    reader_->read_batch(reqs);
    for (const gdfs::ReadRequest& r : reqs)
      if (r.error) throw std::runtime_error(r.message);
  }

 private:
  std::unique_ptr<gdfs::Reader> reader_;
};

class MountBackend final : public Backend {
 public:
  explicit MountBackend(std::string dir) : dir_(std::move(dir)) {}
  std::vector<File> files() override {
    std::vector<File> out;
    // Walk order like the library's (directories in name order) so both read the same sequence.
    std::vector<std::string> stack{""};
    while (!stack.empty()) {
      const std::string d = stack.back();
      stack.pop_back();
      std::vector<fs::directory_entry> ents(fs::directory_iterator(dir_ + d), fs::directory_iterator());
      std::sort(ents.begin(), ents.end(),
                [](auto& a, auto& b) { return a.path().filename() < b.path().filename(); });
      std::vector<std::string> subdirs;
      for (const auto& e : ents) {
        const std::string rel = d + "/" + e.path().filename().string();
        const fs::file_status st = e.symlink_status();
        if (fs::is_regular_file(st)) out.push_back(File{rel, e.file_size(), 0});
        if (fs::is_directory(st)) subdirs.push_back(rel);
      }
      for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(*it);
    }
    return out;
  }
  intptr_t open(const File& f) override {
    const int fd = ::open((dir_ + f.rel).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("open " + f.rel + ": " + std::strerror(errno));
    return fd;
  }
  void close(intptr_t h) override { ::close(static_cast<int>(h)); }
  size_t read(intptr_t h, const File& f, uint64_t off, size_t len, uint8_t* dst) override {
    size_t n = 0;
    while (n < len) {
      const ssize_t got = ::pread(static_cast<int>(h), dst + n, len - n, static_cast<off_t>(off + n));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw std::runtime_error("pread " + f.rel + ": " + std::strerror(errno));
      if (got == 0) break;
      n += static_cast<size_t>(got);
    }
    return n;
  }
  // A data loader on a mount opens each sample's file, reads it, and closes it.
  void read_many(const std::vector<const File*>& f, const std::vector<uint64_t>& off, size_t len,
                 std::vector<std::vector<uint8_t>>& bufs) override {
    for (size_t i = 0; i < f.size(); ++i) {
      const intptr_t h = open(*f[i]);
      read(h, *f[i], off[i], len, bufs[i].data());
      close(h);
    }
  }

 private:
  std::string dir_;
};

void verify(const Options& o, const File& f, uint64_t off, const uint8_t* got, size_t n) {
  if (o.verify.empty()) return;
  std::vector<uint8_t> want(n);
  const gdfs::UniqueFd fd(::open((o.verify + f.rel).c_str(), O_RDONLY | O_CLOEXEC));
  const ssize_t r = fd.get() >= 0 ? ::pread(fd.get(), want.data(), n, static_cast<off_t>(off)) : -1;
  if (r != static_cast<ssize_t>(n) || std::memcmp(want.data(), got, n) != 0)
    throw std::runtime_error("wrong bytes: " + f.rel + " at " + std::to_string(off));
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}
double g_cpu0 = 0;  // cpu_seconds() when the current workload started

void report(const Options& o, const std::string& w, double value, const char* unit, uint64_t bytes,
            double s) {
  std::printf("%s %s %u %.1f %s %llu %.3f %.3f\n", o.via.c_str(), w.c_str(), o.threads, value, unit,
              static_cast<unsigned long long>(bytes), s, cpu_seconds() - g_cpu0);
  std::fflush(stdout);
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Whole files, 1 MiB reads.
void whole(const Options& o, Backend& b, const std::vector<File>& files, const std::string& name) {
  std::vector<uint8_t> buf(1 << 20);
  uint64_t bytes = 0;
  const auto t0 = Clock::now();
  for (const File& f : files) {
    const intptr_t h = b.open(f);
    for (uint64_t off = 0; off < f.size;) {
      const size_t n = b.read(h, f, off, buf.size(), buf.data());
      if (n == 0) break;
      verify(o, f, off, buf.data(), n);
      off += n;
      bytes += n;
    }
    b.close(h);
  }
  const double s = since(t0);
  report(o, name, bytes / s / 1e6, "MB/s", bytes, s);
}

// `fn(thread, rng)` runs repeatedly on every thread until --seconds pass; returns operations done.
uint64_t for_a_while(const Options& o, const std::function<uint64_t(std::mt19937_64&)>& fn, double& s) {
  std::atomic<uint64_t> ops{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (unsigned t = 0; t < o.threads; ++t)
    threads.emplace_back([&, t] {
      // Counted per thread: one shared counter would put a contended atomic in every timed operation,
      // the same cost on both sides, which pulls library/mount ratios toward 1.
      std::mt19937_64 rng(1234 + t);
      uint64_t mine = 0;
      while (!stop.load(std::memory_order_relaxed)) mine += fn(rng);
      ops += mine;
    });
  while (since(t0) < o.seconds) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  for (auto& t : threads) t.join();
  s = since(t0);
  return ops.load();
}

void random_reads(const Options& o, Backend& b, const File& big, size_t len, const std::string& name) {
  double s = 0;
  const uint64_t span = big.size > len ? big.size - len : 1;
  const intptr_t h = b.open(big);
  const uint64_t ops = for_a_while(
      o,
      [&](std::mt19937_64& rng) {
        thread_local std::vector<uint8_t> buf;
        buf.resize(len);
        const uint64_t off = (rng() % span) & ~uint64_t{4095};
        const size_t n = b.read(h, big, off, len, buf.data());
        verify(o, big, off, buf.data(), n);
        return uint64_t{1};
      },
      s);
  b.close(h);
  report(o, name, ops / s, "reads/s", ops * len, s);
}

void batches(const Options& o, Backend& b, const std::vector<File>& files) {
  std::vector<const File*> candidates;
  for (const File& f : files)
    if (f.size >= (64u << 10)) candidates.push_back(&f);
  if (candidates.empty()) throw std::runtime_error("no file of 64 KiB or more for batch reads");
  double s = 0;
  const uint64_t ranges = for_a_while(
      o,
      [&](std::mt19937_64& rng) {
        // Per thread and reused: allocating and zeroing 16 MiB per batch would time memset, not reads.
        thread_local std::vector<const File*> f(256);
        thread_local std::vector<uint64_t> off(256);
        thread_local std::vector<std::vector<uint8_t>> bufs(256, std::vector<uint8_t>(64 << 10));
        for (size_t i = 0; i < f.size(); ++i) {
          f[i] = candidates[rng() % candidates.size()];
          off[i] = rng() % (f[i]->size - (64u << 10) + 1);
        }
        b.read_many(f, off, 64 << 10, bufs);
        for (size_t i = 0; i < f.size(); ++i) verify(o, *f[i], off[i], bufs[i].data(), 64 << 10);
        return uint64_t{256};
      },
      s);
  report(o, "batch", ranges / s, "ranges/s", ranges * (64u << 10), s);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = s.find(',', a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  return out;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: gdfs-lib-bench lib IMAGE | mount DIR  [--workload tree,big,rand4k,rand64k,batch,rand]\n"
      "                      [--threads N] [--seconds S] [--verify SOURCE_DIR] [--size BYTES]\n"
      "                      lib only: [--decoder cpu|gpu|auto] [--gpu-min-bytes N] [--cache BYTES]\n"
      "                                [--readahead BYTES] [--trusted-key PUB]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  Options o;
  o.reader.decoder = gdfs::DecoderChoice::kCpu;
  o.via = argv[1];
  o.target = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--workload")
      o.workloads = split(v);
    else if (k == "--threads")
      o.threads = static_cast<unsigned>(std::max(1, std::atoi(v.c_str())));
    else if (k == "--seconds")
      o.seconds = std::atof(v.c_str());
    else if (k == "--verify")
      o.verify = v;
    else if (k == "--size")
      o.size = std::strtoull(v.c_str(), nullptr, 0);
    else if (k == "--gpu-min-bytes")
      o.reader.gpu_min_bytes = std::strtoull(v.c_str(), nullptr, 0);
    else if (k == "--cache")
      o.reader.cache_size = std::strtoull(v.c_str(), nullptr, 0);
    else if (k == "--readahead")
      o.reader.readahead = std::strtoull(v.c_str(), nullptr, 0);
    else if (k == "--trusted-key")
      o.reader.source.trusted_key = v;
    else if (k == "--decoder" && gdfs::parse_decoder_choice(v))
      o.reader.decoder = *gdfs::parse_decoder_choice(v);
    else
      return usage();
  }
  if (o.via != "lib" && o.via != "mount") return usage();
  try {
    std::unique_ptr<Backend> b;
    if (o.via == "lib")
      b = std::make_unique<LibBackend>(o.target, o.reader);
    else
      b = std::make_unique<MountBackend>(o.target);
    const std::vector<File> files = b->files();
    if (files.empty()) throw std::runtime_error("no regular files");
    const File& big =
        *std::max_element(files.begin(), files.end(), [](auto& a, auto& c) { return a.size < c.size; });
    std::fprintf(stderr, "# %zu files; largest %s, %llu bytes\n", files.size(), big.rel.c_str(),
                 static_cast<unsigned long long>(big.size));
    for (const std::string& w : o.workloads) {
      g_cpu0 = cpu_seconds();
      if (w == "tree")
        whole(o, *b, files, "tree");
      else if (w == "big")
        whole(o, *b, {big}, "big");
      else if (w == "rand4k")
        random_reads(o, *b, big, 4096, "rand4k");
      else if (w == "rand64k")
        random_reads(o, *b, big, 65536, "rand64k");
      else if (w == "batch")
        batches(o, *b, files);
      else if (w == "rand")
        random_reads(o, *b, big, o.size, "rand" + std::to_string(o.size));
      else
        return usage();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdfs-lib-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
