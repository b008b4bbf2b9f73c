#include "restore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ostream>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "gdfs/unique_fd.h"
#include "util.h"
#include "walk.h"

namespace gdfs::inspect {
namespace {

using Fd = UniqueFd;

bool pwrite_all(int fd, const uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t put = pwrite(fd, p, n, static_cast<off_t>(off));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put, n -= static_cast<size_t>(put), off += static_cast<uint64_t>(put);
  }
  return true;
}

// Where the target filesystem refuses an xattr (no support, a namespace it keeps to itself, user.* on a
// symlink): worth a warning, not a failed extraction.
bool xattr_refused(int error) {
  return error == ENOTSUP || error == EPERM || error == EACCES;
}

// Runs `create` for `name` in `dir_fd`; if the name is taken by an earlier extraction or a stray file,
// removes that (never a directory: unlinkat refuses) and tries once more.
template <class F>
int create_replacing(int dir_fd, const std::string& name, F create) {
  int r = create();
  if (r < 0 && errno == EEXIST && unlinkat(dir_fd, name.c_str(), 0) == 0) r = create();
  return r;
}

}  // namespace

int create_temp(int dir_fd, const std::string& name, std::string& tmp) {
  static constexpr std::string_view kMark = ".gdfs-tmp-";
  constexpr size_t kNameMax = 255, kSuffix = 6;
  const std::string base = name.substr(0, kNameMax - 1 - kMark.size() - kSuffix);
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static std::mt19937_64 rng(std::random_device{}());
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = "." + base + std::string(kMark);
    for (size_t i = 0; i < kSuffix; ++i) tmp.push_back(kChars[rng() % (sizeof kChars - 1)]);
    const int fd = openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST
}

Restorer::Restorer(const Image& img, std::ostream& err, int root_fd, std::string root_path)
    : img_(img), err_(err), root_fd_(root_fd), root_path_(std::move(root_path)), as_root_(geteuid() == 0) {}

std::string Restorer::local(const std::string& rel) const {
  return join_path(root_path_, rel);
}

bool Restorer::fail(const std::string& rel, const std::string& what, int error) {
  err_ << "gdfs-inspect: error: " << printable_name(local(rel)) << ": " << what;
  if (error != 0) err_ << ": " << std::strerror(error);
  err_ << "\n";
  ++failures_;
  if (error == ENOSPC || error == EDQUOT || error == EROFS) stop_error_ = error;
  return false;
}

void Restorer::warn_xattr(const std::string& rel, std::string_view key, int error) {
  // One warning per namespace and reason: a filesystem without user xattrs would otherwise warn per file.
  const std::string ns(key.substr(0, key.find('.')));
  if (!xattr_warned_.insert(ns + ":" + std::to_string(error)).second) return;
  err_ << "gdfs-inspect: warning: " << printable_name(local(rel)) << ": cannot set xattr "
       << printable_name(key) << ": " << std::strerror(error) << "; skipping (not repeated for other "
       << printable_name(ns) << ".* xattrs)\n";
}

void Restorer::create(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel) {
  ++entries_;
  current_ = rel;
  const format::Attr& in = img_.attr(ino);
  if (in.nlink > 1 && first_name_.contains(ino)) {
    link_to_first(dir_fd, name, ino, rel);
    return;
  }
  const bool ok = (in.mode & format::kTypeMask) == format::kTypeReg ? write_file(dir_fd, name, ino, rel)
                                                                    : make_special(dir_fd, name, ino, rel);
  if (ok && in.nlink > 1) first_name_.emplace(ino, rel);
}

// The file is written under a temporary name beside its final one and renamed into place when
// complete, so an extraction cut short (a signal, a full disk) never leaves a partial file under a real
// name. The temporary name is hidden and marked (".NAME.gdfs-tmp-XXXXXX") so a leftover is recognisable.
bool Restorer::write_file(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel) {
  const std::string n(name);
  std::string tmp;
  Fd fd(create_temp(dir_fd, n, tmp));
  if (fd.get() < 0) return fail(rel, "cannot create", errno);
  // Removes the temporary file on every failure below: it must not outlive this call.
  const auto discard = [&] { unlinkat(dir_fd, tmp.c_str(), 0); };
  if (!write_contents(fd.get(), ino, rel)) {
    discard();
    return false;
  }
  const bool ok = set_metadata(fd.get(), dir_fd, tmp, ino, rel);
  if (::close(fd.release()) != 0) {
    const int error = errno;
    discard();
    return fail(rel, "cannot write", error);
  }
  if (renameat(dir_fd, tmp.c_str(), dir_fd, n.c_str()) != 0) {
    const int error = errno;
    discard();
    return fail(rel, "cannot rename the finished file into place", error);
  }
  file_bytes_ += img_.inode(ino).size;
  return ok;
}

