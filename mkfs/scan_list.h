// Listing the source tree's directories ahead of the scan, on several threads. Listing a directory is
// the system calls of its entries: an lstat each, and, for an entry that becomes a node, its open,
// xattrs or symlink target. On a tree of small files those calls are the whole scan, and on one thread
// they left every other core idle (0.41 s of a 1.6 s rebuild of the Linux tree).
//
// The scan (scan.cc) takes the listings strictly in the order it queued their directories and makes
// every decision that depends on order itself (hard links, directory loops, which messages are printed
// and when), so the scan's result and its messages do not depend on the thread count.
#pragma once

#include <sys/stat.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "options.h"
#include "scan.h"

namespace gdfs::mkfs {

// One entry of a directory as a lister thread found it.
struct ListedEntry {
  std::string name;
  bool excluded = false;  // left out without a message: --exclude, or our own output file
  std::string error;      // left out with this message: a name too long, or no lstat
  struct stat st {};      // the entry's lstat, unless excluded or error
  // The node it becomes (path, attributes, payload and xattrs), unless fill_error says why it cannot
  // be read. A hard link of a node made earlier takes neither: it shares that node.
  ScanNode node;
  std::string fill_error;
};

// A directory's entries in name order (memcmp order), or why it could not be listed.
struct Listing {
  std::string error;
  std::vector<ListedEntry> entries;
};

// Fills a node's attributes, payload and xattrs from `st`, the entry `name` in the open directory
// `dir_fd` (AT_FDCWD with a full path for the root). Returns "" or the message it is skipped with.
std::string fill_node(const Options& o, ScanNode& n, const struct stat& st, int dir_fd,
                      const std::string& name);

class Lister {
 public:
  // `exclude`: files left out by (st_dev, st_ino). `threads` >= 1 listing threads.
  Lister(const Options& o, const std::vector<FileId>& exclude, unsigned threads);
  ~Lister();  // stops and joins the threads, wherever they are
  Lister(const Lister&) = delete;
  Lister& operator=(const Lister&) = delete;

  // Queues the directory at `rel` (relative to SOURCE_DIR) for listing.
  void add(std::string rel);
  // The listing of the oldest queued directory not yet taken; waits for it. Rethrows what its thread
  // hit (no memory, say). At least one directory must be queued and not taken.
  Listing take();

  // Directories listed ahead of take(): enough to keep the threads busy, and a bound on the memory
  // that listings waiting to be taken hold.
  static constexpr size_t kAhead = 64;

 private:
  struct Slot {
    std::string rel;
    Listing listing;
    std::exception_ptr error;
    bool ready = false;
  };
  void run();
  void stop();
  Listing list(const std::string& rel) const;
  ListedEntry entry(int dir_fd, const std::string& dir_rel, std::string name) const;

  const Options& o_;
  const std::vector<FileId>& exclude_;

  std::mutex mu_;
  std::condition_variable work_cv_;   // threads: a directory to list, or stopping
  std::condition_variable ready_cv_;  // take(): the oldest slot became ready
  std::deque<Slot> slots_;            // queued and not taken; slots_[0] is directory number taken_
  size_t taken_ = 0, claimed_ = 0;    // directories taken, and claimed by a thread (numbers from 0)
  bool stopping_ = false;

  std::vector<std::thread> threads_;
};

}  // namespace gdfs::mkfs
