#include "cli.h"

#include <cctype>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench.h"
#include "cli_app.h"
#include "gdfs/gdeflate.h"
#include "gdfs/gdeflate_container.h"
#include "gdfs/machine.h"
#include "io.h"
#include "nvcomp_cpu.h"

namespace gdfs::tools {
namespace {

namespace gd = gdfs::gdeflate;

// --decoder's values, by DecodePath.
const std::vector<std::pair<std::string, gd::DecodePath>> kDecoderPaths = {
    {"auto", gd::DecodePath::kAuto},
    {"scalar", gd::DecodePath::kScalar},
    {"avx2", gd::DecodePath::kAvx2},
    {"avx512", gd::DecodePath::kAvx512}};

std::vector<std::string> decoder_names() {
  std::vector<std::string> names;
  for (const auto& entry : kDecoderPaths) names.push_back(entry.first);
  return names;
}

gd::DecodePath decode_path_named(const std::string& name) {
  for (const auto& [n, path] : kDecoderPaths)
    if (n == name) return path;
  return gd::DecodePath::kAuto;
}

struct Args {
  std::string input, output;
  int level = gd::kDefaultLevel;
  unsigned threads = 0;
  bool raw = false;
  size_t size = 0;
  std::string levels = std::to_string(gd::kDefaultLevel);
  std::vector<std::string> files;
  double min_seconds = 1.0;
  unsigned paired_rounds = 0;
  std::string decoder = "auto";  // a name in kDecoderPaths
  std::string nvcomp_cpu;
  bool x86_filter = false;
};

void add_io(CLI::App* cmd, Args& a) {
  cmd->add_option("INPUT", a.input, "Input file, - for standard input")->required();
  cmd->add_option("OUTPUT", a.output, "Output file, - for standard output")->required();
}

void add_threads(CLI::App* cmd, Args& a) {
  cmd->add_option("-t,--threads", a.threads, "Worker threads, 0 = all cores (the output never depends on it)")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
}

CLI::Option* add_level(CLI::App* cmd, Args& a) {
  return cmd->add_option("-l,--level", a.level, "Compression level: 0 stored, 1 fastest .. 12 best")
      ->check(CLI::Range(gd::kMinLevel, gd::kMaxLevel))
      ->capture_default_str();
}

void add_bench(CLI::App* app, Args& a) {
  auto* cmd = app->add_subcommand("bench", "Compare our page codec with libdeflate on 64 KiB pages of FILEs");
  const CLI::Validator levels(
      [](std::string& s) {
        return parse_levels(s) ? std::string() : "expected a level 0..12, a comma-separated list or 'all'";
      },
      "LEVELS");
  cmd->add_option("-l,--level,--levels", a.levels, "Level(s): 6, 1,6,9,12 or all")
      ->check(levels)
      ->capture_default_str();
  cmd->add_option("--min-time", a.min_seconds, "Repeat each timing until this many seconds have passed")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--paired", a.paired_rounds,
                  "Time the codecs taking turns page by page, ROUNDS times, each page at its fastest round "
                  "(steadier ratios on a shared machine; replaces --min-time)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--decoder", a.decoder, "Our decoder: auto, scalar, avx2 or avx512 (falls back if absent)")
      ->transform(CLI::Validator(
          [](std::string& s) {
            for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            return std::string();
          },
          ""))
      ->check(CLI::IsMember(decoder_names()).description(""))
      ->type_name("NAME")
      ->capture_default_str();
  cmd->add_flag("--x86-filter", a.x86_filter,
                "Also time ours with the x86 branch filter on every page (mkfs.gdfs filters pages that look "
                "like x86 code), and its ratio to ours without");
  cmd->add_option(
         "--nvcomp-cpu", a.nvcomp_cpu,
         "nvCOMP's libnvcomp_cpu.so.6 (pip wheel nvidia-libnvcomp-cu13): adds its host GDeflate codec "
         "(default: $GDFS_NVCOMP_CPU_LIB; none: leave it out)")
      ->type_name("PATH");
  cmd->add_option("FILE", a.files, "Input files, - for standard input")->required();
}

void compress(const Args& a, std::istream& in, std::ostream& out) {
  const std::vector<uint8_t> data = read_input(a.input, in);
  std::vector<uint8_t> packed;
  if (a.raw) {
    if (data.size() > gd::kMaxPageBytes)
      throw std::runtime_error(a.input + ": " + std::to_string(data.size()) +
                               " bytes do not fit in one raw page (at most 65536 bytes); omit --raw");
    gd::Compressor c(a.level);
    packed.resize(gd::compress_bound(data.size()));
    packed.resize(c.compress(data.data(), data.size(), packed.data(), packed.size()));
    if (packed.empty()) throw std::logic_error(a.input + ": compressor exceeded compress_bound");
  } else {
    packed = gd::compress_container(data, a.level, a.threads ? a.threads : machine::usable_cpus());
  }
  write_output(a.output, packed, out);
}

void decompress(const Args& a, std::istream& in, std::ostream& out) {
  const std::vector<uint8_t> data = read_input(a.input, in);
  std::vector<uint8_t> plain;
  if (a.raw) {
    plain.resize(a.size);
    const PageStatus s = gd::Decompressor().decompress(data.data(), data.size(), plain.data(), plain.size());
    if (s != PageStatus::kOk)
      throw std::runtime_error(a.input + ": not a raw GDeflate page of " + std::to_string(a.size) +
                               " bytes: " + page_status_message(s));
  } else {
    try {
      plain = gd::decompress_container(data, a.threads ? a.threads : machine::usable_cpus());
    } catch (const gd::ContainerError& e) {
      throw std::runtime_error(a.input + ": " + e.what());
    }
  }
  write_output(a.output, plain, out);
}

// --nvcomp-cpu wins over $GDFS_NVCOMP_CPU_LIB; "none" leaves nvCOMP out either way.
std::string nvcomp_library(const std::string& option) {
  if (option.empty()) return nvcomp_cpu::library_path("");
  return option == "none" ? std::string() : option;
}

}  // namespace

