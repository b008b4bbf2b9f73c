#include "metadata.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "diag.h"
#include "gdfs/checksum.h"

namespace gdfs::mkfs {
namespace {

// The structs are written as their in-memory bytes: that is the on-disk form on a little-endian host,
// and format.h pins every offset and leaves no implicit padding.
static_assert(std::endian::native == std::endian::little, "mkfs writes structs in host byte order");

class Blob {
 public:
  // A length-prefixed string (names, xattr keys: 1..255 bytes).
  uint32_t add_prefixed(std::string_view s) {
    std::string bytes(1, static_cast<char>(s.size()));
    bytes += s;
    return add(std::move(bytes));
  }
  // Raw bytes (symlink targets, xattr values). An empty value gets offset 0, not the blob's current end,
  // so that it can never point one past the end of the blob.
  uint32_t add_raw(std::string_view s) { return s.empty() ? 0 : add(std::string(s)); }
  const std::string& bytes() const { return bytes_; }
  // Lookups are over: frees the dedupe index (at a million names it outweighs the blob).
  void drop_index() { offsets_ = {}; }

 private:
  uint32_t add(std::string s) {
    const auto it = offsets_.find(s);
    if (it != offsets_.end()) return it->second;
    if (bytes_.size() + s.size() > UINT32_MAX)
      throw MkfsError("too many names: the string blob exceeds 4 GiB");
    const auto off = static_cast<uint32_t>(bytes_.size());
    bytes_ += s;
    offsets_.emplace(std::move(s), off);
    return off;
  }
  std::string bytes_;
  std::unordered_map<std::string, uint32_t> offsets_;
};

class Builder {
 public:
  Builder(const ScanResult& scan, const Tree& tree, const PackResult& pack)
      : scan_(scan), tree_(tree), pack_(pack) {}

  Metadata build() {
    inodes_.reserve(tree_.inode_count());
    for (uint32_t ino = 1; ino <= tree_.inode_count(); ++ino) inodes_.push_back(make_inode(ino));
    // Peak memory at a million files is set here: free the dedupe indexes, size the output once (a
    // growing vector briefly holds twice its bytes), and free each table once it is copied.
    blob_.drop_index();
    attr_index_ = {};
    Metadata m;
    out_ = &m.bytes;
    out_->reserve(total_bytes());
    using namespace format;
    m.sections[kSecInodes] = move_table(inodes_);
    m.sections[kSecAttrs] = move_table(attrs_);
    m.sections[kSecDirents] = move_table(dirents_);
    m.sections[kSecPages] = add_table(pack_.pages.entries);
    m.sections[kSecSparse] = add_table(pack_.sparse);
    m.sections[kSecHoleRuns] = add_table(pack_.runs);
    m.sections[kSecXattrSets] = move_table(xattr_sets_);
    m.sections[kSecXattrPairs] = move_table(xattr_pairs_);
    m.sections[kSecBlob] = add_section(blob_.bytes().data(), blob_.bytes().size());
    return m;
  }

 private:
  format::Inode make_inode(uint32_t ino) {
    const uint32_t node = tree_.order[ino - 1];
    const ScanNode& n = scan_.nodes[node];
    format::Inode in{};
    format::Attr attr{};
    attr.mode = n.mode & 0xFFFFu;
    attr.nlink = tree_.links[node];
    attr.uid = n.uid;
    attr.gid = n.gid;
    attr.xattr = xattr_set(n.xattrs);
    attr.mtime_sec = n.mtime_sec;
    attr.mtime_nsec = n.mtime_nsec;
    in.size = n.size;
    switch (n.mode & S_IFMT) {
      case S_IFREG: {
        const FileData& f = pack_.files[ino - 1];
        in.first_page = f.first_page, in.tail_entry = f.tail_entry, in.tail_offset = f.tail_offset;
        if (f.sparse) attr.mode |= format::kInodeSparse;
        break;
      }
      case S_IFDIR:
        attr.nlink = fill_dir(node, in);
        break;
      case S_IFLNK:
        in.target = blob_.add_raw(n.target), in.target_len = static_cast<uint32_t>(n.target.size());
        break;
      case S_IFCHR:
      case S_IFBLK:
        in.rdev_major = n.rdev_major, in.rdev_minor = n.rdev_minor;
        break;
      default:
        break;
    }
    in.attr = attr_index(attr);
    return in;
  }

  // Inodes with equal attributes share one record, numbered in order of first use (deterministic).
  uint32_t attr_index(const format::Attr& a) {
    const std::string key(reinterpret_cast<const char*>(&a), sizeof a);  // no padding: format.h
    const auto [it, fresh] = attr_index_.try_emplace(key, static_cast<uint32_t>(attrs_.size()));
    if (fresh) attrs_.push_back(a);
    return it->second;
  }

