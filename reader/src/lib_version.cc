// gdfs_version() of gdfs/reader_c.h: the version line the tools print, for C callers of libgdfs.
#include "gdfs/reader_c.h"
#include "gdfs/version.h"

extern "C" const char* gdfs_version(void) {
  static const std::string line = gdfs::version_line("").substr(1);  // drop the tool name's space
  return line.c_str();
}
