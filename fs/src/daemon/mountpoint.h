// Checks of the mount point made before anything is mounted: a dead gdfs mount left by a killed daemon
// is cleared (libfuse would otherwise fail on it, or fusermount3 would stack a new mount on it), and a
// mount point that is not a directory, the image itself above all, is refused.
#pragma once
#include <cstdint>
#include <string>

namespace gdfs::daemon {

// How many fuse.gdfs mounts /proc/self/mountinfo lists at the absolute path `dir` (dead ones may be
// stacked under each other, or under a live one).
int gdfs_mounts_at(const std::string& dir);

// The device ("0:42") of the newest fuse.gdfs mount at the absolute path `dir`: the name of its
// backing_dev_info under /sys/class/bdi. "" when there is none.
std::string gdfs_mount_device(const std::string& dir);

// Sets the kernel's readahead for the fuse.gdfs mount at `dir` to `bytes` (rounded down to KiB) through
// /sys/class/bdi/DEV/read_ahead_kb. Needs root; false when it could not.
bool set_kernel_readahead(const std::string& dir, uint64_t bytes);

// `mountpoint` as given on the command line. When it is a dead fuse.gdfs mount (stat says ENOTCONN and
// /proc/self/mountinfo lists fuse.gdfs there), detaches it and prints one line saying so. Returns false
// after printing why (and how to clear it by hand) when a dead mount is there and stays.
bool clear_dead_mount(const std::string& mountpoint);

// Returns "" when `mountpoint` is a directory that is not the local image `image` ("" or a URL: not
// compared), else the reason, one line without a "gdfs: " prefix.
std::string mountpoint_problem(const std::string& mountpoint, const std::string& image);

}  // namespace gdfs::daemon
