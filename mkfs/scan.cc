#include "scan.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <unordered_map>

#include "diag.h"
#include "progress.h"
#include "scan_list.h"

namespace gdfs::mkfs {
namespace {

using DevIno = FileId;
struct DevInoHash {
  size_t operator()(const FileId& k) const {
    return std::hash<uint64_t>()(k.ino * 0x9E3779B97F4A7C15ull ^ k.dev);
  }
};

// The walk in breadth-first order: the root's entries, then each directory's in the order the
// directories were found. Listing is the Lister's threads' work; here each listing is taken in that
// order and its entries become nodes.
class Scanner {
 public:
  Scanner(const Options& o, Diag& diag, Progress& progress, const std::vector<FileId>& exclude)
      : o_(o), diag_(diag), progress_(progress), lister_(o, exclude, o.threads) {}

  ScanResult run() {
    add_root();
    for (size_t i = 0; i < queue_.size(); ++i) add_listing(queue_[i], lister_.take());
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
    if (!fill_node(o_, root, st, AT_FDCWD, path).empty())
      throw MkfsError(std::string("cannot read the source directory ") + quote_path(o_.source));
    nodes().push_back(std::move(root));
    queue_dir(0);
  }

  void queue_dir(uint32_t dir) {
    queue_.push_back(dir);
    lister_.add(nodes()[dir].path);
  }

  // A directory that cannot be listed is left out of the image (with --ignore-errors) rather than
  // shown empty; its node is already made.
  void add_listing(uint32_t dir, Listing listing) {
    if (!listing.error.empty()) {
      if (dir == 0) throw MkfsError(listing.error);  // no image without its root
      diag_.skip_entry(listing.error);
      nodes()[dir].skipped = true;
      return;
    }
    for (ListedEntry& e : listing.entries) add_child(dir, e);
  }

  void add_child(uint32_t dir, ListedEntry& e) {
    if (e.excluded) return;
    if (!e.error.empty()) return diag_.skip_entry(e.error);
    const DevIno id{e.st.st_dev, e.st.st_ino};
    ++progress_.scanned;
    progress_.tick();
    const bool linkable = !S_ISDIR(e.st.st_mode) && e.st.st_nlink > 1;
    if (linkable) {
      if (const auto it = links_.find(id); it != links_.end()) {
        nodes()[dir].children.push_back({std::move(e.name), it->second});
        return;
      }
    }
    const bool is_dir = S_ISDIR(e.st.st_mode);
    if (is_dir && in_loop(dir, id))
      return diag_.skip_entry(std::string("directory loop at ") + quote_path(e.node.path));
    if (!e.fill_error.empty()) return diag_.skip_entry(e.fill_error);
    const auto index = static_cast<uint32_t>(nodes().size());
    if (index >= UINT32_MAX - 1) throw MkfsError("too many entries: an image holds at most 2^32 - 2 inodes");
    e.node.parent = dir;
    nodes().push_back(std::move(e.node));
    nodes()[dir].children.push_back({std::move(e.name), index});
    if (linkable) links_.emplace(id, index);
    if (is_dir) queue_dir(index);
  }

  // A bind mount can make a directory its own descendant; walking into it would never end.
  bool in_loop(uint32_t dir, DevIno id) {
    for (uint32_t p = dir;; p = nodes()[p].parent) {
      if (nodes()[p].dev == id.dev && nodes()[p].ino == id.ino) return true;
      if (p == 0) return false;
    }
  }

  const Options& o_;
  Diag& diag_;
  Progress& progress_;
  ScanResult result_;
  std::vector<uint32_t> queue_;  // directories to list, in the order they were found
  std::unordered_map<DevIno, uint32_t, DevInoHash> links_;
  Lister lister_;  // last: its threads stop before the rest goes away
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

uint32_t node_mode(const Options& o, uint32_t mode) {
  return o.chmod ? apply_mode_change(*o.chmod, mode) : mode;
}

bool is_excluded(const Options& o, const std::string& rel, const std::string& name) {
  for (const std::string& glob : o.excludes)
    if (::fnmatch(glob.c_str(), rel.c_str(), 0) == 0 || ::fnmatch(glob.c_str(), name.c_str(), 0) == 0)
      return true;
  return false;
}

bool keeps_xattr(const Options& o, const char* key) {
  if (!o.xattrs) return false;
  for (const std::string& glob : o.xattr_excludes)
    if (::fnmatch(glob.c_str(), key, 0) == 0) return false;
  return true;
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
