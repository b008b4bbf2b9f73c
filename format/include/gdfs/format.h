// The gdfs image format, version 2.3: every on-disk struct, in one place. docs/FORMAT.md is the normative
// text; this header is its byte layout. All integers are little-endian, every struct is naturally
// aligned, and the offset of every field is pinned by a static_assert below.
//
// An image is three regions:
//   [0, 4096)                  superblock (512 bytes) and zero padding
//   [data_offset, +data_size)  page data: compressed pages, each 4-byte aligned, no headers
//   [meta_offset, +meta_size)  the metadata, stored compressed: a MetaBlock table, then the blocks
//   [layers_offset, +layers_size)  layered images only (2.1): the LayerRef table and location hints
//   [sig_offset, +sig_size)        signed images only (2.2), past image_size: the signature region
// Version 2.3 adds codec 4 (x86-filtered GDeflate pages; FORMAT.md 4.4).
//
// The metadata is used in memory as it was before 2.0: fixed-size records (the tables of the structs
// below) in sections at 8-byte aligned offsets of one buffer of meta_usize bytes. On disk each section is
// stored in a transformed form (FORMAT.md 5.5: some fields delta-coded, then the bytes transposed so
// that equal bytes of neighbouring records are adjacent) cut into 64 KiB blocks, each GDeflate or
// stored. A reader inflates it once at open, then validates and uses it in place.
#pragma once
#include <cstddef>
#include <cstdint>

