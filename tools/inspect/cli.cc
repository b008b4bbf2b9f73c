#include "cli.h"

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "archive_format.h"
#include "cli_app.h"
#include "commands.h"

namespace gdfs::tools {
namespace {

using inspect::Options;

CLI::App* add_command(CLI::App& app, const char* name, const char* what, Options& o) {
  auto* cmd = app.add_subcommand(name, what);
  cmd->add_option("IMAGE", o.image, "The gdfs image")->required();
  cmd->add_option("--base", o.bases,
                  "A base image of a layered IMAGE that is not where IMAGE says (repeat for several)")
      ->type_name("PATH|URL")
      ->allow_extra_args(false);  // one value per --base: `ls --base OLD IMAGE PATH` must not take IMAGE
  cmd->add_option("--key", o.key,
                  "Trust only IMAGE signed by this Ed25519 public key (PEM): refuse it otherwise, and check "
                  "every page read against its signed digest")
      ->type_name("PUB");
  return cmd;
}

// "a, b, c": the values an option takes, for its help.
std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void add_path(CLI::App* cmd, Options& o, bool required) {
  auto* opt = cmd->add_option("PATH", o.path, "Path inside the image, e.g. /dir/file");
  if (required) opt->required();
}

void add_json(CLI::App* cmd, Options& o) {
  cmd->add_flag("--json", o.json, "Print JSON instead of text");
}

// extract --archive FILE|- [--format F] [--compress C]. The archive takes DIR's place, so the one
// positional after IMAGE is then PATH (check_extract_target moves it there).
void add_archive_options(CLI::App* cmd, Options& o) {
  auto* archive = cmd->add_option("-a,--archive", o.archive,
                                  "Write one archive to FILE (\"-\": standard output) instead of a tree; the "
                                  "format comes from FILE's name (.tar, .tar.gz, .tgz, .tar.zst, .tar.xz, "
                                  ".cpio, .zip, ...), else pax");
  archive->type_name("FILE");
  cmd->add_option("--format", o.format,
                  "Archive format: tar (= pax: nanosecond mtimes, xattrs, holes), ustar, gnutar, cpio (= "
                  "newc), odc, zip, ... (all: " +
                      join_names(inspect::archive_format_names()) + ")")
      ->check(CLI::IsMember(inspect::archive_format_names()).description(""))
      ->type_name("FORMAT")
      ->needs(archive);
  cmd->add_option("--compress", o.compress,
                  "Compression filter of the archive: " + join_names(inspect::archive_filter_names()))
      ->check(CLI::IsMember(inspect::archive_filter_names()).description(""))
      ->type_name("FILTER")
      ->needs(archive);
}

// DIR and --archive: exactly one. Returns -1 when fine, else 2 after the usage message.
int check_extract_target(const CLI::App* cmd, Options& o, std::ostream& err) {
  if (o.archive.empty()) {
    if (o.dir.empty())
      return cli::usage_error("gdfs-inspect", "extract: DIR or --archive FILE is required", err,
                              "gdfs-inspect extract");
    return -1;
  }
  if (o.dir.empty()) return -1;
  if (cmd->get_option("PATH")->count() > 0)
    return cli::usage_error("gdfs-inspect", "extract: DIR and --archive exclude each other", err,
                            "gdfs-inspect extract");
  o.path = std::exchange(o.dir, "");  // `extract IMAGE PATH --archive FILE`
  return -1;
}

}  // namespace

int inspect_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app("Inspect, verify and extract gdfs images", "gdfs-inspect");
  cli::add_version_flag(app);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 ok, 1 error (bad image, missing path, broken pages, failed extraction), 2 usage.");
  Options o;
  o.path = "/";

  auto* info = add_command(app, "info", "Superblock, features, inode counts and sizes", o);
  add_json(info, o);

  auto* ls = add_command(app, "ls", "List a directory (or one entry) in stored order", o);
  add_path(ls, o, false);
  ls->add_flag("-l,--long", o.long_format, "Mode, links, owner, size, mtime; symlink targets");
  ls->add_flag("-R,--recursive", o.recursive, "Everything below PATH, as paths relative to it");
  add_json(ls, o);

  auto* pages = add_command(app, "pages", "The page pointer table of one regular file", o);
  add_path(pages, o, true);
  add_json(pages, o);

  auto* stats =
      add_command(app, "stats", "Page ratios, codec mix, largest files, dedupe and tail savings", o);
  add_json(stats, o);

  auto* verify = add_command(app, "verify", "Decode and check every page; resolve every file", o);
  verify->add_option("-t,--threads", o.threads, "Decoding threads, 0 = all cores")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();

  auto* cat = add_command(app, "cat", "Write a file's contents to standard output", o);
  add_path(cat, o, true);

  auto* extract = add_command(app, "extract",
                              "Restore the tree (or PATH below it) under DIR, or write it as one archive", o);
  extract->add_option("DIR", o.dir, "Target directory, created if missing (not with --archive)");
  add_path(extract, o, false);
  add_archive_options(extract, o);
  extract->footer(
      "Examples:\n  gdfs-inspect extract data.gdfs out/            # the tree, under out/\n"
      "  gdfs-inspect extract data.gdfs --archive data.tar.zst\n"
      "  gdfs-inspect extract data.gdfs /models -a - | tar -tvf -");

  auto* flatten =
      add_command(app, "flatten", "Write a layered image and its bases as one standalone image", o);
  flatten->add_option("OUTPUT", o.dir, "The standalone image to write")->required();
  flatten->add_flag("--force", o.force, "Replace OUTPUT if it exists");
  flatten->add_option("--sign", o.sign_key,
                      "Sign OUTPUT with this Ed25519 private key (PEM), as mkfs.gdfs --sign does");

  auto* counters =
      app.add_subcommand("counters", "Live counters of a mounted gdfs (reads, cache, decode, I/O)");
  counters->add_option("MOUNTPOINT", o.dir, "Where the image is mounted")->required();
  add_json(counters, o);

  if (const int code = cli::parse(app, argc, argv, out, err); code >= 0) return code;
  if (*extract) {
    if (const int code = check_extract_target(extract, o, err); code >= 0) return code;
  }
  return cli::run(app.get_name(), out, err, [&] {
    if (*info) return inspect::info(o, out);
    if (*ls) return inspect::ls(o, out);
    if (*pages) return inspect::pages(o, out);
    if (*stats) return inspect::stats(o, out);
    if (*verify) return inspect::verify(o, out, err);
    if (*cat) return inspect::cat(o, out);
    if (*extract) return inspect::extract(o, out, err);
    if (*flatten) return inspect::flatten(o, out);
    if (*counters) return inspect::counters(o, out);
    return 2;
  });
}

}  // namespace gdfs::tools
