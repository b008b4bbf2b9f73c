// What every command-line tool (mkfs.gdfs, gdfs-inspect, gdeflate) does the same way around CLI11: the
// --version flag, parsing with --help/--version and usage errors, and reporting the error that ends a run.
// One place, so that the three print the same messages and return the same exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <iosfwd>
#include <string>

namespace gdfs::cli {

// Adds --version to `app`, printing version_line() of the app's name.
void add_version_flag(CLI::App& app);

// "TOOL: error: WHAT" and a hint to run HELP --help (HELP: TOOL when empty; "TOOL SUB" for a subcommand's
// options), on `err`; returns 2, the usage-error exit code.
int usage_error(const std::string& tool, const std::string& what, std::ostream& err,
                const std::string& help = {});

// Marks an option whose value may be empty (a label). Any other option given an empty value is a usage
// error: `--sign "$KEY"` with KEY unset must not build an unsigned image, nor SOURCE "" read the tree from /.
CLI::Validator may_be_empty();

// Parses argv, with the help of `app` and its subcommands first wrapped to 80 columns. Returns -1 when
// the command is to run; otherwise the exit code to end with: 0 after --help or --version (printed on
// `out`), 2 after a usage error (printed on `err`), an empty value among them (see may_be_empty).
int parse(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err);

// "TOOL: error: WHAT" on `err`; returns 1, the exit code of a run that failed.
int report_error(const std::string& tool, const std::exception& e, std::ostream& err);

// The exit code once `out` is flushed: a listing or summary that could not be written (a full disk, a
// closed pipe) fails the run, as it does for ls and cat, rather than end it with 0 and nothing written.
// `done`, if any, says what was done all the same (mkfs: the image was written).
int finish_output(const std::string& tool, int code, std::ostream& out, std::ostream& err,
                  const std::string& done = {});

// Runs `body` (returning the exit code) and finishes `out`; an exception it throws is reported and ends
// it with 1.
template <class Body>
int run(const std::string& tool, std::ostream& out, std::ostream& err, Body&& body) {
  int code = 1;
  try {
    code = body();
  } catch (const std::exception& e) {
    return report_error(tool, e, err);
  }
  return finish_output(tool, code, out, err);
}

}  // namespace gdfs::cli
