// The data pass: reads every regular file once and turns it into pages. A directory build reads the
// files in packing order (pack_data, data_order.h); an archive build packs each member as the archive
// delivers it (StreamPacker), so its data is in archive order.
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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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
  // Files whose data could not be read (skipped under --ignore-errors), as scan nodes, in packing order.
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
// records follow). Removing files keeps the order of the others.
void apply_pack_changes(ScanResult& scan, Tree& tree, PackResult& pack);

// A regular file's bytes as an archive hands them over: data blocks at increasing offsets; the bytes
// between blocks, and after the last one up to the file's size, are holes.
class BlockSource {
 public:
  struct Block {
    uint64_t offset = 0;
    const uint8_t* data = nullptr;
    size_t size = 0;
  };
  virtual ~BlockSource() = default;
  // The next block, valid until the next call; false after the last. Throws EntryError when the data
  // cannot be read.
  virtual bool next(Block& b) = 0;
};

class Packer;

// The data pass of an archive build. Files come in archive order and each is packed as it is read,
// with the same page, hole, tail and dedupe rules as pack_data; FileData is kept by scan node until the
// archive ends and the inodes are numbered.
class StreamPacker {
 public:
  // `base`: as for pack_data.
  StreamPacker(const Options& o, ImageWriter& image, Diag& diag, Progress& progress, Base* base = nullptr);
  ~StreamPacker();
  StreamPacker(const StreamPacker&) = delete;
  StreamPacker& operator=(const StreamPacker&) = delete;

  // Packs the data of scan node `node` (`n`) from `src`, replacing any data packed for it before (a
  // hard link that carries the data again, as cpio writes them). Returns the file's size: `size` when
  // the archive declares one (a trailing hole included), else the end of the data. Throws EntryError
  // if the data cannot be read, and then the node keeps what it had.
  uint64_t pack(uint32_t node, const ScanNode& n, BlockSource& src, std::optional<uint64_t> size);

  // After the last member, with the inodes numbered: the page table, and FileData and SparseFile
  // records by inode. Data packed for members that were superseded or skipped stays in the page table
  // unreferenced.
  PackResult finish(const ScanResult& scan, const Tree& tree);

 private:
  std::unique_ptr<Packer> p_;
};

}  // namespace gdfs::mkfs
