// One mounted image: a Reader (the library's read path: cache, fetch, decode, readahead) and the FUSE
// operations that serve it.
#pragma once
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/options.h"
#include "daemon/walk_push.h"
#include "gdfs/image.h"
#include "gdfs/mount_counters.h"
#include "gdfs/reader.h"

namespace gdfs::daemon {

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
  const DaemonOptions& options() const { return opt_; }
  // Set at init from the kernel's capabilities: open/opendir answer ENOSYS, after which the kernel
  // sends neither again (and caches file pages and listings as if keep_cache were set).
  bool zero_message_open = false;
  bool zero_message_opendir = false;
  std::string stats_json() const;  // the reader's counters and the daemon's store_ahead_* ones
  // Whether getxattr is answered (options().xattr; auto: when the image has any). Otherwise the daemon
  // answers ENOSYS once and the kernel asks no more: `ls -l` asks two xattrs of every file, a round trip
  // each (bench/results/2026-11-27-fuse-ls-l-xattr-zen5-vm.txt).
  bool xattrs() const {
    return opt_.xattr == XattrMode::kOn || (opt_.xattr == XattrMode::kAuto && image().has_xattrs());
  }
  double timeout() const { return 86400.0; }  // the image never changes: let the kernel cache

  // Pushes into the kernel's page cache (fuse_lowlevel_notify_store) after replying, through `se`:
  // - store-ahead: the rest of the image pages a read touched, so that the next 4 KiB of the same page
  //   needs no round trip. A push waits for the page's lock when a read of it is in flight, so at most
  //   `max_busy` request threads push at once (the others serve that read);
  // - walk-ahead (walk_push.h): the next files of a walk, from a thread of its own.
  // max_busy 0 (one request thread) turns both off, as do store_ahead=0 and walk_ahead=0 each.
  void enable_pushes(fuse_session* se, unsigned max_busy);
  // Whether a read of [off, off + size) of `ino` is to push the rest of its pages: not when it starts at
  // 0 or where the last read of the file ended. The kernel is then reading the file ahead itself, in
  // requests that fetch those bytes anyway (pushes raced them: bench/results/2026-11-26-fuse-store-*).
  // Records the read's end either way.
  bool want_store_ahead(uint32_t ino, uint64_t off, size_t size);
  // Pushes `rest` (of a read of inode `ino` just answered) in whole kernel pages, never past the end.
  void store_ahead(uint32_t ino, const PageRest& rest);
  // Walk-ahead (walk_push.h): after replying to a read from offset 0, push the files a walk reads next.
  void walk_ahead(uint32_t ino, uint64_t off) {
    if (walk_ && off == 0) walk_->on_first_read(ino);
  }
  // After replying to the listing request that found the end of a directory whose entries are numbered
  // from `first`.
  void walk_listed(uint32_t first, uint32_t count) {
    if (walk_) walk_->on_listed(first, count);
  }

 private:
  std::unique_ptr<Image> image_;  // until start() hands it to the reader
  DaemonOptions opt_;
  std::unique_ptr<Reader> reader_;

  // Pushes bytes [from, to) of the file, which `view` holds from file offset `at`, counted as store-ahead
  // or (`walk`) walk-ahead. 0, or libfuse's error (a negative errno).
  int push(uint32_t ino, const ReadView& view, uint64_t at, uint64_t from, uint64_t to, bool walk = false);
  // Walk-ahead pushes files up to one full request (kernel_readahead's 1 MiB) whole: each saves the
  // walker a round trip. Larger ones take several requests, which the kernel and the reader read ahead.
  static constexpr uint64_t kWalkMaxFile = 1 << 20;
  PushOutcome push_file(uint32_t ino);  // walk-ahead's push of one whole file
  fuse_session* store_se_ = nullptr;
  unsigned store_max_busy_ = 0;
  std::atomic<unsigned> store_busy_{0};
  // Where the last read of a file ended, by inode: a direct-mapped table, as the kernel may send no open
  // to hang it on. Two files sharing a slot only cost a push or a skip; nothing read is ever wrong.
  struct ReadEnd {
    std::atomic<uint32_t> ino{0};
    std::atomic<uint64_t> end{0};
  };
  std::array<ReadEnd, 1024> read_ends_;
  std::atomic<uint64_t> store_pushes_{0}, store_bytes_{0}, store_skipped_{0}, store_errors_{0};
  std::atomic<uint64_t> walk_files_{0}, walk_bytes_{0}, walk_refused_{0};
  std::unique_ptr<WalkPush> walk_;  // last: its thread pushes through the members above
};

// How far the kernel should read ahead of a sequential reader, for a daemon reading `readahead` ahead:
// one full request (1 MiB, libfuse's max_pages), less when the daemon reads ahead less. 0 for readahead=0:
// the kernel's own default stays.
inline uint64_t kernel_readahead(uint64_t readahead) {
  return readahead < (1u << 20) ? readahead : (1u << 20);
}

// The low-level operations; fuse_req_userdata() of every request is the Daemon.
const fuse_lowlevel_ops& daemon_ops();

// The gdfs command: parse, open and validate the image, mount, daemonize, serve, unmount.
int gdfs_main(int argc, char** argv);

}  // namespace gdfs::daemon
