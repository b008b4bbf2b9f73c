// Results of gdfs-gpu-bench: rows of timed runs, printed as plain text tables or as JSON.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "corpus.h"

namespace gdfs::gpubench {

struct Row {
  std::string section;    // kernel, kernel-gdeflate, nvcomp, e2e, e2e-device, copies, h2d, batch-decoder, cpu
  std::string config;     // "batch 512", "4 streams x 2048 pages", "16 threads", ...
  uint64_t batch = 0;     // pages per launch (kernel-only runs)
  uint64_t launches = 0;  // launches (or nvCOMP calls) per pass; 0 where it does not apply
  uint64_t pages = 0, bytes = 0;  // decoded per pass
  std::vector<double> ms;         // wall or event time of each timed pass
  bool checked = false;           // output and statuses compared with the source
  uint64_t bad = 0;               // pages with a bad status or wrong bytes (checked runs)
  std::string note;
  std::string error;  // the run failed (CUDA or nvCOMP error); no timings
  double median_ms() const;
  double best_ms() const;
  bool ok() const { return error.empty() && (!checked || bad == 0); }
};

struct DeviceInfo {
  bool present = false;
  std::string why;  // why not present
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0, sms = 0;
  uint64_t global_mem = 0, l2 = 0, smem_per_sm = 0, smem_per_block_optin = 0;
  int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0;
  int driver = 0, runtime = 0;  // CUDA versions, 1000 * major + 10 * minor
  uint64_t smem_per_warp = 0;
  unsigned warps_per_block = 0;
};

struct Report {
  std::string date, host, cpu;
  unsigned cores = 0;
  std::vector<std::string> argv;
  const Corpus* corpus = nullptr;
  DeviceInfo device;
  std::string nvcomp;  // "nvCOMP 6.0.0 (libnvcomp.so.6), backend default" or empty
  std::vector<Row> rows;
  std::vector<std::string> notes;
};

void print_header(std::ostream& os, const Report& r);                           // machine, device, corpus
void print_rows(std::ostream& os, const Report& r);                             // the tables
void print_section(std::ostream& os, const Report& r, const std::string& key);  // one table
void print_json(std::ostream& os, const Report& r);

}  // namespace gdfs::gpubench
