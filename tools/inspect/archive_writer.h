// A libarchive writer that owns its `archive` object and turns libarchive's status codes into our
// conventions: fatal problems throw, entries the format cannot hold are reported and skipped.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>

#include "archive_format.h"

struct archive;
struct archive_entry;

namespace gdfs::inspect {

class ArchiveWriter {
 public:
  // Writes `f` to descriptor `fd` (not owned), or to `out` (standard output, or a test's buffer). `name`
  // names the archive in messages. Throws when libarchive does not have the format or the filter.
  ArchiveWriter(const ArchiveFormat& f, int fd, std::string name);
  ArchiveWriter(const ArchiveFormat& f, std::ostream& out, std::string name);
  // Without finish(), the archive is abandoned: nothing more is written (no end-of-archive trailer), so
  // a reader of a stream cut short by an error sees a truncated archive, never a complete-looking one.
  ~ArchiveWriter();
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  // libarchive's code of the format being written (ARCHIVE_FORMAT_*), for its hardlink resolver.
  int format() const;
  // libarchive's name of the format and filters, for the summary: "POSIX pax interchange", "gzip".
  std::string describe() const;
  // True when the format can keep sparse maps (pax): holes are then not written as zeros.
  bool keeps_holes() const;
  // Writes the header of `e`. False when the format cannot hold this entry (a fifo in zip, a socket in
  // tar): `why` says so and nothing was written. Warnings (a name not convertible to UTF-8) go to `why`
  // too, with true. Throws on fatal errors.
  bool header(archive_entry* e, std::string& why);
  // Appends `n` bytes of the current entry's data. Throws on failure.
  void data(const void* p, size_t n);
  // Writes the trailer and flushes (and closes nothing we own). Throws on failure.
  void finish();

  struct Sink;  // where the bytes go (archive_writer.cc)

 private:
  ArchiveWriter(const ArchiveFormat& f, Sink sink, std::string name);
  void configure(const ArchiveFormat& f);
  [[noreturn]] void fail(const std::string& what) const;

  archive* a_;
  std::unique_ptr<Sink> sink_;  // libarchive holds its address
  std::string name_;
  bool finished_ = false;
};

}  // namespace gdfs::inspect
