#include "cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "gdfs/version.h"
#include "mkfs.h"

namespace gdfs::mkfs {
namespace {

constexpr size_t kHelpWidth = 80;  // --help fits a classic terminal

int usage_error(const std::string& what, std::ostream& err) {
  err << "mkfs.gdfs: error: " << what << "\nRun 'mkfs.gdfs --help' for usage.\n";
  return 2;
}

// Parses argv into `o`; returns an exit code when the run ends here (--help, --version, bad usage).
int parse(int argc, char** argv, Options& o, std::ostream& out, std::ostream& err) {
  CLI::App app("Create a gdfs image (a read-only filesystem of GDeflate-compressed pages) from SOURCE_DIR",
               "mkfs.gdfs");
  app.set_version_flag("--version", version_line("mkfs.gdfs"));
  bool all_root = false;
  add_options(app, o, all_root);
  fit_help(app, kHelpWidth);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help, --version
    return usage_error(e.what(), err);
  }
  try {
    finish_options(o, all_root, std::getenv("SOURCE_DATE_EPOCH"));
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what(), err);
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
    out.flush();
    if (diag.skipped() == 0) return 0;
    diag.warn(std::to_string(diag.skipped()) + " entries could not be read and were left out of the image");
    return 2;
  } catch (const std::exception& e) {
    progress.clear();
    err << "mkfs.gdfs: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gdfs::mkfs
