#include "scan_list.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <utility>

#include "diag.h"
#include "gdfs/format.h"
#include "gdfs/unique_fd.h"
#include "source_hook.h"
#include "text.h"

namespace gdfs::mkfs {
namespace {

constexpr size_t kMaxXattrValue = 65536;  // XattrPair::value_len limit; Linux's own is the same

// Reads a symlink's target; st_size is only a hint (0 on some filesystems), so grow until it fits.
bool read_link(const std::string& path, std::string& target) {
  std::string buf(256, '\0');
  for (;;) {
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) return false;
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      target = std::move(buf);
      return true;
    }
    buf.resize(buf.size() * 2);
  }
}

// Where xattrs are read from: an open regular file (fd >= 0; `path` is then not used), else `path`
// itself (the full path), not followed.
struct XattrSource {
  const std::string& path;
  int fd = -1;

  ssize_t list(char* buf, size_t size) const {
    return fd >= 0 ? ::flistxattr(fd, buf, size) : ::llistxattr(path.c_str(), buf, size);
  }
  ssize_t get(const char* key, void* buf, size_t size) const {
    return fd >= 0 ? ::fgetxattr(fd, key, buf, size) : ::lgetxattr(path.c_str(), key, buf, size);
  }
};

// The NUL-separated list of xattr names; an empty list where the filesystem has no xattrs.
bool list_xattrs(const XattrSource& from, std::string& names) {
  for (;;) {
    const ssize_t n = from.list(nullptr, 0);
    if (n < 0) return errno == ENOTSUP ? (names.clear(), true) : false;
    names.resize(static_cast<size_t>(n));
    if (n == 0) return true;
    const ssize_t m = from.list(names.data(), names.size());
    if (m >= 0) return names.resize(static_cast<size_t>(m)), true;
    if (errno != ERANGE) return false;  // ERANGE: the list grew in between; ask again
  }
}

enum class GetResult { kOk, kSkip, kError };

// One xattr value. Keys we may not read (trusted.* without privilege) or that vanished in between
// are skipped: we keep what we can read.
GetResult get_xattr(const XattrSource& from, const char* key, std::string& value) {
  for (;;) {
    ssize_t n = from.get(key, nullptr, 0);
    if (n >= 0) {
      value.resize(static_cast<size_t>(n));
      n = n == 0 ? 0 : from.get(key, value.data(), value.size());
      if (n >= 0) return value.resize(static_cast<size_t>(n)), GetResult::kOk;
    }
    if (errno == ERANGE) continue;
    if (errno == ENODATA || errno == EACCES || errno == EPERM || errno == ENOTSUP) return GetResult::kSkip;
    return GetResult::kError;
  }
}

// The node's xattrs that --exclude-xattr keeps, read through the open file where there is one. Returns
// "" or a message.
std::string read_xattrs(const Options& o, const XattrSource& from, ScanNode& n) {
  if (!o.xattrs) return {};
  std::string names;
  if (!list_xattrs(from, names)) return io_message("list the extended attributes of", n.path, errno);
  for (size_t pos = 0; pos < names.size();) {
    const size_t end = std::min(names.find('\0', pos), names.size());
    std::string key = names.substr(pos, end - pos);
    pos = end + 1;
    if (key.empty() || !keeps_xattr(o, key.c_str())) continue;
    std::string value;
    const GetResult r = get_xattr(from, key.c_str(), value);
    if (r == GetResult::kSkip) continue;
    if (r == GetResult::kError) return io_message("read the extended attributes of", n.path, errno);
    if (key.size() > format::kMaxNameLen || value.size() > kMaxXattrValue)
      return std::string("extended attribute too large on ") + quote_path(n.path);
    n.xattrs.emplace_back(std::move(key), std::move(value));
  }
  std::sort(n.xattrs.begin(), n.xattrs.end());
  return {};
}

// listxattrat(2) (Linux 6.13): an entry's xattr names, looked up in its open directory, without opening
// the entry. Debian 12's headers do not have it. New system calls share one number on most
// architectures (not on alpha, ia64 or mips, which offset it): elsewhere the scan just opens each file.
#if !defined(SYS_listxattrat) &&                                                             \
    (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || \
     defined(__riscv) || defined(__powerpc__) || defined(__s390__) || defined(__loongarch__))
#define SYS_listxattrat 465
#endif

// Whether the regular file `name` in `dir_fd` surely has no xattrs, asked without opening it. False when
// it has some, or the answer is an error (the caller then opens the file, which reports it), or the
// kernel is older than 6.13 (ENOSYS), or a seccomp filter refuses the call (ENOSYS or EPERM): then it
// is not asked again.
bool surely_no_xattrs([[maybe_unused]] int dir_fd, [[maybe_unused]] const std::string& name) {
#ifdef SYS_listxattrat
  static std::atomic<bool> have_listxattrat{true};
  if (!have_listxattrat.load(std::memory_order_relaxed)) return false;
  const long n = ::syscall(SYS_listxattrat, dir_fd, name.c_str(), AT_SYMLINK_NOFOLLOW, nullptr, size_t{0});
  if (n < 0 && (errno == ENOSYS || errno == EPERM)) have_listxattrat.store(false, std::memory_order_relaxed);
  return n == 0 || (n < 0 && errno == ENOTSUP);
#else
  return false;
#endif
}

