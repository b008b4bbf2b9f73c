#include "scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <unordered_map>

#include "diag.h"
#include "gdfs/format.h"
#include "gdfs/unique_fd.h"
#include "progress.h"
#include "source_hook.h"
#include "text.h"

namespace gdfs::mkfs {
namespace {

constexpr size_t kMaxXattrValue = 65536;  // XattrPair::value_len limit; Linux's own is the same

using DevIno = FileId;
struct DevInoHash {
  size_t operator()(const FileId& k) const {
    return std::hash<uint64_t>()(k.ino * 0x9E3779B97F4A7C15ull ^ k.dev);
  }
};

// Reads a symlink's target; st_size is only a hint (0 on some filesystems), so grow until it fits.
bool read_link(const std::string& path, std::string& target) {
  std::string buf(256, '\0');
  for (;;) {
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) return false;
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      target = std::move(buf);
      return true;
    }
    buf.resize(buf.size() * 2);
  }
}

// Where xattrs are read from: an open regular file (fd >= 0), else the path itself, not followed.
struct XattrSource {
  const std::string& path;
  int fd = -1;

  ssize_t list(char* buf, size_t size) const {
    return fd >= 0 ? ::flistxattr(fd, buf, size) : ::llistxattr(path.c_str(), buf, size);
  }
  ssize_t get(const char* key, void* buf, size_t size) const {
    return fd >= 0 ? ::fgetxattr(fd, key, buf, size) : ::lgetxattr(path.c_str(), key, buf, size);
  }
};

// The NUL-separated list of xattr names; an empty list where the filesystem has no xattrs.
bool list_xattrs(const XattrSource& from, std::string& names) {
  for (;;) {
    const ssize_t n = from.list(nullptr, 0);
    if (n < 0) return errno == ENOTSUP ? (names.clear(), true) : false;
    names.resize(static_cast<size_t>(n));
    if (n == 0) return true;
    const ssize_t m = from.list(names.data(), names.size());
    if (m >= 0) return names.resize(static_cast<size_t>(m)), true;
    if (errno != ERANGE) return false;  // ERANGE: the list grew in between; ask again
  }
}

enum class GetResult { kOk, kSkip, kError };

// One xattr value. Keys we may not read (trusted.* without privilege) or that vanished in between
// are skipped: we keep what we can read.
GetResult get_xattr(const XattrSource& from, const char* key, std::string& value) {
  for (;;) {
    ssize_t n = from.get(key, nullptr, 0);
    if (n >= 0) {
      value.resize(static_cast<size_t>(n));
      n = n == 0 ? 0 : from.get(key, value.data(), value.size());
      if (n >= 0) return value.resize(static_cast<size_t>(n)), GetResult::kOk;
    }
    if (errno == ERANGE) continue;
    if (errno == ENODATA || errno == EACCES || errno == EPERM || errno == ENOTSUP) return GetResult::kSkip;
    return GetResult::kError;
  }
}

class Scanner {
 public:
  Scanner(const Options& o, Diag& diag, Progress& progress, const std::vector<FileId>& exclude)
      : o_(o), diag_(diag), progress_(progress), exclude_(exclude) {}

  ScanResult run() {
    add_root();
    for (size_t i = 0; i < queue_.size(); ++i) read_dir(queue_[i]);
    return std::move(result_);
  }

 private:
  std::deque<ScanNode>& nodes() { return result_.nodes; }

  void add_root() {
    struct stat st {};
    const std::string path = full_path(o_, "");
    if (::stat(path.c_str(), &st) != 0) throw_io("read the source directory", o_.source, errno);
    if (!S_ISDIR(st.st_mode)) throw MkfsError(quote_path(o_.source) + " is not a directory");
    ScanNode root;
    if (!fill(root, st, AT_FDCWD, path))
      throw MkfsError(std::string("cannot read the source directory ") + quote_path(o_.source));
    nodes().push_back(std::move(root));
    queue_.push_back(0);
  }

