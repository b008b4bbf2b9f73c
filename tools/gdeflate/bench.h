// `gdeflate bench`: our page codec against stock libdeflate raw DEFLATE on the same 64 KiB pages, and
// against NVIDIA's host GDeflate codec (nvCOMP's libnvcomp_cpu.so.6) when it is given.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "gdfs/gdeflate.h"

namespace gdfs::tools {

struct BenchOptions {
  std::vector<int> levels;         // each 0..12
  std::vector<std::string> files;  // "-" is the input stream
  double min_seconds = 1.0;        // each timing repeats whole passes until this much time has passed
  unsigned paired_rounds = 0;      // > 0: codecs take turns page by page this many rounds instead
  gdeflate::DecodePath decoder = gdeflate::DecodePath::kAuto;
  std::string nvcomp_cpu;   // path of libnvcomp_cpu.so.6; empty: no nvCOMP rows
  bool x86_filter = false;  // add rows for ours after the x86 branch filter, on every page
};

// Parses "6", "1,6,9,12" or "all"; nullopt when malformed or out of 0..12.
std::optional<std::vector<int>> parse_levels(const std::string& text);

// Verifies every page's round trip before timing. Throws on I/O errors and on a failed round trip.
void run_bench(const BenchOptions& options, std::istream& in, std::ostream& out);

}  // namespace gdfs::tools