namespace gdfs::format {

inline constexpr char kMagic[8] = {'G', 'D', 'F', 'S', 'I', 'M', 'G', '1'};
inline constexpr uint16_t kMajor = 2;  // a reader refuses any other major version
// Minor versions only add what old readers may ignore or refuse by a feature bit. mkfs writes the lowest
// minor an image needs (minor_needed, below): 0, kMinorLayers for a layered image, kMinorSigned for a
// signed one, kMinorX86 for one with x86-filtered pages.
inline constexpr uint16_t kMinor = 0;
inline constexpr uint16_t kMinorLayers = 1;
inline constexpr uint16_t kMinorSigned = 2;
inline constexpr uint16_t kMinorX86 = 3;
inline constexpr uint16_t kNewestMinor = kMinorX86;  // the newest this reader reads: tools report it
inline constexpr uint32_t kSuperblockSize = 512;
inline constexpr uint64_t kDataOffset = 4096;  // page data starts here; 4 KiB keeps O_DIRECT possible
inline constexpr uint64_t kFilePadding = 4096;  // writers pad the file to a multiple of this (FORMAT.md 2)
inline constexpr uint32_t kPageAlign = 4;      // every page starts 4-byte aligned (GPU 32-bit loads)
inline constexpr uint32_t kSectionAlign = 8;
inline constexpr uint32_t kMinPageLog2 = 12;    // 4 KiB
inline constexpr uint32_t kMaxPageLog2 = 16;    // 64 KiB, the largest GDeflate page
inline constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no index" in any u32 index field
inline constexpr uint32_t kMaxNameLen = 255;
inline constexpr uint32_t kRootIno = 1;            // inode numbers are 1-based table indices; 1 is the root
inline constexpr uint32_t kMetaBlockSize = 65536;  // bytes of a section's stored form per metadata block
// The largest inflated metadata a reader accepts (about 200 million files): it bounds what a crafted
// superblock can make a reader allocate, before any block is decoded.
inline constexpr uint64_t kMaxMetaBytes = uint64_t{16} << 30;
// No metadata block inflates to more than this many times its stored size (a GDeflate page is at least
// 132 bytes, and a block at most 64 KiB). So a reader can bound the memory an image makes it allocate by
// the image's own size before it decodes anything: meta_usize <= kMaxMetaRatio * meta_size.
inline constexpr uint64_t kMaxMetaRatio = 512;

// Feature bits. An unknown bit in `incompat` means "this reader would misread the image": refuse it.
// An unknown bit in `compat` may be ignored.
enum IncompatFeature : uint64_t {
  kIncompatBitpack = 1ull << 0,  // some page uses kCodecBitpack; set exactly when one does
  kIncompatLayers = 1ull << 1,   // some page's bytes live in a base image (2.1; FORMAT.md 4.3)
  kIncompatX86 = 1ull << 2,      // some page uses kCodecGDeflateX86 (2.3); set exactly when one does
};
inline constexpr uint64_t kKnownIncompat =
    kIncompatBitpack | kIncompatLayers | kIncompatX86;  // what this reader understands
enum CompatFeature : uint64_t {
  kCompatDedupe = 1ull << 0,    // some page-table entries share page data (informational)
  kCompatTailPack = 1ull << 1,  // some file tails live in shared tail-pack pages (informational)
  // A signature region follows image_size (2.2; FORMAT.md 7.1). Compat: it lies past image_size, so a
  // reader that knows nothing of it reads the image as it did before.
  kCompatSigned = 1ull << 2,
};

// Metadata sections, in the order mkfs writes them. Section i lives at sections[i] in the superblock.
enum Section : uint32_t {
  kSecInodes = 0,  // Inode[inode_count]
  kSecAttrs,       // Attr[]: attribute records, shared by every inode whose attributes are equal
  kSecDirents,     // Dirent[], each directory's entries contiguous and sorted by name bytes
  kSecPages,       // PageEntry[page_count]
  kSecSparse,      // SparseFile[], sorted by ino
  kSecHoleRuns,    // HoleRun[]
  kSecXattrSets,   // XattrSet[]
  kSecXattrPairs,  // XattrPair[], each set's pairs contiguous and sorted by key bytes
  kSecBlob,        // bytes: names, symlink targets, xattr keys and values
  kSectionCount,
};
// The size of one entry of each section (1 for the blob), indexed by Section.
inline constexpr uint32_t kSectionEntrySize[kSectionCount] = {24, 32, 8, 32, 16, 12, 8, 12, 1};
inline constexpr uint32_t kMaxSections = 12;  // slots in the superblock; unused slots are zero

struct SectionRef {
  uint64_t offset;  //  0: offset inside the inflated metadata, multiple of 8 (sections follow each other)
  uint64_t size;    //  8: inflated bytes; a multiple of the entry size for tables
};

// One block of the stored metadata: the metadata region starts with meta_blocks of these. Block sizes
// before inflation are implied: each section's stored form is cut into kMetaBlockSize pieces, in section
// order. Each block's bytes start at a multiple of 4 from the region's start.
struct MetaBlock {
  uint32_t csize;       // 0: stored bytes, >= 1
  uint8_t codec;        // 4: kCodecStored (csize == usize) or kCodecGDeflate
  uint8_t reserved[3];  // 5: zero
};

struct Superblock {
  char magic[8];                      //   0: kMagic
  uint16_t major;                     //   8: kMajor
  uint16_t minor;                     //  10: kMinor
  uint32_t sb_size;                   //  12: kSuperblockSize
  uint64_t compat;                    //  16: CompatFeature bits
  uint64_t incompat;                  //  24: IncompatFeature bits
  uint8_t uuid[16];                   //  32: derived from the contents (same tree -> same uuid)
  char label[64];                     //  48: UTF-8 or any bytes, NUL-padded, not necessarily terminated
  int64_t time_sec;                   // 112: image timestamp (see FORMAT.md: SOURCE_DATE_EPOCH, ...)
  uint32_t time_nsec;                 // 120
  uint32_t page_log2;                 // 124: page size = 1 << page_log2, 12..16
  uint64_t image_size;                // 128: bytes; the file is at least this long
  uint64_t data_offset;               // 136: kDataOffset
  uint64_t data_size;                 // 144: bytes of page data (padding included)
  uint64_t meta_offset;               // 152: data_offset + data_size rounded up to kSectionAlign
  uint64_t meta_size;                 // 160: stored bytes; meta_offset + meta_size == image_size
  uint64_t meta_checksum;             // 168: checksum64 of the stored metadata region
  uint32_t inode_count;               // 176: == sections[kSecInodes].size / sizeof(Inode)
  uint32_t mkfs_level;                // 180: GDeflate level used (informational)
  uint64_t page_count;                // 184: == sections[kSecPages].size / sizeof(PageEntry)
  uint64_t file_bytes;                // 192: sum of regular file sizes, each hardlinked file once
  SectionRef sections[kMaxSections];  // 200: indexed by Section, inside the inflated metadata
  uint64_t meta_usize;                // 392: inflated metadata bytes (the end of the last section)
  uint64_t meta_ucheck;               // 400: checksum64 of the inflated metadata
  uint32_t meta_blocks;               // 408: MetaBlock entries at meta_offset
  uint32_t reserved0;                 // 412: zero
  // Layered images (kIncompatLayers); all four zero otherwise.
  uint64_t layers_offset;    // 416: meta_offset + meta_size rounded up to kSectionAlign
  uint32_t layers_size;      // 424: bytes; layers_offset + layers_size == image_size
  uint32_t layer_count;      // 428: LayerRef records, 1..kMaxLayers
  uint64_t layers_checksum;  // 432: checksum64 of the layer region
  // Signed images (kCompatSigned, 2.2); all three zero otherwise.
  uint64_t sig_offset;    // 440: image_size rounded up to kSectionAlign
  uint64_t sig_size;      // 448: bytes: sizeof(SignatureHeader) + kDigestSize * page_count
  uint64_t sig_checksum;  // 456: checksum64 of the signature region (damage, not attack)
  uint8_t reserved[40];   // 464: zero
  uint64_t sb_checksum;   // 504: checksum64 of bytes [0, 504)
};

// The signature region of a signed image (FORMAT.md 7.1): this header, then one SHA-256 digest of the
// stored bytes of each page entry, in page-table order (entries that share bytes repeat the digest).
inline constexpr char kSigMagic[8] = {'G', 'D', 'F', 'S', 'S', 'I', 'G', '1'};
inline constexpr uint32_t kSigEd25519 = 1;   // Ed25519 (RFC 8032, pure) over the 32-byte root
inline constexpr uint32_t kDigestSize = 32;  // SHA-256
struct SignatureHeader {
  char magic[8];              //   0: kSigMagic
  uint32_t algorithm;         //   8: kSigEd25519
  uint32_t header_size;       //  12: sizeof(SignatureHeader)
  uint64_t digest_count;      //  16: == page_count
  uint8_t meta_digest[32];    //  24: SHA-256 of the stored metadata region
  uint8_t layers_digest[32];  //  56: SHA-256 of the layer region; zeros when not layered
  uint8_t key_id[32];         //  88: SHA-256 of the signer's raw 32-byte Ed25519 public key
  uint8_t signature[64];      // 120: Ed25519 signature of the root; the one field the root leaves out
  uint8_t reserved[8];        // 184: zero
};

// Page codecs. 0 is not a codec: holes are not pages (see SparseFile).
enum Codec : uint8_t {
  kCodecStored = 1,    // the bytes themselves; csize == usize
  kCodecGDeflate = 2,  // one raw GDeflate page bitstream (codec/include/gdfs/gdeflate.h)
  kCodecBitpack = 3,   // the bit-plane coder (codec/include/gdfs/bitpack.h); needs kIncompatBitpack
  // A GDeflate page bitstream of the page's bytes after the x86 branch filter (codec/include/gdfs/
  // x86_filter.h): a reader decodes it, then runs the filter's inverse. Needs kIncompatX86 (2.3).
  kCodecGDeflateX86 = 4,
};
// Whether a PageEntry::codec byte names a codec of this format version.
inline constexpr bool known_codec(uint8_t codec) {
  return codec >= kCodecStored && codec <= kCodecGDeflateX86;
}
enum PageFlag : uint8_t {
  kPageDeduped = 1u << 0,   // same bytes as an earlier entry (offset, csize and checksums equal)
  kPageTailPack = 1u << 1,  // a tail pack: the concatenated tails of several files, not a file page
  kPageKnownFlags = kPageDeduped | kPageTailPack,
};

// One page: where its stored bytes are, how to decode them, and what they must decode to.
struct PageEntry {
  uint64_t offset;  //  0: absolute image offset, multiple of kPageAlign, inside the data region
  uint32_t csize;   //  8: stored bytes, >= 1
  uint32_t usize;   // 12: decoded bytes, 1..page size
  uint32_t ccheck;  // 16: checksum32 of the stored bytes
  uint32_t ucheck;  // 20: checksum32 of the decoded bytes
  uint8_t codec;    // 24: Codec
  uint8_t flags;    // 25: PageFlag bits
  uint16_t param;   // 26: codec parameter; 0 for stored and GDeflate, bitpack::to_param for bitpack
  uint32_t layer;   // 28: 0: `offset` is in this image; k: in the image of LayerRef k - 1
};

// A base image whose page bytes a layered image uses (FORMAT.md 4.3). A reader opens the base, checks
// that its superblock is exactly this one, and reads only page bytes from it: each page is still
// checked by its own entry's checksums, so a base never hands a reader a wrong byte.
inline constexpr uint32_t kMaxLayers = 16;
inline constexpr uint32_t kMaxLayerHint = 1024;  // bytes of one location hint
struct LayerRef {
  uint8_t uuid[16];      //  0: the base's superblock uuid
  uint64_t sb_checksum;  // 16: the base's superblock sb_checksum: this exact base, no other
  uint64_t image_size;   // 24: the base's image_size
  uint64_t data_offset;  // 32: the base's data region, which this image's entries of the layer lie in
  uint64_t data_size;    // 40
  uint32_t hint;         // 48: offset in the layer region of the location hint
  uint32_t hint_len;     // 52: 1..kMaxLayerHint bytes: a relative path or URL path, resolved against
                         //     this image's own location
  uint64_t reserved;     // 56: zero
};

// An inode's type is in its Attr::mode, and the type decides which name of each payload word below
// applies; only that name is read or written. Fifos and sockets use no payload word, symlinks and
// devices not the third: those words are zero.
// Inodes are small and attributes are shared: most trees have far fewer distinct (mode, nlink, owner,
// mtime, xattrs) records than inodes (197 for the 83,731 inodes of the Linux source tree).
struct Inode {
  uint32_t attr;            //  0: Attr index
  union {                   //  4
    uint32_t first_page;    // regular: index of the PageEntry of its first page
    uint32_t first_dirent;  // dir: index of its first Dirent
    uint32_t target;        // symlink: blob offset of the target
    uint32_t rdev_major;    // chr/blk
  };
  union {                   //  8
    uint32_t tail_entry;    // regular: PageEntry index of the tail pack holding its tail, or kNone
    uint32_t dirent_count;  // dir
    uint32_t target_len;    // symlink: == size
    uint32_t rdev_minor;    // chr/blk
  };
  union {                  // 12
    uint32_t tail_offset;  // regular: byte offset of its tail inside the decoded tail pack (0 if none)
    uint32_t parent;       // dir: the parent directory's inode number (the root's is itself)
  };
  uint64_t size;  // 16: st_size (files: bytes; symlinks: target length; dirs: see FORMAT.md;
                  //     devices, fifos, sockets: 0)
};

// File types in Attr::mode: POSIX's S_IF* values, named here so readers need no <sys/stat.h> and never
// spell them as octal literals.
inline constexpr uint32_t kTypeMask = 0170000u;
inline constexpr uint32_t kTypeFifo = 0010000u;
inline constexpr uint32_t kTypeChr = 0020000u;
inline constexpr uint32_t kTypeDir = 0040000u;
inline constexpr uint32_t kTypeBlk = 0060000u;
inline constexpr uint32_t kTypeReg = 0100000u;
inline constexpr uint32_t kTypeLnk = 0120000u;
inline constexpr uint32_t kTypeSock = 0140000u;

// Bits 16..31 of Attr::mode are gdfs flags (kInodeSparse), bits 0..15 the POSIX st_mode.
inline constexpr uint32_t kInodeSparse = 1u << 16;  // a regular file with a SparseFile record
inline constexpr uint32_t kInodeKnownFlags = kInodeSparse;

struct Attr {
  uint32_t mode;        //  0: st_mode (type and permission bits) | gdfs flags
  uint32_t nlink;       //  4: directory entries naming the inode (dirs: 2 + subdirectories)
  uint32_t uid;         //  8
  uint32_t gid;         // 12
  int64_t mtime_sec;    // 16
  uint32_t mtime_nsec;  // 24: < 1e9
  uint32_t xattr;       // 28: XattrSet index or kNone
};

// A directory entry. The name lives in the blob as one length byte (1..255) then the name's bytes.
struct Dirent {
  uint32_t name;  // 0: blob offset of the length-prefixed name
  uint32_t ino;   // 4: inode number, 1..inode_count
};

// The holes of one sparse regular file: logical pages that read as zeros and have no PageEntry.
struct SparseFile {
  uint32_t ino;         //  0: the file's inode number; the table is sorted by it, no duplicates
  uint32_t first_run;   //  4: index of its first HoleRun
  uint32_t run_count;   //  8: >= 1
  uint32_t hole_pages;  // 12: total pages in its runs
};
struct HoleRun {
  uint32_t first_page;    // 0: logical page index where the run starts; runs are sorted, disjoint
  uint32_t count;         // 4: >= 1
  uint32_t holes_before;  // 8: sum of `count` over the file's earlier runs
};

struct XattrSet {
  uint32_t first_pair;  // 0
  uint32_t count;       // 4: >= 1
};
struct XattrPair {
  uint32_t key;        // 0: blob offset of the length-prefixed key (1..255 bytes, e.g. "user.foo")
  uint32_t value;      // 4: blob offset of the value
  uint32_t value_len;  // 8: bytes, <= 65536
};

static_assert(sizeof(SectionRef) == 16);
static_assert(sizeof(Superblock) == kSuperblockSize);
static_assert(offsetof(Superblock, uuid) == 32 && offsetof(Superblock, label) == 48);
static_assert(offsetof(Superblock, time_sec) == 112 && offsetof(Superblock, page_log2) == 124);
static_assert(offsetof(Superblock, image_size) == 128 && offsetof(Superblock, meta_checksum) == 168);
static_assert(offsetof(Superblock, inode_count) == 176 && offsetof(Superblock, page_count) == 184);
static_assert(offsetof(Superblock, file_bytes) == 192 && offsetof(Superblock, sections) == 200);
static_assert(offsetof(Superblock, meta_usize) == 392 && offsetof(Superblock, meta_ucheck) == 400);
static_assert(offsetof(Superblock, meta_blocks) == 408 && offsetof(Superblock, sig_offset) == 440);
static_assert(offsetof(Superblock, sig_checksum) == 456 && offsetof(Superblock, reserved) == 464);
static_assert(sizeof(SignatureHeader) == 192 && offsetof(SignatureHeader, signature) == 120);
static_assert(offsetof(SignatureHeader, meta_digest) == 24 && offsetof(SignatureHeader, key_id) == 88);
static_assert(offsetof(Superblock, layers_offset) == 416 && offsetof(Superblock, layer_count) == 428);
static_assert(offsetof(Superblock, layers_checksum) == 432 && offsetof(Superblock, sb_checksum) == 504);
static_assert(sizeof(LayerRef) == 64 && offsetof(LayerRef, hint) == 48);
static_assert(sizeof(MetaBlock) == 8 && offsetof(MetaBlock, codec) == 4);
static_assert(sizeof(PageEntry) == 32);
static_assert(offsetof(PageEntry, ccheck) == 16 && offsetof(PageEntry, codec) == 24);
static_assert(offsetof(PageEntry, param) == 26 && offsetof(PageEntry, layer) == 28);
static_assert(sizeof(Inode) == 24);
static_assert(offsetof(Inode, first_page) == 4 && offsetof(Inode, first_dirent) == 4 &&
              offsetof(Inode, target) == 4 && offsetof(Inode, rdev_major) == 4);
static_assert(offsetof(Inode, tail_entry) == 8 && offsetof(Inode, dirent_count) == 8 &&
              offsetof(Inode, target_len) == 8 && offsetof(Inode, rdev_minor) == 8);
static_assert(offsetof(Inode, tail_offset) == 12 && offsetof(Inode, parent) == 12 &&
              offsetof(Inode, size) == 16);
static_assert(sizeof(Attr) == 32);
static_assert(offsetof(Attr, uid) == 8 && offsetof(Attr, mtime_sec) == 16 && offsetof(Attr, xattr) == 28);
static_assert(sizeof(Dirent) == 8 && sizeof(SparseFile) == 16 && sizeof(HoleRun) == 12);
static_assert(sizeof(XattrSet) == 8 && sizeof(XattrPair) == 12);
static_assert(kSectionCount <= kMaxSections);
static_assert(kSectionEntrySize[kSecInodes] == sizeof(Inode) && kSectionEntrySize[kSecAttrs] == sizeof(Attr));
static_assert(kSectionEntrySize[kSecDirents] == sizeof(Dirent) &&
              kSectionEntrySize[kSecPages] == sizeof(PageEntry));
static_assert(kSectionEntrySize[kSecSparse] == sizeof(SparseFile) &&
              kSectionEntrySize[kSecHoleRuns] == sizeof(HoleRun));
static_assert(kSectionEntrySize[kSecXattrSets] == sizeof(XattrSet) &&
              kSectionEntrySize[kSecXattrPairs] == sizeof(XattrPair));

// Helpers every reader and writer agree on.
inline constexpr uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}
// The lowest minor version an image with these feature bits needs (what writers write).
inline constexpr uint16_t minor_needed(uint64_t incompat, uint64_t compat) {
  if (incompat & kIncompatX86) return kMinorX86;
  if (compat & kCompatSigned) return kMinorSigned;
  if (incompat & kIncompatLayers) return kMinorLayers;
  return kMinor;
}
// Logical pages of a file of `size` bytes with pages of 1 << log2 bytes.
inline constexpr uint64_t page_count_of(uint64_t size, uint32_t log2) {
  return (size + (uint64_t{1} << log2) - 1) >> log2;
}

}  // namespace gdfs::format
