// `extract`: restores the tree (or the subtree or single entry at PATH) under DIR. Directories are walked
// with descriptors, never with paths, so a deep tree needs no PATH_MAX and a symlink in DIR cannot
// redirect anything. Files are written under temporary names and renamed into place when complete
// (restore.cc): an extraction cut short leaves complete files and, at worst, ".NAME.gdfs-tmp-XXXXXX".
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "gdfs/unique_fd.h"
#include "restore.h"
#include "util.h"
#include "walk.h"

namespace gdfs::inspect {
namespace {

// The open directories of the walk, innermost last. A deep tree would run out of descriptors, so only
// the innermost kMaxOpen stay open; a closed one is reopened through its child's ".." when the walk
// climbs back to it (which needs no path and follows no symlink).
class DirStack {
 public:
  static constexpr size_t kMaxOpen = 64;

  void push(int fd) {
    fds_.emplace_back(fd);
    if (fds_.size() > kMaxOpen) fds_[fds_.size() - 1 - kMaxOpen].reset();
  }
  int top() const { return fds_.back().get(); }
  // Removes the innermost directory and hands back its descriptor, first making sure its parent is open
  // again; when that fails, `error` holds errno (else 0).
  UniqueFd pop(int& error) {
    UniqueFd fd(fds_.back().release());
    fds_.pop_back();
    error = 0;
    if (!fds_.empty() && fds_.back().get() < 0 && fd.get() >= 0) {
      fds_.back().reset(openat(fd.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (fds_.back().get() < 0) error = errno;
    }
    return fd;
  }

 private:
  std::vector<UniqueFd> fds_;  // -1 while closed
};

void extract_tree(const Image& img, uint32_t start, int root_fd, const std::string& root_path, Restorer& r) {
  DirStack dirs;
  // Once the target is full or read-only, every entry left would fail the same way: stop, saying so once.
  const auto stop_if_target_refuses = [&] {
    if (r.stop_error() != 0)
      throw std::runtime_error(printable_name(root_path) + ": " + std::strerror(r.stop_error()));
  };
  const int first = fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
  if (first < 0)
    throw std::runtime_error(std::string("cannot duplicate a descriptor: ") + std::strerror(errno));
  dirs.push(first);
  auto enter = [&](const Entry& e) {
    if (img.type(e.ino) != format::kTypeDir) {
      r.create(dirs.top(), e.name, e.ino, e.path);
      stop_if_target_refuses();
      return false;
    }
    const int fd = r.make_dir(dirs.top(), e.name, e.path);
    if (fd >= 0 && r.stop_error() != 0) ::close(fd);
    stop_if_target_refuses();
    if (fd < 0) return false;  // reported; its contents are skipped
    dirs.push(fd);
    return true;
  };
  auto leave = [&](uint32_t dir, const std::string& path) {
    int error = 0;
    const UniqueFd fd = dirs.pop(error);
    if (error != 0) r.fail(path, "cannot reopen the parent directory", error);
    if (fd.get() < 0) return;  // its own reopening failed and was reported
    r.finish_dir(fd.get(), dir, path);
  };
  walk(img, start, "", enter, leave);
}

int open_target(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir + ": " + ec.message());
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + dir + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

int extract(const Options& o, std::ostream& out, std::ostream& err) {
  if (!o.archive.empty()) return extract_archive(o, out, err);
  auto img = open_image(o);
  const uint32_t ino = resolve_path(*img, o.path);
  const UniqueFd root(open_target(o.dir));
  const int root_fd = root.get();
  Restorer r(*img, err, root_fd, o.dir);
  try {
    if (img->type(ino) == format::kTypeDir) {
      extract_tree(*img, ino, root_fd, o.dir, r);
    } else {
      const std::string name = last_name(o.path);
      r.create(root_fd, name, ino, name);
    }
  } catch (const std::exception& e) {  // a damaged directory listing, no descriptors left, ...
    throw std::runtime_error(std::string(e.what()) + "; extraction stopped at " +
                             printable_name(r.current()));
  }
  if (r.failures() != 0) {
    err << "gdfs-inspect: error: " << r.failures() << (r.failures() == 1 ? " problem" : " problems")
        << " extracting " << printable_name(img->name()) << " to " << printable_name(o.dir) << "\n";
    return 1;
  }
  out << "extracted " << r.entries() << " entries (" << r.file_bytes() << " file bytes) to "
      << printable_name(o.dir) << "\n";
  return 0;
}

}  // namespace gdfs::inspect
