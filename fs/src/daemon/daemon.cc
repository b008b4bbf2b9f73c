#include "daemon/daemon.h"

#include <thread>

#include "daemon/log.h"

namespace gdfs::daemon {

Daemon::Daemon(std::unique_ptr<Image> image, DaemonOptions options)
    : image_(std::move(image)), opt_(std::move(options)) {}

Daemon::~Daemon() {
  stop();
}

void Daemon::start() {
  const unsigned threads = opt_.threads ? opt_.threads : std::max(1u, std::thread::hardware_concurrency());
  cache_ = std::make_unique<PageCache>(opt_.cache_size ? opt_.cache_size : default_cache_size());
  pool_ = std::make_unique<ThreadPool>(threads);
  if (opt_.uring) {
    std::string why;
    fetcher_ = make_uring_fetcher(image_->fd(), opt_.queue_depth, stats_, why);
    if (!fetcher_)
      log_line(LogLevel::kWarning, "io_uring unavailable (" + why + "); reading the image with pread");
  }
  if (!fetcher_) fetcher_ = make_pread_fetcher(image_->fd(), stats_);
  // The GPU batch decoder is not part of this build yet; main() refused decoder=gpu before mounting.
  decoder_ = make_cpu_decoder(*pool_, stats_);
  EngineOptions eo;
  eo.readahead_bytes = opt_.readahead;
  engine_ = std::make_unique<ReadEngine>(*image_, *cache_, *fetcher_, *decoder_, *pool_, stats_, eo);
}

void Daemon::stop() {
  engine_.reset();  // first: it waits for readahead tasks, which use everything below
  pool_.reset();
  decoder_.reset();
  fetcher_.reset();
  cache_.reset();
}

std::string Daemon::stats_json() const {
  StatsContext ctx;
  if (cache_) {
    ctx.cache_bytes = cache_->bytes();
    ctx.cache_capacity = cache_->capacity();
    ctx.cache_pages = cache_->pages();
  }
  ctx.decoder = decoder_ ? decoder_->name() : "";
  ctx.fetcher = fetcher_ ? fetcher_->name() : "";
  ctx.threads = pool_ ? pool_->size() : 0;
  return gdfs::daemon::stats_json(stats_, ctx);
}

}  // namespace gdfs::daemon
