// The library's log: one line per event that a caller may want to know about but that does not fail a
// call (a bad page also fails the read that met it; a fallback from the GPU to the CPU; io_uring not
// available). Lines go to stderr by default; a daemon sends them to syslog, a program to its own sink.
// Library callers get errors and warnings only; the daemon asks for the informational lines too
// (which decoder, which fetcher).
#pragma once
#include <functional>
#include <string_view>

namespace gdfs {

enum class LogLevel { kError, kWarning, kInfo };

// Where lines go: fn(level, line) is called for each line at or above the log level, one at a time
// (never concurrently), from whichever thread logs. An empty function restores stderr. Every sink gets
// the line with control bytes and invalid UTF-8 written as \xNN, as lines quote names from images and
// replies from servers.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;
void set_log_sink(LogSink sink);
void log_to_syslog(bool on);                // the sink becomes syslog ("gdfs", LOG_DAEMON); off: stderr
void set_log_level(LogLevel most_verbose);  // default: kWarning
void log_line(LogLevel level, std::string_view line);

}  // namespace gdfs
