#include "daemon/daemon.h"

#include "gdfs/log.h"

namespace gdfs::daemon {

Daemon::Daemon(std::unique_ptr<Image> image, DaemonOptions options)
    : image_(std::move(image)), opt_(std::move(options)) {}

Daemon::~Daemon() {
  stop();
}

void Daemon::start() {
  ReaderOptions ro;
  ro.cache_size = opt_.cache_size;
  ro.threads = opt_.threads;
  // decoder=gpu was checked before mounting (main.cc probes the device in a child process). Should the
  // device fail now after all, a mount that decodes on the CPU serves readers better than one that
  // exits, so the reader is asked for "auto" and the fallback is logged as an error.
  ro.decoder = opt_.decoder == DecoderChoice::kCpu ? DecoderChoice::kCpu : DecoderChoice::kAuto;
  ro.gpu_min_bytes = opt_.gpu_min_bytes;
  ro.readahead = opt_.readahead;
  ro.uring = opt_.uring;
  ro.queue_depth = opt_.queue_depth;
  ro.source = opt_.source;
  reader_ = Reader::open(std::move(image_), ro);
  if (opt_.decoder == DecoderChoice::kGpu && std::string(reader_->decoder_name()) != "gpu")
    log_line(LogLevel::kError,
             "decoder=gpu: the GPU could not be opened after mounting; decoding on the CPU");
}

void Daemon::stop() {
  reader_.reset();  // waits for readahead tasks
}

}  // namespace gdfs::daemon
