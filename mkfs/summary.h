// What mkfs did, printed at the end: a few aligned lines of text, or one JSON object (--json).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace gdfs::mkfs {

struct Summary {
  std::string image;
  uint64_t files = 0, dirs = 0, symlinks = 0, others = 0;  // inodes by type (others: devices, fifos, sockets)
  uint64_t hardlinks = 0;  // directory entries naming an inode an earlier entry named
  uint64_t skipped = 0;    // entries left out by --ignore-errors
  uint64_t bytes_in = 0;   // sum of regular file sizes (each hard-linked file once)
  uint64_t image_bytes = 0;
  uint64_t pages_gdeflate = 0, pages_stored = 0;  // page entries with their own data, tail packs included
  uint64_t pages_bitpack = 0;
  uint64_t pages_x86 = 0;  // of pages_gdeflate, those with the x86 branch filter
  uint64_t hole_pages = 0;
  uint64_t deduped_pages = 0, dedup_bytes = 0, dedup_stored_bytes = 0;
  uint64_t tails = 0, tail_packs = 0, tail_bytes = 0, tail_dedupe_hits = 0;
  uint64_t reused_pages = 0, reused_bytes = 0, reused_stored_bytes = 0;  // --base: entries of OLD reused
  uint64_t base_tails = 0;          // --base: file tails found in OLD's tail packs
  uint64_t base_indexed_tails = 0;  // --base: OLD's tails indexed by content (0: every path was OLD's)
  uint64_t metadata_bytes = 0;
  double seconds = 0;

  double ratio() const {
    return image_bytes ? static_cast<double>(bytes_in) / static_cast<double>(image_bytes) : 0;
  }
  double mb_per_s() const { return seconds > 0 ? static_cast<double>(bytes_in) / seconds / 1e6 : 0; }
};

void print_text(const Summary& s, std::ostream& out);
void print_json(const Summary& s, std::ostream& out);

}  // namespace gdfs::mkfs
