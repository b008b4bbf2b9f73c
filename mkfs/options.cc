#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "cli_app.h"
#include "diag.h"
#include "gdfs/format.h"
#include "gdfs/machine.h"

namespace gdfs::mkfs {
namespace {

const CLI::Validator kPageSize(
    [](std::string& s) {
      uint64_t v = 0;
      if (!CLI::detail::lexical_cast(s, v) || v < 4096 || v > 65536 || !std::has_single_bit(v))
        return std::string("must be a power of two from 4096 to 65536");
      return std::string();
    },
    "BYTES");

const CLI::Validator kLabel(
    [](std::string& s) { return s.size() <= 64 ? std::string() : std::string("is longer than 64 bytes"); },
    "STR");

// SOURCE_DATE_EPOCH must be a plain decimal integer (reproducible-builds.org); anything else is an
// error rather than a silent fallback to a time that would make the build irreproducible.
std::optional<int64_t> parse_sde(const char* s) {
  if (s == nullptr || *s == '\0') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || end == s)
    throw std::invalid_argument(std::string("SOURCE_DATE_EPOCH is not an integer: '") + s + "'");
  return static_cast<int64_t>(v);
}

// The patterns of an --exclude-from file, as rsync's --exclude-from reads them: one per line, without
// its line end (CR LF too); empty lines and lines starting with '#' are not patterns.
void read_exclude_file(const std::string& file, std::vector<std::string>& excludes) {
  std::ifstream in(file);
  if (!in)
    throw std::invalid_argument("--exclude-from: cannot read " + quote_path(file) + ": " +
                                std::strerror(errno));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line.front() != '#') excludes.push_back(std::move(line));
  }
  if (in.bad()) throw std::invalid_argument("--exclude-from: cannot read " + quote_path(file));
}

const CLI::Validator kCodec(
    [](std::string& s) {
      return page::parse_codec(s) ? std::string() : std::string("must be gdeflate, bitpack or auto");
    },
    "CODEC");

const CLI::Validator kCodecRule(
    [](std::string& s) {
      const size_t eq = s.rfind('=');
      if (eq == std::string::npos || eq == 0 || !page::parse_codec(std::string_view(s).substr(eq + 1)))
        return std::string("must be GLOB=CODEC, CODEC one of gdeflate, bitpack, auto");
      return std::string();
    },
    "GLOB=CODEC");

}  // namespace

