// Validation of an image at open: the superblock, then every metadata record once. After this, every
// index stored in the metadata is known to be in range, every name well formed, every directory sorted
// and reachable from the root exactly once, and every page entry inside the data region, so the
// accessors in image.cc index without checks. docs/FORMAT.md ("A compliant reader must") lists the
// same rules.
#include <algorithm>
#include <cstring>
#include <string>

#include "gdfs/bitpack.h"
#include "gdfs/checksum.h"
#include "gdfs/gdeflate.h"
#include "gdfs/image.h"
#include "gdfs/meta_codec.h"

namespace gdfs {

namespace {

bool known_type(uint32_t t) {
  switch (t) {
    case format::kTypeFifo:  // fifo
    case format::kTypeChr:   // chr
    case format::kTypeDir:
    case format::kTypeBlk:  // blk
    case format::kTypeReg:
    case format::kTypeLnk:
    case format::kTypeSock:  // sock
      return true;
    default:
      return false;
  }
}

// a + b <= limit, without overflow.
bool fits(uint64_t a, uint64_t b, uint64_t limit) {
  return a <= limit && b <= limit - a;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

void Image::validate_superblock(uint64_t file_size) {
  using namespace format;
  if (std::memcmp(sb_.magic, kMagic, sizeof kMagic) != 0) fail("not a gdfs image (bad magic)");
  const std::string version = std::to_string(sb_.major) + "." + std::to_string(sb_.minor);
  if (sb_.major == 0)  // no mkfs.gdfs ever wrote 0.x: damage or another program's file, not an old image
    fail("format version " + version +
         " is invalid (no mkfs.gdfs writes major version 0; this reader reads " + std::to_string(kMajor) +
         ".x)");
  if (sb_.major < kMajor)  // 1.x stored its metadata uncompressed; no such image was ever deployed
    fail("format version " + version +
         " was made by an older mkfs.gdfs; rebuild the image (this reader reads " + std::to_string(kMajor) +
         ".x)");
  if (sb_.major != kMajor)
    fail("format version " + version + " is not supported (this reader reads " + std::to_string(kMajor) +
         ".x)");
  if (sb_.sb_size != kSuperblockSize) fail("bad superblock size " + std::to_string(sb_.sb_size));
  if (checksum64(&sb_, offsetof(Superblock, sb_checksum)) != sb_.sb_checksum)
    fail("superblock checksum mismatch");
  if (uint64_t unknown = sb_.incompat & ~kKnownIncompat)
    fail("image needs features this reader does not have (incompat bits " + hex(unknown) + ")");
  if (sb_.page_log2 < kMinPageLog2 || sb_.page_log2 > kMaxPageLog2)
    fail("bad page size 2^" + std::to_string(sb_.page_log2));
  if (sb_.image_size > file_size)
    fail("truncated: the image is " + std::to_string(sb_.image_size) + " bytes but the file has " +
         std::to_string(file_size));
  if (!(sb_.incompat & kIncompatLayers) &&
      (sb_.layers_offset | sb_.layers_size | sb_.layer_count | sb_.layers_checksum))
    fail("layer fields set without the layers feature bit");
  if (sb_.data_offset < kSuperblockSize || sb_.data_offset % kPageAlign != 0 ||
      !fits(sb_.data_offset, sb_.data_size, sb_.meta_offset) || sb_.meta_offset % kSectionAlign != 0 ||
      !fits(sb_.meta_offset, sb_.meta_size, sb_.image_size) || sb_.meta_offset + sb_.meta_size != meta_end())
    fail("superblock regions are inconsistent");
  if (sb_.incompat & kIncompatLayers) {
    if (sb_.layer_count == 0 || sb_.layer_count > kMaxLayers ||
        sb_.layers_size < sb_.layer_count * uint64_t{sizeof(LayerRef)} ||
        sb_.layers_offset != align_up(sb_.meta_offset + sb_.meta_size, kSectionAlign) ||
        !fits(sb_.layers_offset, sb_.layers_size, sb_.image_size) ||
        sb_.layers_offset + sb_.layers_size != sb_.image_size)
      fail("bad layer table in the superblock");
  }
  if (const std::string why = meta::check_layout(sb_); !why.empty()) fail(why);
}

void Image::map_sections() {
  using namespace format;
  // meta::check_layout has placed every section inside the inflated metadata, aligned, whole entries.
  auto section = [&](Section s, size_t entry_size) -> std::span<const uint8_t> {
    const SectionRef& r = sb_.sections[s];
    if (!fits(r.offset, r.size, meta_.size()) || r.size % entry_size != 0)
      fail("metadata section " + std::to_string(s) + " is out of bounds");
    return {meta_.data() + r.offset, r.size};
  };
  // The metadata buffer is suitably aligned for every struct (operator new, offsets multiple of 8), and
  // all the structs are trivially copyable implicit-lifetime types.
  auto table = [&]<typename T>(Section s, std::span<const T>& out) {
    auto bytes = section(s, sizeof(T));
    out = {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  };
  table(kSecInodes, inodes_);
  table(kSecAttrs, attrs_);
  table(kSecDirents, dirents_);
  table(kSecPages, pages_);
  table(kSecSparse, sparse_);
  table(kSecHoleRuns, holes_);
  table(kSecXattrSets, xattr_sets_);
  table(kSecXattrPairs, xattr_pairs_);
  table(kSecBlob, blob_);
  if (inodes_.size() != sb_.inode_count || inodes_.empty() || inodes_.size() >= kNone)
    fail("inode count does not match the inode table");
  if (pages_.size() != sb_.page_count || pages_.size() >= kNone)
    fail("page count does not match the page table");
  if (dirents_.size() >= kNone || attrs_.size() >= kNone || blob_.size() >= kNone)
    fail("metadata tables are too large");
}

// One pass per table. Each method throws through Image::fail with the record it rejects.
struct Validator {
  Image& img;
  std::vector<uint8_t> dir_refs;  // how many dirents name each directory inode
  // Records may not share table ranges, so these sums are bounded by the table sizes. That bounds
  // validation work by the metadata size: a crafted image cannot point a million inodes at one huge
  // range and make the checks quadratic.
  uint64_t file_entries = 0, dir_entries = 0;

  void run() {
    attrs();
    for (uint32_t ino = 1; ino <= img.inodes_.size(); ++ino)
      if (img.inodes_[ino - 1].attr >= img.attrs_.size()) bad_inode(ino, "bad attribute index");
    pages();
    sparse();
    xattrs();
    dir_refs.assign(img.inodes_.size() + 1, 0);
    for (uint32_t ino = 1; ino <= img.inodes_.size(); ++ino) inode(ino);
    if ((mode_of(format::kRootIno) & format::kTypeMask) != format::kTypeDir ||
        img.inodes_[0].parent != format::kRootIno)
      img.fail("inode 1 (the root) is not a directory");
    reachability();
  }

  [[noreturn]] void bad_inode(uint32_t ino, const std::string& what) {
    img.fail("inode " + std::to_string(ino) + ": " + what);
  }

  // The mode of inode `ino`, whose attribute index has been checked.
  uint32_t mode_of(uint32_t ino) const { return img.attrs_[img.inodes_[ino - 1].attr].mode; }

  void attrs() {
    for (size_t i = 0; i < img.attrs_.size(); ++i) {
      const format::Attr& a = img.attrs_[i];
      auto bad = [&](const char* what) { img.fail("attribute record " + std::to_string(i) + ": " + what); };
      const uint32_t type = a.mode & format::kTypeMask;
      if (!known_type(type)) bad("unknown file type");
      if ((a.mode >> 16) & ~(format::kInodeKnownFlags >> 16)) bad("unknown inode flags");
      if ((a.mode & format::kInodeSparse) && type != format::kTypeReg) bad("sparse flag on a non-file");
      if (a.xattr != format::kNone && a.xattr >= img.xattr_sets_.size()) bad("bad xattr index");
      if (a.mtime_nsec >= 1000000000u) bad("bad mtime");
    }
  }

  // A length-prefixed string in the blob: 1..255 bytes inside the blob.
  bool string_ok(uint32_t off) const {
    return off < img.blob_.size() && img.blob_[off] != 0 &&
           fits(off + 1ull, img.blob_[off], img.blob_.size());
  }

  void pages() {
    for (size_t i = 0; i < img.pages_.size(); ++i) {
      const format::PageEntry& e = img.pages_[i];
      auto bad = [&](const char* what) { img.fail("page entry " + std::to_string(i) + ": " + what); };
      if (e.usize == 0 || e.usize > img.page_size()) bad("bad decoded size");
      if (e.layer > img.layers_.size()) bad("bad layer");
      // Its own data region, or the one its base recorded (the base's superblock must agree at open).
      const uint64_t data_offset = e.layer ? img.layers_[e.layer - 1].ref.data_offset : img.sb_.data_offset;
      const uint64_t data_size = e.layer ? img.layers_[e.layer - 1].ref.data_size : img.sb_.data_size;
      if (e.csize == 0 || e.offset % format::kPageAlign != 0 || e.offset < data_offset ||
          !fits(e.offset, e.csize, data_offset + data_size))
        bad("stored bytes outside the data region");
      if (e.flags & ~format::kPageKnownFlags) bad("unknown flags");
      if (e.codec != format::kCodecBitpack && e.param != 0) bad("codec parameter on a codec without one");
      if (e.codec == format::kCodecStored) {
        if (e.csize != e.usize) bad("stored page of the wrong size");
      } else if (e.codec == format::kCodecGDeflate || e.codec == format::kCodecGDeflateX86) {
        if (e.csize > gdeflate::compress_bound(e.usize)) bad("GDeflate page larger than its bound");
        // Codec 4 needs its incompat bit: a reader older than 2.3 must refuse the image, not misread it.
        if (e.codec == format::kCodecGDeflateX86 && !(img.sb_.incompat & format::kIncompatX86))
          bad("x86-filtered page without the x86 feature bit");
      } else if (e.codec == format::kCodecBitpack) {
        bitpack_entry(e, bad);
      } else {
        bad("unknown codec");
      }
    }
  }

  // Codec 3 needs the incompat bit (an older reader must not take the image), a valid param, and a
  // stored size within the bound for that param.
  template <typename Bad>
  void bitpack_entry(const format::PageEntry& e, Bad&& bad) const {
    if (!(img.sb_.incompat & format::kIncompatBitpack)) bad("bitpack page without the bitpack feature bit");
    const auto p = bitpack::from_param(e.param);
    if (!p) bad("bad bitpack parameter");
    if (e.csize > bitpack::compress_bound(e.usize, *p)) bad("bitpack page larger than its bound");
  }

  void sparse() {
    uint32_t prev = 0;
    uint64_t runs = 0;
    for (const format::SparseFile& s : img.sparse_) {
      auto bad = [&](const char* what) { bad_inode(s.ino, std::string("hole map: ") + what); };
      if (s.ino <= prev || s.ino > img.inodes_.size()) bad("records out of order or out of range");
      prev = s.ino;
      const uint32_t mode = mode_of(s.ino);
      if ((mode & format::kTypeMask) != format::kTypeReg || !(mode & format::kInodeSparse))
        bad("not a sparse file");
      if (s.run_count == 0 || !fits(s.first_run, s.run_count, img.holes_.size())) bad("runs out of range");
      if ((runs += s.run_count) > img.holes_.size()) bad("runs shared between files");
      const uint64_t n = img.logical_pages(s.ino);
      uint64_t next = 0, total = 0;
      for (const format::HoleRun& r : img.holes_.subspan(s.first_run, s.run_count)) {
        if (r.count == 0 || r.first_page < next || r.holes_before != total) bad("runs overlap or miscount");
        next = uint64_t{r.first_page} + r.count;
        total += r.count;
        if (next > n) bad("run past the end of the file");
      }
      if (total != s.hole_pages) bad("hole count mismatch");
    }
  }

  void xattrs() {
    uint64_t pairs = 0;
    for (size_t i = 0; i < img.xattr_sets_.size(); ++i) {
      const format::XattrSet& set = img.xattr_sets_[i];
      auto bad = [&](const char* what) { img.fail("xattr set " + std::to_string(i) + ": " + what); };
      if (set.count == 0 || !fits(set.first_pair, set.count, img.xattr_pairs_.size())) bad("out of range");
      if ((pairs += set.count) > img.xattr_pairs_.size()) bad("pairs shared between sets");
      std::string_view prev;
      for (const format::XattrPair& p : img.xattr_pairs_.subspan(set.first_pair, set.count)) {
        if (!string_ok(p.key)) bad("bad key");
        std::string_view key = img.blob_string(p.key);
        if (key.find('\0') != std::string_view::npos || (!prev.empty() && key <= prev)) bad("keys unsorted");
        if (p.value_len > 65536 || !fits(p.value, p.value_len, img.blob_.size())) bad("bad value");
        prev = key;
      }
    }
  }

  void inode(uint32_t ino) {
    const format::Inode& in = img.inodes_[ino - 1];
    const uint32_t type = mode_of(ino) & format::kTypeMask;
    if (type == format::kTypeReg) file(ino, in);
    if (type == format::kTypeDir) dir(ino, in);
    if (type == format::kTypeLnk &&
        (!fits(in.target, in.target_len, img.blob_.size()) || in.size != in.target_len))
      bad_inode(ino, "bad symlink target");
  }

  uint32_t hole_pages(uint32_t ino) {
    if (!(mode_of(ino) & format::kInodeSparse)) return 0;
    auto rec = std::lower_bound(img.sparse_.begin(), img.sparse_.end(), ino,
                                [](const format::SparseFile& s, uint32_t i) { return s.ino < i; });
    if (rec == img.sparse_.end() || rec->ino != ino) bad_inode(ino, "sparse file without a hole map");
    return rec->hole_pages;
  }

  // Whether logical page `index` of sparse-flagged file `ino` lies in one of its hole runs.
  bool page_is_hole(uint32_t ino, uint64_t index) {
    if (!(mode_of(ino) & format::kInodeSparse)) return false;
    auto rec = std::lower_bound(img.sparse_.begin(), img.sparse_.end(), ino,
                                [](const format::SparseFile& s, uint32_t i) { return s.ino < i; });
    auto runs = img.holes_.subspan(rec->first_run, rec->run_count);
    auto run = std::upper_bound(runs.begin(), runs.end(), index,
                                [](uint64_t i, const format::HoleRun& r) { return i < r.first_page; });
    return run != runs.begin() && index < uint64_t{std::prev(run)->first_page} + std::prev(run)->count;
  }

  void file(uint32_t ino, const format::Inode& in) {
    const uint64_t n = img.logical_pages(ino);
    const uint64_t ps = img.page_size();
    if (n > format::kNone) bad_inode(ino, "file too large");
    const uint64_t last_len = n == 0 ? 0 : in.size - (n - 1) * ps;
    const bool tail = in.tail_entry != format::kNone;
    uint64_t holes = hole_pages(ino);
    if (tail) {
      if (n == 0 || last_len == ps || in.tail_entry >= img.pages_.size())
        bad_inode(ino, "bad tail reference");
      const format::PageEntry& pack = img.pages_[in.tail_entry];
      if (!(pack.flags & format::kPageTailPack) || !fits(in.tail_offset, last_len, pack.usize))
        bad_inode(ino, "tail outside its tail pack");
      if (page_is_hole(ino, n - 1)) bad_inode(ino, "tail page is also a hole");
    } else if (in.tail_offset != 0) {
      bad_inode(ino, "tail offset without a tail");
    }
    if (holes + (tail ? 1 : 0) > n) bad_inode(ino, "more holes than pages");
    const uint64_t entries = n - holes - (tail ? 1 : 0);
    if (!fits(in.first_page, entries, img.pages_.size())) bad_inode(ino, "page entries out of range");
    if ((file_entries += entries) > img.pages_.size()) bad_inode(ino, "page entries shared between files");
    const bool last_is_entry = n > 0 && !tail && !page_is_hole(ino, n - 1);
    for (uint64_t i = 0; i < entries; ++i) {
      const format::PageEntry& e = img.pages_[in.first_page + i];
      const uint64_t want = (last_is_entry && i == entries - 1) ? last_len : ps;
      if ((e.flags & format::kPageTailPack) || e.usize != want)
        bad_inode(ino, "page entry " + std::to_string(in.first_page + i) + " does not fit the file");
    }
  }

  void dir(uint32_t ino, const format::Inode& in) {
    if (!fits(in.first_dirent, in.dirent_count, img.dirents_.size())) bad_inode(ino, "entries out of range");
    if ((dir_entries += in.dirent_count) > img.dirents_.size())
      bad_inode(ino, "entries shared between directories");
    if (in.parent == 0 || in.parent > img.inodes_.size() ||
        (mode_of(in.parent) & format::kTypeMask) != format::kTypeDir)
      bad_inode(ino, "bad parent");
    std::string_view prev;
    for (const format::Dirent& d : img.dirents_.subspan(in.first_dirent, in.dirent_count)) {
      if (!string_ok(d.name)) bad_inode(ino, "bad entry name");
      std::string_view name = img.blob_string(d.name);
      if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos ||
          name == "." || name == "..")
        bad_inode(ino, "invalid entry name");
      if (!prev.empty() && name <= prev) bad_inode(ino, "entries not sorted or duplicated");
      prev = name;
      if (d.ino <= format::kRootIno || d.ino > img.inodes_.size()) bad_inode(ino, "entry names a bad inode");
      const format::Inode& child = img.inodes_[d.ino - 1];
      if ((mode_of(d.ino) & format::kTypeMask) == format::kTypeDir) {
        // A directory has exactly one name and knows its parent: the tree cannot loop.
        if (dir_refs[d.ino]++ != 0 || child.parent != ino)
          bad_inode(d.ino, "directory linked more than once");
      }
    }
  }

  // Every directory is reachable from the root, so walking up through parents always ends at the root.
  void reachability() {
    std::vector<uint32_t> stack{format::kRootIno};
    size_t reached = 0;
    while (!stack.empty()) {
      uint32_t ino = stack.back();
      stack.pop_back();
      ++reached;
      const format::Inode& in = img.inodes_[ino - 1];
      for (const format::Dirent& d : img.dirents_.subspan(in.first_dirent, in.dirent_count))
        if ((mode_of(d.ino) & format::kTypeMask) == format::kTypeDir) stack.push_back(d.ino);
    }
    size_t dirs = 0;
    for (uint32_t ino = 1; ino <= img.inodes_.size(); ++ino)
      dirs += (mode_of(ino) & format::kTypeMask) == format::kTypeDir;
    if (reached != dirs) img.fail("a directory is not reachable from the root");
  }
};

void Image::validate() {
  Validator{*this, {}}.run();
}

}  // namespace gdfs
