#include "gdfs/log.h"

#include <syslog.h>

#include <cstdio>
#include <mutex>
#include <string>

#include "gdfs/printable.h"

namespace gdfs {
namespace {
std::mutex g_mu;
LogSink g_sink;  // empty: stderr
bool g_syslog = false;
LogLevel g_level = LogLevel::kWarning;

void to_syslog(LogLevel level, std::string_view line) {
  const int prio = level == LogLevel::kError ? LOG_ERR : level == LogLevel::kWarning ? LOG_WARNING : LOG_INFO;
  syslog(prio, "%.*s", static_cast<int>(line.size()), line.data());
}

void to_stderr(std::string_view line) {
  std::string s = "gdfs: ";
  s.append(line);
  s.push_back('\n');
  std::fwrite(s.data(), 1, s.size(), stderr);
  std::fflush(stderr);
}
}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_mu);
  g_sink = std::move(sink);
  g_syslog = false;
}

void log_to_syslog(bool on) {
  std::lock_guard lock(g_mu);
  if (on && !g_syslog) openlog("gdfs", LOG_PID, LOG_DAEMON);
  g_syslog = on;
  g_sink = nullptr;
}

void set_log_level(LogLevel most_verbose) {
  std::lock_guard lock(g_mu);
  g_level = most_verbose;
}

void log_line(LogLevel level, std::string_view line) {
  std::lock_guard lock(g_mu);  // one line at a time, never interleaved
  if (level > g_level) return;
  // Lines quote names and server replies, which come from images and servers: whatever the message, it
  // stays one line that cannot drive a terminal.
  const std::string safe = printable_name(line);
  if (g_sink) return g_sink(level, safe);
  if (g_syslog) return to_syslog(level, safe);
  to_stderr(safe);
}

}  // namespace gdfs
