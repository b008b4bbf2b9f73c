// Writing test archives with libarchive: a tree in a chosen member order and format, or members made up
// one by one (for the bad-archive cases that no archiver writes from a real tree).
#pragma once
#include <archive.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gdfs::test {

// The entries of the tree at `dir` as mkfs numbers them: the root ("."), then breadth-first, each
// directory's entries in name (byte) order. Relative paths.
std::vector<std::string> inode_order(const std::string& dir);

struct ArchiveKind {
  int format;                // ARCHIVE_FORMAT_*
  std::vector<int> filters;  // ARCHIVE_FILTER_*, applied in order
};
inline const ArchiveKind kPax{ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, {}};  // pax headers on every member

// Writes the entries `paths` of the tree at `dir` into an archive at `out`, in that order: type, mode,
// owner, mtime with nanoseconds, symlink targets, device numbers, xattrs, hard links (the first path
// written carries the data, later ones are links to it) and holes (as a sparse map, which pax keeps).
// Throws std::runtime_error on failure.
void write_tree_archive(const std::string& dir, const std::vector<std::string>& paths, const std::string& out,
                        const ArchiveKind& kind);

// One made-up member for write_members.
struct Member {
  std::string path;
  char type = 'f';       // 'f' file, 'd' directory, 'l' symlink, 'h' hard link
  std::string data;      // file contents; symlink or hard-link target
  uint32_t mode = 0644;  // permission bits
  int64_t mtime = 1600000000;
};

// Writes `members` as an archive at `out` (by default a pax tar).
void write_members(const std::vector<Member>& members, const std::string& out,
                   const ArchiveKind& kind = kPax);

}  // namespace gdfs::test
