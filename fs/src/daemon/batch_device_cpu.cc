// The CPU as a BatchDevice: the codecs PageDecoder uses, without its checksums (the GPU backend checks
// those for every device). It lets the tests drive batching and fallback with no GPU at hand.
#include <cstring>

#include "daemon/batch_device.h"
#include "gdfs/bitpack.h"
#include "gdfs/gdeflate.h"

namespace gdfs::daemon {
namespace {

DeviceResult from_gdeflate(gdeflate::Status s) {
  switch (s) {
    case gdeflate::Status::kOk:
      return DeviceResult::kOk;
    case gdeflate::Status::kSizeMismatch:
      return DeviceResult::kSizeMismatch;
    default:
      return DeviceResult::kBadData;
  }
}

class CpuBatchDevice final : public BatchDevice {
 public:
  bool decode(std::span<const DevicePage> pages, std::span<DeviceResult> results, std::string&) override {
    for (size_t i = 0; i < pages.size(); ++i) results[i] = decode_one(pages[i]);
    return true;
  }
  std::string name() const override { return "cpu"; }

 private:
  DeviceResult decode_one(const DevicePage& p) {
    const format::PageEntry& e = *p.entry;
    switch (e.codec) {
      case format::kCodecStored:
        if (e.csize != e.usize) return DeviceResult::kSizeMismatch;
        std::memcpy(p.out, p.stored, e.usize);
        return DeviceResult::kOk;
      case format::kCodecGDeflate:
        return from_gdeflate(gdeflate_.decompress(p.stored, e.csize, p.out, e.usize));
      case format::kCodecBitpack: {
        const auto params = bitpack::from_param(e.param);
        if (!params) return DeviceResult::kUnsupported;
        const bitpack::Status s = bitpack::decompress(p.stored, e.csize, *params, p.out, e.usize);
        return s == bitpack::Status::kOk ? DeviceResult::kOk : DeviceResult::kBadData;
      }
      default:
        return DeviceResult::kUnsupported;
    }
  }

  gdeflate::Decompressor gdeflate_;
};

}  // namespace

std::unique_ptr<BatchDevice> make_cpu_batch_device() {
  return std::make_unique<CpuBatchDevice>();
}

}  // namespace gdfs::daemon
