// One mounted image: the image, the read path behind it, the counters, and the FUSE operations that
// serve it.
#pragma once
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <memory>
#include <string>

#include "daemon/decoder.h"
#include "daemon/fetcher.h"
#include "daemon/options.h"
#include "daemon/page_cache.h"
#include "daemon/read_engine.h"
#include "daemon/stats.h"
#include "daemon/thread_pool.h"
#include "gdfs/image.h"

namespace gdfs::daemon {

// The xattr on the root directory that returns the counters as JSON. Not listed by listxattr, so
// archivers and tree comparisons see exactly the image's own xattrs.
inline constexpr const char* kStatsXattr = "user.gdfs.stats";

class Daemon {
 public:
  Daemon(std::unique_ptr<Image> image, DaemonOptions options);
  ~Daemon();
  // Threads, rings and the decoder are made here, after fuse_daemonize() forked: threads do not
  // survive a fork.
  void start();
  void stop();  // waits for readahead in flight; the session loop has ended

  const Image& image() const { return *image_; }
  ReadEngine& engine() { return *engine_; }
  ReadStateTable& read_states() { return read_states_; }
  // Set at init from the kernel's capabilities: open/opendir answer ENOSYS, after which the kernel
  // sends neither again (and caches file pages and listings as if keep_cache were set).
  bool zero_message_open = false;
  bool zero_message_opendir = false;
  Stats& stats() { return stats_; }
  std::string stats_json() const;
  double timeout() const { return 86400.0; }  // the image never changes: let the kernel cache

 private:
  const DecodeBackend* decoder() const { return gpu_decoder_ ? gpu_decoder_.get() : cpu_decoder_.get(); }

  std::unique_ptr<Image> image_;
  DaemonOptions opt_;
  Stats stats_;
  std::unique_ptr<PageCache> cache_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Fetcher> fetcher_;
  std::unique_ptr<DecodeBackend> cpu_decoder_;
  std::unique_ptr<DecodeBackend> gpu_decoder_;  // null: everything decodes on the CPU
  std::unique_ptr<ReadEngine> engine_;
  ReadStateTable read_states_;
};

// The low-level operations; fuse_req_userdata() of every request is the Daemon.
const fuse_lowlevel_ops& daemon_ops();

// The gdfs command: parse, open and validate the image, mount, daemonize, serve, unmount.
int gdfs_main(int argc, char** argv);

}  // namespace gdfs::daemon
