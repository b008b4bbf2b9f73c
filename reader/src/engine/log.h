// The reader's log: stderr, or syslog once the daemon has daemonized (stderr is /dev/null then).
// Library callers get errors and warnings only (what went wrong also reaches them as exceptions or
// error codes); the daemon asks for the informational lines too (which decoder, which fetcher).
#pragma once
#include <string_view>

namespace gdfs::engine {

enum class LogLevel { kError, kWarning, kInfo };

void log_to_syslog(bool on);
void set_log_level(LogLevel most_verbose);  // default: kWarning
void log_line(LogLevel level, std::string_view line);

}  // namespace gdfs::engine
