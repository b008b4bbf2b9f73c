// extract --archive in a build without libarchive: refused, saying why.
#include <ostream>
#include <stdexcept>

#include "commands.h"

namespace gdfs::inspect {

int extract_archive(const Options&, std::ostream&, std::ostream&) {
  throw std::runtime_error(
      "extract --archive needs libarchive, and this gdfs-inspect was built without it (Debian: "
      "libarchive-dev)");
}

}  // namespace gdfs::inspect
