// The progress line: one line on the error stream, redrawn in place at most five times a second. Only
// drawn when enabled (the stream is a terminal and --quiet was not given); otherwise every call is cheap
// and prints nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>

namespace gdfs::mkfs {

class Progress {
 public:
  Progress(std::ostream& err, bool enabled);
  ~Progress();  // Does not print: call clear() (the summary follows on another stream).

  // Counters. The packer and the writer thread update them; only the packer's thread draws.
  std::atomic<uint64_t> scanned{0};     // entries seen by the tree walk
  std::atomic<uint64_t> files_done{0};  // regular files packed
  std::atomic<uint64_t> bytes_in{0};    // logical file bytes packed (holes included)
  std::atomic<uint64_t> bytes_out{0};   // page data bytes written

  void set_totals(uint64_t files, uint64_t bytes) { total_files_ = files, total_bytes_ = bytes; }
  void start_packing();  // switches from the scan line to the pack line and restarts the rate clock
  void tick();           // redraws if enabled and 200 ms have passed since the last redraw
  void clear();          // erases the line, so that a message can follow on a clean line

 private:
  void draw();

  std::ostream& err_;
  bool enabled_;
  bool packing_ = false;
  bool drawn_ = false;
  uint64_t total_files_ = 0, total_bytes_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace gdfs::mkfs
