// Test trees for the image tests: building a source tree with every entry kind and edge case the format
// must preserve, and comparing two trees entry by entry (content, metadata, links, xattrs, holes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gdfs::test {

// A fresh directory under the build tree's temp area, removed (recursively) by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// What the current process may create: device nodes and foreign owners need root, user xattrs need a
// filesystem that takes them. Missing capabilities are skipped by the builder and reported by `notes`.
struct TreeCaps {
  bool root = false;
  bool xattrs = false;
  std::vector<std::string> notes;  // what was skipped and why
};

// Builds the edge-case tree at `dir` (which must exist and be empty): empty and tiny files, files of
// exactly one page, one page plus one byte, several pages plus a tail, duplicate files, zero pages,
// a 5 GiB sparse file with data past 4 GiB, 2,000 tiny files, symlinks (relative, absolute, dangling,
// long), a hardlink group, devices, a fifo, a socket, xattrs, odd names (255 bytes, newline, 0xff),
// special mode bits, foreign owners, nanosecond and pre-1970 mtimes, an empty and a deep directory.
TreeCaps make_edge_tree(const std::string& dir);

// Writes `n` bytes of deterministic, moderately compressible data (text-like) to `path`.
void write_text_file(const std::string& path, uint64_t n, uint32_t seed);
void write_file(const std::string& path, const std::string& bytes);

// The whole file at `path`.
std::string read_text(const std::string& path);
// Bytecode-like bytes that repeat the source's lines (as a .pyc repeats its module's names, strings
// and docstrings), between bytes of its own.
std::string fake_bytecode(const std::string& source, uint32_t seed);
// `modules` modules of about 10 KB in ROOT/pkg/, each with its bytecode in pkg/__pycache__ named as
// CPython names it (`matching`) or not.
void make_python_package(const std::string& root, int modules, bool matching);

// Compares trees `a` and `b`: the same entries, and for each the type, mode, owner (if `owners`),
// size, mtime (seconds and nanoseconds), symlink target, device numbers, xattrs (if `xattrs`),
// content (reading only data segments of sparse files), hardlink groups, and that files sparse in `a`
// are sparse in `b`. Returns one line per difference; empty means equal.
std::vector<std::string> compare_trees(const std::string& a, const std::string& b, bool owners, bool xattrs);
// The lines of compare_trees (or any list) as one text, a line each: for a test's failure message.
std::string join_lines(const std::vector<std::string>& lines);

}  // namespace gdfs::test
