#include "archive_walk.h"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string_view>
#include <unordered_set>

#include "archive_input.h"
#include "diag.h"
#include "gdfs/format.h"
#include "image_writer.h"
#include "progress.h"

namespace gdfs::mkfs {
namespace {

constexpr size_t kMaxXattrValue = 65536;  // XattrPair::value_len limit, as in scan.cc
constexpr uint32_t kNone = format::kNone;
constexpr unsigned kMaxRetries = 1000;  // headers in a row that libarchive asks to retry: then give up

// A member path made relative the way tar extracts it: leading '/', empty and '.' components dropped.
// False if a component is '..'.
bool normalize(std::string_view raw, std::string& rel) {
  rel.clear();
  for (size_t at = 0; at <= raw.size();) {
    const size_t end = std::min(raw.find('/', at), raw.size());
    const std::string_view part = raw.substr(at, end - at);
    at = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return false;
    if (!rel.empty()) rel += '/';
    rel += part;
  }
  return true;
}

// Member names are bytes, stored as the archive holds them: libarchive converts the UTF-8 names of pax
// headers (and of zip entries flagged UTF-8) to the current locale's charset, which in the C locale
// fails with a warning per member, and in another locale would make the image depend on it. For the
// walk, this thread's LC_CTYPE is C.UTF-8, where those conversions change nothing; other threads and
// the process locale are untouched.
class Utf8Names {
 public:
  Utf8Names() : utf8_(::newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{})) {
    if (utf8_ != locale_t{}) old_ = ::uselocale(utf8_);
  }
  ~Utf8Names() {
    if (utf8_ == locale_t{}) return;
    ::uselocale(old_);
    ::freelocale(utf8_);
  }
  Utf8Names(const Utf8Names&) = delete;
  Utf8Names& operator=(const Utf8Names&) = delete;

 private:
  locale_t utf8_;
  locale_t old_ = locale_t{};
};

// An archive member's data blocks for the packer. libarchive reports sparse members' holes as gaps
// between blocks; a member whose data ends before its declared size (and is not sparse) is truncated.
class MemberData : public BlockSource {
 public:
  MemberData(archive* a, archive_entry* e) : a_(a), sparse_(archive_entry_sparse_count(e) > 0) {
    if (archive_entry_size_is_set(e))
      size_ = static_cast<uint64_t>(std::max<la_int64_t>(0, archive_entry_size(e)));
  }

  bool next(Block& b) override {
    const void* buf = nullptr;
    size_t size = 0;
    la_int64_t off = 0;
    const int r = archive_read_data_block(a_, &buf, &size, &off);
    if (r == ARCHIVE_EOF) {
      if (size_ && !sparse_ && end_ < *size_)
        throw EntryError("truncated: " + std::to_string(end_) + " of its " + std::to_string(*size_) +
                         " bytes");
      return false;
    }
    // A warning here is a damaged member (a zip CRC mismatch, say): its bytes cannot be trusted.
    if (r != ARCHIVE_OK) {
      fatal_ = r == ARCHIVE_FATAL;
      throw EntryError("cannot read its data: " + archive_error(a_));
    }
    if (off < 0) throw EntryError("cannot read its data: a block at a negative offset");
    b = {static_cast<uint64_t>(off), static_cast<const uint8_t*>(buf), size};
    end_ = std::max(end_, b.offset + size);
    return true;
  }

  std::optional<uint64_t> size() const { return size_; }
  bool fatal() const { return fatal_; }

 private:
  archive* a_;
  bool sparse_;
  std::optional<uint64_t> size_;
  uint64_t end_ = 0;
  bool fatal_ = false;
};

class Walk {
 public:
  Walk(const Options& o, ImageWriter& image, Base* base, Diag& diag, Progress& progress)
      : o_(o),
        diag_(diag),
        progress_(progress),
        label_(o.source == "-" ? std::string("standard input") : "archive " + quote_path(o.source)),
        packer_(o, image, diag, progress, base),
        slots_(0, SlotHash{this}, SlotEq{this}),
        input_(o.source, label_, diag, o.threads),
        a_(archive_read_new(), archive_read_free) {}

