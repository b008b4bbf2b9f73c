// gdfs-inspect counters MOUNTPOINT: the live counters of a mounted gdfs, from the root directory
// (gdfs/mount_counters.h): its ioctl, which works whether or not the mount answers xattrs, else its
// xattr (daemons before the ioctl).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "gdfs/mount_counters.h"

namespace gdfs::inspect {
namespace {

// The JSON through the ioctl; "" when the directory does not answer it (ENOTTY, or not a gdfs root).
std::string read_stats_ioctl(const std::string& mnt) {
  const int fd = ::open(mnt.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(mnt + ": " + std::strerror(errno));
  std::vector<char> buf(kStatsIoctlBytes);
  const int n = ::ioctl(fd, kStatsIoctl, buf.data());
  ::close(fd);
  return n > 0 && static_cast<size_t>(n) <= buf.size() ? std::string(buf.data(), static_cast<size_t>(n))
                                                       : std::string();
}

std::string read_stats_xattr(const std::string& mnt) {
  std::vector<char> buf(4096);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const ssize_t n = getxattr(mnt.c_str(), kStatsXattr, buf.data(), buf.size());
    if (n >= 0) return std::string(buf.data(), static_cast<size_t>(n));
    if (errno != ERANGE) break;
    buf.resize(buf.size() * 4);  // grew between the calls: try a larger buffer
  }
  const int e = errno;
  if (e == ENODATA || e == ENOTSUP)
    throw std::runtime_error(mnt + ": not the root of a mounted gdfs (no counters)");
  throw std::runtime_error(mnt + ": " + std::strerror(e));
}

std::string read_stats(const std::string& mnt) {
  std::string json = read_stats_ioctl(mnt);
  return json.empty() ? read_stats_xattr(mnt) : json;
}

}  // namespace

int counters(const Options& o, std::ostream& out) {
  const std::string raw = read_stats(o.dir);
  if (o.json) {
    out << raw << "\n";
    return 0;
  }
  const nlohmann::json j = nlohmann::json::parse(raw);
  auto u = [&](const char* k) { return j.value(k, uint64_t{0}); };
  const uint64_t lookups = u("cache_hits") + u("cache_misses") + u("inflight_joins");
  const uint64_t decoded = u("pages_decoded_cpu") + u("pages_decoded_gpu");
  auto pct = [](uint64_t a, uint64_t b) { return b ? 100.0 * double(a) / double(b) : 0.0; };
  char line[160];
  auto row = [&](const char* name, uint64_t v, const std::string& note = "") {
    std::snprintf(line, sizeof line, "%-22s %16llu%s%s\n", name, static_cast<unsigned long long>(v),
                  note.empty() ? "" : "  ", note.c_str());
    out << line;
  };
  auto share = [&](uint64_t a, uint64_t b, const char* of) {
    char s[64];
    std::snprintf(s, sizeof s, "(%.1f%% of %s)", pct(a, b), of);
    return std::string(s);
  };
  out << "decoder " << j.value("decoder", "?") << ", fetcher " << j.value("fetcher", "?") << ", "
      << j.value("threads", 0) << " decode threads\n";
  row("reads", u("reads"));
  row("bytes served", u("bytes_served"));
  row("read errors (EIO)", u("read_errors"));
  row("cache hits", u("cache_hits"), share(u("cache_hits"), lookups, "page lookups"));
  row("cache misses", u("cache_misses"), share(u("cache_misses"), lookups, "page lookups"));
  row("in-flight joins", u("inflight_joins"));
  row("readahead pages", u("readahead_pages"));
  row("decoded-ahead pages", u("decoded_ahead_pages"),
      share(u("decoded_ahead_pages"), u("readahead_pages"), "readahead pages"));
  row("pages released", u("pages_released"), "(handed over whole: the kernel's page cache keeps them)");
  row("pages decoded on CPU", u("pages_decoded_cpu"));
  row("pages decoded on GPU", u("pages_decoded_gpu"));
  row("GPU batches", u("gpu_batches"));
  row("GPU fallback pages", u("gpu_fallback_pages"), "(re-decoded on the CPU)");
  row("GPU small reads", u("gpu_small_reads"), "(kept on the CPU)");
  char rate[64];
  std::snprintf(rate, sizeof rate, "(%.1f us per page)",
                decoded ? double(u("decode_ns")) / 1e3 / double(decoded) : 0.0);
  row("decode time ns", u("decode_ns"), rate);
  row("fetch operations", u("fetch_ops"));
  row("fetched bytes", u("fetch_bytes"));
  row("coalesced reads", u("coalesced_reads"), share(u("coalesced_reads"), u("fetch_ops"), "fetches"));
  row("io_uring submissions", u("uring_submits"));
  row("bad pages", u("bad_pages"));
  row("cache bytes", u("cache_bytes"), share(u("cache_bytes"), u("cache_capacity"), "capacity"));
  row("cache pages", u("cache_pages"));
  if (j.contains("store_ahead_pushes")) {  // the daemon's own (older daemons have none)
    row("store-ahead pushes", u("store_ahead_pushes"), "(rest of a read's pages into the page cache)");
    row("store-ahead bytes", u("store_ahead_bytes"));
    row("store-ahead skipped", u("store_ahead_skipped"), "(every pushing thread busy)");
    row("store-ahead errors", u("store_ahead_errors"));
  }
  if (j.contains("walk_ahead_files")) {
    row("walk-ahead files", u("walk_ahead_files"), "(next files of a walk into the page cache)");
    row("walk-ahead bytes", u("walk_ahead_bytes"));
    row("walk-ahead refused", u("walk_ahead_refused"),
        "(windows the kernel ended: directory not listed yet)");
  }
  return 0;
}

}  // namespace gdfs::inspect
