// Fuzzes mkfs.gdfs's archive path: the input is written to a file and built into an image in-process,
// as `mkfs.gdfs --ignore-errors ARCHIVE IMAGE` would (one thread, level 1, 4 KiB pages, so that each
// input costs little). Any MkfsError is a correct refusal, and skipped members are expected; a crash,
// a sanitizer report, or any other exception is a bug. The image is checked by opening it, which
// validates all of its metadata.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "diag.h"
#include "gdfs/image.h"
#include "mkfs.h"
#include "options.h"
#include "progress.h"
#include "scratch_dir.h"

namespace {

const std::string& work_dir() {
  static const gdfs::fuzz::ScratchDir dir("gdfs-fuzz-archive");
  return dir.path();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gdfs::mkfs;
  Options o;
  o.source = work_dir() + "/in";
  o.image = work_dir() + "/out.gdfs";
  o.level = 1;
  o.threads = 1;
  o.page_size = 4096;
  o.force = true;
  o.quiet = true;
  o.ignore_errors = true;
  std::FILE* f = std::fopen(o.source.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
  std::ostringstream err;
  Progress progress(err, false);
  Diag diag(err, true, progress);
  try {
    make_image(o, diag, progress);
  } catch (const MkfsError&) {
    return 0;  // refused (not an archive, or unreadable from its first header): no image
  }
  const auto image =
      gdfs::Image::open(o.image);  // throws, and so fails the run, if mkfs wrote an invalid image
  ::unlink(o.image.c_str());
  return 0;
}
