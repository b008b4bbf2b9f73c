#include "prefetch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <utility>

#include "diag.h"
#include "gdfs/unique_fd.h"
#include "source_hook.h"

namespace gdfs::mkfs {

int open_source(const Options& o, const ScanNode& n) {
  if (const int error = source_fault(SourceOp::kOpen, n.path)) throw_io("open", n.path, error);
  const int fd = ::open(full_path(o, n.path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw_io("open", n.path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != n.dev || st.st_ino != n.ino) {
    ::close(fd);
    throw MkfsError(quote_path(n.path) + " was replaced while mkfs.gdfs was running");
  }
  return fd;
}

void read_exact(int fd, uint64_t off, uint8_t* p, size_t n, const ScanNode& node) {
  while (n > 0) {
    if (const int error = source_fault(SourceOp::kRead, node.path)) throw_io("read", node.path, error);
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_io("read", node.path, errno);
    if (r == 0) throw MkfsError(quote_path(node.path) + " shrank while mkfs.gdfs was reading it");
    p += r, n -= static_cast<size_t>(r), off += static_cast<uint64_t>(r);
  }
}

Prefetcher::Prefetcher(const Options& o, std::vector<const ScanNode*> files, unsigned threads)
    : o_(o), files_(std::move(files)), slots_(kWindow) {
  if (files_.empty()) return;
  try {
    for (unsigned t = 0; t < threads; ++t) threads_.emplace_back([this, t, threads] { reader(t, threads); });
  } catch (...) {
    stop();
    throw;
  }
}

Prefetcher::~Prefetcher() {
  stop();
}

void Prefetcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  room_cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void Prefetcher::read_file(const ScanNode& n, std::vector<uint8_t>& out) const {
  const UniqueFd fd(open_source(o_, n));
  out.resize(n.size);
  read_exact(fd.get(), 0, out.data(), out.size(), n);
}

// Reader `first` of `step` takes files first, first + step, ...: a fixed share, so that no queue is
// needed and each slot has one writer.
void Prefetcher::reader(size_t first, size_t step) {
  std::vector<uint8_t> bytes;
  for (size_t i = first; i < files_.size(); i += step) {
    {
      std::unique_lock lock(mu_);
      room_cv_.wait(lock, [&] { return stopping_ || i < taken_ + kWindow; });
      if (stopping_) return;
      bytes.swap(slots_[i % kWindow].bytes);  // the slot is free: reuse what take() left in it
    }
    std::exception_ptr error;
    try {
      read_file(*files_[i], bytes);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      Slot& s = slots_[i % kWindow];
      s.bytes.swap(bytes);
      s.error = error;
      s.ready = true;
    }
    ready_cv_.notify_one();  // only take() waits on it
  }
}

void Prefetcher::take(std::vector<uint8_t>& out) {
  std::unique_lock lock(mu_);
  if (taken_ >= files_.size()) throw std::logic_error("Prefetcher::take past the last file");
  Slot& s = slots_[taken_ % kWindow];
  ready_cv_.wait(lock, [&] { return s.ready; });
  s.ready = false;
  ++taken_;
  if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
  out.swap(s.bytes);
  lock.unlock();
  room_cv_.notify_all();
}

}  // namespace gdfs::mkfs
