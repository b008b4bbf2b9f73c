// Walking the directory tree of an image without recursion: a tree is as deep as the image says, and the
// image is untrusted, so the walk keeps its own stack.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gdfs/image.h"
#include "text.h"

namespace gdfs::inspect {

struct Entry {
  uint32_t parent;  // the directory that holds the entry
  uint32_t ino;
  std::string_view name;
  const std::string& path;  // the walk's prefix joined with every name down to this one
};

using text::join_path;

// Visits every entry below directory `start` in stored order, each directory's entries right after the
// directory's own entry. `enter` returns whether to descend into a directory; `leave(dir, path)` runs once
// all entries of a directory that was descended into (and of `start`) have been visited. Paths start with
// `prefix`.
using EnterFn = std::function<bool(const Entry&)>;
using LeaveFn = std::function<void(uint32_t dir, const std::string& path)>;
void walk(const Image& img, uint32_t start, const std::string& prefix, const EnterFn& enter,
          const LeaveFn& leave = nullptr);

// The first path (in walk order) of every inode reachable from the root, for naming inodes found by other
// means: the files using a broken page, the largest files.
class PathIndex {
 public:
  explicit PathIndex(const Image& img);
  // "/a/b"; "/" for the root; "(unreachable)" for an inode no directory names.
  std::string path(uint32_t ino) const;

 private:
  std::vector<uint32_t> parent_;        // per inode: the directory of its first name, 0 if none
  std::vector<std::string_view> name_;  // per inode: its first name
};

}  // namespace gdfs::inspect