int gdeflate_main(int argc, char** argv, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app("GDeflate page codec and DirectStorage .gdeflate container tool", "gdeflate");
  cli::add_version_flag(app);
  app.require_subcommand(1);
  Args a;

  auto* comp = app.add_subcommand("compress", "Compress INPUT into a .gdeflate container (or one raw page)");
  add_level(comp, a);
  add_threads(comp, a);
  comp->add_flag("--raw", a.raw, "Write one raw GDeflate page; INPUT must be at most 64 KiB");
  add_io(comp, a);

  auto* decomp = app.add_subcommand("decompress", "Decompress a .gdeflate container (or one raw page)");
  add_threads(decomp, a);
  auto* raw = decomp->add_flag("--raw", a.raw, "INPUT is one raw GDeflate page; needs --size");
  auto* size = decomp->add_option("--size", a.size, "Uncompressed size of the raw page in bytes")
                   ->check(CLI::Range(size_t{0}, gd::kMaxPageBytes));
  raw->needs(size);
  size->needs(raw);
  add_io(decomp, a);

  add_bench(&app, a);

  if (const int code = cli::parse(app, argc, argv, out, err); code >= 0) return code;
  return cli::run(app.get_name(), out, err, [&] {
    if (*comp) compress(a, in, out);
    if (*decomp) decompress(a, in, out);
    if (app.got_subcommand("bench"))
      run_bench({*parse_levels(a.levels), a.files, a.min_seconds, a.paired_rounds,
                 decode_path_named(a.decoder), nvcomp_library(a.nvcomp_cpu), a.x86_filter},
                in, out);
    return 0;
  });
}

}  // namespace gdfs::tools
