// The daemon's log: stderr in the foreground, syslog once daemonized (stderr is /dev/null then).
#pragma once
#include <string_view>

namespace gdfs::engine {

enum class LogLevel { kError, kWarning, kInfo };

void log_to_syslog(bool on);
void log_line(LogLevel level, std::string_view line);

}  // namespace gdfs::engine
