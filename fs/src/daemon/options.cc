#include "daemon/options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace gdfs::daemon {
namespace {

struct RawOptions {
  char* cache_size;
  char* threads;
  char* decoder;
  char* gpu_min_bytes;
  char* readahead;
  char* uring;
  char* queue_depth;
  char* store_ahead;
  char* walk_ahead;
  char* xattr;
  char* cache_dir;
  char* disk_cache_size;
  char* remote_timeout;
  char* ca_file;
  char* s3_addressing;
  char* trusted_key;
  char* uid;
  char* gid;
  char* umask;
  char* image;
  char* mountpoint;
  std::vector<std::string>* bases;  // every -o base=..., in order
};

enum Key { kKeyBase = 1 };

#define GDFS_OPT(templ, field) \
  { templ, offsetof(RawOptions, field), 0 }
// One option per line: clang-format would pack them into columns.
// clang-format off
const fuse_opt kSpec[] = {
    GDFS_OPT("cache_size=%s", cache_size),
    GDFS_OPT("threads=%s", threads),
    GDFS_OPT("decoder=%s", decoder),
    GDFS_OPT("gpu_min_bytes=%s", gpu_min_bytes),
    GDFS_OPT("readahead=%s", readahead),
    GDFS_OPT("uring=%s", uring),
    GDFS_OPT("queue_depth=%s", queue_depth),
    GDFS_OPT("store_ahead=%s", store_ahead),
    GDFS_OPT("walk_ahead=%s", walk_ahead),
    GDFS_OPT("xattr=%s", xattr),
    GDFS_OPT("cache_dir=%s", cache_dir),
    GDFS_OPT("disk_cache_size=%s", disk_cache_size),
    GDFS_OPT("remote_timeout=%s", remote_timeout),
    GDFS_OPT("ca_file=%s", ca_file),
    GDFS_OPT("s3_addressing=%s", s3_addressing),
    GDFS_OPT("trusted_key=%s", trusted_key),
    GDFS_OPT("uid=%s", uid),
    GDFS_OPT("gid=%s", gid),
    GDFS_OPT("umask=%s", umask),
    FUSE_OPT_KEY("base=", kKeyBase),
    FUSE_OPT_END,
};
// clang-format on
#undef GDFS_OPT

// The first non-option argument is the image; the second (the mount point) stays for libfuse, and a
// copy is kept: a dead mount there must be cleared before libfuse's realpath() of it fails.
int take_image(void* data, const char* arg, int key, fuse_args*) {
  auto* raw = static_cast<RawOptions*>(data);
  if (key == kKeyBase) {  // repeatable, unlike the %s options
    raw->bases->push_back(arg + std::strlen("base="));
    return 0;
  }
  if (key == FUSE_OPT_KEY_NONOPT && !raw->image) {
    raw->image = strdup(arg);
    return 0;
  }
  if (key == FUSE_OPT_KEY_NONOPT && !raw->mountpoint) raw->mountpoint = strdup(arg);
  return 1;
}

bool parse_uint(const char* text, unsigned lo, unsigned hi, unsigned& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (errno || end == text || *end || v < lo || v > hi) return false;
  out = static_cast<unsigned>(v);
  return true;
}

// "0" or "1", the spelling of every on/off option.
bool parse_bool(const char* text, bool& out) {
  unsigned v = 0;
  if (!parse_uint(text, 0, 1, v)) return false;
  out = v == 1;
  return true;
}

// A user or group id: 0 .. 2^32 - 2 (2^32 - 1 is (uid_t)-1, "no id" to the kernel).
bool parse_id(const char* text, std::optional<uint32_t>& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || end == text || *end || !std::isdigit(static_cast<unsigned char>(*text)) || v >= UINT32_MAX)
    return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// Permission bits in octal, as umask(1) takes them: 0 .. 07777.
bool parse_mode_bits(const char* text, std::optional<uint32_t>& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text, &end, 8);
  if (errno || end == text || *end || !std::isdigit(static_cast<unsigned char>(*text)) || v > 07777)
    return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool bad(const char* what, const char* value) {
  std::fprintf(stderr, "gdfs: bad option %s=%s\n", what, value);
  return false;
}

bool convert(const RawOptions& raw, DaemonOptions& out) {
  if (raw.cache_size && !parse_size(raw.cache_size, out.cache_size)) return bad("cache_size", raw.cache_size);
  if (raw.threads && !parse_uint(raw.threads, 1, 1024, out.threads)) return bad("threads", raw.threads);
  if (raw.gpu_min_bytes && !parse_size(raw.gpu_min_bytes, out.gpu_min_bytes))
    return bad("gpu_min_bytes", raw.gpu_min_bytes);
  if (raw.readahead && !parse_size(raw.readahead, out.readahead)) return bad("readahead", raw.readahead);
  if (raw.queue_depth && !parse_uint(raw.queue_depth, 1, 4096, out.queue_depth))
    return bad("queue_depth", raw.queue_depth);
  if (raw.uring && !parse_bool(raw.uring, out.uring)) return bad("uring", raw.uring);
  if (raw.store_ahead && !parse_bool(raw.store_ahead, out.store_ahead))
    return bad("store_ahead", raw.store_ahead);
  if (raw.walk_ahead && !parse_bool(raw.walk_ahead, out.walk_ahead)) return bad("walk_ahead", raw.walk_ahead);
  if (raw.xattr) {
    const std::string x = raw.xattr;
    if (x != "auto" && x != "0" && x != "1") return bad("xattr", raw.xattr);
    out.xattr = x == "auto" ? XattrMode::kAuto : x == "1" ? XattrMode::kOn : XattrMode::kOff;
  }
  if (raw.decoder) {
    const std::optional<DecoderChoice> d = parse_decoder_choice(raw.decoder);
    if (!d) return bad("decoder", raw.decoder);
    out.decoder = *d;
  }
  if (raw.cache_dir) {
    if (!*raw.cache_dir) return bad("cache_dir", raw.cache_dir);
    out.source.cache_dir = raw.cache_dir;
  }
  if (raw.disk_cache_size && !parse_size(raw.disk_cache_size, out.source.disk_cache_size))
    return bad("disk_cache_size", raw.disk_cache_size);
  if (raw.remote_timeout) {
    unsigned seconds = 0;
    if (!parse_uint(raw.remote_timeout, 1, static_cast<unsigned>(SourceOptions::kMaxRemoteTimeout), seconds))
      return bad("remote_timeout", raw.remote_timeout);
    out.source.remote_timeout_s = seconds;
  }
  if (raw.ca_file) {
    if (!*raw.ca_file) return bad("ca_file", raw.ca_file);
    out.source.ca_file = raw.ca_file;
  }
  if (raw.s3_addressing) {
    const std::string a = raw.s3_addressing;
    if (a != "path" && a != "virtual" && a != "auto") return bad("s3_addressing", raw.s3_addressing);
    out.source.s3_addressing = a == "auto" ? "" : a;
  }
  if (raw.trusted_key) {
    if (!*raw.trusted_key) return bad("trusted_key", raw.trusted_key);
    out.source.trusted_key = raw.trusted_key;
  }
  if (raw.uid && !parse_id(raw.uid, out.uid)) return bad("uid", raw.uid);
  if (raw.gid && !parse_id(raw.gid, out.gid)) return bad("gid", raw.gid);
  if (raw.umask && !parse_mode_bits(raw.umask, out.umask)) return bad("umask", raw.umask);
  for (const std::string& b : *raw.bases) {
    if (b.empty()) return bad("base", "");
    out.source.bases.push_back(b);
  }
  if (raw.image) out.image = raw.image;
  if (raw.mountpoint) out.mountpoint = raw.mountpoint;
  return true;
}

}  // namespace

bool parse_options(fuse_args& args, DaemonOptions& out) {
  RawOptions raw{};
  std::vector<std::string> bases;
  raw.bases = &bases;
  bool ok = fuse_opt_parse(&args, &raw, kSpec, take_image) == 0 && convert(raw, out);
  for (char* p : {raw.cache_size,     raw.threads,     raw.decoder,
                  raw.gpu_min_bytes,  raw.readahead,   raw.uring,
                  raw.queue_depth,    raw.store_ahead, raw.walk_ahead,
                  raw.xattr,          raw.cache_dir,   raw.disk_cache_size,
                  raw.remote_timeout, raw.ca_file,     raw.s3_addressing,
                  raw.trusted_key,    raw.uid,         raw.gid,
                  raw.umask,          raw.image,       raw.mountpoint})
    std::free(p);
  return ok;
}

bool parse_size(const std::string& text, uint64_t& out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno) return false;
  unsigned shift = 0;
  const std::string suffix = end;
  if (suffix == "K" || suffix == "k" || suffix == "KiB")
    shift = 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB")
    shift = 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB")
    shift = 30;
  else if (!suffix.empty())
    return false;
  if (v > (~0ull >> shift)) return false;
  out = v << shift;
  return true;
}

void print_usage(const char* prog) {
  // At most 80 columns, as libfuse's own lines below it (tests/install/help-width.sh).
  std::printf(
      "usage: %s [options] IMAGE MOUNTPOINT\n"
      "Mounts a gdfs image read-only. Runs in the background once mounted unless -f\n"
      "is given.\n\n"
      "gdfs options:\n"
      "    -o cache_size=SIZE     decoded-page cache (K/M/G suffixes; default: 1/8 of\n"
      "                           RAM, 64M..4G)\n"
      "    -o threads=N           CPU decode threads (default: one per core)\n"
      "    -o decoder=auto|cpu|gpu  page decoder (auto: the GPU when one is usable)\n"
      "    -o gpu_min_bytes=SIZE  decode smaller requests on the CPU even with a GPU\n"
      "                           (default 1G)\n"
      "    -o readahead=SIZE      decode this far ahead of sequential readers (default\n"
      "                           4M; 0 = off)\n"
      "    -o uring=0|1           read the image with io_uring (default 1; falls back\n"
      "                           to pread)\n"
      "    -o queue_depth=N       io_uring queue depth per thread (default 128)\n"
      "    -o store_ahead=0|1     after a read, push the rest of the decoded pages it\n"
      "                           touched into the kernel's page cache, saving\n"
      "                           neighbouring reads a round trip (default 1; off\n"
      "                           with -s)\n"
      "    -o walk_ahead=0|1      while files are read one after another in directory\n"
      "                           order (tar, cp -r), push the next small files whole\n"
      "                           into the kernel's page cache (default 1; off with -s)\n"
      "    -o xattr=auto|0|1      answer xattr requests (auto, the default: when the\n"
      "                           image has xattrs). Off, the kernel stops asking (a\n"
      "                           long listing asks two of every file) and the\n"
      "                           counters are read with gdfs-inspect counters\n"
      "    -o uid=N,gid=N         show every inode as owned by user N, group N (the\n"
      "                           kernel checks access against them)\n"
      "    -o umask=M             clear permission bits M (octal) of every inode\n\n"
      "remote images (IMAGE is http://..., https://... or s3://BUCKET/KEY;\n"
      "docs/REMOTE.md):\n"
      "    -o cache_dir=DIR       keep fetched image bytes on disk in DIR (shared by\n"
      "                           mounts; default: none)\n"
      "    -o disk_cache_size=SIZE  bound on DIR, least recently used blocks go first\n"
      "                           (default 1G)\n"
      "    -o remote_timeout=SECONDS  a read still failing after this, retries\n"
      "                           included, is EIO (default 60)\n"
      "    -o base=PATH|URL       a base image of a layered IMAGE, when not where\n"
      "                           IMAGE says (repeatable)\n"
      "    -o trusted_key=PUB     refuse IMAGE unless signed by a key in this PEM file;\n"
      "                           check every page against its signed digest (local\n"
      "                           images too; docs/SECURITY.md)\n"
      "    -o ca_file=FILE        trust the certificates in this PEM file for https\n"
      "                           (default: the system's)\n"
      "    -o s3_addressing=path|virtual|auto  S3 URL style (default auto: path with\n"
      "                           an endpoint or a dotted bucket); S3 credentials,\n"
      "                           region and endpoint come from the AWS_* environment\n"
      "                           and ~/.aws/{credentials,config}\n\n",
      prog);
}

void hide_url_secrets(char* arg) {
  std::string text = arg;
  const size_t length = text.size();
  size_t at = 0;
  for (const char* scheme : {"http://", "https://", "s3://"}) {
    for (size_t from = 0; (at = text.find(scheme, from)) != std::string::npos;) {
      // A URL runs to the end of the argument or, in an -o list, to the next comma.
      const size_t end = std::min(text.find(',', at), text.size());
      const std::string shown = url_for_messages(std::string_view(text).substr(at, end - at));
      text.replace(at, end - at, shown);
      from = at + shown.size();
    }
  }
  if (text.size() >= length) return;
  std::memcpy(arg, text.c_str(), text.size());
  std::memset(arg + text.size(), 0, length - text.size());
}

}  // namespace gdfs::daemon
