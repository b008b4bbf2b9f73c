// Local sources: a file or block device read with pread, and bytes in memory.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gdfs/source.h"
#include "gdfs/unique_fd.h"

namespace gdfs {
namespace {

// Each failure carries the errno a caller of open(2) would see, so a front end answers ENOENT or EACCES
// for a missing or forbidden image, EISDIR for a directory.
[[noreturn]] void fail_errno(const std::string& path, const char* what, int err) {
  throw ImageError(path + ": " + what + ": " + std::strerror(err), err);
}

uint64_t size_of(int fd, const std::string& path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) fail_errno(path, "cannot stat", errno);
  if (S_ISREG(st.st_mode)) return static_cast<uint64_t>(st.st_size);
  if (S_ISBLK(st.st_mode)) {  // an image written straight to a partition
    uint64_t bytes = 0;
    if (ioctl(fd, BLKGETSIZE64, &bytes) != 0) fail_errno(path, "cannot get the device size", errno);
    return bytes;
  }
  if (S_ISDIR(st.st_mode)) fail_errno(path, "not an image", EISDIR);
  throw ImageError(path + ": not a regular file or block device", EINVAL);
}

bool pread_full(int fd, uint8_t* dst, size_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pread(fd, dst, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // error, or the file shrank under us
    dst += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

class FileSource final : public Source {
 public:
  explicit FileSource(const std::string& path)
      // O_NONBLOCK: opening a FIFO (a path a layered image names, say) must not wait for a writer; it
      // is then refused by size_of. Reads of files and block devices ignore the flag.
      : name_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {
    if (fd_.get() < 0) fail_errno(path, "cannot open", errno);
    size_ = size_of(fd_.get(), path);
  }
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }
  void read(std::span<ReadRange> ranges) override {
    for (ReadRange& r : ranges) r.ok = pread_full(fd_.get(), r.dst, r.length, r.offset);
  }
  const char* kind() const override { return "file"; }
  int fd() const override { return fd_.get(); }

 private:
  std::string name_;
  UniqueFd fd_;
  uint64_t size_ = 0;
};

class MemorySource final : public Source {
 public:
  MemorySource(std::vector<uint8_t> bytes, std::string name)
      : name_(std::move(name)), bytes_(std::move(bytes)) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return bytes_.size(); }
  void read(std::span<ReadRange> ranges) override {
    for (ReadRange& r : ranges) {
      r.ok = r.offset <= bytes_.size() && r.length <= bytes_.size() - r.offset;
      if (r.ok) std::memcpy(r.dst, bytes_.data() + r.offset, r.length);
    }
  }
  const char* kind() const override { return "memory"; }

 private:
  std::string name_;
  std::vector<uint8_t> bytes_;
};

}  // namespace

bool is_url(std::string_view s) {
  return s.starts_with("http://") || s.starts_with("https://") || s.starts_with("s3://");
}

std::unique_ptr<Source> open_file_source(const std::string& path) {
  return std::make_unique<FileSource>(path);
}

std::unique_ptr<Source> memory_source(std::vector<uint8_t> bytes, std::string name) {
  return std::make_unique<MemorySource>(std::move(bytes), std::move(name));
}

}  // namespace gdfs
