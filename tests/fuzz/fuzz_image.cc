// Fuzzes image open plus a full metadata walk, and reads of every file. The harness reseals the
// checksums first (the superblock's, the stored metadata's, and the inflated metadata's when it still
// inflates), so mutations get past them and exercise the block table, the block decoder and the
// structural validation behind them (the checksums themselves are covered by the corruption tests).
// Seeds with stored metadata blocks (make_image_seeds.sh) let mutations reach the records directly. Any
// ImageError is a correct refusal; a crash, a sanitizer report, or an inconsistency the walk detects (abort)
// is a bug.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gdfs/format.h"
#include "gdfs/image.h"
#include "image_surgery.h"

namespace {

using namespace gdfs;

void check(bool ok) {
  if (!ok) std::abort();
}

void walk_file(const Image& img, uint32_t ino, PageDecoder& dec) {
  const uint64_t pages = img.logical_pages(ino);
  for (uint64_t i = 0; i < pages && i < 64; ++i) {
    PageRef r = img.page_ref(ino, i);
    if (r.kind != PageRef::kHole) check(r.entry < img.pages().size());
  }
  std::vector<uint8_t> buf(std::min<uint64_t>(img.inode(ino).size, 1 << 18));
  try {
    img.read(ino, 0, buf.size(), buf.data(), dec);
  } catch (const ImageError&) {  // a bad page: refused, as it should be
  }
}

void walk(const Image& img) {
  PageDecoder dec;
  std::vector<uint32_t> dirs{format::kRootIno};
  size_t visited = 0;
  while (!dirs.empty()) {
    const uint32_t dir = dirs.back();
    dirs.pop_back();
    check(++visited <= img.inode_count());  // validation promises a tree: no directory twice
    for (const format::Dirent& d : img.dirents(dir)) {
      check(img.lookup(dir, img.name(d)) == d.ino);
      const format::Inode& in = img.inode(d.ino);
      for (const auto& p : img.xattrs(d.ino)) {
        check(!img.xattr_key(p).empty());
        (void)img.xattr_value(p).size();
      }
      switch (img.type(d.ino)) {
        case format::kTypeDir:
          dirs.push_back(d.ino);
          break;
        case format::kTypeLnk: {
          const std::string_view target = img.symlink_target(d.ino);
          check(target.size() == in.size);
          // Paths through the image's links (crafted ones loop, climb past the root, name files as
          // directories): an inode, or 0 with a path error, never a hang.
          for (const Follow follow : {Follow::kNo, Follow::kYes}) {
            int error = 0;
            const uint32_t ino = img.resolve(target, &error, follow);
            check(ino ? ino <= img.inode_count() : (error == ENOENT || error == ENOTDIR || error == ELOOP));
          }
          break;
        }
        case format::kTypeReg:
          walk_file(img, d.ino, dec);
          break;
        default:
          break;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  surgery::reseal(bytes);
  try {
    auto img = Image::from_memory(std::move(bytes), "fuzz.img");
    walk(*img);
  } catch (const ImageError&) {
  }
  return 0;
}
