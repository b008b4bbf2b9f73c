// Signed images: SHA-256, the root and Ed25519 keys, on OpenSSL's libcrypto (gdfs/trust.h).
#include "gdfs/trust.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <cstring>

#include "gdfs/source.h"

namespace gdfs::trust {
namespace {

// Domain separation: a gdfs root can never be mistaken for the hash of anything else a key signs.
constexpr char kRootTag[] = "gdfs signed image root v1";

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct FileClose {
  void operator()(FILE* f) const { std::fclose(f); }
};

std::unique_ptr<FILE, FileClose> open_key_file(const std::string& path) {
  std::unique_ptr<FILE, FileClose> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw ImageError("cannot open key file '" + path + "': " + std::strerror(errno), errno);
  return f;
}

PublicKey public_of(EVP_PKEY* pkey) {
  PublicKey k;
  size_t len = k.raw.size();
  if (EVP_PKEY_get_raw_public_key(pkey, k.raw.data(), &len) != 1 || len != k.raw.size())
    throw ImageError("cannot read an Ed25519 public key", EINVAL);
  k.fingerprint = sha256(k.raw.data(), k.raw.size());
  return k;
}

// OpenSSL 3 looks an implicitly fetched algorithm up, under a lock, on every EVP_Digest call: fetched
// once here, and one context per thread, a page's digest costs the hash alone.
const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

}  // namespace

Digest sha256(const void* data, size_t size) {
  struct CtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  thread_local std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  Digest d{};
  unsigned len = 0;
  if (!ctx || !sha256_md() || EVP_DigestInit_ex2(ctx.get(), sha256_md(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data, size) != 1 || EVP_DigestFinal_ex(ctx.get(), d.data(), &len) != 1 ||
      len != d.size())
    throw ImageError("SHA-256 failed");
  return d;
}

Digest signed_root(const format::Superblock& sb, const format::SignatureHeader& header,
                   std::span<const uint8_t> page_digests) {
  format::Superblock s = sb;
  s.sb_checksum = 0;
  s.sig_checksum = 0;
  struct CtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  Digest d{};
  unsigned len = 0;
  const bool ok = ctx && sha256_md() && EVP_DigestInit_ex2(ctx.get(), sha256_md(), nullptr) == 1 &&
                  EVP_DigestUpdate(ctx.get(), kRootTag, sizeof kRootTag) == 1 &&
                  EVP_DigestUpdate(ctx.get(), &s, sizeof s) == 1 &&
                  EVP_DigestUpdate(ctx.get(), &header, offsetof(format::SignatureHeader, signature)) == 1 &&
                  EVP_DigestUpdate(ctx.get(), page_digests.data(), page_digests.size()) == 1 &&
                  EVP_DigestFinal_ex(ctx.get(), d.data(), &len) == 1 && len == d.size();
  if (!ok) throw ImageError("SHA-256 failed");
  return d;
}

std::string check_region(const format::Superblock& sb, std::span<const uint8_t> region) {
  using format::SignatureHeader;
  if (region.size() < sizeof(SignatureHeader)) return "signature region too small";
  SignatureHeader h;
  std::memcpy(&h, region.data(), sizeof h);
  if (std::memcmp(h.magic, format::kSigMagic, sizeof h.magic) != 0) return "bad signature region magic";
  if (h.algorithm != format::kSigEd25519) return "unknown signature algorithm " + std::to_string(h.algorithm);
  if (h.header_size != sizeof(SignatureHeader)) return "bad signature header size";
  if (h.digest_count != sb.page_count) return "signature digest count differs from the page count";
  if ((region.size() - sizeof h) / format::kDigestSize != h.digest_count ||
      (region.size() - sizeof h) % format::kDigestSize != 0)
    return "signature region size differs from its digest count";
  for (uint8_t b : h.reserved)
    if (b != 0) return "signature header reserved bytes are set";
  return "";
}

std::vector<PublicKey> load_public_keys(const std::string& path) {
  auto f = open_key_file(path);
  std::vector<PublicKey> keys;
  while (EVP_PKEY* raw = PEM_read_PUBKEY(f.get(), nullptr, nullptr, nullptr)) {
    Pkey pkey(raw);
    if (EVP_PKEY_id(raw) != EVP_PKEY_ED25519)
      throw ImageError("key file '" + path + "' holds a key that is not Ed25519", EINVAL);
    keys.push_back(public_of(raw));
  }
  if (keys.empty())
    throw ImageError("key file '" + path + "' holds no PEM public key (make one with openssl pkey -pubout)",
                     EINVAL);
  return keys;
}

bool verify(const PublicKey& key, const Digest& root, const uint8_t* sig) {
  Pkey pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.raw.data(), key.raw.size()));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok = pkey && ctx && EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, pkey.get()) == 1 &&
                  EVP_DigestVerify(ctx, sig, 64, root.data(), root.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

struct SigningKey::Key {
  Pkey pkey;
};

SigningKey::SigningKey(const std::string& path) : key_(std::make_unique<Key>()) {
  auto f = open_key_file(path);
  key_->pkey.reset(PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr));
  if (!key_->pkey)
    throw ImageError(
        "key file '" + path + "' holds no PEM private key (make one with openssl genpkey -algorithm ed25519)",
        EINVAL);
  if (EVP_PKEY_id(key_->pkey.get()) != EVP_PKEY_ED25519)
    throw ImageError("key file '" + path + "' holds a key that is not Ed25519", EINVAL);
  public_ = public_of(key_->pkey.get());
}

SigningKey::~SigningKey() = default;

Signature SigningKey::sign(const Digest& root) const {
  Signature sig{};
  size_t len = sig.size();
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  // Ed25519 hashes the message itself: no digest is named (NULL md).
  const bool ok = ctx && EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, key_->pkey.get()) == 1 &&
                  EVP_DigestSign(ctx, sig.data(), &len, root.data(), root.size()) == 1 && len == sig.size();
  EVP_MD_CTX_free(ctx);
  if (!ok) throw ImageError("Ed25519 signing failed");
  return sig;
}

std::string hex(std::span<const uint8_t> bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) s += kHex[b >> 4], s += kHex[b & 15];
  return s;
}

}  // namespace gdfs::trust
