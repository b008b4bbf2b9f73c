// Signed images (FORMAT.md 7.1): the digests, the root they are bound under, and the Ed25519 keys that
// sign and check it. mkfs.gdfs --sign and the reader both compute the root here, so the two can never
// disagree on what a signature covers. OpenSSL's libcrypto does the cryptography; nothing of it shows
// in this header.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gdfs/format.h"

namespace gdfs::trust {

using Digest = std::array<uint8_t, format::kDigestSize>;
using Signature = std::array<uint8_t, 64>;

// SHA-256 (libcrypto's EVP_Digest: it uses the CPU's SHA extensions where there are some).
Digest sha256(const void* data, size_t size);
inline bool digest_equal(const uint8_t* a, const uint8_t* b) {
  uint8_t diff = 0;  // no early exit: the time taken says nothing about where two digests differ
  for (uint32_t i = 0; i < format::kDigestSize; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

// The root a signature signs: SHA-256 over the domain tag, the superblock (sb_checksum and
// sig_checksum as zeros: they cover the signature itself), the header up to its signature field, and
// the page digests. Everything else in the image is reached from these.
Digest signed_root(const format::Superblock& sb, const format::SignatureHeader& header,
                   std::span<const uint8_t> page_digests);

// Why `region` (the whole signature region of an image with superblock `sb`) is not well formed; "" when
// it is: magic, algorithm, sizes, digest count and zero reserved bytes. Checks no digest.
std::string check_region(const format::Superblock& sb, std::span<const uint8_t> region);

// A public key a reader trusts: its raw Ed25519 bytes and fingerprint (SHA-256 of those bytes).
struct PublicKey {
  std::array<uint8_t, 32> raw{};
  Digest fingerprint{};
};
// Every public key in a PEM file (`openssl pkey -pubout` writes one; several may be concatenated, so
// that readers trust an old and a new key while images are re-signed). Throws ImageError naming the
// file when it cannot be read or holds no Ed25519 public key.
std::vector<PublicKey> load_public_keys(const std::string& path);
// Whether `sig` is `key`'s signature of `root`.
bool verify(const PublicKey& key, const Digest& root, const uint8_t* sig);

// A signing key: a PEM private key as `openssl genpkey -algorithm ed25519` writes it.
class SigningKey {
 public:
  explicit SigningKey(const std::string& path);  // throws ImageError naming the file
  ~SigningKey();
  SigningKey(const SigningKey&) = delete;
  SigningKey& operator=(const SigningKey&) = delete;
  const PublicKey& public_key() const { return public_; }
  Signature sign(const Digest& root) const;

 private:
  struct Key;
  std::unique_ptr<Key> key_;
  PublicKey public_;
};

// Lower-case hex, for fingerprints in messages and `gdfs-inspect info`.
std::string hex(std::span<const uint8_t> bytes);

}  // namespace gdfs::trust
