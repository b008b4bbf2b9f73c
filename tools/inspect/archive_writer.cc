#include "archive_writer.h"

#include <archive.h>
#include <archive_entry.h>

#include <ostream>
#include <stdexcept>
#include <utility>

namespace gdfs::inspect {
namespace {

// libarchive's write callback for an ostream: `client` is the stream.
la_ssize_t write_stream(archive* a, void* client, const void* buf, size_t n) {
  auto& out = *static_cast<std::ostream*>(client);
  if (!out.write(static_cast<const char*>(buf), static_cast<std::streamsize>(n))) {
    archive_set_error(a, EIO, "cannot write to the output");
    return -1;
  }
  return static_cast<la_ssize_t>(n);
}

int close_stream(archive* a, void* client) {
  if (static_cast<std::ostream*>(client)->flush()) return ARCHIVE_OK;
  archive_set_error(a, EIO, "cannot write to the output");
  return ARCHIVE_FATAL;
}

}  // namespace

ArchiveWriter::ArchiveWriter(std::string name) : a_(archive_write_new()), name_(std::move(name)) {
  if (a_ == nullptr) throw std::runtime_error("cannot start writing " + name_ + ": out of memory");
}

ArchiveWriter::ArchiveWriter(const ArchiveFormat& f, int fd, std::string name)
    : ArchiveWriter(std::move(name)) {
  configure(f);
  if (archive_write_open_fd(a_, fd) != ARCHIVE_OK) fail("cannot open");
}

ArchiveWriter::ArchiveWriter(const ArchiveFormat& f, std::ostream& out, std::string name)
    : ArchiveWriter(std::move(name)) {
  configure(f);
  if (archive_write_open2(a_, &out, nullptr, write_stream, close_stream, nullptr) != ARCHIVE_OK)
    fail("cannot open");
}

ArchiveWriter::~ArchiveWriter() {
  if (!finished_) archive_write_fail(a_);
  archive_write_free(a_);
}

void ArchiveWriter::configure(const ArchiveFormat& f) {
  if (archive_write_set_format_by_name(a_, f.format.c_str()) != ARCHIVE_OK)
    fail("cannot write the archive format " + f.format);
  // ARCHIVE_WARN: libarchive was built without this compressor and runs its program (zstd, xz) instead.
  if (f.filter != "none" && archive_write_add_filter_by_name(a_, f.filter.c_str()) < ARCHIVE_WARN)
    fail("cannot compress with " + f.filter);
  // Not on a tape: the last block need not be padded to 10 KiB (a file or pipe gets what it needs).
  archive_write_set_bytes_in_last_block(a_, 1);
}

int ArchiveWriter::format() const {
  return archive_format(a_);
}

std::string ArchiveWriter::describe() const {
  std::string s = archive_format_name(a_) ? archive_format_name(a_) : "?";
  // Filter 0 is the last one applied; the final "none" is the output itself.
  for (int i = archive_filter_count(a_) - 1; i >= 0; --i) {
    const char* name = archive_filter_name(a_, i);
    if (name != nullptr && std::string(name) != "none") s += std::string(", ") + name;
  }
  return s;
}

bool ArchiveWriter::keeps_holes() const {
  const int format = archive_format(a_);
  return format == ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE || format == ARCHIVE_FORMAT_TAR_PAX_RESTRICTED;
}

bool ArchiveWriter::header(archive_entry* e, std::string& why) {
  const int r = archive_write_header(a_, e);
  why = r == ARCHIVE_OK ? "" : archive_error_string(a_) ? archive_error_string(a_) : "unknown error";
  if (r == ARCHIVE_OK || r == ARCHIVE_WARN) return true;
  if (r == ARCHIVE_FAILED) return false;
  fail("cannot write the entry " + std::string(archive_entry_pathname(e)));
}

void ArchiveWriter::data(const void* p, size_t n) {
  const auto* bytes = static_cast<const char*>(p);
  while (n > 0) {
    const la_ssize_t put = archive_write_data(a_, bytes, n);
    if (put <= 0) fail("cannot write");
    bytes += put, n -= static_cast<size_t>(put);
  }
}

void ArchiveWriter::finish() {
  if (archive_write_close(a_) != ARCHIVE_OK) fail("cannot finish");
  finished_ = true;
}

void ArchiveWriter::fail(const std::string& what) const {
  const char* why = archive_error_string(a_);
  throw std::runtime_error(what + " " + name_ + (why ? std::string(": ") + why : ""));
}

}  // namespace gdfs::inspect
