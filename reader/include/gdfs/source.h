// Where an image's bytes come from: a local file or block device, bytes in memory, or (remote images) an
// object on an HTTP(S) server or an S3-compatible store. Image and the read engine read only through
// this interface, so every reader (daemon, library, tools) works on every kind of source.
//
// Every byte a source returns is untrusted: Image checks the superblock and metadata checksums, and
// every page is checked by its checksums before anyone sees it.
#pragma once
#include <cerrno>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gdfs {

// Every error the library throws, from opening a source to reading a page. what() is one line naming the
// image and, where they apply, the path, inode and page: "IMAGE: /a/b (inode 12): page 3: page checksum
// mismatch". code() is the errno a file system would answer: EIO for damaged or unreadable bytes (the
// default), ENOENT, ENOTDIR, EISDIR, EINVAL, EACCES, ENOTSUP, ...
class ImageError : public std::runtime_error {
 public:
  explicit ImageError(const std::string& what, int code = EIO) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// The one mapping from an exception to an errno, for every front end (FUSE replies, the C API, Python):
// an ImageError's code; ENOMEM for std::bad_alloc; EINVAL for std::invalid_argument and
// std::length_error; a std::system_error's own errno; EIO for anything else.
int error_code(const std::exception& e) noexcept;

// One byte range to read into `dst`.
struct ReadRange {
  uint64_t offset = 0;
  uint32_t length = 0;
  uint8_t* dst = nullptr;
  bool ok = false;  // set by Source::read: all `length` bytes were read, and they are the image's
};

class Source {
 public:
  virtual ~Source() = default;
  // How messages name the image: the path, or the URL without credentials and query string.
  virtual const std::string& name() const = 0;
  // Bytes in the image (fixed for the source's lifetime).
  virtual uint64_t size() const = 0;
  // Reads every range, setting each one's `ok`; a range that fails leaves the others alone. Safe to call
  // from many threads at once; a source may serve the ranges of one call concurrently. A source that
  // can tell its image changed since it was opened (a remote object's ETag) fails the range: it never
  // returns a mix of old and new bytes.
  virtual void read(std::span<ReadRange> ranges) = 0;
  // "file", "memory", "http", "s3": for counters and logs.
  virtual const char* kind() const = 0;
  // A local file's descriptor, which the io_uring fetcher reads directly; -1 for other sources.
  virtual int fd() const { return -1; }
  // A stretch being read ahead of need into memory the source keeps (bounded), so that a read() of it
  // soon after needs no request of its own. start_prefetch() claims the stretch at once: a read() of it
  // from then on waits for the prefetch rather than send the same request. run() then fetches it
  // (blocking: the engine calls it on a background thread). A read() that needs the stretch before the
  // background thread got to it calls run() itself, so that no reader waits for work that has not
  // started (a pool thread waiting on a task queued behind it would wait forever); only the first call
  // of run() does anything, the others return at once. Destroyed without run(), it gives the
  // stretch up and waiting reads fetch for themselves. A fetch that fails leaves nothing held and never
  // throws; the reads waiting on it fail as their own fetch would have (same retries and deadline).
  class Prefetch {
   public:
    virtual ~Prefetch() = default;
    virtual void run() = 0;
  };
  // Null when nothing in [offset, offset + length) is left to claim, or the source keeps nothing.
  virtual std::shared_ptr<Prefetch> start_prefetch(uint64_t offset, uint64_t length) {
    (void)offset;
    (void)length;
    return nullptr;
  }
  // The reader is closing: work in flight for it (a prefetch stalled on a server that stopped answering)
  // gives up now instead of running out its timeout, and later reads fail. Called once no read of the
  // reader's own is left, before it waits for its background work.
  virtual void cancel() {}
  // How far ahead start_prefetch() is worth calling, from what the source measured of its link (latency times
  // bandwidth); 0 for sources that keep nothing (local files: the kernel's page cache reads ahead).
  virtual uint64_t prefetch_window() const { return 0; }
  // The source's own counters for the reader's statistics (remote: requests, retries, disk cache hits),
  // as name/value pairs; none for local sources. Never anything secret.
  virtual std::vector<std::pair<std::string, uint64_t>> counters() const { return {}; }
};

// Options of the sources that need them (remote images).
struct SourceOptions {
  // Bound on one read, retries included (remote): a read that has not succeeded by then fails (EIO).
  // More than 0 and at most kMaxRemoteTimeout; anything else (NaN, infinity) is refused at open (EINVAL).
  double remote_timeout_s = 60;
  static constexpr double kMaxRemoteTimeout = 86400;
  // Whether open takes `seconds` as remote_timeout_s (written so that NaN is refused too).
  static bool remote_timeout_ok(double seconds) { return seconds > 0 && seconds <= kMaxRemoteTimeout; }
  // Persistent cache of fetched page bytes (remote): a folder, and its bound in bytes. Empty: none.
  std::string cache_dir;
  uint64_t disk_cache_size = uint64_t{1} << 30;
  // HTTPS: a PEM file of the certificates to trust instead of the system's (a private CA, a test
  // server). Empty: $GDFS_CA_FILE when set, else the system's store. Verification is never turned off.
  std::string ca_file;
  // S3 URLs: "path" (https://endpoint/bucket/key), "virtual" (https://bucket.endpoint/key), or empty:
  // $AWS_S3_ADDRESSING_STYLE, else the profile's s3.addressing_style, else path-style when an endpoint
  // is configured or the bucket name has dots, virtual-host style otherwise.
  std::string s3_addressing;
  // S3 settings that take the place of the environment variables of the same names (AWS_ACCESS_KEY_ID,
  // AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ENDPOINT_URL, AWS_REGION, AWS_PROFILE, ...): one
  // image's credentials and endpoint without changing the process's environment (the Python package's
  // fsspec options). An empty value counts as unset, whatever the environment says.
  std::map<std::string, std::string> aws;
  // Layered images: where their base images are, when not where the image says (next to it). Each is
  // a path or URL; a base is taken from here only when it is exactly the recorded one.
  std::vector<std::string> bases;
  // Signed images (FORMAT.md 7.1): a PEM file of the Ed25519 public keys to trust. An image without a
  // valid signature by one of them is refused at open, and every page is checked against its signed
  // digest before it is decoded or cached. Empty: signatures are not looked at.
  std::string trusted_key;
  // Where a source reports what the reader should know but cannot be thrown (a retry, an image that
  // changed on the server): one line each, no credentials. Empty: stderr.
  std::function<void(std::string_view)> warn;
};

// True for "http://...", "https://..." and "s3://...".
bool is_url(std::string_view path_or_url);
// A URL as messages may show it: without user name, password, query string (presigned URLs carry their
// signature there) or fragment. Anything that is not a URL comes back as it is.
std::string url_for_messages(std::string_view url);
// A local file or block device (throws ImageError naming it).
std::unique_ptr<Source> open_file_source(const std::string& path);
// An image held in memory (fuzzing, tests, images built on the fly).
std::unique_ptr<Source> memory_source(std::vector<uint8_t> bytes, std::string name);
// A URL when is_url(), else a local path. In a build without remote support a URL throws ImageError
// saying so.
std::unique_ptr<Source> open_source(const std::string& path_or_url, const SourceOptions& options = {});

}  // namespace gdfs
