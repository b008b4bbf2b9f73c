#include "archive_writer.h"

#include <archive.h>
#include <archive_entry.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <utility>

namespace gdfs::inspect {

// Where libarchive's output goes: a descriptor or a stream. Once the archive is abandoned, output is
// dropped: closing the archive then frees everything (libarchive 3.6 leaks its buffers when an archive
// is freed unclosed) but writes no trailer, so a cut stream never looks complete.
struct ArchiveWriter::Sink {
  std::ostream* out = nullptr;
  int fd = -1;
  bool abandoned = false;

  bool write(const char* p, size_t n) const {
    if (out != nullptr) return static_cast<bool>(out->write(p, static_cast<std::streamsize>(n)));
    while (n > 0) {
      const ssize_t put = ::write(fd, p, n);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return false;
      p += put, n -= static_cast<size_t>(put);
    }
    return true;
  }
  bool flush() const { return out == nullptr || static_cast<bool>(out->flush()); }
};

namespace {

la_ssize_t write_sink(archive* a, void* client, const void* buf, size_t n) {
  const auto& sink = *static_cast<const ArchiveWriter::Sink*>(client);
  if (sink.abandoned) return static_cast<la_ssize_t>(n);
  const int error = errno;
  if (sink.write(static_cast<const char*>(buf), n)) return static_cast<la_ssize_t>(n);
  const int code = errno != error ? errno : EIO;
  archive_set_error(a, code, "%s", std::strerror(code));  // the message gives the reason: "No space left ..."
  return -1;
}

int close_sink(archive* a, void* client) {
  const auto& sink = *static_cast<const ArchiveWriter::Sink*>(client);
  if (sink.abandoned || sink.flush()) return ARCHIVE_OK;
  archive_set_error(a, EIO, "%s", std::strerror(EIO));
  return ARCHIVE_FATAL;
}

}  // namespace

ArchiveWriter::ArchiveWriter(const ArchiveFormat& f, int fd, std::string name)
    : ArchiveWriter(f, Sink{.fd = fd}, std::move(name)) {}

ArchiveWriter::ArchiveWriter(const ArchiveFormat& f, std::ostream& out, std::string name)
    : ArchiveWriter(f, Sink{.out = &out}, std::move(name)) {}

ArchiveWriter::ArchiveWriter(const ArchiveFormat& f, Sink sink, std::string name)
    : a_(archive_write_new()), sink_(std::make_unique<Sink>(sink)), name_(std::move(name)) {
  if (a_ == nullptr) throw std::runtime_error("cannot start writing " + name_ + ": out of memory");
  try {
    configure(f);
    if (archive_write_open2(a_, sink_.get(), nullptr, write_sink, close_sink, nullptr) != ARCHIVE_OK)
      fail("cannot open");
  } catch (...) {
    archive_write_free(a_);  // the destructor does not run for a constructor that throws
    throw;
  }
}

ArchiveWriter::~ArchiveWriter() {
  if (!finished_) {
    sink_->abandoned = true;
    archive_write_close(a_);  // pads the cut entry and adds the trailer, all dropped by the sink
  }
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
