// The data pass: reads every regular file once, in inode order, and turns it into pages.
//
// Logical page i of a file covers [i*P, min(size, (i+1)*P)). A page of zeros (a hole, or real zero
// bytes) gets no PageEntry and goes into the file's hole runs instead; holes are found with
// SEEK_DATA/SEEK_HOLE, so a sparse file's holes are never read (files of one page are simply read, by
// the prefetcher's threads: prefetch.h). The last page, when partial and not
// zero, is the file's tail: it goes into the current tail pack, a page shared by the tails of several
// files. Every other page is a page job for the pipeline (pipeline.h), so a file's own entries are
// contiguous in the page table; tail packs are flushed only between files.
//
// Deduplication (unless --no-dedupe): a page whose hash128 and length match an earlier page is a
// candidate duplicate, confirmed byte for byte by the pipeline's writer. A tail identical to one
// already packed points at the same bytes, confirmed byte for byte here (against the current pack, or
// against the earlier pack read back from the image).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gdfs/format.h"
#include "options.h"
#include "pipeline.h"
#include "scan.h"
#include "tree.h"

namespace gdfs::mkfs {

class Base;
class Diag;
class ImageWriter;
class Progress;

// Where a regular file's data went: the payload of its Inode.
struct FileData {
  uint32_t first_page = 0;              // Inode::first_page
  uint32_t tail_entry = format::kNone;  // Inode::tail_entry
  uint32_t tail_offset = 0;             // Inode::tail_offset
  bool sparse = false;                  // has a SparseFile record
};

struct PackStats {
  uint64_t files = 0, file_bytes = 0;  // regular inodes and the sum of their sizes
  uint64_t hole_pages = 0;
  uint64_t tails = 0, tail_bytes = 0;  // tails copied into packs and their bytes
  uint64_t tail_packs = 0;
  uint64_t tail_dedupe_hits = 0;  // tails that share bytes already packed
  uint64_t base_tails = 0;        // tails found in the base image's tail packs (--base)
};

struct PackResult {
  std::vector<FileData> files;  // by inode number - 1 (meaningful for regular files only)
  std::vector<format::SparseFile> sparse;
  std::vector<format::HoleRun> runs;
  PipelineResult pages;
  PackStats stats;
  // Files whose data could not be read (skipped under --ignore-errors), as scan nodes, in inode order.
  std::vector<uint32_t> skipped;
  // Files whose size changed between the scan and their read: (scan node, bytes stored).
  std::vector<std::pair<uint32_t, uint64_t>> resized;
};

// Packs every regular file of `tree`. A file that cannot be read (it vanished, was replaced, a read
// failed) goes to `diag`: fatal unless --ignore-errors, else listed in `skipped`. Pages it had already
// sent to the pipeline stay in the page table, unreferenced: they may be written already. A file whose
// size changed is stored as read (cut at its scanned size if it grew), with a warning.
// `base`: the image to reuse pages and tails from (--base), or null.
PackResult pack_data(const Options& o, const ScanResult& scan, const Tree& tree, ImageWriter& image,
                     Diag& diag, Progress& progress, Base* base = nullptr);

// Makes the scan and the tree agree with what was packed: the sizes of resized files, the skipped files
// left out of their directories, and the inodes renumbered without them (FileData and SparseFile
// records follow). Removing files keeps the order of the others, so the data stays in inode order.
void apply_pack_changes(ScanResult& scan, Tree& tree, PackResult& pack);

}  // namespace gdfs::mkfs
