#include "fetch/layered_source.h"

#include <algorithm>
#include <map>
#include <string>

namespace gdfs::engine {
namespace {

class LayeredSource final : public Source {
 public:
  explicit LayeredSource(std::vector<std::unique_ptr<Source>> layers) : layers_(std::move(layers)) {}

  const std::string& name() const override { return layers_[0]->name(); }
  uint64_t size() const override { return (layers_.size() - 1) * kLayerStride + layers_.back()->size(); }
  const char* kind() const override { return layers_[0]->kind(); }

  void read(std::span<ReadRange> ranges) override {
    if (read_one_layer(ranges)) return;
    // Each layer's ranges go to its source in one call, so a remote base still serves them concurrently.
    std::vector<std::vector<ReadRange>> by_layer(layers_.size());
    std::vector<std::pair<size_t, size_t>> where(ranges.size(), {SIZE_MAX, 0});  // (layer, index)
    for (size_t i = 0; i < ranges.size(); ++i) {
      ReadRange& r = ranges[i];
      r.ok = false;
      const size_t k = r.offset / kLayerStride;
      const uint64_t off = r.offset % kLayerStride;
      if (k >= layers_.size() || off + r.length > kLayerStride) continue;  // fails the range
      where[i] = {k, by_layer[k].size()};
      by_layer[k].push_back(ReadRange{off, r.length, r.dst, false});
    }
    for (size_t k = 0; k < layers_.size(); ++k)
      if (!by_layer[k].empty()) layers_[k]->read(by_layer[k]);
    for (size_t i = 0; i < ranges.size(); ++i)
      if (where[i].first != SIZE_MAX) ranges[i].ok = by_layer[where[i].first][where[i].second].ok;
  }

  // The usual batch, all in one layer (the engine coalesces neighbours, which share a layer): its
  // offsets are moved into that layer's source and back, with no copy of the ranges.
  bool read_one_layer(std::span<ReadRange> ranges) {
    if (ranges.empty()) return true;
    const size_t k = ranges[0].offset / kLayerStride;
    for (const ReadRange& r : ranges)
      if (r.offset / kLayerStride != k || r.offset % kLayerStride + r.length > kLayerStride) return false;
    if (k >= layers_.size()) return false;
    for (ReadRange& r : ranges) r.offset -= k * kLayerStride;
    layers_[k]->read(ranges);
    for (ReadRange& r : ranges) r.offset += k * kLayerStride;
    return true;
  }

  std::shared_ptr<Prefetch> start_prefetch(uint64_t offset, uint64_t length) override {
    const size_t k = offset / kLayerStride;
    if (k >= layers_.size()) return nullptr;
    const uint64_t off = offset % kLayerStride;
    return layers_[k]->start_prefetch(off, std::min(length, kLayerStride - off));
  }
  uint64_t prefetch_window() const override { return layers_[0]->prefetch_window(); }
  void cancel() override {
    for (const auto& layer : layers_) layer->cancel();
  }

  std::vector<std::pair<std::string, uint64_t>> counters() const override {
    std::map<std::string, uint64_t> sum;  // the image's and its bases' requests together
    for (const auto& layer : layers_)
      for (const auto& [name, value] : layer->counters()) sum[name] += value;
    return {sum.begin(), sum.end()};
  }

 private:
  std::vector<std::unique_ptr<Source>> layers_;
};

}  // namespace

std::unique_ptr<Source> make_layered_source(std::vector<std::unique_ptr<Source>> layers) {
  return std::make_unique<LayeredSource>(std::move(layers));
}

}  // namespace gdfs::engine
