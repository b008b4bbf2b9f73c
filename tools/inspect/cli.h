// The gdfs-inspect command line, as a function so that tests can run it in-process.
#pragma once

#include <iosfwd>

namespace gdfs::tools {

// Runs `gdfs-inspect` with argv. Output goes to `out`, diagnostics to `err`.
// Returns the exit code: 0 ok, 1 error (bad or damaged image, missing path, failed extraction), 2 usage.
int inspect_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace gdfs::tools
