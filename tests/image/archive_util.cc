#include "archive_util.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

namespace gdfs::test {
namespace {

using Archive = std::unique_ptr<archive, int (*)(archive*)>;
using Entry = std::unique_ptr<archive_entry, void (*)(archive_entry*)>;

void check(bool ok, archive* a, const std::string& what) {
  if (!ok)
    throw std::runtime_error(what + ": " + (a && archive_error_string(a) ? archive_error_string(a) : ""));
}

Archive open_writer(const std::string& out, const ArchiveKind& kind) {
  Archive a(archive_write_new(), archive_write_free);
  check(archive_write_set_format(a.get(), kind.format) == ARCHIVE_OK, a.get(), "set format");
  for (int f : kind.filters) check(archive_write_add_filter(a.get(), f) == ARCHIVE_OK, a.get(), "add filter");
  check(archive_write_open_filename(a.get(), out.c_str()) == ARCHIVE_OK, a.get(), "open " + out);
  return a;
}

std::vector<std::string> sorted_names(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw std::runtime_error("opendir " + dir);
  while (const dirent* e = readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

void add_xattrs(archive_entry* e, const std::string& path) {
  std::string names(65536, '\0');
  const ssize_t n = llistxattr(path.c_str(), names.data(), names.size());
  if (n <= 0) return;
  for (size_t at = 0; at < static_cast<size_t>(n); at = names.find('\0', at) + 1) {
    const std::string key = names.c_str() + at;
    std::string value(65536, '\0');
    const ssize_t v = lgetxattr(path.c_str(), key.c_str(), value.data(), value.size());
    if (v >= 0) archive_entry_xattr_add_entry(e, key.c_str(), value.data(), static_cast<size_t>(v));
  }
}

// The data extents of a file, by SEEK_DATA/SEEK_HOLE.
std::vector<std::pair<uint64_t, uint64_t>> extents(int fd, uint64_t size) {
  std::vector<std::pair<uint64_t, uint64_t>> x;
  for (off_t off = 0; static_cast<uint64_t>(off) < size;) {
    const off_t d = lseek(fd, off, SEEK_DATA);
    if (d < 0) break;
    off_t h = lseek(fd, d, SEEK_HOLE);
    if (h < 0 || static_cast<uint64_t>(h) > size) h = static_cast<off_t>(size);
    x.emplace_back(d, h - d);
    off = h;
  }
  return x;
}

// Writes a file's bytes: its data extents read, its holes as zeros (the writer skips what its sparse
// map calls a hole).
void write_data(archive* a, int fd, uint64_t size, const std::vector<std::pair<uint64_t, uint64_t>>& x) {
  static const std::vector<char> zeros(1 << 20, 0);
  std::vector<char> buf(1 << 20);
  uint64_t pos = 0;
  auto emit_zeros = [&](uint64_t to) {
    while (pos < to) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), to - pos));
      check(archive_write_data(a, zeros.data(), n) >= 0, a, "write zeros");
      pos += n;
    }
  };
  for (const auto& [off, len] : x) {
    emit_zeros(off);
    while (pos < off + len) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), off + len - pos));
      const ssize_t got = pread(fd, buf.data(), want, static_cast<off_t>(pos));
      if (got <= 0) throw std::runtime_error("pread");
      check(archive_write_data(a, buf.data(), static_cast<size_t>(got)) >= 0, a, "write data");
      pos += static_cast<uint64_t>(got);
    }
  }
  emit_zeros(size);
}

