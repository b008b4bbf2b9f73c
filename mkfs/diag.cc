#include "diag.h"

#include <cstring>
#include <ostream>
#include <string>

#include "gdfs/printable.h"
#include "progress.h"

namespace gdfs::mkfs {

std::string display(std::string_view path) {
  return path.empty() ? "." : printable_name(path);
}

// Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "literal" + std::string&&. A path of
// over 1 KiB (a tree nearly too deep to be named, as when PATH_MAX made it fail) is shown by its two
// ends: one message must not fill a terminal.
std::string quote_path(std::string_view path) {
  constexpr size_t kLongest = 1024, kEnd = 256;
  std::string s = "'";
  if (path.size() <= kLongest) {
    s += display(path);
    s += '\'';
    return s;
  }
  s += display(path.substr(0, kEnd));
  s += "...";
  s += display(path.substr(path.size() - kEnd));
  s += "' (a path of ";
  s += std::to_string(path.size());
  s += " bytes)";
  return s;
}

std::string io_message(std::string_view what, std::string_view path, int error) {
  std::string s = "cannot ";
  s += what;
  s += ' ';
  s += quote_path(path);
  s += ": ";
  s += std::strerror(error);
  return s;
}

void throw_io(std::string_view what, std::string_view path, int error) {
  throw MkfsError(io_message(what, path, error));
}

void throw_entry_io(std::string_view what, std::string_view path, int error) {
  throw EntryError(io_message(what, path, error));
}

void Diag::skip_entry(const std::string& message) {
  if (!ignore_errors_) throw MkfsError(message);
  ++skipped_;
  progress_.clear();
  err_ << "mkfs.gdfs: error: " << message << " (skipped)\n";
}

void Diag::warn(const std::string& message) {
  progress_.clear();
  err_ << "mkfs.gdfs: warning: " << message << "\n";
}

}  // namespace gdfs::mkfs
