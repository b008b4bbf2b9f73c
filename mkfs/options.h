// What mkfs.gdfs was asked to do: the parsed command line plus the environment it depends on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chmod.h"
#include "gdfs/page_encode.h"

namespace CLI {
class App;
}

namespace gdfs::mkfs {

struct Options {
  std::string source;  // SOURCE: a directory, or an archive file ("-": standard input)
  std::string image;   // IMAGE
  // GDeflate level 1..12. 7, from bench/results/2026-11-21-mkfs-vm.txt: 1.1% smaller than 6 on the Linux
  // tree for 1.4x the time, still under half of mksquashfs's; 8 (near-optimal parsing) is 2.3% smaller
  // again but 5.5x slower, over twice mksquashfs's time.
  int level = 7;
  unsigned threads = 0;        // compression workers; 0 = one per core (resolved by finish_options)
  uint32_t page_size = 65536;  // power of two, 4096..65536
  bool dedupe = true;
  bool x86_filter = true;  // pages that look like x86 code get the branch filter (gdfs/x86_filter.h)
  // --tail-pack-limit: a file's last partial page goes into a tail pack only when it has at most this
  // many bytes, else it is a page of its own. A read of a packed tail decodes the whole pack, so files
  // read in random order (a dataset's samples) read fewer bytes with 0; trees read in order compress
  // better packed (unset: the page size, every tail packed).
  std::optional<uint32_t> tail_pack_limit;

  page::CodecChoice codec = page::CodecChoice::kGDeflate;  // --codec: every page, tail packs included
  std::vector<page::CodecRule> codec_rules;  // --codec-for GLOB=CODEC, in order: the last match wins

  std::string base;       // --base OLD: reuse its pages
  bool layered = false;   // --layered: refer to OLD's pages instead of copying them
  std::string base_hint;  // --base-hint: OLD's location as readers of IMAGE find it
  std::string sign_key;   // --sign KEY: a PEM Ed25519 private key (FORMAT.md 7.1)

  std::vector<std::string> excludes;         // fnmatch patterns against the relative path and the basename
  std::vector<std::string> exclude_files;    // --exclude-from: files of patterns, added to excludes
  bool xattrs = true;                        // --no-xattrs clears it: no xattr is read or stored
  std::vector<std::string> xattr_excludes;   // --exclude-xattr: fnmatch patterns against xattr names
  std::optional<uint32_t> uid, gid;          // owner overrides (--all-root sets both to 0 unless given)
  std::string chmod_text;                    // --chmod MODE as given
  std::optional<ModeChange> chmod;           // --chmod parsed (by finish_options)
  std::optional<int64_t> mtime;              // --mtime: every inode's mtime
  std::optional<int64_t> source_date_epoch;  // SOURCE_DATE_EPOCH from the environment
  std::string label;                         // <= 64 bytes
  bool force = false;
  bool quiet = false;
  bool json = false;
  bool ignore_errors = false;
  bool progress = false;  // draw the progress line on the error stream (a terminal, not --quiet)
};

// Registers every option of mkfs.gdfs on `app`, writing into `o`; `all_root` receives --all-root.
void add_options(CLI::App& app, Options& o, bool& all_root);

// Fills in what depends on the environment and on other options: the thread count, the owner overrides
// of --all-root, SOURCE_DATE_EPOCH (`sde` is its value, null when unset), the patterns of --exclude-from,
// --chmod's change. Throws std::invalid_argument with a user-facing message when SOURCE_DATE_EPOCH is
// not an integer, an --exclude-from file cannot be read or --chmod's MODE is not one.
void finish_options(Options& o, bool all_root, const char* sde);

// log2 of a valid page size.
uint32_t page_log2(const Options& o);

}  // namespace gdfs::mkfs
