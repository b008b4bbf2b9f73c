#include "cli_app.h"

#include <algorithm>
#include <ostream>
#include <string_view>

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

constexpr size_t kHelpWidth = 80;  // --help fits a classic terminal

// Greedy word wrap of each line of `text` at spaces, to at most `width` columns (a longer word gets a
// line of its own).
std::string wrap(std::string_view text, size_t width) {
  std::string out;
  size_t column = 0;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find_first_of(" \n", at), text.size());
    const std::string_view word = text.substr(at, end - at);
    if (column > 0 && column + 1 + word.size() > width) {
      out += '\n';
      column = 0;
    } else if (column > 0) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    if (end < text.size() && text[end] == '\n') out += '\n', column = 0;
    at = end + 1;
  }
  return out;
}

// Wraps the help of `app` and of its subcommands to `width` columns. CLI11 indents each line of an
// option's (or a subcommand's, in its parent's list) description to the option column, but never wraps
// it.
void fit_help(CLI::App& app, size_t width) {
  const size_t column = app.get_formatter()->get_column_width();
  const size_t text = width > column ? width - column : 1;
  app.footer(wrap(app.get_footer(), width));
  for (CLI::Option* opt : app.get_options()) opt->description(wrap(opt->get_description(), text));
  for (CLI::App* sub : app.get_subcommands({})) {
    fit_help(*sub, width);
    sub->description(wrap(sub->get_description(), text));
  }
}

}  // namespace

CLI::Validator may_be_empty() {
  return CLI::Validator([](const std::string&) { return std::string(); }, "", kMayBeEmpty);
}

int parse(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err) {
  app.description(wrap(app.get_description(), kHelpWidth));
  fit_help(app, kHelpWidth);
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
