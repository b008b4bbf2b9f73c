// The FUSE low-level operations. Inode numbers are the image's own (1-based; 1 is the root, which is
// FUSE_ROOT_ID), so they are stable across mounts and need no table; forget has nothing to release.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "daemon/daemon.h"
#include "gdfs/log.h"

namespace gdfs::daemon {
namespace {

Daemon& daemon_of(fuse_req_t req) {
  return *static_cast<Daemon*>(fuse_req_userdata(req));
}

// The error boundary of every operation that can fail: whatever the body throws becomes one errno reply
// and one log line, never an exception into libfuse (which would end the daemon and leave a dead mount
// point). The errno is the library's one mapping (error_code: an ImageError's own, ENOMEM, ...); an
// exception that is not the library's is a bug, answered the same way and logged as one. Bodies reply
// last, so a throw always happens before their reply.
template <typename Fn>
void guarded(fuse_req_t req, const char* op, Fn&& fn) {
  int err = EIO;
  try {
    fn();
    return;
  } catch (const ImageError& e) {
    err = e.code();
    // A damaged page is worth a line; ENOENT, ENXIO or EISDIR are answers, not events.
    if (err == EIO) log_line(LogLevel::kError, e.what());
  } catch (const std::bad_alloc& e) {
    log_line(LogLevel::kError, std::string(op) + ": out of memory");
    err = error_code(e);
  } catch (const std::exception& e) {
    log_line(LogLevel::kError, std::string(op) + ": internal error: " + e.what());
    err = error_code(e);
  } catch (...) {
    log_line(LogLevel::kError, std::string(op) + ": internal error");
  }
  fuse_reply_err(req, err);
}

bool valid_ino(const Image& img, fuse_ino_t ino) {
  return ino >= 1 && ino <= img.inode_count();
}

// The inode's attributes as the mount shows them: -o uid=, gid= and umask= apply.
void fill_stat(Daemon& d, uint32_t ino, struct stat& st) {
  const FileStat f = d.reader().stat(ino);
  const DaemonOptions& o = d.options();
  std::memset(&st, 0, sizeof st);
  st.st_ino = f.ino;
  st.st_mode = f.mode & ~o.umask.value_or(0);
  st.st_nlink = f.nlink;
  st.st_uid = o.uid.value_or(f.uid);
  st.st_gid = o.gid.value_or(f.gid);
  st.st_size = static_cast<off_t>(f.size);
  st.st_rdev = static_cast<dev_t>(f.rdev);
  st.st_blksize = f.blksize;
  st.st_blocks = static_cast<blkcnt_t>(f.blocks);
  // Floor division: an mtime before 1970 has a negative second and a nanosecond part in [0, 1e9).
  constexpr int64_t kNs = 1000000000;
  st.st_mtim.tv_sec = f.mtime_ns / kNs - (f.mtime_ns % kNs < 0);
  st.st_mtim.tv_nsec = f.mtime_ns % kNs + (f.mtime_ns % kNs < 0 ? kNs : 0);
  st.st_atim = st.st_mtim;
  st.st_ctim = st.st_mtim;
}

fuse_entry_param entry_for(Daemon& d, uint32_t ino) {
  fuse_entry_param e{};
  e.ino = ino;
  e.attr_timeout = d.timeout();
  e.entry_timeout = d.timeout();
  if (ino) fill_stat(d, ino, e.attr);
  return e;
}

void op_init(void* userdata, fuse_conn_info* conn) {
  Daemon& d = *static_cast<Daemon*>(userdata);
  d.zero_message_open = conn->capable & FUSE_CAP_NO_OPEN_SUPPORT;
  d.zero_message_opendir = conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
  // Large reads arrive as one request, and the kernel reads ahead as far as it will go: the kernel
  // takes the smaller of this and the mount's read_ahead_kb, which main.cc widened before this reply.
  conn->max_readahead = std::max<unsigned>(conn->max_readahead, kernel_readahead(d.options().readahead));
  if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO;
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  if (conn->capable & FUSE_CAP_IOCTL_DIR) conn->want |= FUSE_CAP_IOCTL_DIR;  // the counters' ioctl
  conn->want &= ~FUSE_CAP_SPLICE_READ;  // nothing is written to a read-only filesystem
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, "lookup", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), parent)) return (void)fuse_reply_err(req, ENOENT);
    const uint32_t ino = d.reader().lookup(static_cast<uint32_t>(parent), name);
    // ino 0 with a timeout is a negative entry: the kernel remembers that the name does not exist.
    fuse_entry_param e = entry_for(d, ino);
    fuse_reply_entry(req, &e);
  });
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  guarded(req, "getattr", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, ENOENT);
    struct stat st;
    fill_stat(d, static_cast<uint32_t>(ino), st);
    fuse_reply_attr(req, &st, d.timeout());
  });
}

