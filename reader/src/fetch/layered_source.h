// One address space over a layered image and its bases, so that the read engine, which fetches page
// bytes by offset from one source, reads a layered image like any other. Layer k (0 = the image itself)
// occupies [k * kLayerStride, k * kLayerStride + size of layer k). The stride is far larger than any
// fetch the engine coalesces, so no range ever spans two layers; one that would is failed, not split.
#pragma once
#include <memory>
#include <vector>

#include "gdfs/source.h"

namespace gdfs::engine {

inline constexpr uint64_t kLayerStride = uint64_t{1} << 52;  // 4 PiB: larger than any image

// `layers[0]` is the image itself, then its bases in LayerRef order.
std::unique_ptr<Source> make_layered_source(std::vector<std::unique_ptr<Source>> layers);

}  // namespace gdfs::engine
