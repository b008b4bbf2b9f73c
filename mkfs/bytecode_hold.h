// Python sources and bytecode held back in an archive build until their partner comes. A directory
// build packs `__pycache__/NAME.TAG.pyc` right after `NAME.py` (data_order.h says why: 1.8-2.2% smaller
// images), but an archive is packed as it is read: in name order (tar --sort=name) a package's
// `__pycache__` comes before its lowercase modules, in directory order (tar's default) either may come
// first. So the walk holds the tail (the bytes under a page; whole pages are packed as they
// come) of bytecode until its source arrives, and, once the archive has shown bytecode, of sources until
// their bytecode arrives; then it packs the group as a directory build does: the source's tail, then the
// bytecode's. Bounded: past kMaxBytes the oldest are packed where they stand, as are those whose partner
// never comes.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gdfs::mkfs {

class BytecodeHold {
 public:
  static constexpr uint64_t kMaxBytes = uint64_t{16} << 20;

  struct Held {
    uint32_t node;  // scan node
    std::string path;
    std::vector<uint8_t> tail;
    bool compiled;  // bytecode (else the source)
  };

  // The source path a member path names the bytecode of ("pkg/__pycache__/m.cpython-311.pyc" ->
  // "pkg/m.py"), or "" if it is not bytecode in a `__pycache__`.
  static std::string source_of(std::string_view path);

  // Holds the tail of `node` (member `path`) under `source`, the source path of its group. Returns what
  // the bound pushed out, oldest first, to be packed now.
  std::vector<Held> hold(const std::string& source, Held held);
  // The bytes of the tails held under `source`, and whether the source's own is one of them.
  uint64_t bytes_for(const std::string& source) const;
  bool has_source(const std::string& source) const;
  // The tails held under `source`, in the order they came; removed.
  std::vector<Held> take(const std::string& source);
  // Forgets the tail held for `node`, if any: its data was packed again.
  void drop(uint32_t node);
  // Everything still held, oldest first; removed.
  std::vector<Held> take_all();

 private:
  struct Entry {
    std::string source;
    Held held;
  };
  Held remove(std::list<Entry>::iterator it);

  std::list<Entry> fifo_;
  std::unordered_map<std::string, std::vector<std::list<Entry>::iterator>> by_source_;
  std::unordered_map<uint32_t, std::list<Entry>::iterator> by_node_;
  uint64_t bytes_ = 0;
};

}  // namespace gdfs::mkfs
