// libgdfs: read gdfs images without mounting them, into host or GPU memory.
//
//   auto r = gdfs::Reader::open("tree.gdfs");            // or "https://host/tree.gdfs", "s3://bucket/key"
//   gdfs::FileStat st = r->stat(r->lookup("/data/x.bin"));
//   std::vector<uint8_t> buf(st.size);
//   r->read(st.ino, 0, buf.size(), buf.data());
//
// One Reader serves any number of threads. It owns the same read path the gdfs daemon uses (the daemon is
// a FUSE front end over it): page mapping, coalesced fetches (io_uring, pread, or ranged HTTP/S3
// requests), a decoded-page cache with in-flight de-duplication, readahead for sequential readers, and
// decoding on a CPU thread pool or in GPU batches. Every page is checked by its checksums before its
// bytes reach a caller.
//
// Errors are ImageError (gdfs/source.h): one line naming the image and, where they apply, the path,
// inode and page, plus the errno a file system would answer (ENOENT, ENOTDIR, EISDIR, EINVAL, EIO).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/uio.h>

#include "gdfs/image.h"
#include "gdfs/log.h"
#include "gdfs/source.h"

namespace gdfs {

enum class DecoderChoice { kAuto, kCpu, kGpu };
// "auto", "cpu", "gpu": the spelling of every front end's decoder option. nullopt for anything else.
std::optional<DecoderChoice> parse_decoder_choice(std::string_view name);
const char* decoder_choice_name(DecoderChoice choice);
// Whether decoder=gpu would find a usable GPU here, and if not why. Asked in a child process, so a
// program that forks afterwards (a daemon) has not initialised CUDA, whose context does not survive a fork.
bool probe_gpu_decoder(std::string& why);
// The GPU architectures this build's kernels carry, as `gdfs --version` shows them.
const char* gpu_architectures();

// The most CPU decode threads a Reader takes when asked for a number: far past any core count, short of
// what would exhaust the process's threads.
inline constexpr unsigned kMaxThreads = 4096;

struct ReaderOptions {
  uint64_t cache_size = 0;  // bytes of decoded pages kept (LRU); 0: default_cache_size()
  unsigned threads = 0;     // CPU decode threads; 0: one per usable CPU (affinity,
                            // a cgroup's CPU quota); at most kMaxThreads (EINVAL)
  // kAuto takes the GPU when one is usable, else the CPU; kGpu without a usable GPU throws; kCpu never
  // touches CUDA.
  DecoderChoice decoder = DecoderChoice::kAuto;
  // Host reads: decode requests smaller than this stay on the CPU. On an H100 with 16 CPU cores the GPU
  // path lost to the CPU at every size measured (64 KiB to 256 MiB, docs/GPU.md), so by default host reads
  // decode on the CPU; device reads (read_device) decode on the GPU whatever this says.
  uint64_t gpu_min_bytes = 1ull << 30;
  uint64_t readahead = 4u << 20;  // bytes decoded ahead of a sequential reader (remote images:
                                  // at least 16 MiB); 0: off
  bool uring = true;              // local images: io_uring where the kernel allows it, else pread
  unsigned queue_depth = 128;     // io_uring entries per ring
  SourceOptions source;           // remote images: timeouts, the disk cache
};

// An eighth of the memory this process may use, between 64 MiB and 4 GiB: physical memory, or a memory
// cgroup's limit where lower (a container's; v2 memory.max, v1 memory.limit_in_bytes).
uint64_t default_cache_size();

struct FileStat {
  uint32_t ino = 0;
  uint32_t mode = 0;  // type and permission bits, as st_mode
  uint32_t nlink = 0;
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // nanoseconds since the epoch
  uint64_t rdev = 0;     // device numbers of character and block devices
  uint64_t blocks = 0;   // 512-byte units the data occupies (as st_blocks: a sparse file's holes take none)
  uint32_t blksize = 0;  // the image's page size: the best unit to read in (as st_blksize)
};

enum class Seek { kData, kHole };  // lseek's SEEK_DATA and SEEK_HOLE

// Bytes of a file as pieces of decoded pages, without copying them: what a FUSE reply, writev or a
// socket send gathers. The pieces stay valid while the view holds them (until clear() or destruction);
// holes are pieces of a shared zero page. One view may be reused for many reads (no allocation once
// it has grown).
class ReadView {
 public:
  size_t size() const { return size_; }
  std::span<const iovec> pieces() const { return pieces_; }
  size_t copy_to(void* dst) const;
  void clear();

