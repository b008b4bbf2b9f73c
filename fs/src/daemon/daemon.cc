#include "daemon/daemon.h"

#include <thread>

#include "daemon/batch_device.h"
#include "daemon/log.h"

namespace gdfs::daemon {
namespace {

// decoder=auto or gpu: the GPU backend when the device opens, else null (the CPU decodes). For gpu,
// main() probed the device before mounting; should it fail now after all, a mount that decodes on the
// CPU serves readers better than one that exits.
std::unique_ptr<DecodeBackend> open_gpu_decoder(const DaemonOptions& opt, DecodeBackend& cpu, Stats& stats) {
  if (opt.decoder == DecoderChoice::kCpu) return nullptr;
  std::string why;
  std::unique_ptr<BatchDevice> device = make_cuda_batch_device(why);
  if (!device) {
    const LogLevel level = opt.decoder == DecoderChoice::kGpu ? LogLevel::kError : LogLevel::kInfo;
    log_line(level, "no usable GPU (" + why + "); decoding on the CPU");
    return nullptr;
  }
  log_line(LogLevel::kInfo, "decoding on the GPU (" + device->name() + ")");
  GpuDecodeOptions go;
  go.min_bytes = opt.gpu_min_bytes;
  return make_gpu_decoder(std::move(device), cpu, stats, go);
}

}  // namespace

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
  cpu_decoder_ = make_cpu_decoder(*pool_, stats_);
  gpu_decoder_ = open_gpu_decoder(opt_, *cpu_decoder_, stats_);  // falls back on cpu_decoder_
  EngineOptions eo;
  eo.readahead_bytes = opt_.readahead;
  DecodeBackend& decoder = gpu_decoder_ ? *gpu_decoder_ : *cpu_decoder_;
  engine_ = std::make_unique<ReadEngine>(*image_, *cache_, *fetcher_, decoder, *pool_, stats_, eo);
}

void Daemon::stop() {
  engine_.reset();  // first: it waits for readahead tasks, which use everything below
  gpu_decoder_.reset();
  pool_.reset();
  cpu_decoder_.reset();
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
  ctx.decoder = decoder() ? decoder()->name() : "";
  ctx.fetcher = fetcher_ ? fetcher_->name() : "";
  ctx.threads = pool_ ? pool_->size() : 0;
  return gdfs::daemon::stats_json(stats_, ctx);
}

}  // namespace gdfs::daemon
