// Decoding one page of any codec. docs/FORMAT.md, "Integrity", says why both checksums are checked.
#include <cstring>
#include <vector>

#include "gdfs/checksum.h"
#include "gdfs/page.h"
#include "gdfs/x86_filter.h"

namespace gdfs {

std::string codec_name(uint8_t codec) {
  switch (codec) {
    case format::kCodecStored:
      return "stored";
    case format::kCodecGDeflate:
      return "gdeflate";
    case format::kCodecBitpack:
      return "bitpack";
    case format::kCodecGDeflateX86:
      return "gdeflate-x86";
  }
  return "codec " + std::to_string(codec);
}

struct PageDecoder::Impl {
  explicit Impl(gdeflate::DecodePath g, bitpack::DecodePath b) : gdeflate(g), bitpack_path(b) {}
  gdeflate::Decompressor gdeflate;
  bitpack::DecodePath bitpack_path;
  std::vector<uint8_t> stored;
};

PageDecoder::PageDecoder(gdeflate::DecodePath gdeflate_path, bitpack::DecodePath bitpack_path)
    : impl_(std::make_unique<Impl>(gdeflate_path, bitpack_path)) {}
PageDecoder::~PageDecoder() = default;
PageDecoder::PageDecoder(PageDecoder&&) noexcept = default;
PageDecoder& PageDecoder::operator=(PageDecoder&&) noexcept = default;

uint8_t* PageDecoder::stored_buffer(size_t n) {
  if (impl_->stored.size() < n) impl_->stored.resize(n);
  return impl_->stored.data();
}

PageStatus PageDecoder::decode_codec(uint8_t codec, uint16_t param, const uint8_t* in, size_t in_size,
                                     uint8_t* out, size_t out_size) {
  switch (codec) {
    case format::kCodecStored:
      if (in_size != out_size) return PageStatus::kSizeMismatch;
      std::memcpy(out, in, out_size);
      return PageStatus::kOk;
    case format::kCodecGDeflate:
      return impl_->gdeflate.decompress(in, in_size, out, out_size);
    case format::kCodecGDeflateX86: {
      const PageStatus s = impl_->gdeflate.decompress(in, in_size, out, out_size);
      if (s == PageStatus::kOk) x86::decode(out, out_size);
      return s;
    }
    case format::kCodecBitpack: {
      const auto p = bitpack::from_param(param);  // Image::open validated it; a bare entry may not be
      if (!p) return PageStatus::kUnsupported;
      return bitpack::decompress(in, in_size, *p, out, out_size, impl_->bitpack_path);
    }
  }
  return PageStatus::kUnsupported;
}

PageStatus PageDecoder::decode(const format::PageEntry& e, const uint8_t* stored, uint8_t* out,
                               bool stored_verified) {
  if (!stored_verified && checksum32(stored, e.csize) != e.ccheck) return PageStatus::kStoredChecksum;
  switch (decode_codec(e.codec, e.param, stored, e.csize, out, e.usize)) {
    case PageStatus::kOk:
      break;
    case PageStatus::kUnsupported:
      // A bitpack parameter this build cannot read is damage (the format defines them all); an
      // unknown codec number is a newer image.
      return e.codec == format::kCodecBitpack ? PageStatus::kDecodeError : PageStatus::kUnsupported;
    default:
      return PageStatus::kDecodeError;
  }
  // A stored page's bytes are its stored bytes, checked above (or by the digest that covers them): when
  // its two checksums agree, as mkfs writes them, hashing the copy again could not fail.
  if (e.codec == format::kCodecStored && e.ucheck == e.ccheck && e.usize == e.csize) return PageStatus::kOk;
  return checksum32(out, e.usize) == e.ucheck ? PageStatus::kOk : PageStatus::kChecksum;
}

}  // namespace gdfs
