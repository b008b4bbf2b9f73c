// Reading small files ahead of the packer. On a tree of many tiny files the data pass is an open, a
// read and a close per file: system calls, not compression, and on one thread they leave the other
// cores idle (and, on a cold cache, one read in flight). A few reader threads do them for the files of
// at most one page, in parallel and ahead, and the packer takes their bytes in packing order. Larger
// files go through the packer's own reads, which skip holes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "gdfs/unique_fd.h"
#include "options.h"
#include "scan.h"

namespace gdfs::mkfs {

// Opens a regular file of the tree for reading, checking that it is still the file the scan saw, and
// sets `size_now` to its size at this point. Throws EntryError if it cannot be opened or was replaced.
UniqueFd open_source(const Options& o, const ScanNode& n, uint64_t& size_now);
// Reads up to `n` bytes at `off` and returns how many it read: fewer only where the file ends, that is
// when it shrank since the scan. Throws EntryError on a read error.
size_t read_upto(int fd, uint64_t off, uint8_t* p, size_t n, const ScanNode& node);

class Prefetcher {
 public:
  // Reads `files` (each of size 1..page size) with `threads` threads, at most kWindow files ahead of
  // take(). No threads when `files` is empty.
  Prefetcher(const Options& o, std::vector<const ScanNode*> files, unsigned threads);
  ~Prefetcher();  // stops and joins the readers, wherever they are
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Swaps the bytes of the next file (in the order given) into `out`, waiting for them if needed, and
  // returns whether its size changed since the scan. A file that grew is cut at its scanned size; one
  // that shrank holds the bytes read. Rethrows the error its reader hit, so that errors surface in the
  // same order as without prefetch.
  bool take(std::vector<uint8_t>& out);

  // 256 files of at most 64 KiB: at most 16 MiB ahead, and plenty to keep every reader busy.
  static constexpr size_t kWindow = 256;
  static constexpr size_t kRoomStep = 32;  // take() wakes the readers every kRoomStep files

 private:
  struct Slot {
    std::vector<uint8_t> bytes;
    std::exception_ptr error;
    bool changed = false;  // the file's size changed since the scan
    bool ready = false;
  };
  void stop();
  void reader(size_t first, size_t step);
  bool read_file(const ScanNode& n, std::vector<uint8_t>& out) const;  // true: its size changed

  const Options& o_;
  const std::vector<const ScanNode*> files_;
  std::vector<Slot> slots_;  // file i lives in slots_[i % kWindow] between its read and its take()

  std::mutex mu_;
  std::condition_variable ready_cv_;  // take(): a slot became ready
  std::condition_variable room_cv_;   // readers: taken_ grew, or stopping
  size_t taken_ = 0;                  // files handed to take() so far
  bool stopping_ = false;

  std::vector<std::thread> threads_;
};

}  // namespace gdfs::mkfs
