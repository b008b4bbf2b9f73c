// read_archive in a build without libarchive: archive sources are refused, saying why, and directory
// trees build as ever.
#include "archive_walk.h"
#include "diag.h"

namespace gdfs::mkfs {

ArchiveBuild read_archive(const Options& o, ImageWriter&, Base*, Diag&, Progress&) {
  throw MkfsError(o.source + " is not a directory, so it would be read as an archive, but this mkfs.gdfs " +
                  "was built without libarchive (Debian: libarchive-dev)");
}

}  // namespace gdfs::mkfs
