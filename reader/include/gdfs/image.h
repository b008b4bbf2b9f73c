// Reading a gdfs image: open and validate it, walk its metadata, map file bytes to pages, and fetch,
// decode and verify pages. Used by gdfs-inspect, the tests and the daemon; no FUSE, no io_uring here.
//
// Everything in an image is untrusted. Image::open verifies the superblock and metadata checksums and
// then validates every metadata record once (ranges, sorting, references), so the accessors below can
// index without further checks. Page data is checked when it is read: both page checksums, and the
// decoder's own bounds checks in between.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gdfs/format.h"
#include "gdfs/page.h"
#include "gdfs/source.h"

namespace gdfs {

// Whether a path's last component is followed when it is a symlink: kNo as lstat(2) and readlink(2),
// kYes as stat(2) and open(2). Symlinks before the last component are always followed.
enum class Follow { kNo, kYes };

// Symlinks one path resolution follows at most before it gives up (ELOOP), as Linux.
inline constexpr int kMaxSymlinks = 40;

// Where logical page `index` of a regular file comes from.
struct PageRef {
  enum Kind : uint8_t { kHole, kPage, kTail } kind = kHole;
  uint64_t entry = 0;   // PageEntry index (kPage, kTail)
  uint32_t offset = 0;  // byte offset of the file's data inside the decoded entry (kTail; else 0)
  uint32_t length = 0;  // bytes of file data this logical page holds
};

class Image {
 public:
  // Opens and validates the image at `path_or_url` (a local file, or a URL: gdfs/source.h). Throws
  // ImageError.
  static std::unique_ptr<Image> open(const std::string& path_or_url, const SourceOptions& options = {});
  // The same over any source. A layered image's bases are found from `location` (the path or URL the
  // source was opened from; its name() when not given) and `options` (SourceOptions::bases).
  static std::unique_ptr<Image> open(std::unique_ptr<Source> source);
  static std::unique_ptr<Image> open(std::unique_ptr<Source> source, const std::string& location,
                                     const SourceOptions& options);
  // The same over bytes in memory (fuzzing, tests). `name` is used in messages.
  static std::unique_ptr<Image> from_memory(std::vector<uint8_t> bytes, std::string name);
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  const std::string& name() const { return name_; }
  // Where the image's bytes come from; the read engine fetches stored pages through it. For a layered
  // image, one address space over the image and its bases: pages() offsets point into it.
  Source& source() const { return *source_; }
  const format::Superblock& superblock() const { return sb_; }
  uint32_t page_size() const { return 1u << sb_.page_log2; }
  uint32_t inode_count() const { return sb_.inode_count; }
  // Metadata accessors. `ino` must be 1..inode_count (checked: throws ImageError otherwise).
  // Inline: every read calls it several times, and the check is two compares.
  const format::Inode& inode(uint32_t ino) const {
    if (ino == 0 || ino > inodes_.size()) [[unlikely]]
      bad_inode(ino);
    return inodes_[ino - 1];
  }
  // The inode's attributes: mode (with gdfs flags in bits 16..31), nlink, owner, mtime, xattr set.
  const format::Attr& attr(uint32_t ino) const { return attrs_[inode(ino).attr]; }
  uint32_t mode(uint32_t ino) const { return attr(ino).mode; }
  uint32_t type(uint32_t ino) const { return attr(ino).mode & format::kTypeMask; }

  // Directories. Entries are sorted by name bytes; lookup is a binary search. 0 = not found.
  std::span<const format::Dirent> dirents(uint32_t dir_ino) const;
  std::string_view name(const format::Dirent& d) const { return blob_string(d.name); }
  uint32_t lookup(uint32_t dir_ino, std::string_view name) const;
  // "/a/b/c" (or "a/b/c"; "/" is the root) to an inode, as the kernel resolves a path: "." and ".."
  // are components (".." of the root is the root), a symlink on the way is followed (an absolute target
  // from the image's root, never the host's), and the last component too with Follow::kYes or a
  // trailing "/" (which then must name a directory); "" names nothing. 0 = not found, and with `error`
  // why: ENOENT, ENOTDIR (a component on the way is not a directory), ELOOP (more than kMaxSymlinks
  // symlinks).
  uint32_t resolve(std::string_view path, int* error = nullptr, Follow follow = Follow::kNo) const;
  // What a resolve() error says, for messages: "no such file or directory", "not a directory", ...
  static const char* resolve_error(int error);
  // The reverse: inode `ino`'s path ("/a/b"), found by a scan of the directories (for messages, not a
  // hot path); "" when no directory names it.
  std::string path(uint32_t ino) const;

  std::string_view symlink_target(uint32_t ino) const;
  std::span<const format::XattrPair> xattrs(uint32_t ino) const;
  // Whether any inode has an xattr (a mount of an image without any need not be asked for them).
  bool has_xattrs() const { return !xattr_pairs_.empty(); }
  std::string_view xattr_key(const format::XattrPair& p) const { return blob_string(p.key); }
  std::string_view xattr_value(const format::XattrPair& p) const;

