// The tree walk: lstat every entry under SOURCE_DIR (never following symlinks), read directory
// listings, symlink targets and xattrs, and group hard links. Nothing is numbered here (tree.h does
// that) and no file data is read (pack.h does that).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "options.h"

namespace gdfs::mkfs {

class Diag;
class Progress;

using Xattrs = std::vector<std::pair<std::string, std::string>>;  // (key, value), sorted by key bytes

struct Child {
  std::string name;  // 1..255 bytes, no '/' and no NUL
  uint32_t node;     // index into ScanResult::nodes
};

// One inode of the source tree, its attributes already adjusted by --uid/--gid/--mtime and
// SOURCE_DATE_EPOCH. Hard links share one node.
struct ScanNode {
  uint32_t mode = 0;  // st_mode
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;  // regular files: st_size (the bytes stored, if it changed); symlinks: target length
  int64_t mtime_sec = 0;
  uint32_t mtime_nsec = 0;
  uint32_t rdev_major = 0, rdev_minor = 0;
  uint64_t dev = 0, ino = 0;  // st_dev/st_ino: a file must still be this one when its data is read
  uint32_t parent = 0;        // a directory's parent node (root: itself), for loop detection
  std::string path;           // relative to SOURCE_DIR, "" for the root: for open() and messages
  std::string target;         // symlink target bytes
  Xattrs xattrs;
  std::vector<Child> children;  // directories: sorted by name bytes (memcmp order)
  bool skipped = false;  // left out of the image: a directory that could not be listed, a file not read
};

struct ScanResult {
  // nodes[0] is the root. A deque: growing it never copies the nodes, where a vector's doubling would
  // briefly hold them twice (about 180 bytes a node, at a million files).
  std::deque<ScanNode> nodes;
};

// A file the walk leaves out, by (st_dev, st_ino): the old IMAGE or our temporary file, when they lie
// inside the tree.
struct FileId {
  uint64_t dev = 0, ino = 0;
  bool operator==(const FileId&) const = default;
};

// Walks o.source. Unreadable entries go to `diag` (fatal unless --ignore-errors); the root must be a
// readable directory.
ScanResult scan_tree(const Options& o, Diag& diag, Progress& progress, const std::vector<FileId>& exclude);

// Sets a node's mtime from the source's: --mtime wins; otherwise SOURCE_DATE_EPOCH caps it
// (reproducible-builds.org).
void set_mtime(const Options& o, ScanNode& n, int64_t sec, uint32_t nsec);

// A node's mode (type and permission bits) from the source's: --chmod applies.
uint32_t node_mode(const Options& o, uint32_t mode);

// Whether --exclude leaves out the entry at relative path `rel`, whose last component is `name`.
bool is_excluded(const Options& o, const std::string& rel, const std::string& name);
// Whether the xattr named `key` goes into the image (--no-xattrs, --exclude-xattr).
bool keeps_xattr(const Options& o, const char* key);

// The path to hand to system calls for a node's relative path.
std::string full_path(const Options& o, const std::string& rel);

}  // namespace gdfs::mkfs
