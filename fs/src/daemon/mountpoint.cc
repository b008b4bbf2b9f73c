#include "daemon/mountpoint.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gdfs::daemon {
namespace {

namespace fs = std::filesystem;

// The absolute path of `path` as /proc/self/mountinfo names it. realpath() of a dead mount fails (its
// lstat answers ENOTCONN), so only the parent is resolved and the last component appended.
std::string mount_path(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();  // "dir/" -> "dir"
  if (p.is_relative()) p = fs::current_path() / p;
  std::error_code ec;
  const fs::path parent = fs::canonical(p.parent_path(), ec);
  if (ec || p.filename().empty() || p.filename() == "..") return p.lexically_normal().string();
  return (parent / p.filename()).string();
}

// mountinfo escapes space, tab, newline and backslash as a backslash and three octal digits.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out.push_back(static_cast<char>(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool is_dead(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) != 0 && errno == ENOTCONN;
}

// umount2(MNT_DETACH) as root; fusermount3 -u -z (setuid, checks the mount is the caller's) otherwise.
bool detach(const std::string& dir) {
  if (geteuid() == 0) return umount2(dir.c_str(), MNT_DETACH) == 0;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);  // its own messages would add lines to ours
    if (null >= 0) dup2(null, 2);
    execlp("fusermount3", "fusermount3", "-u", "-z", "--", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Calls fn(device) for each fuse.gdfs mount at `dir`, oldest first (mountinfo's order).
template <typename Fn>
void for_each_gdfs_mount(const std::string& dir, Fn&& fn) {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, devno, root, mnt;
    f >> id >> parent >> devno >> root >> mnt;
    if (unescape(mnt) == dir && line.find(" - fuse.gdfs ") != std::string::npos) fn(devno);
  }
}

}  // namespace

int gdfs_mounts_at(const std::string& dir) {
  int n = 0;
  for_each_gdfs_mount(dir, [&](const std::string&) { ++n; });
  return n;
}

std::string gdfs_mount_device(const std::string& dir) {
  std::string dev;
  for_each_gdfs_mount(dir, [&](const std::string& d) { dev = d; });
  return dev;
}

bool set_kernel_readahead(const std::string& dir, uint64_t bytes) {
  const std::string dev = gdfs_mount_device(dir);
  if (dev.empty()) return false;
  std::ofstream out("/sys/class/bdi/" + dev + "/read_ahead_kb");
  out << bytes / 1024 << std::flush;
  return bool(out);
}

bool clear_dead_mount(const std::string& mountpoint) {
  if (mountpoint.empty() || mountpoint.rfind("/dev/fd/", 0) == 0 || !is_dead(mountpoint)) return true;
  const std::string dir = mount_path(mountpoint);
  if (gdfs_mounts_at(dir) == 0) {  // someone else's dead FUSE mount: not ours to remove
    std::fprintf(stderr,
                 "gdfs: %s: a dead FUSE mount is there (transport endpoint not connected); "
                 "clear it with: fusermount3 -u %s\n",
                 mountpoint.c_str(), dir.c_str());
    return false;
  }
  // Dead mounts can be stacked (by older gdfs versions): detach until the directory answers again.
  for (int i = 0; i < 8 && is_dead(mountpoint) && gdfs_mounts_at(dir) > 0; ++i)
    if (!detach(dir)) break;
  if (is_dead(mountpoint)) {
    std::fprintf(stderr,
                 "gdfs: %s: a dead gdfs mount (its daemon is gone) cannot be cleared; "
                 "clear it with: fusermount3 -u %s\n",
                 mountpoint.c_str(), dir.c_str());
    return false;
  }
  std::fprintf(stderr, "gdfs: %s: cleared a dead gdfs mount left by a daemon that is gone\n",
               mountpoint.c_str());
  return true;
}

std::string mountpoint_problem(const std::string& mountpoint, const std::string& image) {
  if (mountpoint.rfind("/dev/fd/", 0) == 0) return "";  // an fd from a mount helper: nothing to check
  struct stat mnt;
  if (stat(mountpoint.c_str(), &mnt) != 0)
    return "bad mount point " + mountpoint + ": " + std::strerror(errno);
  struct stat img;
  // Mounting over the image hides it from everything after the daemon's own open: every later use
  // (a second mount, mkfs, a copy) would read the mount instead and get EIO.
  if (!image.empty() && stat(image.c_str(), &img) == 0 && img.st_dev == mnt.st_dev &&
      img.st_ino == mnt.st_ino)
    return "mount point " + mountpoint + " is the image itself; mount on a directory";
  if (!S_ISDIR(mnt.st_mode)) return "mount point " + mountpoint + " is not a directory";
  return "";
}

}  // namespace gdfs::daemon
