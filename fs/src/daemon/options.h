// gdfs's own mount options (-o cache_size=, threads=, decoder=, gpu_min_bytes=, readahead=, uring=,
// queue_depth=, store_ahead=, walk_ahead=, xattr=, uid=, gid=, umask=; for remote images cache_dir=,
// disk_cache_size=, remote_timeout=, ca_file=, s3_addressing=) and the image argument. Standard FUSE options
// (-f, -d, -s, allow_other, ...) are libfuse's.
#pragma once
#include <fuse_opt.h>

#include <cstdint>
#include <optional>
#include <string>

#include "gdfs/reader.h"

namespace gdfs::daemon {

enum class XattrMode { kAuto, kOff, kOn };

struct DaemonOptions {
  std::string image;        // the first non-option argument
  std::string mountpoint;   // the second, as given (libfuse parses it again; see mountpoint.h)
  uint64_t cache_size = 0;  // bytes of decoded pages; 0 = the default (see default_cache_size)
  unsigned threads = 0;     // CPU decode threads; 0 = one per core
  DecoderChoice decoder = DecoderChoice::kAuto;
  uint64_t gpu_min_bytes = 1ull << 30;  // decode requests smaller than this stay on the CPU (docs/GPU.md)
  uint64_t readahead = 4u << 20;        // bytes decoded ahead of a sequential reader; 0 = off
  bool uring = true;                    // false: read the image with pread even where io_uring works
  unsigned queue_depth = 128;           // io_uring entries per ring
  bool store_ahead = true;              // push the rest of each read's decoded pages into the page cache
  bool walk_ahead = true;               // push the next small files of a walk into the page cache
  XattrMode xattr = XattrMode::kAuto;   // answer getxattr (auto: when the image has xattrs)
  std::optional<uint32_t> uid, gid;     // every inode shown as owned by these (-o uid=, gid=)
  std::optional<uint32_t> umask;        // permission bits cleared on every inode (-o umask=, octal)
  SourceOptions source;                 // remote images: cache_dir=, disk_cache_size=, remote_timeout=,
                                        // ca_file=, s3_addressing= (the warn callback is set by main)
};

// Takes gdfs's options and the image argument out of `args` (what is left goes to libfuse). Returns
// false after printing the reason to stderr.
bool parse_options(fuse_args& args, DaemonOptions& out);

// Rewrites, in place, every http(s):// and s3:// URL in `arg` as messages show it: no user, password or
// query (a presigned URL's signature). /proc/PID/cmdline, which ps shows every local user, is the
// daemon's argv for as long as it serves; main calls this on each argument once the options are parsed.
void hide_url_secrets(char* arg);

// "512M", "2G", "65536" -> bytes. False on anything else.
bool parse_size(const std::string& text, uint64_t& out);

void print_usage(const char* prog);

}  // namespace gdfs::daemon