  // Lists a directory and adds its entries, in name order. A directory that cannot be listed is left
  // out of the image (with --ignore-errors) rather than shown empty.
  void read_dir(uint32_t dir) {
    const std::string rel = nodes()[dir].path;
    if (const int error = source_fault(SourceOp::kListDir, rel))
      return skip_dir(dir, io_message("open directory", rel, error));
    DIR* d = ::opendir(full_path(o_, rel).c_str());
    if (d == nullptr) return skip_dir(dir, io_message("open directory", rel, errno));
    std::vector<std::string> names;
    for (;;) {
      errno = 0;
      const dirent* e = ::readdir(d);
      if (e == nullptr) break;
      const std::string_view name(e->d_name);
      if (name != "." && name != "..") names.emplace_back(name);
    }
    const int error = errno;
    if (error != 0) {
      ::closedir(d);
      return skip_dir(dir, io_message("read directory", rel, error));
    }
    // std::string compares with char_traits<char>, which orders bytes as unsigned char: memcmp order.
    std::sort(names.begin(), names.end());
    // Children are looked up relative to the open directory: one path component per call instead of
    // a walk from SOURCE_DIR, which on a tree of tiny files is most of the scan's time.
    try {
      for (std::string& name : names) add_child(dir, ::dirfd(d), std::move(name));
    } catch (...) {
      ::closedir(d);
      throw;
    }
    ::closedir(d);
  }

  void skip_dir(uint32_t dir, const std::string& message) {
    if (dir == 0) throw MkfsError(message);  // no image without its root
    diag_.skip_entry(message);
    nodes()[dir].skipped = true;
  }

  void add_child(uint32_t dir, int dir_fd, std::string name) {
    std::string rel = text::join_path(nodes()[dir].path, name);
    if (is_excluded(o_, rel, name)) return;
    if (name.size() > format::kMaxNameLen)
      return diag_.skip_entry(std::string("name too long: ") + quote_path(rel));
    if (const int error = source_fault(SourceOp::kStat, rel))
      return diag_.skip_entry(io_message("stat", rel, error));
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return diag_.skip_entry(io_message("stat", rel, errno));
    const DevIno id{st.st_dev, st.st_ino};
    if (std::find(exclude_.begin(), exclude_.end(), id) != exclude_.end()) return;  // our own output
    ++progress_.scanned;
    progress_.tick();
    const bool linkable = !S_ISDIR(st.st_mode) && st.st_nlink > 1;
    if (linkable) {
      if (const auto it = links_.find(id); it != links_.end()) {
        nodes()[dir].children.push_back({std::move(name), it->second});
        return;
      }
    }
    if (S_ISDIR(st.st_mode) && in_loop(dir, id))
      return diag_.skip_entry(std::string("directory loop at ") + quote_path(rel));
    ScanNode node;
    node.path = std::move(rel);
    node.parent = dir;
    if (!fill(node, st, dir_fd, name)) return;
    const auto index = static_cast<uint32_t>(nodes().size());
    if (index >= UINT32_MAX - 1) throw MkfsError("too many entries: an image holds at most 2^32 - 2 inodes");
    const bool is_dir = S_ISDIR(st.st_mode);
    nodes().push_back(std::move(node));
    nodes()[dir].children.push_back({std::move(name), index});
    if (linkable) links_.emplace(id, index);
    if (is_dir) queue_.push_back(index);
  }

  // A bind mount can make a directory its own descendant; walking into it would never end.
  bool in_loop(uint32_t dir, DevIno id) {
    for (uint32_t p = dir;; p = nodes()[p].parent) {
      if (nodes()[p].dev == id.dev && nodes()[p].ino == id.ino) return true;
      if (p == 0) return false;
    }
  }