struct UniqueFile {
  int fd;
  ~UniqueFile() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::vector<std::string> inode_order(const std::string& dir) {
  std::vector<std::string> order{"."};
  for (size_t i = 0; i < order.size(); ++i) {
    struct stat st {};
    const std::string full = dir + "/" + order[i];
    if (lstat(full.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    for (const std::string& name : sorted_names(full)) order.push_back(i == 0 ? name : order[i] + "/" + name);
  }
  return order;
}

void write_tree_archive(const std::string& dir, const std::vector<std::string>& paths, const std::string& out,
                        const ArchiveKind& kind) {
  Archive a = open_writer(out, kind);
  std::map<std::pair<dev_t, ino_t>, std::string> first_link;
  for (const std::string& rel : paths) {
    const std::string full = dir + "/" + rel;
    struct stat st {};
    if (lstat(full.c_str(), &st) != 0) throw std::runtime_error("lstat " + full);
    Entry e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), rel.c_str());
    archive_entry_set_mode(e.get(), st.st_mode);
    archive_entry_set_uid(e.get(), st.st_uid);
    archive_entry_set_gid(e.get(), st.st_gid);
    archive_entry_set_mtime(e.get(), st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    archive_entry_set_nlink(e.get(), st.st_nlink);
    archive_entry_set_dev(e.get(), st.st_dev);  // cpio finds hard links by device and inode
    archive_entry_set_ino64(e.get(), st.st_ino);
    add_xattrs(e.get(), full);
    UniqueFile fd{-1};
    std::vector<std::pair<uint64_t, uint64_t>> x;
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
      const auto [it, fresh] = first_link.try_emplace({st.st_dev, st.st_ino}, rel);
      if (!fresh) archive_entry_set_hardlink(e.get(), it->second.c_str());
    }
    const bool data = S_ISREG(st.st_mode) && archive_entry_hardlink(e.get()) == nullptr;
    if (data) {
      archive_entry_set_size(e.get(), st.st_size);
      fd.fd = open(full.c_str(), O_RDONLY);
      if (fd.fd < 0) throw std::runtime_error("open " + full);
      x = extents(fd.fd, static_cast<uint64_t>(st.st_size));
      uint64_t covered = 0;
      for (const auto& r : x) covered += r.second;
      if (covered < static_cast<uint64_t>(st.st_size))
        for (const auto& [off, len] : x) archive_entry_sparse_add_entry(e.get(), off, len);
    } else {
      archive_entry_set_size(e.get(), 0);
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(4096, '\0');
      const ssize_t n = readlink(full.c_str(), target.data(), target.size());
      target.resize(static_cast<size_t>(std::max<ssize_t>(n, 0)));
      archive_entry_set_symlink(e.get(), target.c_str());
    }
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) archive_entry_set_rdev(e.get(), st.st_rdev);
    // A warning is a name that is not UTF-8: pax then stores its bytes as they are (hdrcharset=BINARY).
    check(archive_write_header(a.get(), e.get()) >= ARCHIVE_WARN, a.get(), "write header " + rel);
    if (data) write_data(a.get(), fd.fd, static_cast<uint64_t>(st.st_size), x);
  }
  check(archive_write_close(a.get()) == ARCHIVE_OK, a.get(), "close " + out);
}

void write_members(const std::vector<Member>& members, const std::string& out, const ArchiveKind& kind) {
  Archive a = open_writer(out, kind);
  for (const Member& m : members) {
    Entry e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), m.path.c_str());
    archive_entry_set_mtime(e.get(), m.mtime, 0);
    archive_entry_set_perm(e.get(), m.mode);
    archive_entry_set_filetype(e.get(), m.type == 'd' ? AE_IFDIR : m.type == 'l' ? AE_IFLNK : AE_IFREG);
    if (m.type == 'l') archive_entry_set_symlink(e.get(), m.data.c_str());
    if (m.type == 'h') archive_entry_set_hardlink(e.get(), m.data.c_str());
    archive_entry_set_size(e.get(), m.type == 'f' ? static_cast<la_int64_t>(m.data.size()) : 0);
    check(archive_write_header(a.get(), e.get()) == ARCHIVE_OK, a.get(), "write header " + m.path);
    if (m.type == 'f' && !m.data.empty())
      check(archive_write_data(a.get(), m.data.data(), m.data.size()) >= 0, a.get(), "write data");
  }
  check(archive_write_close(a.get()) == ARCHIVE_OK, a.get(), "close " + out);
}

}  // namespace gdfs::test
