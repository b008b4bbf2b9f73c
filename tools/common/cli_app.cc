#include "cli_app.h"

#include <ostream>

#include "gdfs/printable.h"
#include "gdfs/version.h"

namespace gdfs::cli {

void add_version_flag(CLI::App& app) {
  app.set_version_flag("--version", version_line(app.get_name()));
}

int usage_error(const std::string& tool, const std::string& what, std::ostream& err) {
  err << tool << ": error: " << printable_name(what) << "\nRun '" << tool << " --help' for usage.\n";
  return 2;
}

int parse(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help, --version
    return usage_error(app.get_name(), e.what(), err);
  }
  return -1;
}

// Messages quote names from images and archives, and replies from servers: one line, never a terminal's
// escape sequence.
int report_error(const std::string& tool, const std::exception& e, std::ostream& err) {
  err << tool << ": error: " << printable_name(e.what()) << "\n";
  return 1;
}

}  // namespace gdfs::cli
