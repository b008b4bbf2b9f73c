#include "sign.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "base.h"
#include "diag.h"
#include "gdfs/checksum.h"
#include "gdfs/trust.h"
#include "image_writer.h"

namespace gdfs::mkfs {
namespace {

// Layer k of the new image (1-based) as a layer of OLD's own Image: 0 for OLD, j for OLD's base j. The
// layer table of the new image lists images of OLD's chain, identified by their superblock checksum.
std::vector<uint32_t> chain_index(std::span<const uint8_t> layers, const Base* base) {
  std::vector<uint32_t> out{0};
  // The records come first, and the first hint right after them: its offset gives their count.
  format::LayerRef first{};
  if (base && layers.size() >= sizeof first) std::memcpy(&first, layers.data(), sizeof first);
  const size_t records = std::min<size_t>(first.hint / sizeof first, layers.size() / sizeof first);
  for (size_t k = 0; k < records; ++k) {
    format::LayerRef ref;
    std::memcpy(&ref, layers.data() + k * sizeof ref, sizeof ref);
    uint32_t j = ref.sb_checksum == base->image().superblock().sb_checksum ? 0 : format::kNone;
    for (size_t i = 0; i < base->image().layers().size() && j == format::kNone; ++i)
      if (base->image().layers()[i].ref.sb_checksum == ref.sb_checksum) j = static_cast<uint32_t>(i + 1);
    if (j == format::kNone) throw MkfsError("--sign: a layer of the new image is not in OLD's chain");
    out.push_back(j);
  }
  return out;
}

// SHA-256 of every entry's stored bytes, kDigestSize bytes each in entry order. Entries that share bytes
// (dedupe) are hashed once.
std::vector<uint8_t> page_digests(std::span<const format::PageEntry> entries, const ImageWriter& image,
                                  const Base* base, std::span<const uint8_t> layers, unsigned threads) {
  const std::vector<uint32_t> chain = chain_index(layers, base);
  std::vector<size_t> first(entries.size());
  std::map<std::pair<uint32_t, uint64_t>, size_t> seen;
  for (size_t i = 0; i < entries.size(); ++i)
    first[i] = seen.emplace(std::pair(entries[i].layer, entries[i].offset), i).first->second;
  std::vector<uint8_t> out(entries.size() * format::kDigestSize);
  auto hash = [&](size_t from, size_t step) {
    std::vector<uint8_t> buf;
    for (size_t i = from; i < entries.size(); i += step) {
      const format::PageEntry& e = entries[i];
      if (first[i] != i) continue;
      buf.resize(e.csize);
      if (e.layer == 0)
        image.read_at(e.offset, buf.data(), buf.size());
      else if (e.layer >= chain.size() ||
               !base->image().read_layer(chain[e.layer], e.offset, e.csize, buf.data()))
        throw MkfsError("--sign: cannot read a page of the base image");
      if (checksum32(buf.data(), buf.size()) != e.ccheck)
        throw MkfsError("--sign: a page's stored bytes changed since they were written");
      const trust::Digest d = trust::sha256(buf.data(), buf.size());
      std::memcpy(out.data() + i * format::kDigestSize, d.data(), d.size());
    }
  };
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(std::max(threads, 1u));
  for (unsigned t = 0; t < errors.size(); ++t)
    pool.emplace_back([&, t] {
      try {
        hash(t, errors.size());
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  for (size_t i = 0; i < entries.size(); ++i)
    if (first[i] != i)
      std::memcpy(out.data() + i * format::kDigestSize, out.data() + first[i] * format::kDigestSize,
                  format::kDigestSize);
  return out;
}

}  // namespace

std::vector<uint8_t> sign_image(const std::string& key_path, format::Superblock& sb,
                                std::span<const uint8_t> meta, std::span<const uint8_t> layers,
                                std::span<const format::PageEntry> entries, const ImageWriter& image,
                                const Base* base, unsigned threads) {
  using namespace format;
  std::unique_ptr<trust::SigningKey> key;
  try {
    key = std::make_unique<trust::SigningKey>(key_path);
  } catch (const std::exception& e) {
    throw MkfsError(std::string("--sign: ") + e.what());
  }
  const std::vector<uint8_t> digests = page_digests(entries, image, base, layers, threads);
  sb.compat |= kCompatSigned;
  sb.minor = minor_needed(sb.incompat, sb.compat);
  sb.sig_offset = align_up(sb.image_size, kSectionAlign);
  sb.sig_size = sizeof(SignatureHeader) + digests.size();
  SignatureHeader h{};
  std::memcpy(h.magic, kSigMagic, sizeof h.magic);
  h.algorithm = kSigEd25519;
  h.header_size = sizeof h;
  h.digest_count = entries.size();
  const trust::Digest md = trust::sha256(meta.data(), meta.size());
  std::memcpy(h.meta_digest, md.data(), md.size());
  if (!layers.empty()) {
    const trust::Digest ld = trust::sha256(layers.data(), layers.size());
    std::memcpy(h.layers_digest, ld.data(), ld.size());
  }
  std::memcpy(h.key_id, key->public_key().fingerprint.data(), sizeof h.key_id);
  const trust::Signature sig = key->sign(trust::signed_root(sb, h, digests));
  std::memcpy(h.signature, sig.data(), sig.size());
  std::vector<uint8_t> region(sizeof h + digests.size());
  std::memcpy(region.data(), &h, sizeof h);
  if (!digests.empty()) std::memcpy(region.data() + sizeof h, digests.data(), digests.size());
  sb.sig_checksum = checksum64(region.data(), region.size());
  return region;
}

}  // namespace gdfs::mkfs
