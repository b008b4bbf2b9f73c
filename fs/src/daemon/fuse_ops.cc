// The FUSE low-level operations. Inode numbers are the image's own (1-based; 1 is the root, which is
// FUSE_ROOT_ID), so they are stable across mounts and need no table; forget has nothing to release.
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
#include "engine/log.h"

namespace gdfs::daemon {
namespace {

Daemon& daemon_of(fuse_req_t req) {
  return *static_cast<Daemon*>(fuse_req_userdata(req));
}

// The error boundary of every operation that can fail: whatever the body throws becomes one errno reply
// and one log line, never an exception into libfuse (which would end the daemon and leave a dead mount
// point). A ReadError carries its errno; any other image problem is EIO; running out of memory is
// ENOMEM; anything else is a bug, answered EIO and logged as one. Bodies reply last, so a throw always
// happens before their reply.
template <typename Fn>
void guarded(fuse_req_t req, const char* op, Fn&& fn) {
  int err = EIO;
  try {
    fn();
    return;
  } catch (const ReadError& e) {
    engine::log_line(engine::LogLevel::kError, e.what());
    err = e.code();
  } catch (const ImageError& e) {
    engine::log_line(engine::LogLevel::kError, e.what());
  } catch (const std::bad_alloc&) {
    engine::log_line(engine::LogLevel::kError, std::string(op) + ": out of memory");
    err = ENOMEM;
  } catch (const std::exception& e) {
    engine::log_line(engine::LogLevel::kError, std::string(op) + ": internal error: " + e.what());
  } catch (...) {
    engine::log_line(engine::LogLevel::kError, std::string(op) + ": internal error");
  }
  fuse_reply_err(req, err);
}

bool valid_ino(const Image& img, fuse_ino_t ino) {
  return ino >= 1 && ino <= img.inode_count();
}

uint64_t hole_pages(const Image& img, uint32_t ino) {
  uint64_t n = 0;
  for (const format::HoleRun& r : img.hole_runs(ino)) n += r.count;
  return n;
}

void fill_stat(const Image& img, uint32_t ino, struct stat& st) {
  std::memset(&st, 0, sizeof st);
  const format::Inode& in = img.inode(ino);
  const format::Attr& a = img.attr(ino);
  st.st_ino = ino;
  st.st_mode = a.mode & 0xFFFFu;
  st.st_nlink = a.nlink;
  st.st_uid = a.uid;
  st.st_gid = a.gid;
  st.st_size = static_cast<off_t>(in.size);
  st.st_blksize = img.page_size();
  uint64_t allocated = in.size;
  const uint32_t type = a.mode & format::kTypeMask;
  if (type == format::kTypeReg && (a.mode & format::kInodeSparse))
    allocated =
        std::min<uint64_t>(in.size, (img.logical_pages(ino) - hole_pages(img, ino)) * img.page_size());
  if (type == format::kTypeChr || type == format::kTypeBlk) {
    st.st_rdev = makedev(in.rdev_major, in.rdev_minor);
    allocated = 0;
  }
  if (type == format::kTypeLnk) allocated = 0;
  st.st_blocks = static_cast<blkcnt_t>((allocated + 511) / 512);
  st.st_mtim.tv_sec = a.mtime_sec;
  st.st_mtim.tv_nsec = a.mtime_nsec;
  st.st_atim = st.st_mtim;
  st.st_ctim = st.st_mtim;
}

fuse_entry_param entry_for(Daemon& d, uint32_t ino) {
  fuse_entry_param e{};
  e.ino = ino;
  e.attr_timeout = d.timeout();
  e.entry_timeout = d.timeout();
  if (ino) fill_stat(d.image(), ino, e.attr);
  return e;
}

void op_init(void* userdata, fuse_conn_info* conn) {
  Daemon& d = *static_cast<Daemon*>(userdata);
  d.zero_message_open = conn->capable & FUSE_CAP_NO_OPEN_SUPPORT;
  d.zero_message_opendir = conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
  // Large reads arrive as one request, and the kernel reads ahead as far as it will go.
  conn->max_readahead = conn->max_readahead ? conn->max_readahead : (1u << 20);
  if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO;
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  conn->want &= ~FUSE_CAP_SPLICE_READ;  // nothing is written to a read-only filesystem
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, "lookup", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), parent)) return (void)fuse_reply_err(req, ENOENT);
    if (d.image().type(static_cast<uint32_t>(parent)) != format::kTypeDir)
      return (void)fuse_reply_err(req, ENOTDIR);
    const uint32_t ino = d.image().lookup(static_cast<uint32_t>(parent), name);
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
    fill_stat(d.image(), static_cast<uint32_t>(ino), st);
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

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  guarded(req, "read", [&] {
    Daemon& d = daemon_of(req);
    if (off < 0) return (void)fuse_reply_err(req, EINVAL);
    std::vector<engine::Slice> slices;
    const uint32_t i = static_cast<uint32_t>(ino);
    const int err = d.engine().read(i, uint64_t(off), size, slices, &d.read_states().get(i));
    if (err) return (void)fuse_reply_err(req, err);
    // Zero-copy from the cache: the reply is gathered straight from the decoded pages (which `slices`
    // keeps alive until the kernel has copied them).
    std::vector<iovec> iov(slices.size());
    for (size_t i = 0; i < slices.size(); ++i) iov[i] = {const_cast<uint8_t*>(slices[i].data), slices[i].len};
    fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
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
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, ENOENT);
    if (ino == FUSE_ROOT_ID && std::strcmp(name, kStatsXattr) == 0)
      return reply_xattr_bytes(req, size, d.stats_json());
    const uint32_t i = static_cast<uint32_t>(ino);
    for (const format::XattrPair& p : d.image().xattrs(i))
      if (d.image().xattr_key(p) == name) return reply_xattr_bytes(req, size, d.image().xattr_value(p));
    fuse_reply_err(req, ENODATA);
  });
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  guarded(req, "listxattr", [&] {
    Daemon& d = daemon_of(req);
    if (!valid_ino(d.image(), ino)) return (void)fuse_reply_err(req, ENOENT);
    std::string names;
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

// SEEK_DATA / SEEK_HOLE from the hole map (the kernel handles the other whence values itself).
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info*) {
  guarded(req, "lseek", [&] {
    Daemon& d = daemon_of(req);
    const Image& img = d.image();
    const uint32_t i = static_cast<uint32_t>(ino);
    if (whence != SEEK_DATA && whence != SEEK_HOLE) return (void)fuse_reply_err(req, EINVAL);
    if (!valid_ino(img, ino) || img.type(i) != format::kTypeReg) return (void)fuse_reply_err(req, EINVAL);
    const uint64_t size = img.inode(i).size, ps = img.page_size();
    if (off < 0 || uint64_t(off) >= size) return (void)fuse_reply_err(req, ENXIO);
    uint64_t result = whence == SEEK_DATA ? uint64_t(off) : size;
    for (const format::HoleRun& r : img.hole_runs(i)) {  // sorted; two runs may touch
      const uint64_t from = uint64_t{r.first_page} * ps, to = (uint64_t{r.first_page} + r.count) * ps;
      if (whence == SEEK_DATA) {
        if (result < from) break;      // `result` is in data
        if (result < to) result = to;  // in this hole: data starts after it (or another hole)
      } else if (to > uint64_t(off)) {
        result = std::max(from, uint64_t(off));
        break;
      }
    }
    result = std::min(result, size);
    if (whence == SEEK_DATA && result >= size) return (void)fuse_reply_err(req, ENXIO);
    fuse_reply_lseek(req, static_cast<off_t>(result));
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
