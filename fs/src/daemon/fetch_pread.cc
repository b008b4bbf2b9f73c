#include <unistd.h>

#include <cerrno>

#include "daemon/fetcher.h"

namespace gdfs::daemon {

bool pread_full(int fd, uint8_t* dst, size_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pread(fd, dst, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    dst += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

namespace {

class PreadFetcher final : public Fetcher {
 public:
  PreadFetcher(int fd, Stats& stats) : fd_(fd), stats_(stats) {}
  void fetch(std::span<FetchRange> ranges) override {
    for (FetchRange& r : ranges) {
      r.ok = pread_full(fd_, r.dst, r.length, r.offset);
      Stats::add(stats_.fetch_ops);
      Stats::add(stats_.fetch_bytes, r.length);
    }
  }
  const char* name() const override { return "pread"; }

 private:
  int fd_;
  Stats& stats_;
};

}  // namespace

std::unique_ptr<Fetcher> make_pread_fetcher(int fd, Stats& stats) {
  return std::make_unique<PreadFetcher>(fd, stats);
}

}  // namespace gdfs::daemon
