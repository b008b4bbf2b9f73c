#include "cache/memory_limit.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

namespace gdfs::engine {
namespace {

// A limit file's value; none for "max", a value that is no limit (v1 writes 2^63 rounded down to a
// page), or anything that is not a number.
uint64_t read_limit(const std::string& path) {
  std::ifstream f(path);
  std::string text;
  if (!f || !std::getline(f, text)) return UINT64_MAX;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return UINT64_MAX;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  return errno || v >= (uint64_t{1} << 62) ? UINT64_MAX : v;
}

// The lowest limit in `file` of the cgroup at `path` (below `root`) and of every cgroup above it.
uint64_t lowest_on_the_way_up(const std::string& root, std::string path, const char* file) {
  uint64_t lowest = UINT64_MAX;
  if (path.empty() || path.front() != '/') return lowest;
  for (;;) {
    lowest = std::min(lowest, read_limit(root + (path == "/" ? "" : path) + "/" + file));
    if (path == "/") return lowest;
    const size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

// Whether the comma-separated `controllers` of a /proc/self/cgroup line name `want`.
bool names(std::string_view controllers, std::string_view want) {
  for (size_t at = 0; at <= controllers.size();) {
    const size_t end = std::min(controllers.find(',', at), controllers.size());
    if (controllers.substr(at, end - at) == want) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

uint64_t memory_limit(const std::string& proc_cgroup, const std::string& cgroup_root, uint64_t physical) {
  uint64_t limit = physical;
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    // hierarchy-id:controllers:path
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty())
      limit = std::min(limit, lowest_on_the_way_up(cgroup_root, path, "memory.max"));
    else if (names(controllers, "memory"))
      limit = std::min(limit, lowest_on_the_way_up(cgroup_root + "/memory", path, "memory.limit_in_bytes"));
  }
  return limit;
}

uint64_t memory_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t physical = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : uint64_t{1} << 30;
  std::ifstream f("/proc/self/cgroup");
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  return memory_limit(text, "/sys/fs/cgroup", physical);
}

}  // namespace gdfs::engine
