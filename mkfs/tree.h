// Inode numbering. The root is inode 1; then the tree is numbered breadth-first in name order, so a
// directory's new children get consecutive numbers and directories are listed in inode order. A hard
// link keeps the number of its first sighting.
#pragma once

#include <cstdint>
#include <vector>

#include "scan.h"

namespace gdfs::mkfs {

struct Tree {
  std::vector<uint32_t> order;   // order[ino - 1] = node index
  std::vector<uint32_t> ino_of;  // node index -> inode number; 0 = not in the image (skipped)
  std::vector<uint32_t> links;   // node index -> directory entries naming it (root: 0)
  uint64_t hardlinks = 0;        // directory entries naming an inode that an earlier entry named

  uint32_t inode_count() const { return static_cast<uint32_t>(order.size()); }
};

Tree number_inodes(const ScanResult& scan);

// Children that are in the image (skipped directories and files are left out).
template <typename F>
void for_each_child(const ScanResult& scan, uint32_t dir, F&& f) {
  for (const Child& c : scan.nodes[dir].children)
    if (!scan.nodes[c.node].skipped) f(c);
}

}  // namespace gdfs::mkfs