  ArchiveBuild run() {
    const Utf8Names names;
    add_root();
    open();
    read_members();
    input_.finish();
    a_.reset();
    slots_ = Slots(0, SlotHash{this}, SlotEq{this});  // the name index is done with: free it first
    for (ScanNode& n : nodes())
      if (S_ISDIR(n.mode))
        std::sort(n.children.begin(), n.children.end(),
                  [](const Child& a, const Child& b) { return a.name < b.name; });
    ArchiveBuild b;
    b.tree = number_inodes(scan_);
    b.pack = packer_.finish(scan_, b.tree);
    for (const uint32_t node : implied_)
      if (nodes()[node].mtime_sec == kImpliedMtime) b.implied.push_back(node);
    b.scan = std::move(scan_);
    return b;
  }

 private:
  // The name index: (directory, child slot) pairs hashed and compared by (directory, child name), so
  // that no name is stored twice. A probe (index kNone) stands for probe_name_.
  struct Slot {
    uint32_t dir, index;
  };
  std::string_view name_of(const Slot& s) const {
    return s.index == kNone ? probe_name_ : std::string_view(scan_.nodes[s.dir].children[s.index].name);
  }
  struct SlotHash {
    const Walk* w;
    size_t operator()(const Slot& s) const {
      return std::hash<std::string_view>()(w->name_of(s)) ^ (size_t{s.dir} * 0x9E3779B97F4A7C15ull);
    }
  };
  struct SlotEq {
    const Walk* w;
    bool operator()(const Slot& a, const Slot& b) const {
      return a.dir == b.dir && w->name_of(a) == w->name_of(b);
    }
  };
  using Slots = std::unordered_set<Slot, SlotHash, SlotEq>;

  std::deque<ScanNode>& nodes() { return scan_.nodes; }

  void open() {
    archive* a = a_.get();
    if (a == nullptr) throw MkfsError("cannot set up libarchive");
    archive_read_support_filter_all(a);
    // Every format but mtree, whose reader opens the files an mtree text names on this machine: an
    // untrusted archive must never pull local files into the image.
    for (auto* support :
         {archive_read_support_format_7zip, archive_read_support_format_ar, archive_read_support_format_cab,
          archive_read_support_format_cpio, archive_read_support_format_empty,
          archive_read_support_format_iso9660, archive_read_support_format_lha,
          archive_read_support_format_rar, archive_read_support_format_rar5, archive_read_support_format_tar,
          archive_read_support_format_warc, archive_read_support_format_xar, archive_read_support_format_zip})
      support(a);
    input_.open(a);
  }

  void read_members() {
    archive_entry* e = nullptr;
    unsigned retries = 0;
    for (bool first = true;; first = false) {
      const int r = archive_read_next_header(a_.get(), &e);
      if (r == ARCHIVE_EOF) return;
      if (r < ARCHIVE_WARN) {
        // Nothing read yet: this is not an archive we can read, not a bad member.
        if (first) throw MkfsError("cannot read " + label_ + ": " + archive_error(a_.get()));
        diag_.skip_entry(label_ + ": " + after_last() + ": " + archive_error(a_.get()));
        if (r == ARCHIVE_FATAL || ++retries > kMaxRetries) return rest_unreadable();
        continue;
      }
      retries = 0;
      if (!member(e, r == ARCHIVE_WARN)) return rest_unreadable();
    }
  }

  std::string after_last() const {
    return last_.empty() ? std::string("its first member") : "the member after " + quote_path(last_);
  }

  void rest_unreadable() { diag_.warn(label_ + ": the rest of the archive cannot be read"); }

