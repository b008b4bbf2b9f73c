// Creating entries of an image on the local filesystem, relative to open directory descriptors so that
// nothing already under the target directory (a symlink planted where a name will go) can redirect a
// write outside it. Errors are reported to `err` naming the local path and counted; extraction goes on.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gdfs/image.h"

namespace gdfs::inspect {

// Creates ".NAME.gdfs-tmp-XXXXXX" (NAME shortened to keep within NAME_MAX) in `dir_fd`, open for
// writing with mode 0600; `tmp` gets its name. -1 with errno set on failure. Used for every file that
// must appear under its real name only when complete: extracted files, and archives.
int create_temp(int dir_fd, const std::string& name, std::string& tmp);

class Restorer {
 public:
  // `root_fd` is the extraction directory; `root_path` its name for messages.
  Restorer(const Image& img, std::ostream& err, int root_fd, std::string root_path);

  // Creates the non-directory `name` in `dir_fd` (contents, owner, mode, xattrs, mtime), or a hardlink
  // to an earlier extracted name of the same inode. `rel` is its path under the root.
  void create(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel);
  // Makes (or reuses) directory `name` in `dir_fd` and opens it; -1 after reporting a failure.
  int make_dir(int dir_fd, std::string_view name, const std::string& rel);
  // Gives directory `fd` the metadata of `ino`. Called after its contents, so their creation does not
  // bump its mtime and a read-only mode does not stop them.
  void finish_dir(int fd, uint32_t ino, const std::string& rel);

  // Reports `what` failing on `rel` (with errno's text unless `error` is 0), counts it; returns false.
  bool fail(const std::string& rel, const std::string& what, int error);

  uint64_t failures() const { return failures_; }
  // The errno of a failure every later entry would repeat (the target is full or read-only), else 0: the
  // walk stops there instead of reporting each remaining entry.
  int stop_error() const { return stop_error_; }
  uint64_t entries() const { return entries_; }
  uint64_t file_bytes() const { return file_bytes_; }
  // The local path of the entry created last: where an extraction that had to stop stopped.
  std::string current() const { return local(current_); }

 private:
  bool write_file(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel);
  bool write_contents(int fd, uint32_t ino, const std::string& rel);
  bool make_special(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel);
  bool link_to_first(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel);
  // Owner, mode, xattrs and times, in that order: chown clears set-id bits and capabilities, and every
  // other change would bump the times. `fd` >= 0: through the open file; else `name` in `dir_fd`.
  bool set_metadata(int fd, int dir_fd, std::string_view name, uint32_t ino, const std::string& rel);
  bool set_xattrs(int fd, int dir_fd, std::string_view name, uint32_t ino, const std::string& rel);
  void warn_xattr(const std::string& rel, std::string_view key, int error);
  std::string local(const std::string& rel) const;

  const Image& img_;
  std::ostream& err_;
  int root_fd_;
  std::string root_path_;
  bool as_root_;
  PageDecoder dec_;
  std::vector<uint8_t> buf_;                              // file data on its way out
  std::unordered_map<uint32_t, std::string> first_name_;  // hardlinked inode -> where it was extracted
  std::set<std::string> xattr_warned_;                    // namespaces already warned about
  std::string current_;                                   // the entry being created (under the root)
  uint64_t failures_ = 0, entries_ = 0, file_bytes_ = 0;
  int stop_error_ = 0;
};

}  // namespace gdfs::inspect