void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  guarded(req, "readlink", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), ino) || d.image().type(static_cast<uint32_t>(ino)) != format::kTypeLnk)
      return (void)fuse_reply_err(req, EINVAL);
    const std::string target(d.image().symlink_target(static_cast<uint32_t>(ino)));
    fuse_reply_readlink(req, target.c_str());
  });
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  guarded(req, "opendir", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, ENOENT);
    if (d.image().type(static_cast<uint32_t>(ino)) != format::kTypeDir)
      return (void)fuse_reply_err(req, ENOTDIR);
    if (d.zero_message_opendir) return (void)fuse_reply_err(req, ENOSYS);  // see Daemon
    fi->cache_readdir = 1;                                                 // listings never change
    fi->keep_cache = 1;
    fuse_reply_open(req, fi);
  });
}

// Directory offsets: 0 is ".", 1 is "..", 2 + i is dirent i; each entry carries the offset after it.
void readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus) {
  guarded(req, plus ? "readdirplus" : "readdir", [&] {
    Daemon& d = daemon_of(req);
    const Image& img = d.image();
    const uint32_t dir = static_cast<uint32_t>(ino);
    if (!valid_ino(img, ino) || img.type(dir) != format::kTypeDir) return (void)fuse_reply_err(req, ENOTDIR);
    const auto ents = img.dirents(dir);
    std::vector<char> buf(size);
    size_t used = 0;
    for (uint64_t i = off < 0 ? 0 : uint64_t(off); i < ents.size() + 2; ++i) {
      std::string name;
      uint32_t child;
      if (i < 2) {
        name = i == 0 ? "." : "..";
        child = i == 0 ? dir : img.inode(dir).parent;
      } else {
        name = img.name(ents[i - 2]);
        child = ents[i - 2].ino;
      }
      const off_t next = static_cast<off_t>(i + 1);
      size_t n;
      if (plus) {
        fuse_entry_param e = entry_for(d, child);
        n = fuse_add_direntry_plus(req, buf.data() + used, size - used, name.c_str(), &e, next);
      } else {
        struct stat st {};
        st.st_ino = child;
        st.st_mode = img.mode(child) & format::kTypeMask;
        n = fuse_add_direntry(req, buf.data() + used, size - used, name.c_str(), &st, next);
      }
      if (n > size - used) break;
      used += n;
    }
    fuse_reply_buf(req, buf.data(), used);
    // The request past the last entry: the kernel has taken in every earlier reply, so it knows each
    // entry's inode now (mkfs numbers a directory's entries consecutively from the first).
    if (off >= 0 && uint64_t(off) >= ents.size() + 2 && !ents.empty())
      d.walk_listed(ents[0].ino, static_cast<uint32_t>(ents.size()));
  });
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  readdir_common(req, ino, size, off, false);
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  readdir_common(req, ino, size, off, true);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  guarded(req, "open", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, ENOENT);
    if ((fi->flags & O_ACCMODE) != O_RDONLY) return (void)fuse_reply_err(req, EROFS);
    if (d.image().type(static_cast<uint32_t>(ino)) != format::kTypeReg)
      return (void)fuse_reply_err(req, EISDIR);
    if (d.zero_message_open) return (void)fuse_reply_err(req, ENOSYS);  // see Daemon
    fi->keep_cache = 1;  // the image never changes: cached pages stay valid across opens
    fuse_reply_open(req, fi);
  });
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, "read", [&] {
    Daemon& d = daemon_of(req);
    if (off < 0) return (void)fuse_reply_err(req, EINVAL);
    // Zero-copy from the cache: the reply is gathered straight from the decoded pages, which the view
    // keeps alive until the kernel has copied them. One view per thread, reused: no allocation per read.
    thread_local ReadView view;
    thread_local PageRest rest;  // what the touched pages hold beyond the range: see Daemon::store_ahead
    PageRest* want_rest =
        d.want_store_ahead(static_cast<uint32_t>(ino), uint64_t(off), size) ? &rest : nullptr;
    // The kernel's page cache keeps what the reply carries (not for O_DIRECT), so whole pages need not
    // stay in ours too: their memory is reused for the next pages, which saves a first-touch page fault
    // per 4 KiB of a cold read.
    const Access access = (fi->flags & O_DIRECT) ? Access::kNormal : Access::kOnce;
    try {
      d.reader().read(static_cast<uint32_t>(ino), uint64_t(off), size, view, want_rest, access);
    } catch (const ImageError& e) {
      return (void)fuse_reply_err(req, e.code());  // a bad page is logged once by the library, not per read
    }
    const auto pieces = view.pieces();
    fuse_reply_iov(req, pieces.data(), static_cast<int>(pieces.size()));
    view.clear();
    // After the reply: the kernel has unlocked the pages of this read, and the reader is not kept waiting.
    if (want_rest) {
      d.store_ahead(static_cast<uint32_t>(ino), rest);
      rest.clear();  // hold no page past the cache's bound
    }
    d.walk_ahead(static_cast<uint32_t>(ino), uint64_t(off));
  });
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  Daemon& d = daemon_of(req);
  const Image& img = d.image();
  struct statvfs s {};
  s.f_bsize = img.page_size();
  s.f_frsize = img.page_size();
  s.f_blocks = (img.superblock().image_size + img.page_size() - 1) / img.page_size();
  s.f_files = img.inode_count();
  s.f_namemax = format::kMaxNameLen;
  fuse_reply_statfs(req, &s);
}