// Writes the data pages only: holes stay holes (the size comes from ftruncate), so a sparse file stays
// sparse and costs no time for its holes.
bool Restorer::write_contents(int fd, uint32_t ino, const std::string& rel) {
  const uint64_t size = img_.inode(ino).size, ps = img_.page_size();
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) return fail(rel, "cannot set the size", errno);
  constexpr size_t kChunk = size_t{1} << 20;
  buf_.resize(kChunk);
  // Data pages come in runs between holes; each run is copied in chunks of up to 1 MiB.
  uint64_t run_start = 0, run_end = 0;  // the current run of data pages [run_start, run_end)
  bool ok = true;
  auto copy_run = [&] {
    for (uint64_t off = run_start * ps, stop = std::min(run_end * ps, size); ok && off < stop;) {
      size_t got = 0;
      try {
        got = img_.read(ino, off, std::min<uint64_t>(kChunk, stop - off), buf_.data(), dec_);
      } catch (const ImageError& e) {
        ok = fail(rel, e.what(), 0);
        return;
      }
      if (got == 0 || !pwrite_all(fd, buf_.data(), got, off))
        ok = fail(rel, "cannot write", got ? errno : EIO);
      off += got;
    }
  };
  img_.for_each_data_page(ino, [&](uint64_t i, const PageRef&) {
    if (i != run_end) {
      copy_run();
      run_start = i;
    }
    run_end = i + 1;
  });
  copy_run();
  return ok;
}

bool Restorer::make_special(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel) {
  const format::Inode& in = img_.inode(ino);
  const uint32_t mode = img_.mode(ino);
  const std::string n(name);
  const mode_t perm = mode & 07777u;
  int r = -1;
  switch (mode & format::kTypeMask) {
    case format::kTypeLnk: {
      const std::string target(img_.symlink_target(ino));
      if (target.empty() || target.find('\0') != std::string::npos)
        return fail(rel, "symlink target cannot be represented (empty or has a NUL byte)", 0);
      r = create_replacing(dir_fd, n, [&] { return symlinkat(target.c_str(), dir_fd, n.c_str()); });
      break;
    }
    case format::kTypeChr:
    case format::kTypeBlk: {
      const mode_t type = (mode & format::kTypeMask) == format::kTypeChr ? S_IFCHR : S_IFBLK;
      r = create_replacing(dir_fd, n, [&] {
        return mknodat(dir_fd, n.c_str(), type | perm, makedev(in.rdev_major, in.rdev_minor));
      });
      break;
    }
    case format::kTypeFifo:
      r = create_replacing(dir_fd, n, [&] { return mknodat(dir_fd, n.c_str(), S_IFIFO | perm, 0); });
      break;
    case format::kTypeSock:
      r = create_replacing(dir_fd, n, [&] { return mknodat(dir_fd, n.c_str(), S_IFSOCK | perm, 0); });
      break;
    default:
      return fail(rel, std::string("cannot extract a ") + type_name(mode), 0);
  }
  if (r != 0) return fail(rel, "cannot create", errno);
  return set_metadata(-1, dir_fd, name, ino, rel);
}

