#include "daemon/daemon.h"

#include <unistd.h>

#include <algorithm>

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
  walk_.reset();        // its thread pushes through store_se_ and the reader
  store_se_ = nullptr;  // the request threads have ended: nothing pushes any more
  reader_.reset();      // waits for readahead tasks
}

std::string Daemon::stats_json() const {
  std::string j = reader_ ? reader_->stats_json() : "{}";
  if (j.size() < 2 || j.back() != '}') return j;
  j.pop_back();
  if (j.size() > 1) j += ',';
  j += "\"store_ahead_pushes\":" + std::to_string(store_pushes_.load()) +
       ",\"store_ahead_bytes\":" + std::to_string(store_bytes_.load()) +
       ",\"store_ahead_skipped\":" + std::to_string(store_skipped_.load()) +
       ",\"store_ahead_errors\":" + std::to_string(store_errors_.load()) +
       ",\"walk_ahead_files\":" + std::to_string(walk_files_.load()) +
       ",\"walk_ahead_bytes\":" + std::to_string(walk_bytes_.load()) +
       ",\"walk_ahead_refused\":" + std::to_string(walk_refused_.load()) + "}";
  return j;
}

void Daemon::enable_pushes(fuse_session* se, unsigned max_busy) {
  store_se_ = (opt_.store_ahead || opt_.walk_ahead) && max_busy ? se : nullptr;
  store_max_busy_ = opt_.store_ahead ? max_busy : 0;
  if (store_se_ && opt_.walk_ahead)
    walk_ =
        std::make_unique<WalkPush>(image().inode_count(), [this](uint32_t ino) { return push_file(ino); });
}

bool Daemon::want_store_ahead(uint32_t ino, uint64_t off, size_t size) {
  if (!store_se_ || !store_max_busy_) return false;
  ReadEnd& r = read_ends_[ino % read_ends_.size()];
  const bool follows =
      r.ino.exchange(ino, std::memory_order_relaxed) == ino && r.end.load(std::memory_order_relaxed) == off;
  r.end.store(off + size, std::memory_order_relaxed);
  return off != 0 && !follows;
}

namespace {

uint64_t kernel_page_size() {
  static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

void Daemon::store_ahead(uint32_t ino, const PageRest& rest) {
  const uint64_t kp = kernel_page_size(), size = image().inode(ino).size;
  // Only whole kernel pages: the kernel marks a partly stored page not up to date and reads it anyway.
  // The last page of the file is whole once stored to the end (the kernel zeroes the rest of it).
  const auto whole = [&](uint64_t from, uint64_t to) {
    from = (from + kp - 1) / kp * kp;
    if (to != size) to = to / kp * kp;
    return std::pair{from, std::max(from, to)};
  };
  const auto [b_from, b_to] = whole(rest.before_offset, rest.before_offset + rest.before.size());
  const auto [a_from, a_to] = whole(rest.after_offset, rest.after_offset + rest.after.size());
  if (b_from == b_to && a_from == a_to) return;
  if (store_busy_.fetch_add(1) >= store_max_busy_) {
    store_busy_.fetch_sub(1);
    store_skipped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (push(ino, rest.before, rest.before_offset, b_from, b_to) == 0)  // an error would repeat: stop there
    push(ino, rest.after, rest.after_offset, a_from, a_to);
  store_busy_.fetch_sub(1);
}

int Daemon::push(uint32_t ino, const ReadView& view, uint64_t at, uint64_t from, uint64_t to, bool walk) {
  for (const iovec& p : view.pieces()) {
    const uint64_t lo = std::max(from, at), hi = std::min(to, at + p.iov_len);
    if (lo < hi) {
      fuse_bufvec buf = FUSE_BUFVEC_INIT(hi - lo);
      buf.buf[0].mem = static_cast<char*>(p.iov_base) + (lo - at);
      // ENOENT: the kernel does not know the inode (forgotten, or not listed yet); ENODEV: unmounted.
      // Either way nothing is wrong: a read of those bytes comes to the daemon as usual.
      if (const int error = fuse_lowlevel_notify_store(store_se_, ino, lo, &buf, fuse_buf_copy_flags{})) {
        (walk ? walk_refused_ : store_errors_).fetch_add(1, std::memory_order_relaxed);
        return error;
      }
      if (!walk) store_pushes_.fetch_add(1, std::memory_order_relaxed);
      (walk ? walk_bytes_ : store_bytes_).fetch_add(hi - lo, std::memory_order_relaxed);
    }
    at += p.iov_len;
  }
  return 0;
}

PushOutcome Daemon::push_file(uint32_t ino) {
  const Image& img = image();
  if (img.type(ino) != format::kTypeReg) return PushOutcome::kSkipped;
  const uint64_t size = img.inode(ino).size;
  if (size == 0 || size > kWalkMaxFile) return PushOutcome::kSkipped;
  thread_local ReadView view;
  try {
    reader().read(ino, 0, size, view, nullptr);
  } catch (const std::exception&) {
    // A bad page (logged by the library) or no memory: nothing is pushed, and the walker's own read
    // of the file gets the error.
    view.clear();
    return PushOutcome::kSkipped;
  }
  const int error = push(ino, view, 0, 0, size, true);
  view.clear();
  if (error) return PushOutcome::kRefused;
  walk_files_.fetch_add(1, std::memory_order_relaxed);
  return PushOutcome::kPushed;
}

}  // namespace gdfs::daemon
