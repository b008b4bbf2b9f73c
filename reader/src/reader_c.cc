// The C API (gdfs/reader_c.h): each call forwards to the Reader and turns exceptions into an errno value
// and a per-thread message. Nothing thrown here or below crosses the C boundary.
#include "gdfs/reader_c.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdfs/printable.h"
#include "gdfs/reader.h"
#include "testing.h"

struct gdfs_reader {
  std::unique_ptr<gdfs::Reader> reader;
};

namespace gdfs::testing {
Reader& reader_of(gdfs_reader* handle) {
  return *handle->reader;
}
}  // namespace gdfs::testing

namespace {

thread_local std::string t_message;
thread_local int t_code = 0;

// Records a failure for gdfs_last_error and returns its code.
int fail(int code, const char* message) noexcept {
  t_code = code;
  try {
    t_message = message;
  } catch (...) {  // no memory for the message: an empty one says less, but says it
    t_message.clear();
  }
  return code;
}

int fail(int code, const std::string& message) noexcept {
  return fail(code, message.c_str());
}

// Runs `fn` (returning 0 or an errno value), turning anything it throws into a recorded failure.
template <typename Fn>
int guard(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    return fail(gdfs::error_code(e), e.what());
  } catch (...) {
    return fail(EIO, "gdfs: unknown error");
  }
}

int null_argument(const char* call, const char* what) noexcept {
  return fail(EINVAL, std::string(call) + ": " + what + " is NULL");
}

// Copies `s` NUL-terminated into buf, or says ERANGE.
int copy_out(const std::string& s, char* buf, size_t size, size_t* len, const char* call) {
  if (len) *len = s.size();
  if (!buf || size < s.size() + 1)
    return fail(ERANGE, std::string(call) + ": " + std::to_string(s.size() + 1) +
                            " bytes needed, the buffer holds " + std::to_string(buf ? size : 0));
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  return 0;
}

std::vector<gdfs::ReadRequest> to_requests(const gdfs_request* in, size_t n) {
  std::vector<gdfs::ReadRequest> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].ino = in[i].ino;
    out[i].offset = in[i].offset;
    out[i].length = in[i].length;
    out[i].dst = in[i].dst;
  }
  return out;
}

// Copies the results back; returns 0, or the first failure (recorded).
int from_requests(const gdfs::Reader& r, const std::vector<gdfs::ReadRequest>& done, gdfs_request* out) {
  int first = 0;
  for (size_t i = 0; i < done.size(); ++i) {
    out[i].bytes = done[i].bytes;
    out[i].error = done[i].error;
    if (done[i].error && !first) {
      first = done[i].error;
      fail(first, !done[i].message.empty() ? done[i].message
                                           : r.name() + ": inode " + std::to_string(done[i].ino) + ": " +
                                                 std::strerror(done[i].error));
    }
  }
  return first;
}

int lookup(const char* fn, gdfs_reader* reader, const char* path, uint32_t* ino, gdfs::Follow follow) {
  if (!reader) return null_argument(fn, "reader");
  if (!path || !ino) return null_argument(fn, path ? "ino" : "path");
  return guard([&] {
    *ino = reader->reader->lookup(path, follow);
    return 0;
  });
}

}  // namespace

