// One page as the kernels see it: where its bytes are on the device, and how to decode them. No CUDA
// types here: the host emulator tests and the device API (gpu_device.h) share it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

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

// The order in which one launch should take its pages: the most stored bytes first, ties in the given
// order. `order[j]` is the page the launch's j-th warp decodes. A warp's time grows with its page's
// stored bytes, and a launch lasts until its slowest warp is done: a large page begun last is the
// launch's tail. On an H100, one launch of every page of CUDA's libraries ran 1.11x faster in this order,
// and of /usr/include 1.08x (bench/results/2026-11-26-gpu-order-h100.txt).
inline void launch_order(std::span<const DevicePage> pages, std::vector<uint32_t>& order) {
  order.resize(pages.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return pages[a].in_size > pages[b].in_size; });
}

}  // namespace gdfs::gpu