  // One member. False when its data could not be read in a way that ends the archive.
  // `warned`: libarchive read its header with a warning, which is passed on.
  bool member(archive_entry* e, bool warned) {
    const char* raw = archive_entry_pathname(e);
    // A member without a readable name is placed by the last one that had one.
    const std::string where = raw != nullptr ? "member " + quote_path(raw) : after_last();
    if (raw != nullptr) last_ = raw;
    if (warned) diag_.warn(label_ + ": " + where + ": " + archive_error(a_.get()));
    ++progress_.scanned;
    progress_.tick();
    fatal_ = false;
    // Headers without a name, one after another, are what garbage (a damaged compressed stream, say)
    // reads as: give up after as many as for headers libarchive asks to retry.
    nameless_ = raw == nullptr ? nameless_ + 1 : 0;
    if (nameless_ > kMaxRetries) return false;
    try {
      if (raw == nullptr) throw EntryError("its path name cannot be read");
      add_member(e);
    } catch (const EntryError& err) {
      diag_.skip_entry(label_ + ": " + where + ": " + err.what());
    }
    return !fatal_;
  }

  void add_member(archive_entry* e) {
    std::string rel;
    if (!normalize(last_, rel)) throw EntryError("its path has a '..' component");
    if (last_.starts_with('/') && !warned_slash_) {
      warned_slash_ = true;
      diag_.warn(label_ + ": removing leading '/' from member names");
    }
    if (excluded(rel)) return;  // its data is skipped by the next header
    const char* link = archive_entry_hardlink(e);
    if (rel.empty()) return set_root(e, link != nullptr);
    const size_t slash = rel.rfind('/');
    const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    if (name.size() > format::kMaxNameLen) throw EntryError("name too long");
    const uint32_t dir = ensure_dir(slash == std::string::npos ? std::string() : rel.substr(0, slash));
    if (link != nullptr) return add_hardlink(e, dir, name, link);
    ScanNode n;
    fill(n, e);
    n.path = std::move(rel);
    n.parent = dir;
    const uint32_t old = lookup(dir, name);
    if (S_ISDIR(n.mode) && old != kNone && S_ISDIR(nodes()[old].mode)) return set_attrs(nodes()[old], n);
    const uint32_t index = new_node(std::move(n));
    if (S_ISREG(nodes()[index].mode)) {
      try {
        pack(e, index);
      } catch (const EntryError&) {
        nodes().pop_back();  // nothing refers to it yet
        throw;
      }
    }
    set_child(dir, name, index);
  }

  // Packs the member's data as the data of `node` (a hard link's target carries it there).
  void pack(archive_entry* e, uint32_t node) {
    MemberData data(a_.get(), e);
    try {
      nodes()[node].size = packer_.pack(node, nodes()[node], data, data.size());
    } catch (const EntryError&) {
      fatal_ = data.fatal();
      throw;
    }
  }

  void add_hardlink(archive_entry* e, uint32_t dir, const std::string& name, const char* link) {
    std::string target_rel;
    if (!normalize(link, target_rel)) throw EntryError("its link target has a '..' component");
    const uint32_t target = find(target_rel);
    if (target == kNone)
      throw EntryError("hard link to " + quote_path(link) + ", which no member before it names");
    if (S_ISDIR(nodes()[target].mode)) throw EntryError("hard link to a directory");
    // cpio writes a hard-linked file's data with its last link; tar may repeat it.
    if (S_ISREG(nodes()[target].mode) && archive_entry_size(e) > 0) pack(e, target);
    set_child(dir, name, target);
  }

  void set_root(archive_entry* e, bool hardlink) {
    ScanNode n;
    fill(n, e);
    if (hardlink || !S_ISDIR(n.mode)) throw EntryError("the archive's root is not a directory");
    set_attrs(nodes()[0], n);
  }

  // A directory named again (or implied before): the later member's attributes, the children kept.
  static void set_attrs(ScanNode& dir, ScanNode& from) {
    dir.mode = from.mode;
    dir.uid = from.uid;
    dir.gid = from.gid;
    dir.mtime_sec = from.mtime_sec;
    dir.mtime_nsec = from.mtime_nsec;
    dir.xattrs = std::move(from.xattrs);
  }