  // Fills a directory's dirents, entry range, parent and size; returns its link count.
  uint32_t fill_dir(uint32_t node, format::Inode& in) {
    in.first_dirent = static_cast<uint32_t>(dirents_.size());
    uint32_t subdirs = 0;
    uint64_t size = 0;
    for_each_child(scan_, node, [&](const Child& c) {
      dirents_.push_back({blob_.add_prefixed(c.name), tree_.ino_of[c.node]});
      if (S_ISDIR(scan_.nodes[c.node].mode)) ++subdirs;
      size += 8 + c.name.size();
    });
    if (dirents_.size() > UINT32_MAX - 1) throw MkfsError("too many directory entries (at most 2^32 - 2)");
    in.dirent_count = static_cast<uint32_t>(dirents_.size() - in.first_dirent);
    in.parent = tree_.ino_of[scan_.nodes[node].parent];
    in.size = size;
    return 2 + subdirs;
  }

  uint32_t xattr_set(const Xattrs& x) {
    if (x.empty()) return format::kNone;
    const auto [it, fresh] = sets_.try_emplace(x, static_cast<uint32_t>(xattr_sets_.size()));
    if (!fresh) return it->second;
    xattr_sets_.push_back({static_cast<uint32_t>(xattr_pairs_.size()), static_cast<uint32_t>(x.size())});
    for (const auto& [key, value] : x)
      xattr_pairs_.push_back(
          {blob_.add_prefixed(key), blob_.add_raw(value), static_cast<uint32_t>(value.size())});
    return it->second;
  }

  template <typename T>
  format::SectionRef add_table(const std::vector<T>& v) {
    return add_section(v.data(), v.size() * sizeof(T));
  }
  template <typename T>
  format::SectionRef move_table(std::vector<T>& v) {
    const format::SectionRef ref = add_table(v);
    v = {};
    return ref;
  }
  // The metadata's size: every section, each aligned as add_section aligns it.
  uint64_t total_bytes() const {
    uint64_t n = 0;
    for (const uint64_t size :
         {inodes_.size() * sizeof(format::Inode), attrs_.size() * sizeof(format::Attr),
          dirents_.size() * sizeof(format::Dirent), pack_.pages.entries.size() * sizeof(format::PageEntry),
          pack_.sparse.size() * sizeof(format::SparseFile), pack_.runs.size() * sizeof(format::HoleRun),
          xattr_sets_.size() * sizeof(format::XattrSet), xattr_pairs_.size() * sizeof(format::XattrPair),
          uint64_t{blob_.bytes().size()}})
      n = format::align_up(n, format::kSectionAlign) + size;
    return n;
  }

  format::SectionRef add_section(const void* p, size_t n) {
    out_->resize(format::align_up(out_->size(), format::kSectionAlign), 0);
    const format::SectionRef ref{out_->size(), n};  // meta::layout_sections's rule
    const auto* b = static_cast<const uint8_t*>(p);
    if (n > 0) out_->insert(out_->end(), b, b + n);
    return ref;
  }

  const ScanResult& scan_;
  const Tree& tree_;
  const PackResult& pack_;
  Blob blob_;
  std::vector<format::Inode> inodes_;
  std::vector<format::Attr> attrs_;
  std::unordered_map<std::string, uint32_t> attr_index_;  // an Attr's bytes -> its index
  std::vector<format::Dirent> dirents_;
  std::vector<format::XattrSet> xattr_sets_;
  std::vector<format::XattrPair> xattr_pairs_;
  std::map<Xattrs, uint32_t> sets_;
  std::vector<uint8_t>* out_ = nullptr;
};

}  // namespace

Metadata build_metadata(const ScanResult& scan, const Tree& tree, const PackResult& pack) {
  return Builder(scan, tree, pack).build();
}

std::array<uint8_t, 16> content_uuid(std::span<const uint8_t> meta,
                                     std::span<const format::PageEntry> pages) {
  std::vector<uint8_t> in(meta.begin(), meta.end());
  for (const format::PageEntry& e : pages) {
    const size_t at = in.size();
    in.resize(at + sizeof e.ucheck);
    std::memcpy(in.data() + at, &e.ucheck, sizeof e.ucheck);
  }
  const Hash128 h = hash128(in.data(), in.size());
  std::array<uint8_t, 16> u{};
  std::memcpy(u.data(), &h.lo, 8);
  std::memcpy(u.data() + 8, &h.hi, 8);
  u[6] = static_cast<uint8_t>((u[6] & 0x0F) | 0x80);  // version 8: custom
  u[8] = static_cast<uint8_t>((u[8] & 0x3F) | 0x80);  // variant 10: RFC 9562
  return u;
}

}  // namespace gdfs::mkfs
