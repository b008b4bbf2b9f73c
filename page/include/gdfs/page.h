// The page layer: the one owner of page codecs. Codec names, decoding one page of any codec (alone, or
// with both of its checksums) and, in gdfs/page_encode.h, encoding one page. The image reader, the CPU
// decode device, mkfs, gdfs-inspect and the benchmarks all call this, so a codec is added in one place.
// No image types here: a page is a format::PageEntry and its bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gdfs/bitpack.h"
#include "gdfs/format.h"
#include "gdfs/gdeflate.h"
#include "gdfs/page_status.h"

namespace gdfs {

// "stored", "gdeflate", "bitpack"; "codec N" for a number this build does not know.
std::string codec_name(uint8_t codec);

// Decodes single pages. Holds per-thread codec state (tables, a reusable buffer): one per thread.
class PageDecoder {
 public:
  explicit PageDecoder(gdeflate::DecodePath gdeflate_path = gdeflate::DecodePath::kAuto,
                       bitpack::DecodePath bitpack_path = bitpack::DecodePath::kAuto);
  ~PageDecoder();
  PageDecoder(PageDecoder&&) noexcept;
  PageDecoder& operator=(PageDecoder&&) noexcept;

  // Decodes and verifies: the stored bytes are checked before the codec sees them (so damage reads as
  // damage, not as a codec error), the decoded bytes after. `stored` holds entry.csize bytes; `out`
  // receives entry.usize bytes. Returns kOk, kStoredChecksum, kDecodeError, kUnsupported (a codec this
  // build does not know) or kChecksum. On any status but kOk the contents of `out` must not be used.
  // `stored_verified`: the caller has already matched the stored bytes to their signed SHA-256 (a
  // trusted image; mkfs --sign checked each page's ccheck before signing it), so ccheck is not hashed
  // again.
  PageStatus decode(const format::PageEntry& entry, const uint8_t* stored, uint8_t* out,
                    bool stored_verified = false);
  // The codec alone, no checksums: for callers that verify elsewhere (the GPU path's CPU stand-in,
  // mkfs reading back what it wrote, benchmarks). Returns kOk, kBadData, kSizeMismatch or kUnsupported.
  PageStatus decode_codec(uint8_t codec, uint16_t param, const uint8_t* in, size_t in_size, uint8_t* out,
                          size_t out_size);
  // A buffer of at least `n` bytes for a page's stored bytes, reused across calls so that reading page
  // after page allocates nothing.
  uint8_t* stored_buffer(size_t n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdfs
