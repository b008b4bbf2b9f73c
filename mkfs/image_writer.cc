#include "image_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "diag.h"
#include "gdfs/checksum.h"

namespace gdfs::mkfs {
namespace {

// SIGINT/SIGTERM cleanup. The handler may only use async-signal-safe calls, so the temporary path
// lives in a static buffer, published by an atomic flag. One ImageWriter at a time owns the slot; a
// second one in the same process (tests) simply goes without signal cleanup.
char g_temp_path[PATH_MAX];
volatile std::sig_atomic_t g_temp_active = 0;
std::atomic<bool> g_slot_taken{false};
struct sigaction g_old_int, g_old_term;

extern "C" void on_signal(int sig) {
  if (g_temp_active) ::unlink(g_temp_path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

bool claim_signal_slot(const std::string& temp) {
  if (temp.size() >= sizeof g_temp_path || g_slot_taken.exchange(true)) return false;
  std::memcpy(g_temp_path, temp.c_str(), temp.size() + 1);
  g_temp_active = 1;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
  return true;
}

void release_signal_slot() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  g_temp_active = 0;
  g_slot_taken = false;
}

// ".NAME.tmp.XXXXXX" in IMAGE's directory: the rename must not cross filesystems. The name part is
// shortened so that the temporary name stays within NAME_MAX.
std::string temp_template(const std::string& image) {
  const size_t slash = image.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : image.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? image : image.substr(slash + 1);
  if (base.size() > 200) base.resize(200);
  return dir + "." + base + ".tmp.XXXXXX";
}

bool slot_is_ours(const std::string& temp) {
  return g_temp_active && temp == g_temp_path;
}

// Throws MkfsError if IMAGE cannot be created: it is a directory, or it exists and `force` is false.
void check_target(const std::string& image, bool force) {
  struct stat st {};
  if (::lstat(image.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw MkfsError(quote_path(image) + " is a directory");
    if (!force) throw MkfsError(quote_path(image) + " already exists (use --force to replace it)");
  } else if (errno != ENOENT) {
    throw_io("access", image, errno);
  }
}

// Makes the rename durable. Best effort: the image is complete either way, and some filesystems refuse
// to fsync a directory.
void sync_parent_dir(const std::string& image) {
  const size_t slash = image.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : image.substr(0, slash);
  const UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());
}

}  // namespace

FileId existing_file_id(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino};
}

ImageWriter::ImageWriter(std::string image, bool force) : image_(std::move(image)), force_(force) {
  check_target(image_, force_);
  temp_ = temp_template(image_);
  fd_.reset(::mkstemp(temp_.data()));
  if (fd_.get() < 0) throw_io("create a temporary file for", image_, errno);
  claim_signal_slot(temp_);
}

ImageWriter::~ImageWriter() {
  if (!committed_) ::unlink(temp_.c_str());
  if (slot_is_ours(temp_)) release_signal_slot();
}

FileId ImageWriter::temp_id() const {
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) throw_io("access", image_, errno);
  return {st.st_dev, st.st_ino};
}

void ImageWriter::write_at(uint64_t offset, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd_.get(), p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw_io("write", image_, errno);
    p += w, n -= static_cast<size_t>(w), offset += static_cast<uint64_t>(w);
  }
}

void ImageWriter::read_at(uint64_t offset, void* data, size_t n) const {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    const ssize_t r = ::pread(fd_.get(), p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_io("read back", image_, errno);
    if (r == 0)
      throw MkfsError(std::string("cannot read back ") + quote_path(image_) + ": unexpected end of file");
    p += r, n -= static_cast<size_t>(r), offset += static_cast<uint64_t>(r);
  }
}

void ImageWriter::commit(format::Superblock sb, std::span<const uint8_t> meta,
                         std::span<const uint8_t> layers, std::span<const uint8_t> signature) {
  write_at(sb.meta_offset, meta.data(), meta.size());
  if (!layers.empty()) write_at(sb.layers_offset, layers.data(), layers.size());
  if (!signature.empty()) write_at(sb.sig_offset, signature.data(), signature.size());
  std::vector<uint8_t> head(format::kDataOffset, 0);
  sb.sb_checksum = 0;
  std::memcpy(head.data(), &sb, sizeof sb);
  sb.sb_checksum = checksum64(head.data(), offsetof(format::Superblock, sb_checksum));
  std::memcpy(head.data(), &sb, sizeof sb);
  write_at(0, head.data(), head.size());
  const uint64_t end = signature.empty() ? sb.image_size : sb.sig_offset + sb.sig_size;  // FORMAT.md 7.1
  // Zeros up to a whole number of 4 KiB blocks, so that the file can back a block device as it is: a loop
  // device drops a partial last sector, dm-verity takes whole 4 KiB blocks (FORMAT.md, section 2).
  const uint64_t padded = (end + format::kFilePadding - 1) / format::kFilePadding * format::kFilePadding;
  if (::ftruncate(fd_.get(), static_cast<off_t>(padded)) != 0) throw_io("resize", image_, errno);
  if (::fchmod(fd_.get(), 0644) != 0) throw_io("set the mode of", image_, errno);
  if (::fsync(fd_.get()) != 0) throw_io("sync", image_, errno);
  if (::close(fd_.release()) != 0) throw_io("write", image_, errno);  // a deferred write can fail here
  // Without --force, RENAME_NOREPLACE closes the window between the existence check and the rename.
  int r = force_ ? ::rename(temp_.c_str(), image_.c_str())
                 : ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, image_.c_str(), RENAME_NOREPLACE);
  if (r != 0 && !force_ && errno == EINVAL) r = ::rename(temp_.c_str(), image_.c_str());  // fs without it
  if (r != 0) {
    if (errno == EEXIST) throw MkfsError(quote_path(image_) + " already exists (use --force to replace it)");
    throw_io("rename the temporary file to", image_, errno);
  }
  committed_ = true;
  if (slot_is_ours(temp_)) release_signal_slot();
  sync_parent_dir(image_);
}

}  // namespace gdfs::mkfs
