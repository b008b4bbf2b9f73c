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
#include <vector>

#include "gdfs/format.h"
#include "options.h"
#include "pipeline.h"
#include "scan.h"
#include "tree.h"

namespace gdfs::mkfs {

class ImageWriter;
class Progress;

// Where a regular file's data went: the payload of its Inode.
struct FileData {
  uint32_t first_page = 0;              // Inode::a
  uint32_t tail_entry = format::kNone;  // Inode::b: the tail pack's entry
  uint32_t tail_offset = 0;             // Inode::c
  bool sparse = false;                  // has a SparseFile record
};

struct PackStats {
  uint64_t files = 0, file_bytes = 0;  // regular inodes and the sum of their sizes
  uint64_t hole_pages = 0;
  uint64_t tails = 0, tail_bytes = 0;  // tails copied into packs and their bytes
  uint64_t tail_packs = 0;
  uint64_t tail_dedupe_hits = 0;  // tails that share bytes already packed
};

struct PackResult {
  std::vector<FileData> files;  // by inode number - 1 (meaningful for regular files only)
  std::vector<format::SparseFile> sparse;
  std::vector<format::HoleRun> runs;
  PipelineResult pages;
  PackStats stats;
};

PackResult pack_data(const Options& o, const ScanResult& scan, const Tree& tree, ImageWriter& image,
                     Progress& progress);

}  // namespace gdfs::mkfs
