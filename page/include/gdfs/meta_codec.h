// The stored form of an image's metadata (docs/FORMAT.md, section 5.5): how mkfs turns the inflated
// metadata (fixed-size records in sections, used in place by readers) into the compressed region it
// writes, and how a reader turns that region back, checking everything it is given on the way.
//
// A section's stored form is its records with some fields delta-coded (monotone offsets and inode
// numbers become small steps), then transposed byte by byte: byte k of every record, then byte k+1.
// Neighbouring records differ in few bytes, so the transposed form holds long runs that GDeflate codes
// well. The stored form is cut into 64 KiB blocks, each GDeflate or stored, listed in a block table.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gdfs/format.h"

namespace gdfs::meta {

// A field that is delta-coded in a section's stored form: each record stores its value minus the
// previous record's (the first record's minus 0), modulo 2^(8 * width).
struct DeltaField {
  uint32_t offset;  // in the record
  uint32_t width;   // bytes: 4 or 8
};
std::span<const DeltaField> delta_fields(format::Section s);

// The stored form of section `s` from its inflated bytes (in.size() bytes, a multiple of the entry
// size), and back. `out` receives in.size() bytes and must not overlap `in`.
void to_stored(format::Section s, std::span<const uint8_t> in, uint8_t* out);
void from_stored(format::Section s, std::span<const uint8_t> in, uint8_t* out);

// Section refs for inflated sections of these sizes, laid out as the format requires: section 0 at 0,
// each next one at the end of the previous rounded up to 8. Unused slots are zero.
std::array<format::SectionRef, format::kMaxSections> layout_sections(
    const std::array<uint64_t, format::kSectionCount>& sizes);
// Blocks a section of `size` inflated bytes is stored in.
inline uint64_t blocks_of(uint64_t size) {
  return (size + format::kMetaBlockSize - 1) / format::kMetaBlockSize;
}

struct Encoded {
  std::vector<uint8_t> region;  // the MetaBlock table, then the blocks: what goes at meta_offset
  uint32_t blocks = 0;          // MetaBlock entries
  std::array<uint64_t, format::kSectionCount> stored{};  // bytes of each section's blocks, padding included
  uint64_t table = 0;                                    // bytes of the MetaBlock table
};
// Encodes inflated metadata `meta` (laid out as `sections` says) at GDeflate `level`, on up to
// `threads` threads. A block is GDeflate only when that is smaller than its stored form. Deterministic:
// the same input gives the same bytes at any thread count.
Encoded encode(std::span<const uint8_t> meta, std::span<const format::SectionRef> sections, int level,
               unsigned threads);

// The reader's side. Checks the superblock's metadata fields (section layout, meta_usize, meta_blocks):
// returns what is wrong, or "" when they are consistent. Needs nothing but the superblock, so that a
// crafted superblock is refused before any allocation.
std::string check_layout(const format::Superblock& sb);

struct Decoded {
  std::string error;                                     // "" on success
  std::array<uint64_t, format::kSectionCount> stored{};  // as Encoded::stored
  uint64_t table = 0;                                    // as Encoded::table
};
// Inflates the stored region (sb.meta_size bytes, whose meta_checksum the caller has verified) into
// `out` (resized to sb.meta_usize), on up to `threads` threads. check_layout(sb) must have passed. Every
// block table entry and block is untrusted: a bad one is an error, never a read or write outside the
// buffers. The caller then checks meta_ucheck over `out`.
Decoded inflate(const format::Superblock& sb, std::span<const uint8_t> region, std::vector<uint8_t>& out,
                unsigned threads);

}  // namespace gdfs::meta
