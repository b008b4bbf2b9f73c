// One page as the kernels see it: where its bytes are on the device, and how to decode them. No CUDA
// types here: the host emulator tests and the device API (gpu_device.h) share it.
#pragma once
#include <cstdint>

#include "gdfs/gpu_batch.h"

namespace gdfs::gpu {

struct DevicePage {
  const uint8_t* in;  // in_size bytes, any alignment (4-byte aligned input is loaded a word at a time)
  uint8_t* out;       // out_size bytes
  uint32_t in_size;
  uint32_t out_size;
  format::Codec codec;  // or kZeroFill
  uint8_t reserved;
  uint16_t param;  // bitpack parameters (PageEntry::param)
  uint32_t pad;
};
static_assert(sizeof(DevicePage) == 32);

}  // namespace gdfs::gpu
