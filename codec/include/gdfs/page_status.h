// What became of one page: the one outcome that every page decoder reports. The CPU codecs
// (gdfs/gdeflate.h, gdfs/bitpack.h) and the GPU kernels (gdfs/gpu_batch.h) give a decoder's verdict;
// the page layer (gdfs/page.h) adds reading the stored bytes and checking both checksums. Only kOk
// means the bytes may be used.
//
// The kernels write the verdicts into device memory and the host reads them back, and a CPU codec's
// verdict stands in for a device's (reader/src/decode/cpu_device.cc): the numbers 0..4 must not
// change. No CUDA types here, so device code includes this too.
#pragma once
#include <cstdint>

namespace gdfs {

enum class PageStatus : uint8_t {
  // A decoder's verdict on a page's stored bytes.
  kOk = 0,
  kBadData = 1,       // malformed stream: bad code, distance before the page start, truncated, trailing bytes
  kSizeMismatch = 2,  // well formed, but decodes to fewer or more bytes than expected
  kUnsupported = 3,   // a codec or codec parameter this build does not decode (GPU: or a page over 64 KiB)
  kNotRun = 4,        // GPU: the batch failed as a whole (a CUDA error), so the page was not decoded
  // What reading a page adds around its codec (PageDecoder::decode, the image reader).
  kIoError = 5,         // the stored bytes could not be read
  kStoredChecksum = 6,  // the stored bytes do not match ccheck: the image is damaged
  kDecodeError = 7,     // the codec refused the stored bytes (kBadData, kSizeMismatch or a bad parameter)
  kChecksum = 8,        // decoded, but the result does not match ucheck
  kDigest = 9,          // signed images: the stored bytes do not match their signed SHA-256 (FORMAT.md 7.1)
};

// "ok", "bad data", ...: for logs and error messages.
const char* page_status_message(PageStatus s);

}  // namespace gdfs
