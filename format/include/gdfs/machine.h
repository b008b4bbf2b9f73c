// What this process may use of the machine, for the defaults that scale with it (the decoded-page
// cache, thread counts): physical memory and the CPUs it may run on, or less where its cgroups set
// lower limits, as a container's do. Sized from the host alone, a container's cache gets it killed and
// its threads outnumber its CPUs many times over.
#pragma once
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gdfs::machine {
namespace detail {

// The first line of `path`, or "" when it cannot be read.
inline std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (f) std::getline(f, line);
  return line;
}

// A decimal count; none (UINT64_MAX) for anything else.
inline uint64_t count(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos || text.size() > 19)
    return UINT64_MAX;
  return std::strtoull(std::string(text).c_str(), nullptr, 10);
}

// The cgroup paths of this process: cgroup v2's ("0::PATH") under "", each v1 hierarchy's under its
// controllers ("4:memory:PATH", "2:cpu,cpuacct:PATH").
struct CgroupLine {
  std::string controllers, path;
};
inline std::vector<CgroupLine> cgroup_lines(const std::string& proc_cgroup) {
  std::vector<CgroupLine> out;
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos || b + 1 >= line.size() || line[b + 1] != '/') continue;
    if (a == 1 && line[0] == '0' && b == a + 1)
      out.push_back({"", line.substr(b + 1)});
    else if (line.compare(0, a, "0") != 0)
      out.push_back({line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

// Whether the comma-separated `controllers` name `want`.
inline bool names(std::string_view controllers, std::string_view want) {
  for (size_t at = 0; at <= controllers.size();) {
    const size_t end = std::min(controllers.find(',', at), controllers.size());
    if (controllers.substr(at, end - at) == want) return true;
    at = end + 1;
  }
  return false;
}

// The lowest of `limit(FOLDER)` over the cgroup at `path` below `root` and every cgroup above it.
template <class Limit>
uint64_t lowest_on_the_way_up(const std::string& root, std::string path, Limit limit) {
  uint64_t lowest = UINT64_MAX;
  for (;;) {
    lowest = std::min(lowest, limit(root + (path == "/" ? "" : path)));
    if (path == "/") return lowest;
    const size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

inline std::string read_all(const char* path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A memory limit file's value; none for "max" or v1's "none" (2^63 rounded down to a page).
inline uint64_t memory_file(const std::string& path) {
  const uint64_t v = count(first_line(path));
  return v >= (uint64_t{1} << 62) ? UINT64_MAX : v;
}

// CPUs a quota allows: quota / period rounded up (at least 1); none for "max", -1 or anything odd.
inline uint64_t cpus_of_quota(uint64_t quota, uint64_t period) {
  if (quota == UINT64_MAX || period == UINT64_MAX || period == 0 || quota == 0) return UINT64_MAX;
  return (quota + period - 1) / period;
}

}  // namespace detail

// The lowest of `physical` and every memory limit from this process's cgroup up to the root: cgroup
// v2's memory.max, v1's memory.limit_in_bytes. `proc_cgroup` is the text of /proc/self/cgroup,
// `cgroup_root` where the cgroup file systems are mounted (v2 there or, on a hybrid host, v1's memory
// controller in its memory/ folder). Files that are missing or hold anything else are no limit.
inline uint64_t memory_limit(const std::string& proc_cgroup, const std::string& cgroup_root,
                             uint64_t physical) {
  uint64_t limit = physical;
  for (const detail::CgroupLine& l : detail::cgroup_lines(proc_cgroup)) {
    if (l.controllers.empty())
      limit = std::min(limit, detail::lowest_on_the_way_up(cgroup_root, l.path, [](const std::string& dir) {
                         return detail::memory_file(dir + "/memory.max");
                       }));
    else if (detail::names(l.controllers, "memory"))
      limit = std::min(
          limit, detail::lowest_on_the_way_up(cgroup_root + "/memory", l.path, [](const std::string& dir) {
            return detail::memory_file(dir + "/memory.limit_in_bytes");
          }));
  }
  return limit;
}

// memory_limit() of this process: /proc/self/cgroup, /sys/fs/cgroup and the physical memory.
inline uint64_t memory_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t physical = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : uint64_t{1} << 30;
  return memory_limit(detail::read_all("/proc/self/cgroup"), "/sys/fs/cgroup", physical);
}

// The lowest of `cpus` and every CPU quota from this process's cgroup up to the root, in CPUs rounded
// up: cgroup v2's cpu.max ("QUOTA PERIOD", "max PERIOD"), v1's cpu.cfs_quota_us over cpu.cfs_period_us
// (-1: none) in cpu/ or cpu,cpuacct/ below `cgroup_root`.
inline unsigned cpu_limit(const std::string& proc_cgroup, const std::string& cgroup_root, unsigned cpus) {
  uint64_t limit = cpus;
  for (const detail::CgroupLine& l : detail::cgroup_lines(proc_cgroup)) {
    if (l.controllers.empty()) {
      limit =
          std::min(limit, detail::lowest_on_the_way_up(cgroup_root, l.path, [](const std::string& dir) {
                     const std::string line = detail::first_line(dir + "/cpu.max");
                     const size_t space = line.find(' ');
                     if (space == std::string::npos) return UINT64_MAX;
                     return detail::cpus_of_quota(detail::count(std::string_view(line).substr(0, space)),
                                                  detail::count(std::string_view(line).substr(space + 1)));
                   }));
    } else if (detail::names(l.controllers, "cpu")) {
      for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"})
        limit = std::min(
            limit, detail::lowest_on_the_way_up(cgroup_root + mount, l.path, [](const std::string& dir) {
              return detail::cpus_of_quota(detail::count(detail::first_line(dir + "/cpu.cfs_quota_us")),
                                           detail::count(detail::first_line(dir + "/cpu.cfs_period_us")));
            }));
    }
  }
  return static_cast<unsigned>(std::max<uint64_t>(1, limit));
}

// The CPUs this process may use: those of its affinity mask (taskset, a cpuset cgroup), or fewer where a
// cgroup's CPU quota allows fewer (a container's --cpus); at least 1. The default of every thread count.
inline unsigned usable_cpus() {
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    cpus = std::min(cpus, static_cast<unsigned>(CPU_COUNT(&set)));
  return cpu_limit(detail::read_all("/proc/self/cgroup"), "/sys/fs/cgroup", cpus);
}

}  // namespace gdfs::machine
