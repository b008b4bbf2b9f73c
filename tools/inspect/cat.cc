// `cat`: one regular file's contents (a symlink is followed inside the image) to standard output, read
// through the verifying reader. A page that fails its checks stops the output before any of its chunk is
// written.
#include <ostream>
#include <stdexcept>

#include "commands.h"
#include "util.h"

namespace gdfs::inspect {

int cat(const Options& o, std::ostream& out) {
  auto img = open_image(o);
  const uint32_t ino = resolve_path(*img, o.path, Follow::kYes);  // like cat(1), through symlinks
  if (img->type(ino) != format::kTypeReg)
    throw std::runtime_error(img->name() + ": " + o.path + ": not a regular file");
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<uint8_t> buf(kChunk);
  PageDecoder dec;
  for (uint64_t off = 0;;) {
    const size_t got = img->read(ino, off, kChunk, buf.data(), dec);  // throws on a bad page
    if (got == 0) break;
    if (!out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(got)))
      throw std::runtime_error("cannot write to the output");
    off += got;
  }
  if (!out.flush()) throw std::runtime_error("cannot write to the output");
  return 0;
}

}  // namespace gdfs::inspect
