#include "daemon/walk_push.h"

#include <algorithm>

namespace gdfs::daemon {

PushWindow WalkDetector::on_first_read(uint32_t ino) {
  // Requests are answered on several threads, so a walk's reads may arrive here slightly out of order:
  // a read a little behind the last one is still part of the walk.
  const bool step =
      last_ != 0 && uint64_t(ino) + kGap > last_ && ino <= uint64_t(std::max(last_, until_)) + kGap;
  // A jump after a window that the kernel cut short is a walk entering its next directory: the window
  // reached the end of the last one (the kernel knew no inode past it). Any other jump starts over.
  const bool next_dir = !step && walking_ && refused_;
  if (step && ino > last_)
    size_ = size_ ? std::min(size_ * 2, kMaxFiles) : kFirstStep;
  else if (!step && !next_dir)
    size_ = 0;
  walking_ = step || next_dir;
  last_ = step ? std::max(last_, ino) : ino;
  if (!step) until_ = ino;
  const uint64_t from = std::max<uint64_t>(last_, until_) + 1;
  const uint64_t to = std::min<uint64_t>(uint64_t(last_) + 1 + size_, uint64_t(inodes_) + 1);
  if (from >= to) return {};
  until_ = static_cast<uint32_t>(to - 1);
  refused_ = false;
  return {static_cast<uint32_t>(from), static_cast<uint32_t>(to)};
}

PushWindow WalkDetector::on_listed(uint32_t first, uint32_t count) {
  if (!walking_ || first == 0 || count == 0) return {};
  const uint64_t to = std::min<uint64_t>(
      {uint64_t(first) + std::max(size_, kFirstStep), uint64_t(first) + count, uint64_t(inodes_) + 1});
  if (first >= to) return {};
  last_ = first - 1;
  until_ = static_cast<uint32_t>(to - 1);
  // Pushed to the directory's end: the walk's next read elsewhere is its next directory, as after a
  // window the kernel cut short.
  refused_ = to == uint64_t(first) + count;
  return {first, static_cast<uint32_t>(to)};
}

WalkPush::WalkPush(uint32_t inodes, std::function<PushOutcome(uint32_t)> push)
    : push_(std::move(push)), detector_(inodes), thread_([this] { run(); }) {}

WalkPush::~WalkPush() {
  stop();
}

void WalkPush::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WalkPush::on_first_read(uint32_t ino) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    const PushWindow w = detector_.on_first_read(ino);
    if (w.empty()) return;
    take(w);
  }
  cv_.notify_one();
}

void WalkPush::on_listed(uint32_t first, uint32_t count) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    const PushWindow w = detector_.on_listed(first, count);
    if (w.empty()) return;
    take(w);
  }
  cv_.notify_one();
}

void WalkPush::take(PushWindow w) {
  // The newest window goes first: one that continues the current one extends it, any other replaces
  // it, as the walker has moved there (what is left behind is pushed again when it comes back).
  if (w.from != next_.to || next_.empty()) next_.from = w.from;
  next_.to = w.to;
}

void WalkPush::drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return stopping_ || (next_.empty() && !busy_); });
}

void WalkPush::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !next_.empty(); });
    if (stopping_) break;
    const uint32_t ino = next_.from++;
    const PushWindow window = next_;
    // The walker came here first (it has this file already), or the push: what follows.
    if (!detector_.read_past(ino)) {
      busy_ = true;
      lock.unlock();
      const PushOutcome o = push_(ino);
      lock.lock();
      busy_ = false;
      if (o == PushOutcome::kRefused) {
        detector_.on_refused(window);
        if (next_.to == window.to) next_ = {};  // unless a new window has replaced it meanwhile
      }
    }
    if (next_.empty()) idle_cv_.notify_all();
  }
  busy_ = false;
  idle_cv_.notify_all();
}

}  // namespace gdfs::daemon