bool Restorer::link_to_first(int dir_fd, std::string_view name, uint32_t ino, const std::string& rel) {
  // Re-open the directory of the first name one component at a time, never following a symlink.
  const std::string& first = first_name_.at(ino);
  Fd dir(-1);
  size_t pos = 0;
  for (size_t slash; (slash = first.find('/', pos)) != std::string::npos; pos = slash + 1) {
    const std::string part = first.substr(pos, slash - pos);
    const int next = openat(dir.get() >= 0 ? dir.get() : root_fd_, part.c_str(),
                            O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return fail(rel, "cannot reach " + printable_name(local(first)) + " to link to it", errno);
    dir.reset(next);
  }
  const int at = dir.get() >= 0 ? dir.get() : root_fd_;
  const std::string target = first.substr(pos), n(name);
  const int r = create_replacing(dir_fd, n, [&] { return linkat(at, target.c_str(), dir_fd, n.c_str(), 0); });
  if (r != 0) return fail(rel, "cannot link to " + printable_name(local(first)), errno);
  return true;
}

int Restorer::make_dir(int dir_fd, std::string_view name, const std::string& rel) {
  ++entries_;
  current_ = rel;
  const std::string n(name);
  // 0700 until finish_dir: the final mode may not let us create the contents.
  const bool existed = mkdirat(dir_fd, n.c_str(), 0700) != 0;
  if (existed && errno != EEXIST) {
    fail(rel, "cannot create directory", errno);
    return -1;
  }
  const auto open_dir = [&] {
    return openat(dir_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  };
  int fd = open_dir();
  // Something else by that name (a file, a symlink that must not be followed): replace it.
  if (fd < 0 && existed && (errno == ENOTDIR || errno == ELOOP) && unlinkat(dir_fd, n.c_str(), 0) == 0 &&
      mkdirat(dir_fd, n.c_str(), 0700) == 0)
    fd = open_dir();
  if (fd < 0) fail(rel, "cannot create directory", errno);
  return fd;
}

void Restorer::finish_dir(int fd, uint32_t ino, const std::string& rel) {
  set_metadata(fd, -1, "", ino, rel);
}

bool Restorer::set_metadata(int fd, int dir_fd, std::string_view name, uint32_t ino, const std::string& rel) {
  const format::Attr& in = img_.attr(ino);
  const std::string n(name);
  bool ok = true;
  if (as_root_) {
    const uid_t uid = in.uid;
    const gid_t gid = in.gid;
    const int r = fd >= 0 ? fchown(fd, uid, gid) : fchownat(dir_fd, n.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW);
    if (r != 0) ok = fail(rel, "cannot set the owner", errno);
  }
  if ((in.mode & format::kTypeMask) != format::kTypeLnk) {  // a symlink's mode means nothing on Linux
    const mode_t perm = in.mode & 07777u;
    int r = fd >= 0 ? fchmod(fd, perm) : fchmodat(dir_fd, n.c_str(), perm, AT_SYMLINK_NOFOLLOW);
    // Older kernels lack fchmodat2; the entry was just created as a non-symlink, so following is safe.
    if (r != 0 && fd < 0 && (errno == ENOTSUP || errno == ENOSYS)) r = fchmodat(dir_fd, n.c_str(), perm, 0);
    if (r != 0) ok = fail(rel, "cannot set the mode", errno);
  }
  ok = set_xattrs(fd, dir_fd, name, ino, rel) && ok;
  const timespec mtime{static_cast<time_t>(in.mtime_sec), static_cast<long>(in.mtime_nsec)};
  const timespec times[2] = {mtime, mtime};  // the image has no atime: use the mtime, reproducibly
  const int r = fd >= 0 ? futimens(fd, times) : utimensat(dir_fd, n.c_str(), times, AT_SYMLINK_NOFOLLOW);
  if (r != 0) ok = fail(rel, "cannot set the times", errno);
  return ok;
}

bool Restorer::set_xattrs(int fd, int dir_fd, std::string_view name, uint32_t ino, const std::string& rel) {
  const auto pairs = img_.xattrs(ino);
  if (pairs.empty()) return true;
  // There is no lsetxattrat: name the entry through its directory's descriptor instead of a path that
  // could be long or redirected. lsetxattr does not follow the last component.
  const std::string via = fd >= 0 ? "" : "/proc/self/fd/" + std::to_string(dir_fd) + "/" + std::string(name);
  bool ok = true;
  for (const format::XattrPair& p : pairs) {
    const std::string key(img_.xattr_key(p));
    const std::string_view value = img_.xattr_value(p);
    const int r = fd >= 0 ? fsetxattr(fd, key.c_str(), value.data(), value.size(), 0)
                          : lsetxattr(via.c_str(), key.c_str(), value.data(), value.size(), 0);
    if (r == 0) continue;
    if (xattr_refused(errno)) {
      warn_xattr(rel, key, errno);
    } else {
      ok = fail(rel, "cannot set xattr " + printable_name(key), errno);
    }
  }
  return ok;
}

}  // namespace gdfs::inspect
