#include "cli.h"

#include <ostream>

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
      ->type_name("PATH|URL");
  return cmd;
}

void add_path(CLI::App* cmd, Options& o, bool required) {
  auto* opt = cmd->add_option("PATH", o.path, "Path inside the image, e.g. /dir/file");
  if (required) opt->required();
}

void add_json(CLI::App* cmd, Options& o) {
  cmd->add_flag("--json", o.json, "Print JSON instead of text");
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

  auto* extract = add_command(app, "extract", "Restore the tree (or PATH below it) under DIR", o);
  extract->add_option("DIR", o.dir, "Target directory, created if missing")->required();
  add_path(extract, o, false);

  auto* flatten =
      add_command(app, "flatten", "Write a layered image and its bases as one standalone image", o);
  flatten->add_option("OUTPUT", o.dir, "The standalone image to write")->required();
  flatten->add_flag("--force", o.force, "Replace OUTPUT if it exists");

  auto* counters =
      app.add_subcommand("counters", "Live counters of a mounted gdfs (reads, cache, decode, I/O)");
  counters->add_option("MOUNTPOINT", o.dir, "Where the image is mounted")->required();
  add_json(counters, o);

  if (const int code = cli::parse(app, argc, argv, out, err); code >= 0) return code;
  return cli::run(app.get_name(), err, [&] {
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