  // The node of each directory of `path`, created (implied) where missing.
  uint32_t ensure_dir(const std::string& path) {
    uint32_t dir = 0;
    for (size_t at = 0; at < path.size();) {
      const size_t end = std::min(path.find('/', at), path.size());
      const std::string name = path.substr(at, end - at);
      uint32_t child = lookup(dir, name);
      if (child == kNone) {
        if (name.size() > format::kMaxNameLen) throw EntryError("name too long");
        child = implied_dir(dir, path.substr(0, end));
        set_child(dir, name, child);
      } else if (!S_ISDIR(nodes()[child].mode)) {
        throw EntryError(quote_path(path.substr(0, end)) + " is not a directory");
      }
      dir = child;
      at = end + 1;
    }
    return dir;
  }

  uint32_t find(const std::string& rel) {
    if (rel.empty()) return 0;
    const size_t slash = rel.rfind('/');
    uint32_t dir = 0;
    if (slash != std::string::npos) {
      for (size_t at = 0; at < slash && dir != kNone;) {
        const size_t end = std::min(rel.find('/', at), slash);
        dir = lookup(dir, std::string_view(rel).substr(at, end - at));
        if (dir != kNone && !S_ISDIR(nodes()[dir].mode)) dir = kNone;
        at = end + 1;
      }
      if (dir == kNone) return kNone;
    }
    return lookup(dir, std::string_view(rel).substr(slash == std::string::npos ? 0 : slash + 1));
  }

  uint32_t lookup(uint32_t dir, std::string_view name) {
    probe_name_ = name;
    const auto it = slots_.find(Slot{dir, kNone});
    return it == slots_.end() ? kNone : nodes()[dir].children[it->index].node;
  }

  // Makes `name` in `dir` name `node`, replacing what it named before: the later member wins.
  void set_child(uint32_t dir, const std::string& name, uint32_t node) {
    probe_name_ = name;
    if (const auto it = slots_.find(Slot{dir, kNone}); it != slots_.end()) {
      nodes()[dir].children[it->index].node = node;
      return;
    }
    std::vector<Child>& children = nodes()[dir].children;
    children.push_back({name, node});
    slots_.insert(Slot{dir, static_cast<uint32_t>(children.size() - 1)});
  }

  uint32_t new_node(ScanNode n) {
    const auto index = static_cast<uint32_t>(nodes().size());
    if (index >= UINT32_MAX - 1) throw MkfsError("too many entries: an image holds at most 2^32 - 2 inodes");
    nodes().push_back(std::move(n));
    return index;
  }

  void add_root() {
    ScanNode root;
    make_implied(root);
    nodes().push_back(std::move(root));
    implied_.push_back(0);
  }

  uint32_t implied_dir(uint32_t parent, std::string path) {
    ScanNode n;
    make_implied(n);
    n.path = std::move(path);
    n.parent = parent;
    const uint32_t index = new_node(std::move(n));
    implied_.push_back(index);
    return index;
  }

  void make_implied(ScanNode& n) const {
    n.mode = node_mode(o_, S_IFDIR | 0755);
    n.uid = o_.uid.value_or(0);
    n.gid = o_.gid.value_or(0);
    n.mtime_sec = kImpliedMtime;
  }

