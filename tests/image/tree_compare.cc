// compare_trees: entry-by-entry comparison of a source tree and its extracted copy.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "tree_util.h"

namespace gdfs::test {

namespace fs = std::filesystem;

namespace {

// Relative paths of every entry under `root`, sorted. lstat-based: symlinks are never followed (a
// target of 1000 bytes would make a following stat fail with ENAMETOOLONG).
std::vector<std::string> entries(const std::string& root) {
  std::vector<std::string> out, dirs{""};
  while (!dirs.empty()) {
    const std::string rel = dirs.back();
    dirs.pop_back();
    for (auto& e : fs::directory_iterator(rel.empty() ? root : root + "/" + rel)) {
      const std::string child = (rel.empty() ? "" : rel + "/") + e.path().filename().string();
      out.push_back(child);
      struct stat st {};
      if (lstat(e.path().c_str(), &st) == 0 && S_ISDIR(st.st_mode)) dirs.push_back(child);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::string> xattrs_of(const std::string& path) {
  std::map<std::string, std::string> out;
  ssize_t n = llistxattr(path.c_str(), nullptr, 0);
  if (n <= 0) return out;
  std::string keys(static_cast<size_t>(n), '\0');
  n = llistxattr(path.c_str(), keys.data(), keys.size());
  for (size_t i = 0; n > 0 && i < static_cast<size_t>(n);) {
    std::string key(keys.c_str() + i);
    i += key.size() + 1;
    if (key.rfind("security.", 0) == 0) continue;  // set by the host (SELinux), not by the tree
    ssize_t len = lgetxattr(path.c_str(), key.c_str(), nullptr, 0);
    std::string value(len > 0 ? static_cast<size_t>(len) : 0, '\0');
    if (len > 0) lgetxattr(path.c_str(), key.c_str(), value.data(), value.size());
    out[key] = value;
  }
  return out;
}

// Data segments [start, end) of a file according to SEEK_DATA/SEEK_HOLE.
std::vector<std::pair<off_t, off_t>> data_segments(int fd, off_t size) {
  std::vector<std::pair<off_t, off_t>> segs;
  off_t pos = 0;
  while (pos < size) {
    off_t data = lseek(fd, pos, SEEK_DATA);
    if (data < 0) break;
    off_t hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0) hole = size;
    segs.push_back({data, hole});
    pos = hole;
  }
  return segs;
}

bool range_equal(int fa, int fb, off_t from, off_t to) {
  std::vector<char> a(1 << 20), b(1 << 20);
  for (off_t pos = from; pos < to;) {
    size_t n = static_cast<size_t>(std::min<off_t>(to - pos, static_cast<off_t>(a.size())));
    if (pread(fa, a.data(), n, pos) != static_cast<ssize_t>(n)) return false;
    if (pread(fb, b.data(), n, pos) != static_cast<ssize_t>(n)) return false;
    if (std::memcmp(a.data(), b.data(), n) != 0) return false;
    pos += static_cast<off_t>(n);
  }
  return true;
}

bool all_zero(int fd, off_t from, off_t to) {
  std::vector<char> buf(1 << 20);
  for (off_t pos = from; pos < to;) {
    size_t n = static_cast<size_t>(std::min<off_t>(to - pos, static_cast<off_t>(buf.size())));
    if (pread(fd, buf.data(), n, pos) != static_cast<ssize_t>(n)) return false;
    if (std::any_of(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n), [](char c) { return c != 0; }))
      return false;
    pos += static_cast<off_t>(n);
  }
  return true;
}

// Content equality that reads only what is data in `a`: the gaps between a's data segments must read
// as zeros in `b`, checked through b's own data segments (so a 5 GiB sparse file costs little).
std::string compare_content(const std::string& pa, const std::string& pb, off_t size) {
  int fa = open(pa.c_str(), O_RDONLY), fb = open(pb.c_str(), O_RDONLY);
  std::string diff;
  if (fa < 0 || fb < 0) {
    diff = "cannot open";
  } else {
    auto sa = data_segments(fa, size);
    for (auto [from, to] : sa)
      if (!range_equal(fa, fb, from, to)) diff = "content differs";
    for (auto [from, to] : data_segments(fb, size)) {  // b's data outside a's data must be zeros
      off_t pos = from;
      for (auto [af, at] : sa) {
        if (at <= pos || af >= to) continue;
        if (af > pos && !all_zero(fb, pos, af)) diff = "content differs in a hole";
        pos = std::max(pos, at);
      }
      if (pos < to && !all_zero(fb, pos, to)) diff = "content differs in a hole";
    }
  }
  if (fa >= 0) close(fa);
  if (fb >= 0) close(fb);
  return diff;
}

}  // namespace

std::vector<std::string> compare_trees(const std::string& a, const std::string& b, bool owners, bool xattrs) {
  std::vector<std::string> diffs;
  auto ea = entries(a), eb = entries(b);
  if (ea != eb) {
    std::vector<std::string> only;
    std::set_symmetric_difference(ea.begin(), ea.end(), eb.begin(), eb.end(), std::back_inserter(only));
    for (auto& p : only) diffs.push_back("only in one tree: " + p);
    return diffs;
  }
  std::map<ino_t, std::string> group_a;         // source inode -> first path
  std::map<std::string, std::string> first_of;  // path -> first path of its hardlink group
  ea.insert(ea.begin(), "");                    // the roots themselves
  for (const std::string& rel : ea) {
    const std::string pa = rel.empty() ? a : a + "/" + rel, pb = rel.empty() ? b : b + "/" + rel;
    struct stat sa {
    }, sb{};
    lstat(pa.c_str(), &sa);
    lstat(pb.c_str(), &sb);
    auto differ = [&](const std::string& what) { diffs.push_back(rel + ": " + what); };
    if (sa.st_mode != sb.st_mode) differ("mode");
    if (owners && (sa.st_uid != sb.st_uid || sa.st_gid != sb.st_gid)) differ("owner");
    if (sa.st_mtim.tv_sec != sb.st_mtim.tv_sec || sa.st_mtim.tv_nsec != sb.st_mtim.tv_nsec) differ("mtime");
    if (xattrs && xattrs_of(pa) != xattrs_of(pb)) differ("xattrs");
    if (S_ISDIR(sa.st_mode)) continue;
    if (sa.st_size != sb.st_size) differ("size");
    if (S_ISLNK(sa.st_mode) && fs::read_symlink(pa) != fs::read_symlink(pb)) differ("symlink target");
    if ((S_ISCHR(sa.st_mode) || S_ISBLK(sa.st_mode)) &&
        (major(sa.st_rdev) != major(sb.st_rdev) || minor(sa.st_rdev) != minor(sb.st_rdev)))
      differ("device numbers");
    if (!S_ISREG(sa.st_mode)) continue;
    // Hardlinks: paths sharing an inode in `a` must share one in `b`, and no others.
    auto [it, fresh] = group_a.emplace(sa.st_ino, rel);
    first_of[rel] = it->second;
    struct stat sfirst {};
    lstat((b + "/" + it->second).c_str(), &sfirst);
    if (!fresh && sfirst.st_ino != sb.st_ino) differ("hardlink group broken");
    if (fresh && sa.st_nlink != sb.st_nlink) differ("link count");
    if (sa.st_size == sb.st_size) {
      std::string c = compare_content(pa, pb, sa.st_size);
      if (!c.empty()) differ(c);
    }
    // A file that is mostly holes in `a` must not be fully allocated in `b`.
    if (sa.st_blocks * 512 < sa.st_size / 4 && sb.st_blocks * 512 > sa.st_size / 2) differ("holes not kept");
  }
  return diffs;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

}  // namespace gdfs::test
