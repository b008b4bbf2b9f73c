#include "progress.h"

#include <cstdio>
#include <ostream>
#include <string>

namespace gdfs::mkfs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kInterval = std::chrono::milliseconds(200);

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string eta(double seconds) {
  if (!(seconds >= 0) || seconds > 359999) return "--:--";
  const auto s = static_cast<unsigned>(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%u:%02u", s / 60, s % 60);
  return buf;
}

}  // namespace

Progress::Progress(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {
  start_ = last_ = Clock::now();
}

Progress::~Progress() = default;

void Progress::start_packing() {
  packing_ = true;
  start_ = Clock::now();
}

void Progress::tick() {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - last_ < kInterval) return;
  last_ = now;
  draw();
}

void Progress::draw() {
  std::string line;
  if (!packing_) {
    line = "scanning: " + std::to_string(scanned.load()) + " entries";
  } else {
    const uint64_t in = bytes_in.load(), out = bytes_out.load();
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = secs > 0 ? static_cast<double>(in) / secs : 0;
    char buf[160];
    std::snprintf(
        buf, sizeof buf, "%llu/%llu files, %s in, %s out, ratio %.2f, %.1f MB/s, ETA %s",
        static_cast<unsigned long long>(files_done.load()), static_cast<unsigned long long>(total_files_),
        mib(in).c_str(), mib(out).c_str(), out ? static_cast<double>(in) / static_cast<double>(out) : 0.0,
        rate / 1e6,
        eta(rate > 0 ? static_cast<double>(total_bytes_ - std::min(in, total_bytes_)) / rate : -1).c_str());
    line = buf;
  }
  err_ << '\r' << line << "\x1b[K" << std::flush;  // \x1b[K erases what a longer earlier line left
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  err_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

}  // namespace gdfs::mkfs
