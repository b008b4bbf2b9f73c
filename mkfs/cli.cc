#include "cli.h"

#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "cli_app.h"
#include "mkfs.h"

namespace gdfs::mkfs {
namespace {

constexpr const char* kTool = "mkfs.gdfs";

// Parses argv into `o`; returns an exit code when the run ends here (--help, --version, bad usage).
int parse(int argc, char** argv, Options& o, std::ostream& out, std::ostream& err) {
  CLI::App app(
      "Create a gdfs image (a read-only filesystem of GDeflate-compressed pages) from SOURCE: a directory "
      "tree, or an archive",
      kTool);
  cli::add_version_flag(app);
  bool all_root = false;
  add_options(app, o, all_root);
  if (const int code = cli::parse(app, argc, argv, out, err); code >= 0) return code;
  try {
    finish_options(o, all_root, std::getenv("SOURCE_DATE_EPOCH"));
  } catch (const std::invalid_argument& e) {
    return cli::usage_error(kTool, e.what(), err);
  }
  return -1;
}

}  // namespace

int mkfs_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Options o;
  if (const int code = parse(argc, argv, o, out, err); code >= 0) return code;
  o.progress = !o.quiet && &err == &std::cerr && ::isatty(STDERR_FILENO);
  Progress progress(err, o.progress);
  Diag diag(err, o.ignore_errors, progress);
  try {
    const Summary s = make_image(o, diag, progress);
    progress.clear();
    if (o.json)
      print_json(s, out);
    else if (!o.quiet)
      print_text(s, out);
    if (diag.skipped() != 0)
      diag.warn(std::to_string(diag.skipped()) + " entries could not be read and were left out of the image");
    return cli::finish_output(kTool, diag.skipped() == 0 ? 0 : 2, out, err, "the image was written");
  } catch (const std::exception& e) {
    progress.clear();
    return cli::report_error(kTool, e, err);
  }
}

}  // namespace gdfs::mkfs
