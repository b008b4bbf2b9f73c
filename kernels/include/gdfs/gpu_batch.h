// GPU batch page decoding: the host-side API of kernels/.
//
// This header has no CUDA types, so code built without CUDA includes it too; in such a build, or on a
// machine without a usable GPU or driver, BatchDecoder::create() returns null and says why. The daemon
// treats that as "decode on the CPU", never as an error.
//
// One call decodes a whole batch of pages, each with its own codec (zero fill, stored, GDeflate,
// bitpack), in one kernel launch: one warp per page. Pages are independent; a bad page gets its own
// result and never disturbs the others.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "gdfs/format.h"
#include "gdfs/page_status.h"

namespace gdfs::gpu {

// A page's codec is the format's. The kernels know one value more, which no page entry may hold (holes
// are not pages): kZeroFill fills out_size zero bytes and reads no input.
inline constexpr format::Codec kZeroFill{0};

inline constexpr uint32_t kMaxPageBytes = 65536;

// One page for the host-to-host path.
struct HostPage {
  const uint8_t* in = nullptr;  // in_size bytes; any alignment
  uint32_t in_size = 0;
  uint8_t* out = nullptr;  // out_size bytes, at most kMaxPageBytes
  uint32_t out_size = 0;
  format::Codec codec = format::kCodecGDeflate;
  uint16_t param = 0;  // bitpack: PageEntry::param; 0 otherwise
};

struct BatchOptions {
  int device = 0;
  // Bytes of one staging slot (pinned host + device, compressed and decoded sides each). A batch
  // larger than a slot is split over slots; consecutive slots overlap copy-in, decode and copy-out.
  size_t slot_bytes = size_t{32} << 20;
  unsigned slots = 3;  // one CUDA stream each
};

struct BatchTimings {
  double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;  // summed over the slots a call used (CUDA events)
};

// What this build's kernels were compiled for, as CMAKE_CUDA_ARCHITECTURES lists them ("80-real 90-real
// 100-real 120-real 100-virtual": machine code for those, PTX for the last), or "none" without CUDA.
const char* built_architectures();

class BatchDecoder {
 public:
  // Null, with `why` set, when this build has no CUDA, no driver or device is present, or the device
  // cannot be initialised. Never throws for those reasons.
  static std::unique_ptr<BatchDecoder> create(const BatchOptions& opt, std::string& why);
  virtual ~BatchDecoder() = default;

  // Decodes `pages` host to host and fills `results` (same length). Blocks until done. Safe to call
  // from several threads; calls share the slots. Returns false, with `err` and every result kNotRun,
  // only when CUDA failed for the batch as a whole.
  virtual bool decode(std::span<const HostPage> pages, std::span<PageStatus> results, std::string& err,
                      BatchTimings* timings = nullptr) = 0;
  virtual std::string device_name() const = 0;
};

}  // namespace gdfs::gpu
