// Fuzzes image open plus a full metadata walk, and reads of every file. The harness reseals both
// checksums first, so mutations get past them and exercise the structural validation behind them (the
// checksums themselves are covered by the corruption tests). Any ImageError is a correct refusal; a
// crash, a sanitizer report, or an inconsistency the walk detects (abort) is a bug.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/image.h"

namespace {

using namespace gdfs;

void reseal(std::vector<uint8_t>& b) {
  if (b.size() < format::kSuperblockSize) return;
  format::Superblock sb;
  std::memcpy(&sb, b.data(), sizeof sb);
  if (sb.meta_offset <= b.size() && sb.meta_size <= b.size() - sb.meta_offset)
    sb.meta_checksum = checksum64(b.data() + sb.meta_offset, sb.meta_size);
  sb.sb_checksum = checksum64(&sb, offsetof(format::Superblock, sb_checksum));
  std::memcpy(b.data(), &sb, sizeof sb);
}

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
        case format::kTypeLnk:
          check(img.symlink_target(d.ino).size() == in.size);
          break;
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
  reseal(bytes);
  try {
    auto img = Image::from_memory(std::move(bytes), "fuzz.img");
    walk(*img);
  } catch (const ImageError&) {
  }
  return 0;
}