  // Page map of regular file `ino`: logical page `index` (< page_count_of(size)).
  PageRef page_ref(uint32_t ino, uint64_t index) const;
  uint64_t logical_pages(uint32_t ino) const;
  // The hole runs of regular file `ino`, sorted (empty unless it is sparse).
  std::span<const format::HoleRun> hole_runs(uint32_t ino) const;
  // Calls fn(index, ref) for each logical page of regular file `ino` that is not a hole, in file order.
  // Costs O(stored pages + hole runs) however large the holes: walkers of crafted images cannot be made
  // to spin through billions of hole pages.
  template <typename Fn>
  void for_each_data_page(uint32_t ino, Fn&& fn) const {
    const uint64_t n = logical_pages(ino);
    uint64_t i = 0;
    auto data_until = [&](uint64_t end) {
      for (; i < end; ++i) fn(i, page_ref(ino, i));
    };
    for (const format::HoleRun& r : hole_runs(ino)) {
      data_until(r.first_page);
      i = uint64_t{r.first_page} + r.count;
    }
    data_until(n);
  }
  // The page table, as the read path uses it: in a layered image an entry of a base has its offset moved
  // into source()'s address space for that base. stored_pages() is the table as stored in the image.
  std::span<const format::PageEntry> pages() const { return pages_; }
  std::span<const format::PageEntry> stored_pages() const { return stored_pages_; }

  // The base images of a layered image (format 2.1), empty for a standalone one. Open succeeded only if
  // every base was found and is exactly the image recorded (its superblock checksum and uuid).
  struct Layer {
    format::LayerRef ref;
    std::string hint;      // the location recorded at mkfs time, relative to this image
    std::string location;  // where it was opened from
  };
  std::span<const Layer> layers() const { return layers_; }
  // The inflated metadata, as stored (flatten rewrites its page table).
  std::span<const uint8_t> metadata() const { return meta_; }

  // Bytes of section `s` as stored in the image (its compressed blocks) and in memory (inflated), and of
  // the metadata block table.
  uint64_t section_stored_bytes(format::Section s) const { return stored_[s]; }
  uint64_t section_bytes(format::Section s) const { return sb_.sections[s].size; }
  uint64_t meta_table_bytes() const { return meta_table_bytes_; }

  // Signed images (FORMAT.md 7.1). Opened with SourceOptions::trusted_key, the image's signature was
  // verified at open, and page_digest(entry) is the SHA-256 that entry's stored bytes must have; every
  // read path checks it (stored_ok) before it decodes or caches a page. Opened without a key: null,
  // and stored_ok is always true.
  bool trusted() const { return trusted_; }
  const uint8_t* page_digest(uint64_t entry) const {
    return trusted_ ? page_digests_.data() + entry * format::kDigestSize : nullptr;
  }
  bool stored_ok(uint64_t entry, const uint8_t* stored) const {
    return !trusted_ || digest_ok(entry, stored);
  }
  // The fingerprint of the key that signed it (trusted images only).
  std::span<const uint8_t> signer() const { return signer_; }

  // Reads `length` bytes at `offset` of layer `layer` (0: this image; k: the base of its k-th layer
  // record) into `out`, unchecked. Returns false on I/O error. (mkfs --sign hashes base pages with it.)
  bool read_layer(uint32_t layer, uint64_t offset, uint32_t length, uint8_t* out) const;
  // Reads the stored bytes of a page entry (entry.csize bytes) into `out`. Returns false on I/O error.
  bool read_stored(const format::PageEntry& entry, uint8_t* out) const;
  // Reads, decodes and verifies a page into `out` (entry.usize bytes).
  PageStatus read_page(uint64_t entry, PageDecoder& dec, uint8_t* out) const;
  // Reads up to `len` bytes of regular file `ino` at `offset` into `out`; returns the byte count (short
  // only at end of file). Any page failure throws ImageError naming the image, inode and page.
  size_t read(uint32_t ino, uint64_t offset, size_t len, uint8_t* out, PageDecoder& dec) const;

  // "IMAGE: inode N (page P): what" — the one format for every message about this image.
  std::string describe(uint32_t ino, uint64_t page, std::string_view what) const;

 private:
  Image() = default;
  void load(const std::string& location, const SourceOptions& options);
  uint64_t meta_end() const;  // where the metadata region must end: image_size, or the layer table
  void load_layer_table(std::span<const uint8_t> region);  // layers.cc
  // signature.cc: refuses the image unless its signature is by a key in `key_file` and covers exactly
  // these superblock, metadata and layer bytes (those the reader goes on to use); keeps the page digests.
  void verify_signature(const std::string& key_file, std::span<const uint8_t> meta,
                        std::span<const uint8_t> layers);
  bool digest_ok(uint64_t entry, const uint8_t* stored) const;
  void open_layers(const std::string& location, const SourceOptions& options);
  void validate_superblock(uint64_t file_size);
  void inflate_metadata(std::span<const uint8_t> region);
  void map_sections();
  void validate();                                      // validate.cc
  std::string_view blob_string(uint32_t offset) const;  // validated length-prefixed string
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void bad_inode(uint32_t ino) const;

  std::string name_;
  std::unique_ptr<Source> source_;
  format::Superblock sb_{};
  std::vector<uint8_t> meta_;  // the inflated metadata, a private copy validated once
  std::array<uint64_t, format::kSectionCount> stored_{};  // each section's stored bytes
  uint64_t meta_table_bytes_ = 0;
  std::span<const format::Inode> inodes_;
  std::span<const format::Attr> attrs_;
  std::span<const format::Dirent> dirents_;
  std::span<const format::PageEntry> pages_;
  std::span<const format::PageEntry> stored_pages_;
  std::vector<format::PageEntry> layered_pages_;  // pages_ of a layered image
  std::vector<Layer> layers_;
  std::vector<uint8_t> page_digests_;  // trusted images: kDigestSize bytes per page entry
  bool trusted_ = false;
  std::vector<uint8_t> signer_;
  std::span<const format::SparseFile> sparse_;
  std::span<const format::HoleRun> holes_;
  std::span<const format::XattrSet> xattr_sets_;
  std::span<const format::XattrPair> xattr_pairs_;
  std::span<const uint8_t> blob_;

  friend struct Validator;
};

}  // namespace gdfs
