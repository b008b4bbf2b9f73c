// Which archive `extract --archive` writes: a libarchive format and compression filter, from --format and
// --compress, else from the archive's file name, else pax (what a pipe gets).
#pragma once

#include <string>
#include <vector>

namespace gdfs::inspect {

struct ArchiveFormat {
  std::string format;  // libarchive's writer name: "pax", "ustar", "gnutar", "newc", "zip", ...
  std::string filter;  // libarchive's filter name, or "none"
};

// The names --format and --compress accept (for the CLI's checks and --help).
const std::vector<std::string>& archive_format_names();
const std::vector<std::string>& archive_filter_names();

// `file` is the archive's path ("-" for standard output); `format` and `compress` are the options ("" when
// not given). "tar" and "posix" mean pax (the only tar that keeps nanoseconds, xattrs and holes), "cpio"
// means SVR4 "newc" (and "odc" the old portable one).
ArchiveFormat choose_archive_format(const std::string& file, const std::string& format,
                                    const std::string& compress);

}  // namespace gdfs::inspect
