// Errors and diagnostics. A fatal error is an MkfsError exception; an entry of the source tree that
// cannot be read goes through Diag, which makes it fatal too unless --ignore-errors asked to skip it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gdfs::mkfs {

class Progress;

// Anything that stops mkfs: the message is user-facing, without the "mkfs.gdfs: error: " prefix.
class MkfsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An error confined to one entry of the source tree, met after the scan: the file vanished, was
// replaced, or could not be read. The data pass leaves that entry out under --ignore-errors, where any
// other MkfsError (the image cannot be written, say) ends the run.
class EntryError : public MkfsError {
 public:
  using MkfsError::MkfsError;
};

// A path for a message: names are arbitrary bytes, so control bytes are shown as \xNN and can neither
// break the line nor drive the terminal. An empty relative path is the source root, shown as ".".
std::string display(std::string_view path);

// display(path) in single quotes, for messages.
std::string quote_path(std::string_view path);  // over 1 KiB: its two ends

// "cannot WHAT 'PATH': strerror(error)".
std::string io_message(std::string_view what, std::string_view path, int error);
[[noreturn]] void throw_io(std::string_view what, std::string_view path, int error);
// The same message as an EntryError.
[[noreturn]] void throw_entry_io(std::string_view what, std::string_view path, int error);

class Diag {
 public:
  Diag(std::ostream& err, bool ignore_errors, Progress& progress)
      : err_(err), ignore_errors_(ignore_errors), progress_(progress) {}

  // An entry that cannot be put in the image. Throws MkfsError(message) unless errors are ignored;
  // then the message is printed and the entry counted as skipped.
  void skip_entry(const std::string& message);
  void warn(const std::string& message);
  uint64_t skipped() const { return skipped_; }

 private:
  std::ostream& err_;
  bool ignore_errors_;
  Progress& progress_;
  uint64_t skipped_ = 0;
};

}  // namespace gdfs::mkfs
