// The gdeflate command line, as a function so that tests can run it in-process.
#pragma once

#include <iosfwd>

namespace gdfs::tools {

// Runs `gdeflate` with argv; "-" as INPUT/OUTPUT means `in`/`out`. Diagnostics go to `err`.
// Returns the exit code: 0 ok, 1 error (I/O, bad data, input too large), 2 usage.
int gdeflate_main(int argc, char** argv, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace gdfs::tools
