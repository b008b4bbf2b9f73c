// Running mkfs.gdfs and gdfs-inspect in-process, and small image-file helpers for the image tests.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mkfs/cli.h"
#include "tools/inspect/cli.h"

namespace gdfs::test {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline CliResult run_cli(const char* prog, int (*fn)(int, char**, std::ostream&, std::ostream&),
                         std::vector<std::string> args) {
  args.insert(args.begin(), prog);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  CliResult r;
  r.code = fn(static_cast<int>(args.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

inline CliResult run_mkfs(std::vector<std::string> args) {
  return run_cli("mkfs.gdfs", gdfs::mkfs::mkfs_main, std::move(args));
}
inline CliResult run_inspect(std::vector<std::string> args) {
  return run_cli("gdfs-inspect", gdfs::tools::inspect_main, std::move(args));
}

// gdfs-inspect ARGS --json, parsed; a failed command fails the test (and parses its empty output to null).
inline nlohmann::json inspect_json(std::vector<std::string> args) {
  args.push_back("--json");
  CliResult r = run_inspect(std::move(args));
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out.empty() ? nlohmann::json() : nlohmann::json::parse(r.out);
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
inline void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace gdfs::test
