#include "diag.h"

#include <cstring>
#include <ostream>

#include "gdfs/printable.h"
#include "progress.h"

namespace gdfs::mkfs {

std::string display(std::string_view path) {
  return path.empty() ? "." : printable_name(path);
}

// Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "literal" + std::string&&.
std::string quote_path(std::string_view path) {
  std::string s = "'";
  s += display(path);
  s += '\'';
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
