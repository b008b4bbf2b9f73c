// Signed images (FORMAT.md 7.1): checking the signature at open, and each page's stored bytes against
// their signed digest as they are read. A trusted image is refused with one line naming what is wrong,
// before its metadata is inflated, validated or used.
#include <cerrno>
#include <cstring>

#include "gdfs/checksum.h"
#include "gdfs/image.h"
#include "gdfs/trust.h"

namespace gdfs {

void Image::verify_signature(const std::string& key_file, std::span<const uint8_t> meta,
                             std::span<const uint8_t> layers) {
  using namespace format;
  auto refuse = [&](const std::string& why) {
    throw ImageError(name_ + ": refused: " + why + " (trusted_key " + key_file + ")", EACCES);
  };
  const std::vector<trust::PublicKey> keys = trust::load_public_keys(key_file);
  if (!(sb_.compat & kCompatSigned)) refuse("the image is not signed");
  const uint64_t file_size = source_->size();
  // Page entries are 32 bytes of the inflated metadata each: that bounds the region by what the image
  // may already make a reader allocate.
  if (sb_.sig_offset != align_up(sb_.image_size, kSectionAlign) || sb_.page_count > sb_.meta_usize / 32 ||
      sb_.sig_size != sizeof(SignatureHeader) + kDigestSize * sb_.page_count || sb_.sig_size > UINT32_MAX)
    refuse("bad signature fields in the superblock");
  if (sb_.sig_offset > file_size || sb_.sig_size > file_size - sb_.sig_offset)
    refuse("the signature region is missing or truncated");
  std::vector<uint8_t> region(sb_.sig_size);
  ReadRange r{sb_.sig_offset, static_cast<uint32_t>(region.size()), region.data()};
  source_->read({&r, 1});
  if (!r.ok) fail("read error in the signature region");
  if (checksum64(region.data(), region.size()) != sb_.sig_checksum)
    refuse("signature region checksum mismatch");
  if (const std::string why = trust::check_region(sb_, region); !why.empty()) refuse(why);
  SignatureHeader h;
  std::memcpy(&h, region.data(), sizeof h);
  const trust::PublicKey* key = nullptr;
  for (const trust::PublicKey& k : keys)
    if (trust::digest_equal(k.fingerprint.data(), h.key_id)) key = &k;
  if (!key) refuse("signed by key " + trust::hex(h.key_id) + ", which is not trusted");
  const std::span<const uint8_t> digests = std::span<const uint8_t>(region).subspan(sizeof h);
  if (!trust::verify(*key, trust::signed_root(sb_, h, digests), h.signature))
    refuse("the signature does not match the image");
  // The root covers these digests; the digests cover the bytes the reader is about to use.
  if (!trust::digest_equal(trust::sha256(meta.data(), meta.size()).data(), h.meta_digest))
    refuse("the metadata does not match its signed digest");
  const trust::Digest none{};
  const trust::Digest layer_digest = layers.empty() ? none : trust::sha256(layers.data(), layers.size());
  if (!trust::digest_equal(layer_digest.data(), h.layers_digest))
    refuse("the layer table does not match its signed digest");
  page_digests_.assign(digests.begin(), digests.end());
  signer_.assign(key->fingerprint.begin(), key->fingerprint.end());
  trusted_ = true;
}

bool Image::digest_ok(uint64_t entry, const uint8_t* stored) const {
  const trust::Digest d = trust::sha256(stored, pages_[entry].csize);
  return trust::digest_equal(d.data(), page_digest(entry));
}

}  // namespace gdfs