// A regular file: its size, and its xattrs unless it surely has none. Returns "" or a message.
std::string fill_regular(const Options& o, ScanNode& n, const struct stat& st, int dir_fd,
                         const std::string& name) {
  n.size = static_cast<uint64_t>(st.st_size);
  // Most files have no xattrs, and one with data is opened by the data pass anyway, which leaves it out
  // (with --ignore-errors) if it cannot be read: an open here as well was a third of the scan's time on
  // the Linux tree (bench/results/2026-11-27-rebuild-scan-listxattrat-zen5-vm.txt).
  if (n.size > 0 && (!o.xattrs || surely_no_xattrs(dir_fd, name))) return {};
  // Otherwise open now, so that an unreadable file is skipped before it gets an inode, and read its
  // xattrs through the descriptor: no second lookup of the path.
  const UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return io_message("open", n.path, errno);
  return read_xattrs(o, XattrSource{n.path, fd.get()}, n);
}

}  // namespace

std::string fill_node(const Options& o, ScanNode& n, const struct stat& st, int dir_fd,
                      const std::string& name) {
  n.mode = node_mode(o, st.st_mode);
  n.uid = o.uid.value_or(st.st_uid);
  n.gid = o.gid.value_or(st.st_gid);
  n.dev = st.st_dev;
  n.ino = st.st_ino;
  set_mtime(o, n, st.st_mtim.tv_sec, static_cast<uint32_t>(st.st_mtim.tv_nsec));
  if (S_ISREG(st.st_mode)) return fill_regular(o, n, st, dir_fd, name);
  const std::string path = full_path(o, n.path);
  switch (st.st_mode & S_IFMT) {
    case S_IFLNK:
      if (!read_link(path, n.target)) return io_message("read link", n.path, errno);
      n.size = n.target.size();
      break;
    case S_IFCHR:
    case S_IFBLK:
      n.rdev_major = ::major(st.st_rdev);
      n.rdev_minor = ::minor(st.st_rdev);
      break;
    case S_IFDIR:
    case S_IFIFO:
    case S_IFSOCK:
      break;
    default:
      return std::string("unsupported file type: ") + quote_path(n.path);
  }
  return read_xattrs(o, XattrSource{path, -1}, n);
}

Lister::Lister(const Options& o, const std::vector<FileId>& exclude, unsigned threads)
    : o_(o), exclude_(exclude) {
  try {
    for (unsigned t = 0; t < std::max(1u, threads); ++t) threads_.emplace_back([this] { run(); });
  } catch (...) {
    stop();
    throw;
  }
}

Lister::~Lister() {
  stop();
}

void Lister::stop() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void Lister::add(std::string rel) {
  {
    const std::lock_guard lock(mu_);
    slots_.push_back({std::move(rel), {}, {}, false});
  }
  work_cv_.notify_one();
}

Listing Lister::take() {
  std::unique_lock lock(mu_);
  ready_cv_.wait(lock, [&] { return slots_.front().ready; });
  Slot slot = std::move(slots_.front());
  slots_.pop_front();
  ++taken_;
  lock.unlock();
  work_cv_.notify_one();  // room for one more directory ahead
  if (slot.error) std::rethrow_exception(slot.error);
  return std::move(slot.listing);
}

void Lister::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(
        lock, [&] { return stopping_ || (claimed_ < taken_ + slots_.size() && claimed_ < taken_ + kAhead); });
    if (stopping_) return;
    const size_t i = claimed_++;
    const std::string rel = slots_[i - taken_].rel;
    lock.unlock();
    Listing listing;
    std::exception_ptr error;
    try {
      listing = list(rel);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    Slot& slot = slots_[i - taken_];  // not taken yet: take() waits for it to be ready
    slot.listing = std::move(listing);
    slot.error = error;
    slot.ready = true;
    if (i == taken_) ready_cv_.notify_one();
  }
}

// A directory that cannot be listed is left out of the image (with --ignore-errors) rather than shown
// empty.
Listing Lister::list(const std::string& rel) const {
  Listing out;
  if (const int error = source_fault(SourceOp::kListDir, rel)) {
    out.error = io_message("open directory", rel, error);
    return out;
  }
  DIR* d = ::opendir(full_path(o_, rel).c_str());
  if (d == nullptr) {
    out.error = io_message("open directory", rel, errno);
    return out;
  }
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (e == nullptr) break;
    const std::string_view name(e->d_name);
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) {
    out.error = io_message("read directory", rel, errno);
    ::closedir(d);
    return out;
  }
  // std::string compares with char_traits<char>, which orders bytes as unsigned char: memcmp order.
  std::sort(names.begin(), names.end());
  // Entries are looked up relative to the open directory: one path component per call instead of a
  // walk from SOURCE_DIR, which on a tree of tiny files is most of the scan's time.
  out.entries.reserve(names.size());
  try {
    for (std::string& name : names) out.entries.push_back(entry(::dirfd(d), rel, std::move(name)));
  } catch (...) {
    ::closedir(d);
    throw;
  }
  ::closedir(d);
  return out;
}

ListedEntry Lister::entry(int dir_fd, const std::string& dir_rel, std::string name) const {
  ListedEntry e;
  e.node.path = text::join_path(dir_rel, name);
  e.name = std::move(name);
  const std::string& rel = e.node.path;
  if (is_excluded(o_, rel, e.name)) {
    e.excluded = true;
  } else if (e.name.size() > format::kMaxNameLen) {
    e.error = std::string("name too long: ") + quote_path(rel);
  } else if (const int error = source_fault(SourceOp::kStat, rel)) {
    e.error = io_message("stat", rel, error);
  } else if (::fstatat(dir_fd, e.name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) {
    e.error = io_message("stat", rel, errno);
  } else if (std::find(exclude_.begin(), exclude_.end(), FileId{e.st.st_dev, e.st.st_ino}) !=
             exclude_.end()) {
    e.excluded = true;
  } else {
    e.fill_error = fill_node(o_, e.node, e.st, dir_fd, e.name);
  }
  return e;
}

}  // namespace gdfs::mkfs
