// mkfs.gdfs --sign KEY (FORMAT.md 7.1): the signature region of a finished image. Runs after the page
// data and the metadata are final and before the superblock is written, so the image is renamed into
// place already signed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gdfs/format.h"

namespace gdfs::mkfs {

class Base;
class ImageWriter;

// Hashes every entry's stored bytes (in `image`, or for a layered image in `base`'s chain), binds them
// with the metadata and layer region under the root, and signs it with the PEM private key at
// `key_path`. Sets sb's minor, compat bit and signature fields; returns the region to write at
// sb.sig_offset. `threads` hash in parallel. Throws MkfsError.
std::vector<uint8_t> sign_image(const std::string& key_path, format::Superblock& sb,
                                std::span<const uint8_t> meta, std::span<const uint8_t> layers,
                                std::span<const format::PageEntry> entries, const ImageWriter& image,
                                const Base* base, unsigned threads);

}  // namespace gdfs::mkfs