// Replies to getxattr/listxattr: the size when asked for it (size 0), ERANGE when it does not fit.
void reply_xattr_bytes(fuse_req_t req, size_t size, std::string_view bytes) {
  if (size == 0) return (void)fuse_reply_xattr(req, bytes.size());
  if (size < bytes.size()) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, bytes.data(), bytes.size());
}

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  guarded(req, "getxattr", [&] {
    Daemon& d = daemon_of(req);
    // ENOSYS once: the kernel then answers every getxattr itself (EOPNOTSUPP; no POSIX ACL: ENODATA).
    if (!d.xattrs()) return (void)fuse_reply_err(req, ENOSYS);
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, ENOENT);
    if (ino == FUSE_ROOT_ID && std::strcmp(name, kStatsXattr) == 0)
      return reply_xattr_bytes(req, size, d.stats_json());
    const uint32_t i = static_cast<uint32_t>(ino);
    for (const format::XattrPair& p : d.image().xattrs(i))
      if (d.image().xattr_key(p) == name) return reply_xattr_bytes(req, size, d.image().xattr_value(p));
    fuse_reply_err(req, ENODATA);
  });
}

// The counters (gdfs/mount_counters.h), for a mount whose xattrs are off too. Any other ioctl: ENOTTY.
void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void*, fuse_file_info*, unsigned flags,
              const void*, size_t, size_t out_size) {
  guarded(req, "ioctl", [&] {
    Daemon& d = daemon_of(req);
    if (ino != FUSE_ROOT_ID || cmd != kStatsIoctl || (flags & FUSE_IOCTL_COMPAT))
      return (void)fuse_reply_err(req, ENOTTY);
    const std::string json = d.stats_json();
    if (json.size() > out_size) return (void)fuse_reply_err(req, ERANGE);
    fuse_reply_ioctl(req, static_cast<int>(json.size()), json.data(), json.size());
  });
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  guarded(req, "listxattr", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, ENOENT);
    // With xattrs off, none are listed either: a copy (cp -a, tar --xattrs) must not list names that
    // getxattr then refuses.
    std::string names;
    if (d.xattrs())
      for (const format::XattrPair& p : d.image().xattrs(static_cast<uint32_t>(ino))) {
        names.append(d.image().xattr_key(p));
        names.push_back('\0');
      }
    reply_xattr_bytes(req, size, names);
  });
}

