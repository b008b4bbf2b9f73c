// mkfs.gdfs as a library call: scan the tree, number the inodes, pack the data, write the metadata
// and the superblock, and rename the finished image into place.
#pragma once

#include "diag.h"
#include "options.h"
#include "progress.h"
#include "summary.h"

namespace gdfs::mkfs {

// Builds o.image from o.source. Throws on any fatal error (MkfsError for the expected ones), and then
// no image is left behind. Entries skipped under --ignore-errors are counted in diag.skipped().
Summary make_image(const Options& o, Diag& diag, Progress& progress);

}  // namespace gdfs::mkfs
