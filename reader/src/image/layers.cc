// Layered images (FORMAT.md 4.3): the layer table, and opening the bases it names. A base is trusted for
// nothing but page bytes, and only once its superblock is exactly the one recorded; each page read from
// it is still checked against this image's own entry.
#include <algorithm>
#include <cstring>
#include <string>

#include "fetch/layered_source.h"
#include "gdfs/checksum.h"
#include "gdfs/image.h"

namespace gdfs {
namespace {

bool fits(uint64_t a, uint64_t b, uint64_t limit) {
  return a <= limit && b <= limit - a;
}

// A hint is resolved against the image's own location, never elsewhere: it may not name another host
// or an absolute path, so that an image from an untrusted server cannot send its reader anywhere else.
bool hint_ok(std::string_view h) {
  return !h.empty() && h.front() != '/' && h.find('\0') == std::string_view::npos &&
         h.find("://") == std::string_view::npos;
}

// `hint` next to `location` (a path or URL; a URL's query string is not kept: a presigned URL's
// signature is for its own object).
std::string resolve_hint(const std::string& location, const std::string& hint) {
  std::string base = location.substr(0, location.find_first_of(is_url(location) ? "?#" : ""));
  const size_t slash = base.rfind('/');
  if (is_url(base) && (slash == std::string::npos || slash < base.find("://") + 3)) return base + "/" + hint;
  if (slash == std::string::npos) return hint;
  return base.substr(0, slash + 1) + hint;
}

std::string uuid_text(const uint8_t* u) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += kHex[u[i] >> 4];
    s += kHex[u[i] & 15];
  }
  return s;
}

// Why `source` is not the base `ref` describes; "" when it is.
std::string mismatch(Source& source, const format::LayerRef& ref) {
  format::Superblock sb{};
  ReadRange r{0, sizeof sb, reinterpret_cast<uint8_t*>(&sb)};
  if (source.size() < sizeof sb) return "too small to be a gdfs image";
  source.read({&r, 1});
  if (!r.ok) return "read error";
  if (std::memcmp(sb.magic, format::kMagic, sizeof sb.magic) != 0) return "not a gdfs image";
  if (checksum64(&sb, offsetof(format::Superblock, sb_checksum)) != sb.sb_checksum)
    return "superblock checksum mismatch";
  if (sb.sb_checksum != ref.sb_checksum || std::memcmp(sb.uuid, ref.uuid, sizeof sb.uuid) != 0 ||
      sb.image_size != ref.image_size || sb.data_offset != ref.data_offset || sb.data_size != ref.data_size)
    return "it is another image (uuid " + uuid_text(sb.uuid) + ", expected " + uuid_text(ref.uuid) + ")";
  if (source.size() < ref.image_size) return "truncated";
  if (source.size() >= engine::kLayerStride) return "too large";
  return "";
}

}  // namespace

void Image::load_layer_table(std::span<const uint8_t> region) {
  if (checksum64(region.data(), region.size()) != sb_.layers_checksum) fail("layer table checksum mismatch");
  for (uint32_t k = 0; k < sb_.layer_count; ++k) {
    Layer layer;
    std::memcpy(&layer.ref, region.data() + k * sizeof(format::LayerRef), sizeof layer.ref);
    const format::LayerRef& ref = layer.ref;
    const std::string which = "layer " + std::to_string(k + 1) + ": ";
    if (ref.hint_len == 0 || ref.hint_len > format::kMaxLayerHint ||
        !fits(ref.hint, ref.hint_len, region.size()) || ref.hint < sb_.layer_count * sizeof(format::LayerRef))
      fail(which + "bad location hint");
    layer.hint.assign(reinterpret_cast<const char*>(region.data()) + ref.hint, ref.hint_len);
    if (!hint_ok(layer.hint)) fail(which + "location hint is not a relative path");
    if (ref.reserved != 0 || ref.data_offset < format::kSuperblockSize ||
        !fits(ref.data_offset, ref.data_size, ref.image_size) || ref.image_size >= engine::kLayerStride)
      fail(which + "bad base regions");
    layers_.push_back(std::move(layer));
  }
}

bool Image::read_layer(uint32_t layer, uint64_t offset, uint32_t length, uint8_t* out) const {
  if (layer > layers_.size() || offset >= engine::kLayerStride) return false;
  ReadRange r{offset + layer * engine::kLayerStride, length, out};
  source_->read({&r, 1});
  return r.ok;
}

void Image::open_layers(const std::string& location, const SourceOptions& options) {
  if (source_->size() >= engine::kLayerStride) fail("too large for a layered image");
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::move(source_));
  // Candidates the caller named are opened once each and taken by identity, in any order.
  std::vector<std::unique_ptr<Source>> given;
  std::vector<std::string> given_at;
  for (const std::string& b : options.bases) {
    try {
      given.push_back(open_source(b, options));
      given_at.push_back(b);
    } catch (const ImageError&) {
      // Not fatal: the base may be where the hint says. A base that is nowhere is reported below.
    }
  }
  for (size_t k = 0; k < layers_.size(); ++k) {
    Layer& layer = layers_[k];
    std::unique_ptr<Source> found;
    for (size_t i = 0; i < given.size() && !found; ++i)
      if (given[i] && mismatch(*given[i], layer.ref).empty())
        found = std::move(given[i]), layer.location = given_at[i];
    if (!found) {
      layer.location = resolve_hint(location, layer.hint);
      const std::string what =
          "base image " + std::to_string(k + 1) + " '" + url_for_messages(layer.location) + "'";
      try {
        found = open_source(layer.location, options);
      } catch (const ImageError& e) {
        fail(what + " cannot be opened (" + e.what() + "); give its location with the base option");
      }
      if (const std::string why = mismatch(*found, layer.ref); !why.empty())
        fail(what + " is not the image this one was built on: " + why);
    }
    sources.push_back(std::move(found));
  }
  source_ = engine::make_layered_source(std::move(sources));
  // The read path addresses every page in the layered source's space.
  layered_pages_.assign(pages_.begin(), pages_.end());
  for (format::PageEntry& e : layered_pages_) e.offset += e.layer * engine::kLayerStride;
  pages_ = layered_pages_;
}

}  // namespace gdfs
