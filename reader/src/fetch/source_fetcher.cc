#include "fetch/fetcher.h"

namespace gdfs::engine {
namespace {

class SourceFetcher final : public Fetcher {
 public:
  SourceFetcher(Source& source, Stats& stats)
      : source_(source), stats_(stats), name_(source.fd() >= 0 ? "pread" : source.kind()) {}
  void fetch(std::span<ReadRange> ranges) override {
    source_.read(ranges);
    Stats::add(stats_.fetch_ops, ranges.size());
    for (const ReadRange& r : ranges) Stats::add(stats_.fetch_bytes, r.length);
  }
  const char* name() const override { return name_; }

 private:
  Source& source_;
  Stats& stats_;
  const char* name_;
};

}  // namespace

std::unique_ptr<Fetcher> make_source_fetcher(Source& source, Stats& stats) {
  return std::make_unique<SourceFetcher>(source, stats);
}

}  // namespace gdfs::engine
