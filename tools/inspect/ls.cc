// `ls`: one directory (or one non-directory entry, or a whole subtree with -R), names in stored order.
#include <nlohmann/json.hpp>
#include <ostream>

#include "commands.h"
#include "util.h"
#include "walk.h"

namespace gdfs::inspect {
namespace {

struct Listed {
  uint32_t ino;
  std::string name;  // as shown: the entry's name, its path relative to PATH (-R), or PATH itself
};

std::vector<Listed> collect(const Image& img, uint32_t ino, const Options& o) {
  if (img.type(ino) != format::kTypeDir) return {{ino, o.path}};
  std::vector<Listed> list;
  walk(img, ino, "", [&](const Entry& e) {
    list.push_back({e.ino, e.path});
    return o.recursive;
  });
  return list;
}

bool is_device(uint32_t mode) {
  return (mode & format::kTypeMask) == format::kTypeChr || (mode & format::kTypeMask) == format::kTypeBlk;
}

std::string size_column(const format::Inode& in, uint32_t mode) {
  if (is_device(mode)) return std::to_string(in.rdev_major) + ", " + std::to_string(in.rdev_minor);
  return std::to_string(in.size);
}

Json entry_json(const Image& img, const Listed& l) {
  const format::Inode& in = img.inode(l.ino);
  const format::Attr& at = img.attr(l.ino);
  Json j;
  put_name(j, "name", l.name);
  j.update(Json{{"inode", l.ino},
                {"type", type_name(at.mode)},
                {"mode", at.mode & 07777u},
                {"mode_string", mode_string(at.mode)},
                {"nlink", at.nlink},
                {"uid", at.uid},
                {"gid", at.gid},
                {"size", in.size},
                {"mtime", at.mtime_sec},
                {"mtime_nsec", at.mtime_nsec}});
  if (is_device(at.mode)) j["rdev"] = {{"major", in.rdev_major}, {"minor", in.rdev_minor}};
  if ((at.mode & format::kTypeMask) == format::kTypeLnk) put_name(j, "target", img.symlink_target(l.ino));
  return j;
}

void print_long(std::ostream& out, const Image& img, const std::vector<Listed>& list) {
  Table t({}, "lrrrrll");
  for (const Listed& l : list) {
    const format::Inode& in = img.inode(l.ino);
    const format::Attr& at = img.attr(l.ino);
    std::string name = printable_name(l.name);
    if ((at.mode & format::kTypeMask) == format::kTypeLnk)
      name += " -> " + printable_name(img.symlink_target(l.ino));
    t.add({mode_string(at.mode), std::to_string(at.nlink), std::to_string(at.uid), std::to_string(at.gid),
           size_column(in, at.mode), short_time(at.mtime_sec), name});
  }
  t.print(out, false);
}

}  // namespace

int ls(const Options& o, std::ostream& out) {
  auto img = open_image(o);
  const uint32_t ino = resolve_path(*img, o.path);
  const std::vector<Listed> list = collect(*img, ino, o);
  if (o.json) {
    // One entry object per line, written as it is made: a recursive listing of a large image would
    // otherwise hold every entry as a JSON object at once.
    out << "{\n  \"path\": " << compact_json(o.path);
    if (!valid_utf8(o.path)) out << ",\n  \"path_b64\": \"" << base64(o.path) << "\"";
    out << ",\n  \"inode\": " << ino << ",\n  \"entries\": [";
    for (size_t i = 0; i < list.size(); ++i)
      out << (i ? ",\n    " : "\n    ") << compact_json(entry_json(*img, list[i]));
    out << (list.empty() ? "]\n}\n" : "\n  ]\n}\n");
  } else if (o.long_format) {
    print_long(out, *img, list);
  } else {
    for (const Listed& l : list) out << printable_name(l.name) << "\n";
  }
  return 0;
}

}  // namespace gdfs::inspect
