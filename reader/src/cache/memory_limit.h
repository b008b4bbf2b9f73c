// How much memory this process may use, for the default size of the decoded-page cache: physical
// memory, or less where the process's memory cgroup (or one above it) sets a lower limit, as a
// container's does. A cache sized from the host's memory alone gets a container killed.
#pragma once
#include <cstdint>
#include <string>

namespace gdfs::engine {

// The lowest of `physical` and every memory limit on the way from this process's cgroup up to the
// root: cgroup v2's memory.max and v1's memory.limit_in_bytes ("max" or a value of 2^62 and more is no
// limit). `proc_cgroup` is the text of /proc/self/cgroup; `cgroup_root` where the cgroup file systems
// are mounted (v2 there or, on a hybrid host, v1's memory controller in its memory/ folder). Files that
// are missing or hold anything else are no limit.
uint64_t memory_limit(const std::string& proc_cgroup, const std::string& cgroup_root, uint64_t physical);

// memory_limit() of this process: /proc/self/cgroup, /sys/fs/cgroup and the physical memory.
uint64_t memory_limit();

}  // namespace gdfs::engine
