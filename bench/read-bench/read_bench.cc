// gdfs-read-bench: warm-cache reads of SIZE-byte ranges of one file through gdfs::Reader, single thread.
//
//   gdfs-read-bench IMAGE PATH [--size BYTES] [--iters N] [--reps R] [--seed S]
//
// The file is read once in full first (every page decoded and cached: the cache is sized to hold it,
// readahead is off, the CPU decodes). Then each of R timed passes makes N reads, each at an offset that
// is a multiple of SIZE, in the order of a 64-bit LCG seeded with S, by path (Reader::read(path, ...),
// one lookup per read, as the Python module's read_into does). bench/python_overhead.py makes exactly the
// same reads through the module. One line per pass, then the medians and the bests: wall time, and the
// thread's CPU time (CLOCK_THREAD_CPUTIME_ID: on a shared, loaded machine, without the time the thread
// waited for a core):
//   cxx pass=1 reads=N ns_per_read=X cpu_ns_per_read=C gib_per_s=Y
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdfs/reader.h"

namespace {

using Clock = std::chrono::steady_clock;

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The offsets (in units of `size`) both benchmarks read, from the same LCG.
std::vector<uint64_t> offsets(uint64_t seed, uint64_t chunks, uint64_t size, uint64_t n) {
  std::vector<uint64_t> out(n);
  uint64_t x = seed;
  for (uint64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    out[i] = ((x >> 33) % chunks) * size;
  }
  return out;
}

int usage(const char* prog) {
  std::fprintf(stderr, "usage: %s IMAGE PATH [--size BYTES] [--iters N] [--reps R] [--seed S]\n", prog);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  uint64_t size = 65536, iters = 20000, reps = 5, seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    uint64_t* v = a == "--size"    ? &size
                  : a == "--iters" ? &iters
                  : a == "--reps"  ? &reps
                  : a == "--seed"  ? &seed
                                   : nullptr;
    if (!v) {
      if (a.starts_with("-")) return usage(argv[0]);
      pos.push_back(a);
      continue;
    }
    if (i + 1 >= argc) return usage(argv[0]);
    *v = std::strtoull(argv[++i], nullptr, 0);
  }
  if (pos.size() != 2 || size == 0 || iters == 0 || reps == 0) return usage(argv[0]);
  try {
    gdfs::ReaderOptions opt;
    opt.decoder = gdfs::DecoderChoice::kCpu;
    opt.readahead = 0;
    const std::string& path = pos[1];
    {
      auto probe = gdfs::Reader::open(pos[0], opt);
      opt.cache_size = probe->stat(path).size + (64u << 20);  // the whole file stays cached
    }
    auto r = gdfs::Reader::open(pos[0], opt);
    const uint64_t file_size = r->stat(path).size;
    if (file_size < size) throw std::runtime_error(path + " is smaller than one range");
    std::vector<uint8_t> buf(size);
    for (uint64_t off = 0; off < file_size; off += size) r->read(path, off, size, buf.data());  // warm
    const std::vector<uint64_t> offs = offsets(seed, file_size / size, size, iters);
    std::vector<double> ns, cpu_ns;
    for (uint64_t rep = 1; rep <= reps; ++rep) {
      size_t total = 0;
      const double c0 = thread_cpu_s();
      const auto t0 = Clock::now();
      for (uint64_t off : offs) total += r->read(path, off, size, buf.data());
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      const double cs = thread_cpu_s() - c0;
      if (total != iters * size) throw std::runtime_error("short read");
      ns.push_back(s * 1e9 / double(iters));
      cpu_ns.push_back(cs * 1e9 / double(iters));
      std::printf("cxx pass=%llu reads=%llu ns_per_read=%.1f cpu_ns_per_read=%.1f gib_per_s=%.3f\n",
                  static_cast<unsigned long long>(rep), static_cast<unsigned long long>(iters), ns.back(),
                  cpu_ns.back(), double(total) / s / double(1 << 30));
    }
    std::sort(ns.begin(), ns.end());
    std::sort(cpu_ns.begin(), cpu_ns.end());
    std::printf("cxx median ns_per_read=%.1f best=%.1f cpu_median=%.1f cpu_best=%.1f\n", ns[ns.size() / 2],
                ns.front(), cpu_ns[cpu_ns.size() / 2], cpu_ns.front());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdfs-read-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
