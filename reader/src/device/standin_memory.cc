// Host memory posing as device memory, for testing device reads without a GPU: "device" pointers are host
// pointers, and decoding runs the page layer's CPU codecs, as a device would, without checksums.
#include <cstring>
#include <vector>

#include "device/device_memory.h"
#include "gdfs/page.h"

namespace gdfs::engine {
namespace {

class StandinDeviceMemory final : public DeviceMemory {
 public:
  explicit StandinDeviceMemory(bool decode) : decode_(decode) {}
  std::string describe() const override {
    return decode_ ? "stand-in device (host memory, CPU codecs)"
                   : "stand-in device (host memory, copies only)";
  }
  bool can_decode() const override { return decode_; }
  uint8_t* scratch(size_t n, std::string&) override {
    // Exactly n bytes in a fresh allocation each time, so AddressSanitizer sees any overrun.
    scratch_.assign(n, 0xA5);
    return scratch_.data();
  }
  bool upload(void* dst, const void* src, size_t n, void*, std::string&) override {
    std::memcpy(dst, src, n);
    return true;
  }
  bool zero(void* dst, size_t n, void*, std::string&) override {
    std::memset(dst, 0, n);
    return true;
  }
  bool copy(void* dst, const void* src, size_t n, void*, std::string&) override {
    std::memmove(dst, src, n);
    return true;
  }
  bool decode(std::span<const gpu::DevicePage> pages, std::span<PageStatus> results, void*,
              std::string&) override {
    for (size_t i = 0; i < pages.size(); ++i) {
      const gpu::DevicePage& p = pages[i];
      results[i] = dec_.decode_codec(p.codec, p.param, p.in, p.in_size, p.out, p.out_size);
    }
    ++decode_calls;
    return true;
  }
  bool sync(void*, std::string&) override { return true; }

  unsigned decode_calls = 0;

 private:
  bool decode_;
  std::vector<uint8_t> scratch_;
  PageDecoder dec_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_standin_device_memory(bool decode) {
  return std::make_unique<StandinDeviceMemory>(decode);
}

}  // namespace gdfs::engine
