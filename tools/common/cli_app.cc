#include "cli_app.h"

#include <ostream>

#include "gdfs/printable.h"
#include "gdfs/version.h"

namespace gdfs::cli {

void add_version_flag(CLI::App& app) {
  app.set_version_flag("--version", version_line(app.get_name()));
}

int usage_error(const std::string& tool, const std::string& what, std::ostream& err,
                const std::string& help) {
  err << tool << ": error: " << printable_name(what) << "\nRun '" << (help.empty() ? tool : help)
      << " --help' for usage.\n";
  return 2;
}

namespace {

constexpr const char* kMayBeEmpty = "may-be-empty";

bool allows_empty(CLI::Option& opt) {
  try {
    opt.get_validator(kMayBeEmpty);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

// The first option of `app` or of its subcommands on the command line given an empty value, or "".
std::string empty_value(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_items_expected_max() == 0 || allows_empty(*opt)) continue;
    for (const std::string& value : opt->results())
      if (value.empty()) return opt->get_name().empty() ? opt->get_name(true) : opt->get_name();
  }
  for (CLI::App* sub : app.get_subcommands())
    if (std::string name = empty_value(*sub); !name.empty()) return name;
  return {};
}

// "TOOL SUB" of the deepest subcommand given on the command line, whose --help tells what it takes.
std::string help_command(CLI::App& app) {
  std::string command = app.get_name();
  for (CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    command += " " + at->get_name();
  }
  return command;
}

// CLI11 calls a mistyped subcommand "A subcommand is required": name it, and those there are. The first
// argument that is not an option is where a subcommand goes (the tools' top levels take only flags).
std::string unknown_subcommand(CLI::App& app, int argc, char** argv) {
  const std::vector<CLI::App*> subs = app.get_subcommands({});
  if (subs.empty() || !app.get_subcommands().empty()) return {};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with('-')) continue;
    std::string names;
    for (const CLI::App* sub : subs) {
      if (sub->check_name(arg)) return {};
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    return "unknown subcommand '" + arg + "' (" + names + ")";
  }
  return {};
}

}  // namespace

CLI::Validator may_be_empty() {
  return CLI::Validator([](const std::string&) { return std::string(); }, "", kMayBeEmpty);
}

int parse(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help, --version
    const std::string unknown = unknown_subcommand(app, argc, argv);
    return usage_error(app.get_name(), unknown.empty() ? e.what() : unknown, err, help_command(app));
  }
  if (const std::string name = empty_value(app); !name.empty())
    return usage_error(app.get_name(), name + " is empty", err, help_command(app));
  return -1;
}

int finish_output(const std::string& tool, int code, std::ostream& out, std::ostream& err,
                  const std::string& done) {
  if (out.flush()) return code;
  err << tool << ": error: cannot write the output" << (done.empty() ? "" : " (" + done + ")") << "\n";
  return code == 0 ? 1 : code;
}

// Messages quote names from images and archives, and replies from servers: one line, never a terminal's
// escape sequence.
int report_error(const std::string& tool, const std::exception& e, std::ostream& err) {
  err << tool << ": error: " << printable_name(e.what()) << "\n";
  return 1;
}

}  // namespace gdfs::cli
