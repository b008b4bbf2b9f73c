#include "tree.h"

#include <sys/stat.h>

namespace gdfs::mkfs {

Tree number_inodes(const ScanResult& scan) {
  Tree t;
  t.ino_of.assign(scan.nodes.size(), 0);
  t.links.assign(scan.nodes.size(), 0);
  t.order.push_back(0);
  t.ino_of[0] = 1;
  // `order` doubles as the breadth-first queue: directories are visited in inode order.
  for (size_t i = 0; i < t.order.size(); ++i) {
    const uint32_t dir = t.order[i];
    if (!S_ISDIR(scan.nodes[dir].mode)) continue;
    for_each_child(scan, dir, [&](const Child& c) {
      ++t.links[c.node];
      if (t.ino_of[c.node] != 0) {
        ++t.hardlinks;
        return;
      }
      t.order.push_back(c.node);
      t.ino_of[c.node] = static_cast<uint32_t>(t.order.size());
    });
  }
  return t;
}

}  // namespace gdfs::mkfs
