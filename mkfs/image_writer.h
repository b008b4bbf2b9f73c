// The image file. Everything is written to a temporary file beside IMAGE, which is renamed over IMAGE
// only once it is complete and synced: a failure, an exception or SIGINT/SIGTERM never leaves a
// partial image at IMAGE, and the temporary file is removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "gdfs/unique_fd.h"

#include "gdfs/format.h"
#include "scan.h"

namespace gdfs::mkfs {

class ImageWriter {
 public:
  // Creates the temporary file. Throws MkfsError if IMAGE exists and `force` is false, or if IMAGE is
  // a directory.
  ImageWriter(std::string image, bool force);
  ~ImageWriter();  // removes the temporary file unless commit() succeeded
  ImageWriter(const ImageWriter&) = delete;
  ImageWriter& operator=(const ImageWriter&) = delete;

  // Positioned I/O on the temporary file; both are safe to call from several threads at once. The file
  // starts empty, so any range never written reads as zeros (the padding between pages relies on it).
  void write_at(uint64_t offset, const void* data, size_t n);
  void read_at(uint64_t offset, void* data, size_t n) const;

  // Writes the metadata region at `meta_offset`, then the superblock (its sb_checksum filled in here)
  // with zeros up to kDataOffset, syncs, and renames the file to IMAGE.
  // A layered image's layer region, when not empty, goes at sb.layers_offset, and a signed image's
  // signature region at sb.sig_offset.
  void commit(format::Superblock sb, std::span<const uint8_t> meta, std::span<const uint8_t> layers = {},
              std::span<const uint8_t> signature = {});

  FileId temp_id() const;  // the temporary file, which the tree walk must not pick up

 private:
  std::string image_;
  std::string temp_;
  bool force_;
  UniqueFd fd_;
  bool committed_ = false;
};

// The (st_dev, st_ino) of an existing IMAGE (not followed: rename replaces a symlink itself), so that
// the tree walk can leave it out; {0, 0} if none.
FileId existing_file_id(const std::string& path);

}  // namespace gdfs::mkfs
