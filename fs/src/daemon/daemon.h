// One mounted image: a Reader (the library's read path: cache, fetch, decode, readahead) and the FUSE
// operations that serve it.
#pragma once
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <memory>
#include <string>

#include "daemon/options.h"
#include "gdfs/image.h"
#include "gdfs/reader.h"

namespace gdfs::daemon {

// The xattr on the root directory that returns the counters as JSON. Not listed by listxattr, so
// archivers and tree comparisons see exactly the image's own xattrs.
inline constexpr const char* kStatsXattr = "user.gdfs.stats";

class Daemon {
 public:
  Daemon(std::unique_ptr<Image> image, DaemonOptions options);
  ~Daemon();
  // The reader (threads, rings, the decoder) is made here, after fuse_daemonize() forked: threads and
  // a CUDA context do not survive a fork.
  void start();
  void stop();  // waits for readahead in flight; the session loop has ended

  const Image& image() const { return reader_ ? reader_->image() : *image_; }
  Reader& reader() { return *reader_; }  // from start() on
  // Set at init from the kernel's capabilities: open/opendir answer ENOSYS, after which the kernel
  // sends neither again (and caches file pages and listings as if keep_cache were set).
  bool zero_message_open = false;
  bool zero_message_opendir = false;
  std::string stats_json() const { return reader_ ? reader_->stats_json() : "{}"; }
  double timeout() const { return 86400.0; }  // the image never changes: let the kernel cache

 private:
  std::unique_ptr<Image> image_;  // until start() hands it to the reader
  DaemonOptions opt_;
  std::unique_ptr<Reader> reader_;
};

// The low-level operations; fuse_req_userdata() of every request is the Daemon.
const fuse_lowlevel_ops& daemon_ops();

// The gdfs command: parse, open and validate the image, mount, daemonize, serve, unmount.
int gdfs_main(int argc, char** argv);

}  // namespace gdfs::daemon