void add_options(CLI::App& app, Options& o, bool& all_root) {
  app.add_option("SOURCE", o.source,
                 "Directory tree to put in the image, or an archive to read in one pass without "
                 "extracting it: tar, cpio, zip, ... (what libarchive reads; gzip, zstd, xz, bzip2 "
                 "compressed or not), '-' for standard input")
      ->required();
  app.add_option("IMAGE", o.image, "Image file to create")->required();
  app.add_option("-l,--level", o.level,
                 "GDeflate level: 1 fastest .. 12 smallest (7: see README, Performance)")
      ->check(CLI::Range(1, 12))
      ->capture_default_str();
  app.add_option("-t,--threads", o.threads,
                 "Compression and tree-listing threads, 0 = all cores (the image never depends on it)")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  app.add_option("--page-size", o.page_size, "Page size in bytes: a power of two, 4096..65536")
      ->check(kPageSize)
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--codec", [&o](const std::string& s) { o.codec = *page::parse_codec(s); },
         "Page codec: gdeflate; bitpack (bit-planes of int16/int32 samples, for numeric data); auto (the "
         "smallest per page, never a larger image than gdeflate). Default gdeflate")
      ->check(kCodec);
  app.add_option_function<std::vector<std::string>>(
         "--codec-for",
         [&o](const std::vector<std::string>& rules) {
           for (const std::string& r : rules) {
             const size_t eq = r.rfind('=');
             o.codec_rules.push_back(
                 {r.substr(0, eq), *page::parse_codec(std::string_view(r).substr(eq + 1))});
           }
         },
         "Codec for files whose relative path or name matches GLOB (fnmatch; repeatable, the last match "
         "wins), e.g. '*.wav=auto'")
      ->check(kCodecRule)
      ->allow_extra_args(false);  // one rule per --codec-for, never SOURCE
  app.add_flag_callback(
      "--no-dedupe", [&o] { o.dedupe = false; }, "Do not share identical pages and file tails");
  app.add_flag_callback(
      "--no-x86-filter", [&o] { o.x86_filter = false; },
      "Do not run pages that look like x86 machine code through the branch filter before GDeflate "
      "(images then stay readable by readers of format 2.2)");
  app.add_option("--tail-pack-limit", o.tail_pack_limit,
                 "Pack a file's last partial page with other files' only when it is at most BYTES bytes; "
                 "larger ones get a page of their own (0: no tail packs, for files read in random order, "
                 "such as a dataset's samples). Default: the page size, every tail packed")
      ->type_name("BYTES")
      ->check(CLI::Range(0u, 65536u));
  app.add_option("--base", o.base,
                 "Reuse the pages of OLD (a path or URL) for content that did not change, instead of "
                 "compressing it again: the image reads the same as a full build")
      ->type_name("OLD");
  app.add_flag("--layered", o.layered,
               "With --base: leave reused pages in OLD and refer to them, so that IMAGE holds only new "
               "pages; readers open OLD beside IMAGE (see --base-hint)")
      ->needs("--base");
  app.add_option("--base-hint", o.base_hint,
                 "With --layered: where readers find OLD, relative to IMAGE (default: OLD's path "
                 "relative to IMAGE's folder, or a URL's last component)")
      ->type_name("NAME")
      ->needs("--layered");
  app.add_option("--sign", o.sign_key,
                 "Sign the image with KEY, a PEM Ed25519 private key (openssl genpkey -algorithm ed25519): "
                 "readers given its public key (trusted_key) check every page against the signature")
      ->type_name("KEY");
  app.add_option("--exclude", o.excludes,
                 "Leave out entries whose relative path or name matches GLOB (fnmatch; repeatable); "
                 "an excluded directory is skipped with all its contents (in an archive: members "
                 "under it)")
      ->type_name("GLOB")
      ->allow_extra_args(false);  // one pattern per --exclude, never SOURCE
  app.add_option("--exclude-from", o.exclude_files,
                 "Read --exclude patterns from FILE, one per line (empty lines and lines starting with # "
                 "are skipped; repeatable)")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_flag(
      "--no-xattrs", [&o](int64_t) { o.xattrs = false; },
      "Store no extended attributes (from the tree or the archive)");
  app.add_option("--exclude-xattr", o.xattr_excludes,
                 "Leave out extended attributes whose name matches GLOB (fnmatch; repeatable), e.g. "
                 "'security.*' for a build host's SELinux labels")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  app.add_option("--chmod", o.chmod_text,
                 "Change every inode's permissions (symlinks aside) as chmod MODE would: octal, or "
                 "clauses such as u+w,go-w,a+rX (files 0644 or 0755, directories 0755, whatever umask "
                 "built the tree)")
      ->type_name("MODE");
  app.add_flag("--all-root", all_root, "Make every inode owned by uid 0 and gid 0");
  // 2^32 - 1 is (uid_t)-1, "no owner" to chown(2) and the kernel: no inode can be owned by it.
  app.add_option("--uid", o.uid, "Make every inode owned by uid N")
      ->type_name("N")
      ->check(CLI::Range(0u, UINT32_MAX - 1));
  app.add_option("--gid", o.gid, "Make every inode owned by gid N")
      ->type_name("N")
      ->check(CLI::Range(0u, UINT32_MAX - 1));
  app.add_option("--mtime", o.mtime, "Set every inode's mtime to T (seconds since the epoch)")
      ->type_name("T");
  app.add_option("--label", o.label, "Volume label, at most 64 bytes")
      ->check(kLabel)
      ->check(cli::may_be_empty());
  app.add_flag("--force", o.force, "Replace IMAGE if it exists");
  app.add_flag("-q,--quiet", o.quiet,
               "No progress line and no text summary (--json still prints); errors still go to stderr");
  app.add_flag("--json", o.json, "Print the summary as a JSON object");
  app.add_flag("--ignore-errors", o.ignore_errors,
               "Report files and directories that cannot be read or vanish while mkfs runs (or bad "
               "archive members), leave them out and go on (exit code 2)");
  app.footer(
      "Reproducible: the image depends only on the tree and the options, never on --threads or the "
      "clock. Its timestamp is SOURCE_DATE_EPOCH if set (which also caps every mtime), else --mtime, "
      "else the newest mtime in the tree, so the same tree gives a byte-identical image.\n"
      "Archives: members are packed in archive order (one in the tree's packing order: breadth-first by "
      "name, each __pycache__/NAME.*.pyc right after NAME.py, gives the same image as its tree); a leading "
      "'/' is stripped, '..' is refused, a later member of the "
      "same path wins; directories that members imply get mode 0755, owner 0:0 (or --uid/--gid) and "
      "the image time. Examples: mkfs.gdfs data.tar.zst data.gdfs; tar cf - dir | mkfs.gdfs - data.gdfs\n"
      "Exit codes: 0 ok, 1 error (no image written, or the summary could not be), 2 usage error or entries "
      "skipped by "
      "--ignore-errors (the image was written without them).");
}

void finish_options(Options& o, bool all_root, const char* sde) {
  if (o.threads == 0) o.threads = machine::usable_cpus();
  if (all_root) {
    if (!o.uid) o.uid = 0;
    if (!o.gid) o.gid = 0;
  }
  o.source_date_epoch = parse_sde(sde);
  for (const std::string& file : o.exclude_files) read_exclude_file(file, o.excludes);
  if (!o.chmod_text.empty()) {
    ModeChange change;
    if (const std::string why = parse_mode_change(o.chmod_text, change); !why.empty())
      throw std::invalid_argument("--chmod: " + why);
    o.chmod = change;
  }
}

uint32_t page_log2(const Options& o) {
  return static_cast<uint32_t>(std::countr_zero(o.page_size));
}

}  // namespace gdfs::mkfs
