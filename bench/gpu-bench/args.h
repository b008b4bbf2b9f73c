// Command line of gdfs-gpu-bench, parsed by hand: the GPU machine that runs it has no CLI11.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gdfs/page_encode.h"

namespace gdfs::gpubench {

// One end-to-end configuration: the batch is cut into chunks of `chunk` pages (0: one chunk of all
// pages), chunk k on stream k mod `streams`.
struct E2eConfig {
  unsigned streams = 1;
  uint32_t chunk = 0;
};

struct Args {
  std::vector<std::string> paths;  // files and directories, in order
  std::string name;                // corpus label; default: the first path's last component
  uint64_t max_bytes = 0;          // 0: no limit
  int level = 6;
  page::CodecChoice codec = page::CodecChoice::kGDeflate;
  std::vector<page::CodecRule> codec_rules;

  std::vector<uint32_t> batches;  // 0 means "all pages"
  uint32_t max_launches = 2000;
  // Kernel-only and nvCOMP runs: the pages in corpus order, or the largest stored page first (a long
  // page started last is the launch's tail; both decoders get the same order).
  bool largest_first = false;
  std::vector<E2eConfig> e2e;
  unsigned reps = 5;
  unsigned threads = 0;  // CPU baseline and host work; 0: all cores
  int device = 0;
  std::string nvcomp;      // path of libnvcomp.so.N; empty: no nvCOMP run
  int nvcomp_backend = 0;  // nvcompDecompressBackend_t: 0 default, 1 hardware, 2 CUDA
  bool cpu_only = false;
  // Which runs to do (--skip): kernel-only over all pages, end to end, copies only, BatchDecoder, CPU.
  bool kernel = true, e2e_runs = true, copies = true, batch_decoder = true, cpu = true;
  std::string json;               // path, "-" for stdout (then no table), empty for none
  std::vector<std::string> argv;  // the whole command line, for the report
};

// Fills `a` from argv. Returns false with `err` set on a usage error; sets `help` for -h/--help.
bool parse_args(int argc, char** argv, Args& a, bool& help, std::string& err);
const char* usage();

}  // namespace gdfs::gpubench
