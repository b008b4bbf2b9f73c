// The persistent cache of a remote image's bytes (-o cache_dir=DIR,disk_cache_size=SIZE).
//
// Granularity: fixed, aligned blocks of the object (1 MiB by default), one file per block. Fixed blocks
// rather than the engine's coalesced ranges, because
//   - a block has one name however it was asked for, so two mounts (or one mount's later reads, with
//     other neighbours) find it; variable ranges would overlap and need an interval index;
//   - eviction and the size bound work on equal units, and a damaged file loses one block;
//   - a remote request costs mostly latency, so fetching the rest of an aligned 1 MiB around a 64 KiB
//     page is nearly free, and it is what the next nearby read wants (pages of a file are contiguous).
// The price is read amplification for scattered small reads: up to one block per page read.
//
// Layout: DIR/gdfs-cache-v1/<object>/<index>.blk, where <object> is 16 hex digits of the XXH3 of the
// object's identity (URL without credentials or query, ETag or Last-Modified, size, block size): a
// changed object has another identity, so it never meets its old blocks. Each file is a 64-byte header
// (magic, object, index, lengths, XXH3 of the data, XXH3 of the header) and the block's bytes.
//
// Crash safety: a block is written to a temporary file in the same folder and renamed into place, so a
// reader never sees a partial file under a block's name. Nothing is fsynced: after a power loss a renamed
// file may hold zeros or garbage, so every block is verified (header and data checksums, sizes) each time
// it is read, and a bad one is deleted and fetched again. The image's own page checksums check the
// bytes once more downstream.
//
// Bound and eviction: files (headers included) are kept under the bound by deleting the least recently
// used. Use is the file's mtime, set on every hit, so every process sharing the folder sees it. Each
// process keeps its own index of the folder (scanned at open); when its count passes the bound it scans
// the folder again (picking up other processes' files and uses) and deletes down to 90% of the bound.
// With several processes the folder may exceed the bound by what the others wrote since their last scan
// (at most a tenth of the bound and one block each). Deleting a file another process is reading is
// harmless: its open descriptor keeps the bytes.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gdfs::remote {

struct DiskCacheCounters {
  std::atomic<uint64_t> hits{0}, misses{0}, corrupt{0}, writes{0}, write_errors{0}, evictions{0};
};

class DiskCache {
 public:
  static constexpr uint32_t kHeaderSize = 64;
  static constexpr uint32_t kDefaultBlockSize = 1u << 20;

  // Throws ImageError when the folder cannot be made or read. `identity` names the object's version
  // (no credentials: it is written into the folder for people to read).
  DiskCache(const std::string& dir, uint64_t capacity, const std::string& identity, uint64_t object_size,
            uint32_t block_size, std::function<void(std::string_view)> warn);

  uint32_t block_size() const { return block_size_; }
  uint64_t block_count() const { return (size_ + block_size_ - 1) / block_size_; }
  uint32_t block_length(uint64_t index) const;
  // Block `index` into `dst` (block_length bytes) when a verified copy is on disk.
  bool get(uint64_t index, uint8_t* dst);
  // Stores block `index`; failures (a full disk) are reported, never thrown.
  void put(uint64_t index, const uint8_t* data);
  // Bytes this process counts in the folder (all objects, headers included).
  uint64_t bytes() const;
  const DiskCacheCounters& counters() const { return counters_; }

 private:
  struct Entry {
    std::string path;  // relative to root_
    uint64_t size;
    int64_t used_ns;
  };
  std::string block_path(uint64_t index) const;  // relative to root_
  void touch(const std::string& rel, uint64_t size);
  void forget(const std::string& rel);
  void scan();   // under mu_: rebuild the index from the folder
  void evict();  // under mu_
  void report(const std::string& line);

  std::string root_;     // DIR/gdfs-cache-v1
  std::string obj_dir_;  // <object>, relative to root_
  uint64_t capacity_;
  uint64_t size_;
  uint32_t block_size_;
  uint64_t object_hash_;
  std::function<void(std::string_view)> warn_;
  DiskCacheCounters counters_;

  mutable std::mutex mu_;
  std::list<Entry> lru_;  // least recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  uint64_t total_ = 0;
  std::mutex warn_mu_;
  int64_t last_warn_ns_ = 0;
};

}  // namespace gdfs::remote