 private:
  friend class Reader;
  std::vector<iovec> pieces_;
  std::vector<std::shared_ptr<const void>> pages_;  // keep the decoded pages alive
  size_t size_ = 0;
};

// The rest of the image pages that a read touched: their decoded bytes before the range and after it,
// up to the end of the file. Checked like the range itself (a read with a bad page fails before any of
// this is set), and taken from the same cached pages, so it costs no fetch and no decode. A FUSE daemon
// pushes these bytes into the kernel's page cache, so that a neighbouring read needs no round trip.
struct PageRest {
  uint64_t before_offset = 0;  // file offset of before's first byte: the first page's start
  ReadView before;
  uint64_t after_offset = 0;  // file offset of after's first byte: the end of the range
  ReadView after;
  void clear() {
    before.clear();
    after.clear();
  }
};

struct DirEntry {
  std::string name;
  uint32_t ino = 0;
  uint32_t mode = 0;
};

// How the bytes of a read will be used (as posix_fadvise's NORMAL and NOREUSE).
enum class Access {
  kNormal,  // decoded pages stay in the cache for later reads
  // Read once (a data loader's epoch, or a FUSE reply that the kernel's page cache keeps). A batch read:
  // a page that lies whole inside one request and is not cached is decoded straight into that request's
  // memory and not cached, which saves a copy and an allocation per page; cached pages are read as usual.
  // A view read: a page the range covers whole leaves the cache once the view holds it. Pages shared with
  // other files (tail packs) are read as usual.
  kOnce,
};

// One range of a batch read. `dst` receives up to `length` bytes (host memory for read_batch, device
// memory for read_batch_device). The call sets `bytes` (short only at end of file) and `error` (0 or
// an errno); with an error, `message` says which image, path, inode and page.
struct ReadRequest {
  uint32_t ino = 0;
  uint64_t offset = 0;
  size_t length = 0;
  void* dst = nullptr;
  size_t bytes = 0;
  int error = 0;
  std::string message;
};

class Reader {
 public:
  // Opens and validates the image (a path or a URL). Throws ImageError: unreadable or damaged image (its
  // errno: ENOENT, EACCES, EISDIR, EIO, ...), or EINVAL for decoder=gpu without a usable GPU.
  static std::unique_ptr<Reader> open(const std::string& path_or_url, const ReaderOptions& options = {});
  static std::unique_ptr<Reader> open(std::unique_ptr<Image> image, const ReaderOptions& options = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const Image& image() const;
  const std::string& name() const { return image().name(); }

  // ---- metadata -------------------------------------------------------------------------------------
  // "/a/b" (or "a/b") to an inode, as Image::resolve: symlinks on the way are followed, the last
  // component only with Follow::kYes. ENOENT, ENOTDIR, ELOOP.
  uint32_t lookup(std::string_view path, Follow follow = Follow::kNo) const;
  // `name` in directory `dir`: its inode, or 0 when there is none (a negative lookup is not an error
  // here: FUSE caches it). ENOENT (no such inode), ENOTDIR.
  uint32_t lookup(uint32_t dir, std::string_view name) const;
  // The path of inode `ino` ("/a/b"; "/" for the root), found by a scan of the directories: for messages
  // and tools, not for a hot path. A file with several links gets one of its paths; ENOENT when no
  // directory names it.
  std::string path(uint32_t ino) const;
  FileStat stat(uint32_t ino) const;
  // The path forms follow POSIX: stat(path) is lstat(2) unless told to follow (Follow::kYes: stat(2));
  // list and read follow a symlink at the end, as opendir(3) and open(2); readlink does not.
  FileStat stat(std::string_view path, Follow follow = Follow::kNo) const {
    return stat(lookup(path, follow));
  }
  std::vector<DirEntry> list(uint32_t dir_ino) const;  // sorted by name; ENOTDIR
  std::vector<DirEntry> list(std::string_view path) const { return list(lookup(path, Follow::kYes)); }
  std::string readlink(uint32_t ino) const;  // EINVAL when not a symlink
  std::string readlink(std::string_view path) const { return readlink(lookup(path)); }
  std::vector<std::pair<std::string, std::string>> xattrs(uint32_t ino) const;
  // lseek(SEEK_DATA / SEEK_HOLE) on regular file `ino`: the first offset at or after `offset` that is in
  // data (or in a hole; end of file counts as one). ENXIO when `offset` is at or past the end, or when
  // no data follows; EINVAL for anything but a regular file.
  uint64_t seek(uint32_t ino, uint64_t offset, Seek whence) const;
  // Every entry under directory `dir`, parents before children, each directory's entries by name:
  // fn(path, stat), with paths like "/a/b".
  void walk(const std::function<void(const std::string& path, const FileStat& st)>& fn,
            uint32_t dir = format::kRootIno) const;

  // ---- data -----------------------------------------------------------------------------------------
  // Up to `length` bytes of regular file `ino` at `offset` into host memory; returns the byte count
  // (short only at end of file). EISDIR (not a regular file), EIO (a page failed its checks).
  size_t read(uint32_t ino, uint64_t offset, size_t length, void* dst);
  size_t read(std::string_view path, uint64_t offset, size_t length, void* dst) {
    return read(lookup(path, Follow::kYes), offset, length, dst);
  }
  // The same without the copy: `view` receives pieces of the cached decoded pages (see ReadView).
  // Sequential readers get readahead here too. Returns view.size().
  size_t read(uint32_t ino, uint64_t offset, size_t length, ReadView& view);
  // The same, and `rest` (when not null) receives what the pages it touched hold beyond the range. With
  // Access::kOnce, a page the range covers whole leaves the cache once `view` holds it, and its memory
  // is reused when `view` lets go: for a caller that keeps the bytes itself (a FUSE daemon, whose reply
  // fills the kernel's page cache), so that no page is cached twice.
  size_t read(uint32_t ino, uint64_t offset, size_t length, ReadView& view, PageRest* rest,
              Access access = Access::kNormal);
  // Many ranges, of any files, in one fetch batch and one decode batch: how a data loader reads a
  // minibatch. Each request gets its own result; one bad page fails only the requests that need it.
  // With an error, a request's `dst` holds unspecified bytes.
  void read_batch(std::span<ReadRequest> requests, Access access = Access::kNormal);

  // The same into device memory (CUDA builds with a usable GPU): compressed pages go to the device and
  // are decoded there, straight into `dst` where a page lies wholly inside the range and through device
  // scratch where it does not; file bytes never come back to the host. `stream` is a cudaStream_t (null:
  // the default stream); the call returns once the bytes are in place. Without a usable GPU decoder
  // the pages are decoded on the CPU and copied to the device, when a CUDA runtime and device are
  // present; otherwise ENOTSUP.
  size_t read_device(uint32_t ino, uint64_t offset, size_t length, void* dst, void* stream = nullptr);
  void read_batch_device(std::span<ReadRequest> requests, void* stream = nullptr);
  // Whether read_device can work here, and if not why; says which path it takes otherwise.
  bool device_reads(std::string& how) const;

  // ---- state ----------------------------------------------------------------------------------------
  const char* decoder_name() const;  // "cpu", "gpu"
  const char* fetcher_name() const;  // "io_uring", "pread", "http", ...
  // The counters (README, "Counters") by name: reads, cache_hits, pages_decoded_gpu, ..., and the
  // source's own (remote requests, disk cache). A snapshot: each counter is exact, but they are not read
  // at one instant.
  std::map<std::string, uint64_t> counters() const;
  std::string stats_json() const;  // the counters and the configuration as one JSON object

  struct Impl;  // reader.cc
  // Appends `len` bytes at `data` to `view`, kept alive by `keep` (reader.cc's helpers fill views).
  static void add_piece(ReadView& view, const void* data, size_t len, std::shared_ptr<const void> keep);

 private:
  friend struct ReaderAccess;  // the library's white-box tests
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdfs
