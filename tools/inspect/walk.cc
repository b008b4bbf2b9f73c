#include "walk.h"

#include <algorithm>

#include "util.h"

namespace gdfs::inspect {

void walk(const Image& img, uint32_t start, const std::string& prefix, const EnterFn& enter,
          const LeaveFn& leave) {
  struct Frame {
    uint32_t dir;
    size_t next;      // the next dirent to visit
    size_t path_len;  // length of `path` naming this directory
  };
  std::string path = prefix;
  std::vector<Frame> stack{{start, 0, path.size()}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    const auto ents = img.dirents(top.dir);
    if (top.next == ents.size()) {
      path.resize(top.path_len);
      const uint32_t done = top.dir;
      stack.pop_back();
      if (leave) leave(done, path);
      continue;
    }
    const format::Dirent& d = ents[top.next++];
    path.resize(top.path_len);
    const std::string_view name = img.name(d);
    if (!path.empty() && path.back() != '/') path += '/';
    path += name;
    const bool descend = enter(Entry{top.dir, d.ino, name, path});
    // `top` may dangle after the push below; everything needed from it is read already.
    if (descend && img.type(d.ino) == format::kTypeDir) stack.push_back({d.ino, 0, path.size()});
  }
}

PathIndex::PathIndex(const Image& img) : parent_(img.inode_count() + 1, 0), name_(img.inode_count() + 1) {
  walk(img, format::kRootIno, "", [&](const Entry& e) {
    if (parent_[e.ino] != 0) return false;  // a further hardlink: keep the first name
    parent_[e.ino] = e.parent;
    name_[e.ino] = e.name;
    return true;
  });
}

std::string PathIndex::path(uint32_t ino) const {
  if (ino == format::kRootIno) return "/";
  if (ino >= parent_.size() || parent_[ino] == 0) return "(unreachable)";
  std::vector<std::string_view> parts;
  // Validation made the directory tree loop-free; the bound only guards against a bug here.
  for (uint32_t i = ino; i != format::kRootIno && parts.size() < parent_.size(); i = parent_[i])
    parts.push_back(name_[i]);
  std::string s;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) (s += '/') += *it;
  return s;
}

}  // namespace gdfs::inspect
