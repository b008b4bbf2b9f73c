// Editing an image's metadata behind valid checksums, for the corruption tests, the image fuzzer and
// its seeds. Since format 2.0 the metadata is stored compressed, so a record cannot be changed in place:
// unpack_image() inflates it, the caller edits the records, and repack_image() encodes it again and
// recomputes every checksum, which is what a faulty or hostile writer would produce.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/meta_codec.h"

namespace gdfs::surgery {

using Bytes = std::vector<uint8_t>;

inline format::Superblock superblock(const Bytes& image) {
  format::Superblock sb{};
  if (image.size() >= sizeof sb) std::memcpy(&sb, image.data(), sizeof sb);
  return sb;
}

inline void put_superblock(Bytes& image, format::Superblock sb) {
  sb.sb_checksum = checksum64(&sb, offsetof(format::Superblock, sb_checksum));
  std::memcpy(image.data(), &sb, sizeof sb);
}

// Whether the image's stored metadata region lies inside `image`.
inline bool region_fits(const Bytes& image, const format::Superblock& sb) {
  return sb.meta_offset <= image.size() && sb.meta_size <= image.size() - sb.meta_offset;
}

// The inflated metadata of a well-formed image (throws std::runtime_error otherwise).
struct Unpacked {
  format::Superblock sb{};
  Bytes meta;
  template <typename T>
  T* record(format::Section s, size_t i = 0) {
    return reinterpret_cast<T*>(meta.data() + sb.sections[s].offset) + i;
  }
};

inline Unpacked unpack_image(const Bytes& image) {
  Unpacked u;
  u.sb = superblock(image);
  if (image.size() < sizeof u.sb || !region_fits(image, u.sb) || !meta::check_layout(u.sb).empty())
    throw std::runtime_error("unpack_image: not a well-formed image");
  const meta::Decoded d = meta::inflate(u.sb, {image.data() + u.sb.meta_offset, u.sb.meta_size}, u.meta, 1);
  if (!d.error.empty()) throw std::runtime_error("unpack_image: " + d.error);
  return u;
}

// `image` with its metadata replaced by `u.meta` encoded at `level` (0: every block stored), and the
// superblock by `u.sb` with the metadata fields and every checksum recomputed. The data region stays.
inline Bytes repack_image(const Bytes& image, const Unpacked& u, int level = 6) {
  const meta::Encoded e = meta::encode(u.meta, {u.sb.sections, format::kSectionCount}, level, 1);
  Bytes out(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(u.sb.meta_offset));
  out.insert(out.end(), e.region.begin(), e.region.end());
  format::Superblock sb = u.sb;
  sb.meta_size = e.region.size();
  sb.image_size = out.size();
  if (sb.incompat & format::kIncompatLayers) {  // the layer region follows the metadata, as it was
    const Bytes layers(image.begin() + static_cast<std::ptrdiff_t>(u.sb.layers_offset),
                       image.begin() + static_cast<std::ptrdiff_t>(u.sb.layers_offset + u.sb.layers_size));
    out.resize(format::align_up(out.size(), format::kSectionAlign));
    sb.layers_offset = out.size();
    out.insert(out.end(), layers.begin(), layers.end());
    sb.image_size = out.size();
  }
  sb.meta_blocks = e.blocks;
  sb.meta_usize = u.meta.size();
  sb.meta_checksum = checksum64(e.region.data(), e.region.size());
  sb.meta_ucheck = checksum64(u.meta.data(), u.meta.size());
  put_superblock(out, sb);
  return out;
}

// Recomputes the checksums of whatever the image holds now: meta_checksum over the stored region,
// meta_ucheck over what it inflates to (when it does), sb_checksum last. Lets a change to the
// superblock, the block table or a block reach the checks behind the checksums.
inline void reseal(Bytes& image) {
  if (image.size() < sizeof(format::Superblock)) return;
  format::Superblock sb = superblock(image);
  if (region_fits(image, sb)) {
    sb.meta_checksum = checksum64(image.data() + sb.meta_offset, sb.meta_size);
    Bytes meta;
    if (meta::check_layout(sb).empty() &&
        meta::inflate(sb, {image.data() + sb.meta_offset, sb.meta_size}, meta, 1).error.empty())
      sb.meta_ucheck = checksum64(meta.data(), meta.size());
  }
  put_superblock(image, sb);
}

// The signature region of a signed image (empty if there is none inside `image`).
inline Bytes signature_region(const Bytes& image) {
  const format::Superblock sb = superblock(image);
  if (!(sb.compat & format::kCompatSigned) || sb.sig_offset > image.size() ||
      sb.sig_size > image.size() - sb.sig_offset)
    return {};
  return Bytes(image.begin() + static_cast<std::ptrdiff_t>(sb.sig_offset),
               image.begin() + static_cast<std::ptrdiff_t>(sb.sig_offset + sb.sig_size));
}

// `image` cut at image_size with `region` as its signature region, every checksum made to match: what a
// hostile server can do with another image's (or its own altered) signature region.
inline void graft_signature(Bytes& image, const Bytes& region) {
  format::Superblock sb = superblock(image);
  image.resize(format::align_up(sb.image_size, format::kSectionAlign));
  sb.compat |= format::kCompatSigned;
  sb.sig_offset = image.size();
  sb.sig_size = region.size();
  sb.sig_checksum = checksum64(region.data(), region.size());
  image.insert(image.end(), region.begin(), region.end());
  put_superblock(image, sb);
}

}  // namespace gdfs::surgery
