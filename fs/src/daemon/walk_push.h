// Walk-ahead: while a reader walks the tree file by file (tar, rsync, cp -r, a data loader reading a
// directory in order), the daemon pushes the next small files whole into the kernel's page cache
// (fuse_lowlevel_notify_store), on a thread of its own. The reader then finds them there: no round trip
// into the daemon, and their pages were decoded on another core while it was busy with the last ones.
//
// The next files are the next inode numbers: mkfs numbers a directory's entries consecutively, in name
// order, which is the order a walker reads them (readdir lists them so). The kernel accepts a push only
// for an inode it knows, that is, one whose directory it has listed; the first push it refuses ends the
// window there (the walker has not reached that directory yet).
//
// A walk is recognised from the reads that still reach the daemon: a read from offset 0 of a file
// numbered a little after the last one read from offset 0, or inside the window already pushed, is a
// step, and each step doubles the window, up to kMaxFiles. A walk that descends into a subdirectory
// jumps to other numbers; when the kernel refused the last window's end (the walk had reached the end of
// its directory), the jump keeps the window's size. Any other jump starts over, and pushes nothing: a
// reader that reads files in random order (a data loader's epoch) costs no decode for files it does not
// read. During a walk, a directory the kernel has just listed is pushed from its first entry, before the
// walker reads it, so a walk's reads reach the daemon only for large files and where it outruns the
// pushes. A listing alone (ls, find) pushes nothing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace gdfs::daemon {

// Inodes [from, to) to push; empty when from >= to.
struct PushWindow {
  uint32_t from = 0, to = 0;
  bool empty() const { return from >= to; }
};

// Which inodes to push after each read that starts at offset 0. Not thread-safe (WalkPush locks).
class WalkDetector {
 public:
  static constexpr uint32_t kFirstStep = 4;   // files pushed after a walk's first step
  static constexpr uint32_t kMaxFiles = 256;  // a walk's window at most
  static constexpr uint32_t kGap = 16;  // a walk may step over this many inodes (directories, big files)

  // `inodes`: the image's inode count (inodes are 1..inodes).
  explicit WalkDetector(uint32_t inodes) : inodes_(inodes) {}
  // A read from offset 0 of `ino` arrived: the inodes to push now (after the ones already pushed).
  PushWindow on_first_read(uint32_t ino);
  // The kernel has listed a directory whose `count` entries are numbered from `first` (its last listing
  // request, at the end, has come: the kernel knows every entry). During a walk, its files are pushed
  // before the walker reads the first one.
  PushWindow on_listed(uint32_t first, uint32_t count);
  // Whether a read has come at or beyond `ino` since its window was made (it needs no push then).
  bool read_past(uint32_t ino) const { return last_ >= ino; }
  // The kernel refused a push in the window ending at `w.to` (it does not know that inode yet).
  void on_refused(PushWindow w) {
    if (w.to - 1 == until_) refused_ = true;  // the latest window only
  }

 private:
  uint32_t inodes_;
  uint32_t last_ = 0;     // the last inode read from offset 0
  uint32_t until_ = 0;    // pushes scheduled up to this inode
  uint32_t size_ = 0;     // the current window's size
  bool walking_ = false;  // the last read was a step of a walk
  bool refused_ = false;  // the latest window was cut short by the kernel
};

// Result of pushing one inode.
enum class PushOutcome {
  kPushed,   // in the kernel's page cache now
  kSkipped,  // not pushed (not a small regular file, or its pages failed their checks)
  kRefused,  // the kernel does not know the inode (or the mount is going): stop this window
};

// The thread that pushes the windows a WalkDetector asks for. `push` pushes one inode whole.
class WalkPush {
 public:
  WalkPush(uint32_t inodes, std::function<PushOutcome(uint32_t)> push);
  ~WalkPush();  // stops: the window in progress ends at its next inode
  WalkPush(const WalkPush&) = delete;
  WalkPush& operator=(const WalkPush&) = delete;

  // Called after replying to a read of `ino` from offset 0.
  void on_first_read(uint32_t ino);
  void on_listed(uint32_t first, uint32_t count);
  void stop();
  // Waits until every window asked for so far is done (tests).
  void drain();

 private:
  void run();
  void take(PushWindow w);  // with mu_ held

  std::function<PushOutcome(uint32_t)> push_;
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  WalkDetector detector_;
  PushWindow next_;  // inodes still to push, the next one first
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gdfs::daemon