extern "C" {

const char* gdfs_last_error(void) {
  return t_message.c_str();
}

int gdfs_last_errno(void) {
  return t_code;
}

void gdfs_options_init(gdfs_options* options) {
  if (!options) return;
  const gdfs::ReaderOptions d;
  options->cache_size = d.cache_size;
  options->threads = d.threads;
  options->decoder = GDFS_DECODER_AUTO;
  options->readahead = d.readahead;
}

gdfs_reader* gdfs_open(const char* path_or_url, const gdfs_options* options) {
  gdfs_reader* handle = nullptr;
  const int err = guard([&]() -> int {
    if (!path_or_url) return null_argument("gdfs_open", "path_or_url");
    gdfs::ReaderOptions opt;
    if (options) {
      opt.cache_size = options->cache_size;
      opt.threads = options->threads;
      opt.readahead = options->readahead;
      switch (options->decoder) {
        case GDFS_DECODER_AUTO:
          opt.decoder = gdfs::DecoderChoice::kAuto;
          break;
        case GDFS_DECODER_CPU:
          opt.decoder = gdfs::DecoderChoice::kCpu;
          break;
        case GDFS_DECODER_GPU:
          opt.decoder = gdfs::DecoderChoice::kGpu;
          break;
        default:
          return fail(EINVAL, std::string(path_or_url) + ": no decoder " + std::to_string(options->decoder) +
                                  " (GDFS_DECODER_AUTO, _CPU or _GPU)");
      }
    }
    auto h = std::make_unique<gdfs_reader>();
    try {
      h->reader = gdfs::Reader::open(path_or_url, opt);
    } catch (const std::exception& e) {
      return fail(gdfs::error_code(e), e.what());
    }
    handle = h.release();
    return 0;
  });
  if (err) errno = err;
  return handle;
}

void gdfs_close(gdfs_reader* reader) {
  // The Reader's destructor waits for its readahead and threads; it does not throw.
  delete reader;
}

int gdfs_lookup(gdfs_reader* reader, const char* path, uint32_t* ino) {
  return lookup("gdfs_lookup", reader, path, ino, gdfs::Follow::kNo);
}

int gdfs_lookup_follow(gdfs_reader* reader, const char* path, uint32_t* ino) {
  return lookup("gdfs_lookup_follow", reader, path, ino, gdfs::Follow::kYes);
}

int gdfs_stat(gdfs_reader* reader, uint32_t ino, gdfs_stat_t* st) {
  if (!reader || !st) return null_argument("gdfs_stat", reader ? "st" : "reader");
  return guard([&] {
    const gdfs::FileStat s = reader->reader->stat(ino);
    st->ino = s.ino;
    st->mode = s.mode;
    st->nlink = s.nlink;
    st->uid = s.uid;
    st->gid = s.gid;
    st->size = s.size;
    st->mtime_ns = s.mtime_ns;
    st->rdev = s.rdev;
    st->blocks = s.blocks;
    st->blksize = s.blksize;
    return 0;
  });
}

int gdfs_seek(gdfs_reader* reader, uint32_t ino, uint64_t offset, int data, uint64_t* result) {
  if (!reader || !result) return null_argument("gdfs_seek", reader ? "result" : "reader");
  return guard([&] {
    *result = reader->reader->seek(ino, offset, data ? gdfs::Seek::kData : gdfs::Seek::kHole);
    return 0;
  });
}

int gdfs_list(gdfs_reader* reader, uint32_t dir, gdfs_list_fn fn, void* context) {
  if (!reader || !fn) return null_argument("gdfs_list", reader ? "fn" : "reader");
  return guard([&] {
    for (const gdfs::DirEntry& e : reader->reader->list(dir)) {
      const int rc = fn(context, e.name.c_str(), e.name.size(), e.ino, e.mode);
      if (rc) return rc;  // the caller's own value: not a failure of ours
    }
    return 0;
  });
}

int gdfs_readlink(gdfs_reader* reader, uint32_t ino, char* buf, size_t size, size_t* len) {
  if (!reader) return null_argument("gdfs_readlink", "reader");
  return guard([&] { return copy_out(reader->reader->readlink(ino), buf, size, len, "gdfs_readlink"); });
}

int gdfs_listxattr(gdfs_reader* reader, uint32_t ino, char* buf, size_t size, size_t* len) {
  if (!reader) return null_argument("gdfs_listxattr", "reader");
  return guard([&] {
    std::string names;
    for (const auto& [name, value] : reader->reader->xattrs(ino)) names.append(name).push_back('\0');
    return copy_out(names, buf, size, len, "gdfs_listxattr");
  });
}

int gdfs_getxattr(gdfs_reader* reader, uint32_t ino, const char* name, char* buf, size_t size, size_t* len) {
  if (!reader || !name) return null_argument("gdfs_getxattr", reader ? "name" : "reader");
  return guard([&] {
    for (const auto& [key, value] : reader->reader->xattrs(ino))
      if (key == name) return copy_out(value, buf, size, len, "gdfs_getxattr");
    return fail(ENODATA, reader->reader->name() + ": inode " + std::to_string(ino) + ": no xattr " +
                             gdfs::printable_name(name));
  });
}

int gdfs_read(gdfs_reader* reader, uint32_t ino, uint64_t offset, size_t length, void* dst, size_t* got) {
  if (got) *got = 0;
  if (!reader) return null_argument("gdfs_read", "reader");
  if (!dst && length) return null_argument("gdfs_read", "dst");
  return guard([&] {
    const size_t n = reader->reader->read(ino, offset, length, dst);
    if (got) *got = n;
    return 0;
  });
}

namespace {

int read_batch(const char* call, gdfs_reader* reader, gdfs_request* requests, size_t n, gdfs::Access access) {
  if (!reader) return null_argument(call, "reader");
  if (!requests && n) return null_argument(call, "requests");
  return guard([&] {
    std::vector<gdfs::ReadRequest> reqs = to_requests(requests, n);
    for (size_t i = 0; i < n; ++i) {
      if (!reqs[i].dst && reqs[i].length) return null_argument(call, "a request's dst");
    }
    reader->reader->read_batch(reqs, access);
    return from_requests(*reader->reader, reqs, requests);
  });
}

}  // namespace

int gdfs_read_batch(gdfs_reader* reader, gdfs_request* requests, size_t n) {
  return read_batch("gdfs_read_batch", reader, requests, n, gdfs::Access::kNormal);
}

int gdfs_read_batch_access(gdfs_reader* reader, gdfs_request* requests, size_t n, int access) {
  if (access != GDFS_ACCESS_NORMAL && access != GDFS_ACCESS_ONCE)
    return fail(EINVAL, "gdfs_read_batch_access: access is " + std::to_string(access) +
                            ", not GDFS_ACCESS_NORMAL or GDFS_ACCESS_ONCE");
  return read_batch("gdfs_read_batch_access", reader, requests, n,
                    access == GDFS_ACCESS_ONCE ? gdfs::Access::kOnce : gdfs::Access::kNormal);
}

int gdfs_read_device(gdfs_reader* reader, uint32_t ino, uint64_t offset, size_t length, void* dst,
                     void* stream, size_t* got) {
  if (got) *got = 0;
  if (!reader) return null_argument("gdfs_read_device", "reader");
  if (!dst && length) return null_argument("gdfs_read_device", "dst");
  return guard([&] {
    const size_t n = reader->reader->read_device(ino, offset, length, dst, stream);
    if (got) *got = n;
    return 0;
  });
}

int gdfs_read_batch_device(gdfs_reader* reader, gdfs_request* requests, size_t n, void* stream) {
  if (!reader) return null_argument("gdfs_read_batch_device", "reader");
  if (!requests && n) return null_argument("gdfs_read_batch_device", "requests");
  return guard([&] {
    std::vector<gdfs::ReadRequest> reqs = to_requests(requests, n);
    for (size_t i = 0; i < n; ++i) {
      if (!reqs[i].dst && reqs[i].length) return null_argument("gdfs_read_batch_device", "a request's dst");
    }
    reader->reader->read_batch_device(reqs, stream);
    return from_requests(*reader->reader, reqs, requests);
  });
}

int gdfs_device_reads(gdfs_reader* reader) {
  if (!reader) return null_argument("gdfs_device_reads", "reader");
  return guard([&] {
    std::string how;
    if (reader->reader->device_reads(how)) return 0;
    return fail(ENOTSUP,
                reader->reader->name() + ": reads into device memory are not supported here (" + how + ")");
  });
}

int gdfs_stats_json(gdfs_reader* reader, char* buf, size_t size, size_t* len) {
  if (!reader) return null_argument("gdfs_stats_json", "reader");
  return guard([&] { return copy_out(reader->reader->stats_json(), buf, size, len, "gdfs_stats_json"); });
}

}  // extern "C"
