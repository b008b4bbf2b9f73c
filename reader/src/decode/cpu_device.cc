// The CPU as a DecodeDevice: the page layer's codecs without its checksums (the GPU scheduler checks
// those for every device). It lets the tests drive batching and fallback with no GPU at hand.
#include "decode/decode_device.h"
#include "gdfs/page.h"

namespace gdfs::engine {
namespace {

// A device's result and the CPU codec's verdict share their numbers, so one converts to the other.
static_assert(static_cast<int>(gpu::PageResult::kOk) == static_cast<int>(CodecResult::kOk));
static_assert(static_cast<int>(gpu::PageResult::kBadData) == static_cast<int>(CodecResult::kBadData));
static_assert(static_cast<int>(gpu::PageResult::kSizeMismatch) ==
              static_cast<int>(CodecResult::kSizeMismatch));
static_assert(static_cast<int>(gpu::PageResult::kUnsupported) == static_cast<int>(CodecResult::kUnsupported));
// The kernels' codec numbers are the format's.
static_assert(static_cast<int>(gpu::PageCodec::kStored) == format::kCodecStored);
static_assert(static_cast<int>(gpu::PageCodec::kGDeflate) == format::kCodecGDeflate);
static_assert(static_cast<int>(gpu::PageCodec::kBitpack) == format::kCodecBitpack);

class CpuDecodeDevice final : public DecodeDevice {
 public:
  bool decode(std::span<const DeviceJob> pages, std::span<gpu::PageResult> results, std::string&) override {
    for (size_t i = 0; i < pages.size(); ++i) {
      const format::PageEntry& e = *pages[i].entry;
      const CodecResult r =
          dec_.decode_codec(e.codec, e.param, pages[i].stored, e.csize, pages[i].out, e.usize);
      results[i] = static_cast<gpu::PageResult>(r);
    }
    return true;
  }
  std::string name() const override { return "cpu"; }

 private:
  PageDecoder dec_;
};

}  // namespace

std::unique_ptr<DecodeDevice> make_cpu_decode_device() {
  return std::make_unique<CpuDecodeDevice>();
}

}  // namespace gdfs::engine
