// The io_uring fetcher. Each thread that fetches gets its own ring (FUSE worker threads and readahead
// workers come and go; a shared ring would need a lock or a completion thread for no gain), created on
// first use and torn down when the thread exits.
#include "fetch/fetcher.h"

#if GDFS_HAVE_URING
#include <liburing.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#endif

namespace gdfs::engine {

#if GDFS_HAVE_URING
namespace {

struct ThreadRing {
  io_uring ring{};
  uint64_t owner = 0;  // the fetcher this ring was set up for (fetchers may differ in depth)
  bool ready = false;
  ~ThreadRing() {
    if (ready) io_uring_queue_exit(&ring);
  }
};

std::atomic<uint64_t> g_next_id{1};

class UringFetcher final : public Fetcher {
 public:
  UringFetcher(Source& source, unsigned depth, Stats& stats)
      : source_(source), fd_(source.fd()), depth_(depth), stats_(stats) {}

  void fetch(std::span<ReadRange> ranges) override {
    io_uring* ring = thread_ring();
    if (!ring) {  // a ring could not be made on this thread (e.g. memlock limit): read directly
      for (ReadRange& r : ranges) read_direct(r);
      return;
    }
    for (size_t first = 0; first < ranges.size(); first += depth_) {
      const size_t n = std::min<size_t>(depth_, ranges.size() - first);
      submit_and_reap(ring, ranges.subspan(first, n));
    }
  }
  const char* name() const override { return "io_uring"; }

 private:
  static ThreadRing& this_thread_ring() {
    thread_local ThreadRing tr;
    return tr;
  }
  io_uring* thread_ring() {
    ThreadRing& tr = this_thread_ring();
    if (tr.ready && tr.owner == id_) return &tr.ring;
    drop_thread_ring();
    tr.ready = io_uring_queue_init(depth_, &tr.ring, 0) == 0;
    tr.owner = id_;
    return tr.ready ? &tr.ring : nullptr;
  }
  static void drop_thread_ring() {
    ThreadRing& tr = this_thread_ring();
    if (tr.ready) io_uring_queue_exit(&tr.ring);
    tr.ready = false;
  }

  void read_direct(ReadRange& r) {
    source_.read({&r, 1});
    Stats::add(stats_.fetch_ops);
    Stats::add(stats_.fetch_bytes, r.length);
  }

  void submit_and_reap(io_uring* ring, std::span<ReadRange> batch) {
    size_t queued = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (!sqe) {  // cannot happen with depth_ entries, but never lose a range
        read_direct(batch[i]);
        continue;
      }
      io_uring_prep_read(sqe, fd_, batch[i].dst, batch[i].length, batch[i].offset);
      io_uring_sqe_set_data64(sqe, i);
      ++queued;
    }
    if (queued == 0) return;
    Stats::add(stats_.uring_submits);
    int rc;
    do {
      rc = io_uring_submit_and_wait(ring, static_cast<unsigned>(queued));
    } while (rc == -EINTR);  // SQEs stay queued until submitted: retrying neither loses nor repeats any
    size_t reaped = 0;
    while (rc >= 0 && reaped < queued) {
      io_uring_cqe* cqe = nullptr;
      rc = io_uring_wait_cqe(ring, &cqe);
      if (rc == -EINTR) {
        rc = 0;
        continue;
      }
      if (rc < 0) break;
      ReadRange& r = batch[io_uring_cqe_get_data64(cqe)];
      finish(r, cqe->res);
      io_uring_cqe_seen(ring, cqe);
      ++reaped;
    }
    if (rc < 0) {
      // The ring failed under us. Drop it (this thread makes a new one next time) and read what is not
      // done directly. Checksums would catch any late write from a cancelled request.
      drop_thread_ring();
      for (ReadRange& r : batch)
        if (!r.ok) read_direct(r);
    }
  }

  void finish(ReadRange& r, int res) {
    Stats::add(stats_.fetch_ops);
    Stats::add(stats_.fetch_bytes, r.length);
    if (res == static_cast<int>(r.length)) {
      r.ok = true;
    } else if (res >= 0) {
      // A short read: finish the rest synchronously; hitting EOF there is a real error.
      ReadRange rest{r.offset + res, r.length - static_cast<uint32_t>(res), r.dst + res};
      source_.read({&rest, 1});
      r.ok = rest.ok;
    } else {
      source_.read({&r, 1});  // -EAGAIN and friends: one direct retry
    }
  }

  Source& source_;
  int fd_;
  unsigned depth_;
  Stats& stats_;
  const uint64_t id_ = g_next_id.fetch_add(1);
};

}  // namespace

std::unique_ptr<Fetcher> make_uring_fetcher(Source& source, unsigned queue_depth, Stats& stats,
                                            std::string& why) {
  if (source.fd() < 0) {
    why = std::string("a ") + source.kind() + " source has no file descriptor";
    return nullptr;
  }
  queue_depth = std::clamp(queue_depth, 1u, 4096u);
  io_uring probe{};
  const int rc = io_uring_queue_init(queue_depth, &probe, 0);
  if (rc < 0) {
    why = std::string("io_uring_queue_init: ") + std::strerror(-rc);
    return nullptr;
  }
  io_uring_queue_exit(&probe);
  return std::make_unique<UringFetcher>(source, queue_depth, stats);
}

#else

std::unique_ptr<Fetcher> make_uring_fetcher(Source&, unsigned, Stats&, std::string& why) {
  why = "this build has no liburing";
  return nullptr;
}

#endif

}  // namespace gdfs::engine
