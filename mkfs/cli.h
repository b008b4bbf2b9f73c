// The mkfs.gdfs command line, as a function so that tests can run it in-process.
#pragma once

#include <iosfwd>

namespace gdfs::mkfs {

// Runs `mkfs.gdfs` with argv. The summary goes to `out`; errors, warnings and the progress line (only
// when `err` is std::cerr on a terminal) to `err`. Reads SOURCE_DATE_EPOCH from the environment.
// Returns the exit code: 0 ok; 1 error, no image written; 2 usage error, or the image was written but
// some entries were left out under --ignore-errors.
int mkfs_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace gdfs::mkfs
