// Running the gdfs daemon under test: start it on an image, wait until the mount is live, unmount it and
// check that the process exited cleanly (a sanitizer report in the daemon fails the test that way).
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace gdfs::test {

// Why FUSE mounts cannot run here ("" when they can): no /dev/fuse, no fusermount3.
std::string fuse_unavailable();

// True when `dir` is a gdfs mount point (per /proc/self/mountinfo).
bool is_gdfs_mount(const std::string& dir);
// How many fuse.gdfs mounts /proc/self/mountinfo lists at `dir` (dead ones stacked under a live one too).
int gdfs_mount_count(const std::string& dir);

class Mount {
 public:
  // Starts `gdfs -f [-o OPTS] IMAGE DIR` with its stderr in a log file and waits (up to 30 s) for
  // the mount. On failure, error() says why and the log holds the daemon's output.
  Mount(const std::string& image, const std::string& dir, const std::string& opts = "");
  ~Mount();  // unmounts if still mounted
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }
  pid_t pid() const { return pid_; }
  bool alive() const;
  std::string log() const;  // everything the daemon wrote to stderr so far
  // fusermount3 -u, then waits up to 30 s for the daemon to exit. Returns its exit status (or -1 on a
  // signal or timeout, after killing it).
  int unmount();
  // Waits up to 30 s for the daemon to exit after something else ended it (a signal).
  int wait_exit();

 private:
  std::string dir_, log_path_, error_;
  pid_t pid_ = -1;
  bool waited_ = false;
  int status_ = -1;
};

// Runs a command (argv[0] looked up in PATH) and returns its exit status; stdout+stderr into `output`.
int run_command(const std::vector<std::string>& argv, std::string* output = nullptr);

// Processes whose command line contains every one of `needles` (the daemon after it daemonized).
std::vector<pid_t> find_processes(const std::vector<std::string>& needles);

// The daemon under test, set by CMake.
inline const char* gdfs_binary() {
  return GDFS_BINARY;
}

}  // namespace gdfs::test