void op_access(fuse_req_t req, fuse_ino_t, int mask) {
  // Permission bits are checked by the kernel (default_permissions); only writing is ours to refuse.
  fuse_reply_err(req, (mask & W_OK) ? EROFS : 0);
}

// SEEK_DATA / SEEK_HOLE (the kernel handles the other whence values itself).
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info*) {
  guarded(req, "lseek", [&] {
    Daemon& d = daemon_of(req);
    if (whence != SEEK_DATA && whence != SEEK_HOLE) return (void)fuse_reply_err(req, EINVAL);
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, EINVAL);
    if (off < 0) return (void)fuse_reply_err(req, ENXIO);
    const Seek w = whence == SEEK_DATA ? Seek::kData : Seek::kHole;
    fuse_reply_lseek(req, static_cast<off_t>(d.reader().seek(static_cast<uint32_t>(ino), uint64_t(off), w)));
  });
}

// Everything that would change the tree: a read-only filesystem answers EROFS.
void rofs(fuse_req_t req) {
  fuse_reply_err(req, EROFS);
}

fuse_lowlevel_ops make_ops() {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = [](fuse_req_t req, fuse_ino_t, uint64_t) { fuse_reply_none(req); };
  ops.forget_multi = [](fuse_req_t req, size_t, fuse_forget_data*) { fuse_reply_none(req); };
  ops.getattr = op_getattr;
  ops.readlink = op_readlink;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.readdirplus = op_readdirplus;
  ops.releasedir = [](fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); };
  ops.open = op_open;
  ops.read = op_read;
  ops.statfs = op_statfs;
  ops.getxattr = op_getxattr;
  ops.listxattr = op_listxattr;
  ops.ioctl = op_ioctl;
  ops.access = op_access;
  ops.lseek = op_lseek;
  // No flush, fsync or fsyncdir: libfuse answers ENOSYS once and the kernel stops sending them, which
  // saves a round trip on every close.
  ops.setattr = [](fuse_req_t req, fuse_ino_t, struct stat*, int, fuse_file_info*) { rofs(req); };
  ops.mknod = [](fuse_req_t req, fuse_ino_t, const char*, mode_t, dev_t) { rofs(req); };
  ops.mkdir = [](fuse_req_t req, fuse_ino_t, const char*, mode_t) { rofs(req); };
  ops.unlink = [](fuse_req_t req, fuse_ino_t, const char*) { rofs(req); };
  ops.rmdir = [](fuse_req_t req, fuse_ino_t, const char*) { rofs(req); };
  ops.symlink = [](fuse_req_t req, const char*, fuse_ino_t, const char*) { rofs(req); };
  ops.rename = [](fuse_req_t req, fuse_ino_t, const char*, fuse_ino_t, const char*, unsigned) { rofs(req); };
  ops.link = [](fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) { rofs(req); };
  ops.write = [](fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*) { rofs(req); };
  ops.create = [](fuse_req_t req, fuse_ino_t, const char*, mode_t, fuse_file_info*) { rofs(req); };
  ops.setxattr = [](fuse_req_t req, fuse_ino_t, const char*, const char*, size_t, int) { rofs(req); };
  ops.removexattr = [](fuse_req_t req, fuse_ino_t, const char*) { rofs(req); };
  ops.fallocate = [](fuse_req_t req, fuse_ino_t, int, off_t, off_t, fuse_file_info*) { rofs(req); };
  return ops;
}

}  // namespace

const fuse_lowlevel_ops& daemon_ops() {
  static const fuse_lowlevel_ops ops = make_ops();
  return ops;
}

}  // namespace gdfs::daemon
