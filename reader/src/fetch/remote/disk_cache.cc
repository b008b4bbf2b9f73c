#include "fetch/remote/disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <tuple>
#include <vector>

#include "gdfs/checksum.h"
#include "gdfs/source.h"
#include "gdfs/unique_fd.h"

namespace gdfs::remote {
namespace {

constexpr char kMagic[8] = {'G', 'D', 'F', 'S', 'B', 'L', 'K', '1'};
constexpr const char* kLayout = "gdfs-cache-v1";
constexpr int64_t kStaleTempNs = int64_t{600} * 1000000000;  // a temporary file this old is a crash's

struct BlockHeader {
  char magic[8];
  uint64_t object;  // XXH3 of the object identity
  uint64_t index;
  uint32_t block_size;
  uint32_t length;  // data bytes after the header
  uint64_t data_check;
  uint8_t reserved[16];
  uint64_t header_check;  // XXH3 of the 56 bytes before it
};
static_assert(sizeof(BlockHeader) == DiskCache::kHeaderSize);

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t mtime_ns(const struct stat& st) {
  return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
}

std::string hex16(uint64_t v) {
  char buf[17];
  for (int i = 15; i >= 0; --i, v >>= 4) buf[i] = "0123456789abcdef"[v & 15];
  buf[16] = 0;
  return buf;
}

bool make_dir(const std::string& path) {
  return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

// With the folder's own errno, so that callers see ENOENT, ENOTDIR or EACCES as for any path they gave.
[[noreturn]] void throw_dir_error(const std::string& dir, const char* what, int err) {
  throw ImageError("cache_dir " + dir + ": " + what + ": " + std::strerror(err), err);
}

bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool pread_all(int fd, uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

// Temporary files' numbers: one sequence for the process, since two caches of one process (two readers
// of one image) may share a folder, and a name clash would fail one of the writes.
std::atomic<uint64_t> g_tmp_seq{0};

}  // namespace

DiskCache::DiskCache(const std::string& dir, uint64_t capacity, const std::string& identity,
                     uint64_t object_size, uint32_t block_size, std::function<void(std::string_view)> warn)
    : capacity_(capacity),
      size_(object_size),
      block_size_(block_size),
      object_hash_(checksum64(identity.data(), identity.size())),
      warn_(std::move(warn)) {
  root_ = dir + "/" + kLayout;
  obj_dir_ = hex16(object_hash_);
  if (!make_dir(dir) || !make_dir(root_) || !make_dir(root_ + "/" + obj_dir_))
    throw_dir_error(dir, "cannot create it", errno);
  if (::access((root_ + "/" + obj_dir_).c_str(), R_OK | W_OK | X_OK) != 0)
    throw_dir_error(dir, "not writable", errno);
  // Which object this folder holds, for people looking at the cache (written once, atomically).
  const std::string about = root_ + "/" + obj_dir_ + "/object";
  if (::access(about.c_str(), F_OK) != 0) {
    const std::string tmp = about + ".tmp-" + std::to_string(getpid()) + "-" +
                            std::to_string(g_tmp_seq.fetch_add(1, std::memory_order_relaxed));
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() >= 0) {
      const std::string text = identity + "\nblock size " + std::to_string(block_size) + "\n";
      const bool ok = write_all(fd.get(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
      fd.reset();
      if (!ok || ::rename(tmp.c_str(), about.c_str()) != 0) ::unlink(tmp.c_str());
    }
  }
  if (capacity_ < kHeaderSize + uint64_t{block_size_})
    report("disk cache " + dir + ": disk_cache_size " + std::to_string(capacity_) +
           " is smaller than one block; nothing will be cached");
  std::lock_guard lock(mu_);
  scan();
  if (total_ > capacity_) evict();
}

uint32_t DiskCache::block_length(uint64_t index) const {
  const uint64_t start = index * block_size_;
  return start >= size_ ? 0 : static_cast<uint32_t>(std::min<uint64_t>(block_size_, size_ - start));
}

std::string DiskCache::block_path(uint64_t index) const {
  return obj_dir_ + "/" + hex16(index) + ".blk";
}

uint64_t DiskCache::bytes() const {
  std::lock_guard lock(mu_);
  return total_;
}

void DiskCache::report(const std::string& line) {
  {
    std::lock_guard lock(warn_mu_);
    const int64_t now = now_ns();
    if (last_warn_ns_ && now - last_warn_ns_ < int64_t{10} * 1000000000) return;
    last_warn_ns_ = now;
  }
  warn_(line);
}

bool DiskCache::get(uint64_t index, uint8_t* dst) {
  const uint32_t len = block_length(index);
  const std::string rel = block_path(index);
  const std::string path = root_ + "/" + rel;
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const int fd = file.get();
  if (fd < 0) {
    counters_.misses.fetch_add(1, std::memory_order_relaxed);
    if (errno != ENOENT) forget(rel);
    return false;
  }
  BlockHeader h{};
  struct stat st {};
  bool good = len > 0 && fstat(fd, &st) == 0 && uint64_t(st.st_size) == kHeaderSize + uint64_t{len} &&
              pread_all(fd, reinterpret_cast<uint8_t*>(&h), sizeof h, 0);
  good = good && std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 &&
         h.header_check == checksum64(&h, offsetof(BlockHeader, header_check)) && h.object == object_hash_ &&
         h.index == index && h.block_size == block_size_ && h.length == len;
  good = good && pread_all(fd, dst, len, kHeaderSize) && checksum64(dst, len) == h.data_check;
  if (good) futimens(fd, nullptr);  // the use, for every process's LRU
  file.reset();
  if (!good) {
    // Torn by a crash, damaged on disk, or not ours: never used; fetched again and rewritten.
    ::unlink(path.c_str());
    forget(rel);
    counters_.corrupt.fetch_add(1, std::memory_order_relaxed);
    counters_.misses.fetch_add(1, std::memory_order_relaxed);
    report("disk cache: " + path + " failed its checks; deleted, fetching the block again");
    return false;
  }
  counters_.hits.fetch_add(1, std::memory_order_relaxed);
  touch(rel, kHeaderSize + uint64_t{len});
  return true;
}

void DiskCache::put(uint64_t index, const uint8_t* data) {
  const uint32_t len = block_length(index);
  if (len == 0 || capacity_ < kHeaderSize + uint64_t{block_size_}) return;
  BlockHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.object = object_hash_;
  h.index = index;
  h.block_size = block_size_;
  h.length = len;
  h.data_check = checksum64(data, len);
  h.header_check = checksum64(&h, offsetof(BlockHeader, header_check));
  const std::string rel = block_path(index);
  const std::string dir = root_ + "/" + obj_dir_;
  const std::string tmp = dir + "/.tmp-" + std::to_string(getpid()) + "-" +
                          std::to_string(g_tmp_seq.fetch_add(1, std::memory_order_relaxed));
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0 && errno == ENOENT && make_dir(dir))  // the folder was removed under us: make it again
    fd.reset(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  const bool created = fd.get() >= 0;  // only then is `tmp` ours to remove
  bool ok = created;
  ok = ok && write_all(fd.get(), reinterpret_cast<const uint8_t*>(&h), sizeof h) &&
       write_all(fd.get(), data, len);
  const int err = errno;
  // close()'s own result counts: a write the file system deferred can fail there.
  if (fd.get() >= 0) ok = ::close(fd.release()) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), (root_ + "/" + rel).c_str()) == 0;
  if (!ok) {
    if (created) ::unlink(tmp.c_str());
    counters_.write_errors.fetch_add(1, std::memory_order_relaxed);
    report("disk cache: cannot write " + dir + "/" + hex16(index) +
           ".blk: " + std::strerror(err ? err : errno));
    return;
  }
  counters_.writes.fetch_add(1, std::memory_order_relaxed);
  touch(rel, kHeaderSize + uint64_t{len});
}

void DiskCache::touch(const std::string& rel, uint64_t size) {
  std::lock_guard lock(mu_);
  auto it = index_.find(rel);
  if (it != index_.end()) {
    total_ -= it->second->size;
    lru_.erase(it->second);
  }
  lru_.push_back(Entry{rel, size, now_ns()});
  index_[rel] = std::prev(lru_.end());
  total_ += size;
  if (total_ > capacity_) evict();
}

void DiskCache::forget(const std::string& rel) {
  std::lock_guard lock(mu_);
  auto it = index_.find(rel);
  if (it == index_.end()) return;
  total_ -= it->second->size;
  lru_.erase(it->second);
  index_.erase(it);
}

// Every block file of every object in the folder, by last use; stale temporary files are removed, fresh
// ones (another process writing) count toward the total.
void DiskCache::scan() {
  std::vector<Entry> found;
  const int64_t now = now_ns();
  if (DIR* top = ::opendir(root_.c_str())) {
    while (dirent* o = ::readdir(top)) {
      if (o->d_name[0] == '.') continue;
      const std::string obj = o->d_name;
      DIR* d = ::opendir((root_ + "/" + obj).c_str());
      if (!d) continue;
      while (dirent* f = ::readdir(d)) {
        const std::string name = f->d_name;
        if (name == "." || name == "..") continue;
        const bool block = name.size() > 4 && name.ends_with(".blk");
        const bool temp = name.starts_with(".tmp-");
        if (!block && !temp) continue;
        struct stat st {};
        const std::string rel = obj + "/" + name;
        if (::fstatat(::dirfd(top), rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
          continue;
        if (temp && now - mtime_ns(st) > kStaleTempNs) {
          ::unlinkat(::dirfd(top), rel.c_str(), 0);
          continue;
        }
        found.push_back(Entry{rel, static_cast<uint64_t>(st.st_size), temp ? now : mtime_ns(st)});
      }
      ::closedir(d);
    }
    ::closedir(top);
  }
  // Oldest first; file times are coarse (a clock tick), so ties go by name (block order).
  std::sort(found.begin(), found.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.used_ns, a.path) < std::tie(b.used_ns, b.path);
  });
  lru_.clear();
  index_.clear();
  total_ = 0;
  for (Entry& e : found) {
    total_ += e.size;
    lru_.push_back(std::move(e));
    index_[lru_.back().path] = std::prev(lru_.end());
  }
}

void DiskCache::evict() {
  scan();  // the truth on disk: other processes' blocks and uses
  const uint64_t low = capacity_ / 10 * 9;
  while (total_ > low && !lru_.empty()) {
    const Entry& e = lru_.front();
    if (e.path.find("/.tmp-") == std::string::npos) {  // never another process's file being written
      if (::unlink((root_ + "/" + e.path).c_str()) == 0 || errno == ENOENT)
        counters_.evictions.fetch_add(1, std::memory_order_relaxed);
    }
    total_ -= e.size;
    index_.erase(e.path);
    lru_.pop_front();
  }
}

}  // namespace gdfs::remote
