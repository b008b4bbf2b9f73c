// Decoding one page, with both checksums: the stored bytes are checked before the codec sees them (so
// damage is reported as damage, not as a codec error), and the decoded bytes after (so nothing the
// codec or a later bug produces reaches a reader unverified). docs/FORMAT.md, "Integrity", says why.
#include <cstring>
#include <vector>

#include "gdfs/bitpack.h"
#include "gdfs/checksum.h"
#include "gdfs/gdeflate.h"
#include "gdfs/image.h"

namespace gdfs {

const char* page_status_message(PageStatus s) {
  switch (s) {
    case PageStatus::kOk:
      return "ok";
    case PageStatus::kIoError:
      return "read error";
    case PageStatus::kStoredChecksum:
      return "stored-bytes checksum mismatch (image damaged)";
    case PageStatus::kDecodeError:
      return "page does not decode";
    case PageStatus::kChecksum:
      return "page checksum mismatch";
    case PageStatus::kUnsupportedCodec:
      return "unsupported page codec";
  }
  return "unknown page status";
}

struct PageDecoder::Impl {
  gdeflate::Decompressor gdeflate;
  std::vector<uint8_t> stored;
};

PageDecoder::PageDecoder() : impl_(std::make_unique<Impl>()) {}
PageDecoder::~PageDecoder() = default;
PageDecoder::PageDecoder(PageDecoder&&) noexcept = default;
PageDecoder& PageDecoder::operator=(PageDecoder&&) noexcept = default;

uint8_t* PageDecoder::stored_buffer(size_t n) {
  if (impl_->stored.size() < n) impl_->stored.resize(n);
  return impl_->stored.data();
}

PageStatus PageDecoder::decode(const format::PageEntry& e, const uint8_t* stored, uint8_t* out) {
  if (checksum32(stored, e.csize) != e.ccheck) return PageStatus::kStoredChecksum;
  switch (e.codec) {
    case format::kCodecStored:
      if (e.csize != e.usize) return PageStatus::kDecodeError;
      std::memcpy(out, stored, e.usize);
      break;
    case format::kCodecGDeflate:
      if (impl_->gdeflate.decompress(stored, e.csize, out, e.usize) != gdeflate::Status::kOk)
        return PageStatus::kDecodeError;
      break;
    case format::kCodecBitpack: {
      const auto p = bitpack::from_param(e.param);  // Image::open validated it; a bare entry may not be
      if (!p) return PageStatus::kDecodeError;
      if (bitpack::decompress(stored, e.csize, *p, out, e.usize) != bitpack::Status::kOk)
        return PageStatus::kDecodeError;
      break;
    }
    default:
      return PageStatus::kUnsupportedCodec;
  }
  return checksum32(out, e.usize) == e.ucheck ? PageStatus::kOk : PageStatus::kChecksum;
}

}  // namespace gdfs