  // The attributes of a member (not a hard link) from its header.
  void fill(ScanNode& n, archive_entry* e) const {
    const auto type = static_cast<uint32_t>(archive_entry_filetype(e));
    switch (type) {
      case AE_IFREG:
      case AE_IFDIR:
      case AE_IFLNK:
      case AE_IFCHR:
      case AE_IFBLK:
      case AE_IFIFO:
      case AE_IFSOCK:
        break;
      default:
        throw EntryError("unsupported file type");
    }
    n.mode = node_mode(o_, type | (static_cast<uint32_t>(archive_entry_perm(e)) & 07777));
    n.uid = owner(o_.uid, archive_entry_uid(e), "uid");
    n.gid = owner(o_.gid, archive_entry_gid(e), "gid");
    int64_t sec = 0;
    uint32_t nsec = 0;
    if (archive_entry_mtime_is_set(e)) {
      sec = archive_entry_mtime(e);
      nsec = static_cast<uint32_t>(std::clamp<long>(archive_entry_mtime_nsec(e), 0, 999999999));
    }
    set_mtime(o_, n, sec, nsec);
    if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(e);
      if (target == nullptr) throw EntryError("symlink without a target");
      n.target = target;
      n.size = n.target.size();
    } else if (type == AE_IFCHR || type == AE_IFBLK) {
      n.rdev_major = static_cast<uint32_t>(archive_entry_rdevmajor(e));
      n.rdev_minor = static_cast<uint32_t>(archive_entry_rdevminor(e));
    }
    read_xattrs(n, e);
  }

  static uint32_t owner(const std::optional<uint32_t>& forced, la_int64_t id, const char* what) {
    if (forced) return *forced;
    if (id < 0 || id >= int64_t{UINT32_MAX}) throw EntryError(std::string(what) + " out of range");
    return static_cast<uint32_t>(id);
  }

  void read_xattrs(ScanNode& n, archive_entry* e) const {
    if (!o_.xattrs) return;
    archive_entry_xattr_reset(e);
    const char* key = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    while (archive_entry_xattr_next(e, &key, &value, &size) == ARCHIVE_OK) {
      if (key == nullptr || *key == '\0' || !keeps_xattr(o_, key)) continue;
      if (std::string_view(key).size() > format::kMaxNameLen || size > kMaxXattrValue)
        throw EntryError("extended attribute too large");
      n.xattrs.emplace_back(key, std::string(static_cast<const char*>(value), size));
    }
    std::stable_sort(n.xattrs.begin(), n.xattrs.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    // A key given twice (pax archives from libarchive carry each xattr as both SCHILY.xattr and
    // LIBARCHIVE.xattr) keeps its later value, as setting it twice on extraction would. A stable sort
    // keeps equal keys in archive order; unique over the reversed range keeps the last of each.
    n.xattrs.erase(n.xattrs.begin(),
                   std::unique(n.xattrs.rbegin(), n.xattrs.rend(), [](const auto& a, const auto& b) {
                     return a.first == b.first;
                   }).base());
  }

  // --exclude against the member's path and each directory above it, as the tree walk never enters an
  // excluded directory.
  bool excluded(const std::string& rel) const {
    if (o_.excludes.empty()) return false;
    for (size_t at = 0; at < rel.size();) {
      const size_t end = std::min(rel.find('/', at), rel.size());
      if (is_excluded(o_, rel.substr(0, end), rel.substr(at, end - at))) return true;
      at = end + 1;
    }
    return false;
  }

  const Options& o_;
  Diag& diag_;
  Progress& progress_;
  const std::string label_;  // "archive 'PATH'" or "standard input", for messages
  StreamPacker packer_;
  ScanResult scan_;
  Slots slots_;
  std::string_view probe_name_;
  std::vector<uint32_t> implied_;  // directories made for paths no member named (yet)
  std::string last_;               // the path of the current (or last named) member as the archive spells it
  bool warned_slash_ = false;
  bool fatal_ = false;     // the current member's data ended the archive
  unsigned nameless_ = 0;  // members in a row whose path name could not be read
  ArchiveInput input_;     // outlives a_, which reads through it
  std::unique_ptr<archive, int (*)(archive*)> a_;
};

}  // namespace

ArchiveBuild read_archive(const Options& o, ImageWriter& image, Base* base, Diag& diag, Progress& progress) {
  return Walk(o, image, base, diag, progress).run();
}

}  // namespace gdfs::mkfs
