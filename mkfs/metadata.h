// The inflated metadata: every table of format.h, built from the scanned tree, the inode numbering and
// the data pass. Sections are laid out in the order of format::Section, each 8-byte aligned with zero
// padding between them; an empty section has size 0 and the offset where it would have started. This is
// what readers hold in memory; encode_metadata() turns it into the compressed region the image stores.
//
// Choices the format leaves to mkfs, all deterministic:
//  - the blob holds strings in inode order: a directory's entry names when the directory comes up, a
//    symlink's target, then the keys and values of an xattr set the first time it is used. Identical
//    byte strings are stored once (a name and an xattr value may share bytes: only bytes matter).
//  - identical xattr sets (same sorted key/value list) are stored once, numbered by first use.
//  - identical attribute records (mode, nlink, owner, mtime, xattr set) are stored once, numbered by
//    first use in inode order.
//  - a directory's size is 8 * entries + the sum of its entry names' lengths.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "gdfs/format.h"
#include "pack.h"
#include "scan.h"
#include "tree.h"

namespace gdfs::mkfs {

struct Metadata {
  std::vector<uint8_t> bytes;                                       // the inflated metadata
  std::array<format::SectionRef, format::kMaxSections> sections{};  // offsets inside `bytes`; unused 0
};

Metadata build_metadata(const ScanResult& scan, const Tree& tree, const PackResult& pack);

// The image uuid: hash128 of the metadata region and every page's ucheck, as an RFC 9562 version 8
// UUID. It depends only on the contents, so the same tree and options give the same uuid.
std::array<uint8_t, 16> content_uuid(std::span<const uint8_t> meta, std::span<const format::PageEntry> pages);

}  // namespace gdfs::mkfs