  // Attributes, payload and xattrs of one entry, `name` in the directory `dir_fd`. False: the entry is
  // unreadable (already reported).
  bool fill(ScanNode& n, const struct stat& st, int dir_fd, const std::string& name) {
    n.mode = st.st_mode;
    n.uid = o_.uid.value_or(st.st_uid);
    n.gid = o_.gid.value_or(st.st_gid);
    n.dev = st.st_dev;
    n.ino = st.st_ino;
    set_mtime(o_, n, st.st_mtim.tv_sec, static_cast<uint32_t>(st.st_mtim.tv_nsec));
    const std::string path = full_path(o_, n.path);
    switch (st.st_mode & S_IFMT) {
      case S_IFREG: {
        // Open now so that an unreadable file is skipped before it gets an inode, not after. Its xattrs
        // are read through the descriptor: no second lookup of the path.
        const UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
        if (fd.get() < 0) return diag_.skip_entry(io_message("open", n.path, errno)), false;
        n.size = static_cast<uint64_t>(st.st_size);
        return read_xattrs(XattrSource{path, fd.get()}, n);
      }
      case S_IFLNK:
        if (!read_link(path, n.target))
          return diag_.skip_entry(io_message("read link", n.path, errno)), false;
        n.size = n.target.size();
        break;
      case S_IFCHR:
      case S_IFBLK:
        n.rdev_major = ::major(st.st_rdev);
        n.rdev_minor = ::minor(st.st_rdev);
        break;
      case S_IFDIR:
      case S_IFIFO:
      case S_IFSOCK:
        break;
      default:
        return diag_.skip_entry(std::string("unsupported file type: ") + quote_path(n.path)), false;
    }
    return read_xattrs(XattrSource{path, -1}, n);
  }

  bool read_xattrs(const XattrSource& from, ScanNode& n) {
    std::string names;
    if (!list_xattrs(from, names))
      return diag_.skip_entry(io_message("list the extended attributes of", n.path, errno)), false;
    for (size_t pos = 0; pos < names.size();) {
      const size_t end = std::min(names.find('\0', pos), names.size());
      std::string key = names.substr(pos, end - pos);
      pos = end + 1;
      if (key.empty()) continue;
      std::string value;
      const GetResult r = get_xattr(from, key.c_str(), value);
      if (r == GetResult::kSkip) continue;
      if (r == GetResult::kError)
        return diag_.skip_entry(io_message("read the extended attributes of", n.path, errno)), false;
      if (key.size() > format::kMaxNameLen || value.size() > kMaxXattrValue)
        return diag_.skip_entry(std::string("extended attribute too large on ") + quote_path(n.path)), false;
      n.xattrs.emplace_back(std::move(key), std::move(value));
    }
    std::sort(n.xattrs.begin(), n.xattrs.end());
    return true;
  }

  const Options& o_;
  Diag& diag_;
  Progress& progress_;
  const std::vector<FileId>& exclude_;
  ScanResult result_;
  std::vector<uint32_t> queue_;  // directories to list, in the order they were found
  std::unordered_map<DevIno, uint32_t, DevInoHash> links_;
};

}  // namespace

void set_mtime(const Options& o, ScanNode& n, int64_t sec, uint32_t nsec) {
  if (o.mtime) {
    sec = *o.mtime, nsec = 0;
  } else if (o.source_date_epoch && (sec > *o.source_date_epoch || (sec == *o.source_date_epoch && nsec))) {
    sec = *o.source_date_epoch, nsec = 0;
  }
  n.mtime_sec = sec;
  n.mtime_nsec = nsec;
}

bool is_excluded(const Options& o, const std::string& rel, const std::string& name) {
  for (const std::string& glob : o.excludes)
    if (::fnmatch(glob.c_str(), rel.c_str(), 0) == 0 || ::fnmatch(glob.c_str(), name.c_str(), 0) == 0)
      return true;
  return false;
}

std::string full_path(const Options& o, const std::string& rel) {
  // The trailing "/" makes the l*() calls on the root follow it if SOURCE_DIR is a symlink to a
  // directory; nothing below the root is ever followed.
  return rel.empty() ? o.source + "/" : o.source + "/" + rel;
}

ScanResult scan_tree(const Options& o, Diag& diag, Progress& progress, const std::vector<FileId>& exclude) {
  return Scanner(o, diag, progress, exclude).run();
}

}  // namespace gdfs::mkfs
