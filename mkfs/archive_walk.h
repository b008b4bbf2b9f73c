// The archive walk: mkfs.gdfs from a tar, cpio, zip, ... (anything libarchive reads, compressed or not),
// in one pass and without extracting. Each member's header becomes a scan node and its data is packed
// as it is read, so the data is in archive order; the inodes are numbered once the archive ends, the
// same way as for a directory (tree.h).
//
// Paths follow tar's extraction: a leading '/' is stripped (with one warning), '.' and empty components
// are dropped, a '..' component is an error. A later member of the same path replaces the earlier one
// (a directory over a directory only updates its attributes), a directory that no member names but a
// member's path implies is created with mode 0755, owner 0:0 (or --uid/--gid) and the image time as
// its mtime; a member "." or "./" gives the root its attributes. A member that cannot be put in the
// image (a bad path, a hard link to a missing member, a parent that is not a directory, truncated or
// corrupt data) goes to Diag: fatal unless --ignore-errors, else left out.
//
// (Named archive_walk, not archive: <archive.h> is libarchive's, and this directory is on the include
// path.)
#pragma once

#include <cstdint>
#include <vector>

#include "options.h"
#include "pack.h"
#include "scan.h"
#include "tree.h"

namespace gdfs::mkfs {

class Base;
class Diag;
class ImageWriter;
class Progress;

// The mtime an implied directory has until the image time is known: older than any real mtime, so
// that it never counts as the newest.
inline constexpr int64_t kImpliedMtime = INT64_MIN;

struct ArchiveBuild {
  ScanResult scan;
  Tree tree;
  PackResult pack;
  std::vector<uint32_t> implied;  // scan nodes of the implied directories, mtime still kImpliedMtime
};

// Whether SOURCE is an archive: "-" (standard input) or anything but a directory.
bool is_archive_source(const Options& o);

// Reads o.source as an archive and packs its data into `image` (reusing `base`'s pages, if not null).
ArchiveBuild read_archive(const Options& o, ImageWriter& image, Base* base, Diag& diag, Progress& progress);

}  // namespace gdfs::mkfs
