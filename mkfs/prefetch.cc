#include "prefetch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <utility>

#include "diag.h"
#include "gdfs/unique_fd.h"
#include "source_hook.h"

namespace gdfs::mkfs {

UniqueFd open_source(const Options& o, const ScanNode& n, uint64_t& size_now) {
  if (const int error = source_fault(SourceOp::kOpen, n.path)) throw_entry_io("open", n.path, error);
  UniqueFd fd(::open(full_path(o, n.path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) throw_entry_io("open", n.path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != n.dev || st.st_ino != n.ino)
    throw EntryError(quote_path(n.path) + " was replaced while mkfs.gdfs was running");
  size_now = static_cast<uint64_t>(st.st_size);
  return fd;
}

size_t read_upto(int fd, uint64_t off, uint8_t* p, size_t n, const ScanNode& node) {
  size_t done = 0;
  while (done < n) {
    if (const int error = source_fault(SourceOp::kRead, node.path)) throw_entry_io("read", node.path, error);
    const ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_entry_io("read", node.path, errno);
    if (r == 0) break;  // the end of a file that shrank
    done += static_cast<size_t>(r);
  }
  return done;
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

// The bytes as read: up to the scanned size, which a file that grew is cut at (the tree as walked).
bool Prefetcher::read_file(const ScanNode& n, std::vector<uint8_t>& out) const {
  uint64_t size_now = 0;
  const UniqueFd fd(open_source(o_, n, size_now));
  out.resize(std::min(n.size, size_now));
  out.resize(read_upto(fd.get(), 0, out.data(), out.size(), n));
  return size_now != n.size || out.size() != n.size;
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
    bool changed = false;
    try {
      changed = read_file(*files_[i], bytes);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      Slot& s = slots_[i % kWindow];
      s.bytes.swap(bytes);
      s.error = error;
      s.changed = changed;
      s.ready = true;
    }
    ready_cv_.notify_one();  // only take() waits on it
  }
}

bool Prefetcher::take(std::vector<uint8_t>& out) {
  std::unique_lock lock(mu_);
  if (taken_ >= files_.size()) throw std::logic_error("Prefetcher::take past the last file");
  Slot& s = slots_[taken_ % kWindow];
  ready_cv_.wait(lock, [&] { return s.ready; });
  s.ready = false;
  const size_t taken = ++taken_;
  if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
  out.swap(s.bytes);
  const bool changed = s.changed;
  lock.unlock();
  // Readers that wait have filled the window; waking them every kRoomStep takes instead of every take
  // lets each read several files per wake-up (a wake-up per file was 5% of a rebuild's CPU time), with
  // the window still mostly full.
  if (taken % kRoomStep == 0) room_cv_.notify_all();
  return changed;
}

}  // namespace gdfs::mkfs
