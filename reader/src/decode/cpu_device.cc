// The CPU as a DecodeDevice: the page layer's codecs without its checksums (the GPU scheduler checks
// those for every device). It lets the tests drive batching and fallback with no GPU at hand.
#include "decode/decode_device.h"
#include "gdfs/page.h"

namespace gdfs::engine {
namespace {

class CpuDecodeDevice final : public DecodeDevice {
 public:
  bool decode(std::span<const DeviceJob> pages, std::span<PageStatus> results, std::string&) override {
    for (size_t i = 0; i < pages.size(); ++i) {
      const format::PageEntry& e = *pages[i].entry;
      results[i] = dec_.decode_codec(e.codec, e.param, pages[i].stored, e.csize, pages[i].out, e.usize);
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
