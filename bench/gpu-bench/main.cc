// gdfs-gpu-bench: throughput of the GPU batch page decoder (kernels/) on a real corpus, against the CPU
// decoder on all cores and, optionally, nvCOMP's batched GDeflate decoder on the same device pages.
// Usage: gdfs-gpu-bench --help. bench/run-gpu builds and runs it on the GPU machine.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>

#include "args.h"
#include "corpus.h"
#include "device_bench.h"
#include "nvcomp_api.h"
#include "parallel.h"
#include "report.h"

namespace gdfs::gpubench {
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
  }
  return "unknown cpu";
}

Row cpu_row(const Corpus& c, uint8_t* out, unsigned threads, unsigned reps) {
  const CpuTiming t = cpu_decode(c, out, threads, reps);
  Row row;
  row.section = "cpu";
  row.config = std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") + t.path;
  row.pages = c.pages.size();
  row.bytes = c.raw_bytes();
  row.ms = t.ms;
  row.checked = true;
  row.bad = t.failed > t.mismatched ? t.failed : t.mismatched;
  if (t.failed) row.note = std::to_string(t.failed) + " pages failed to decode";
  return row;
}

int run(int argc, char** argv) {
  Args a;
  bool help = false;
  std::string err;
  if (!parse_args(argc, argv, a, help, err)) {
    std::cerr << "gdfs-gpu-bench: " << err << "\n\n" << usage();
    return 2;
  }
  if (help) {
    std::cout << usage();
    return 0;
  }
  const unsigned threads = a.threads ? a.threads : default_threads();
  const bool text = a.json != "-";
  std::ostream& os = std::cout;

  Report rep;
  rep.date = utc_now();
  rep.host = host_name();
  rep.cpu = cpu_model();
  rep.cores = default_threads();
  rep.argv = a.argv;

  if (a.cpu_only) {
    rep.device.why = "not used (--cpu-only)";
  } else {
    rep.device = probe_device(a.device);
    if (!rep.device.present) {
      if (text) print_header(os, rep);
      std::cerr << "gdfs-gpu-bench: " << rep.device.why
                << "; nothing to measure on the GPU (--cpu-only runs the CPU baseline alone)\n";
      return 2;
    }
  }
  std::unique_ptr<nvcomp::Library> nv;
  if (!a.nvcomp.empty() && !a.cpu_only) {
    nv = std::make_unique<nvcomp::Library>();
    std::string why;
    if (!nv->open(a.nvcomp, why)) {
      std::cerr << "gdfs-gpu-bench: --nvcomp: " << why << "\n";
      return 2;
    }
    static const char* kBackend[] = {"default", "hardware", "cuda"};
    rep.nvcomp = "nvCOMP " + nv->version() + " (" + a.nvcomp + "), built with CUDA runtime " +
                 std::to_string(nv->props.cudart_version / 1000) + "." +
                 std::to_string(nv->props.cudart_version % 1000 / 10) + ", decompression backend " +
                 kBackend[a.nvcomp_backend];
  }

  std::cerr << "gdfs-gpu-bench: loading and coding the corpus on " << threads << " threads...\n";
  Corpus corpus;
  try {
    corpus = load_corpus(a, threads);
  } catch (const std::exception& e) {
    std::cerr << "gdfs-gpu-bench: " << e.what() << "\n";
    return 1;
  }
  rep.corpus = &corpus;
  if (text) {
    print_header(os, rep);
    os.flush();
  }
  auto section_done = [&](const char* key) {
    if (text) {
      print_section(os, rep, key);
      os.flush();
    }
  };

  if (a.cpu) {
    std::vector<uint8_t> out(corpus.out_bytes);
    rep.rows.push_back(cpu_row(corpus, out.data(), threads, a.reps));
    if (threads > 1) rep.rows.push_back(cpu_row(corpus, out.data(), 1, std::min(a.reps, 3u)));
    section_done("cpu");
  }

  if (!a.cpu_only) {
    std::unique_ptr<DeviceBench> dev;
    try {
      dev = std::make_unique<DeviceBench>(corpus, a, threads);
    } catch (const CudaError& e) {
      Row row;
      row.section = "kernel";
      row.config = "setup";
      row.error = e.what();
      rep.rows.push_back(row);
      section_done("kernel");
    }
    if (dev) {
      if (a.kernel) {
        dev->kernel_sweep(false, rep.rows);
        section_done("kernel");
      }
      if (nv) {
        if (dev->gdeflate_pages() == 0) rep.notes.push_back("no GDeflate page: nothing for nvCOMP to decode");
        dev->kernel_sweep(true, rep.rows);
        section_done("kernel-gdeflate");
        dev->nvcomp_sweep(*nv, rep.rows);
        section_done("nvcomp");
      }
      if (a.e2e_runs && !a.e2e.empty()) {
        dev->end_to_end(rep.rows, DeviceBench::Pass::kHostOut);
        section_done("e2e");
        dev->end_to_end(rep.rows, DeviceBench::Pass::kDeviceOut);
        section_done("e2e-device");
      }
      if (a.copies && !a.e2e.empty()) {
        dev->end_to_end(rep.rows, DeviceBench::Pass::kCopies);
        section_done("copies");
        dev->end_to_end(rep.rows, DeviceBench::Pass::kCopyIn);
        section_done("h2d");
      }
      if (a.batch_decoder) {
        dev->batch_decoder(rep.rows);
        section_done("batch-decoder");
      }
    }
  }

  bool ok = true;
  for (const Row& r : rep.rows) ok = ok && r.ok();
  if (text)
    os << "\n" << (ok ? "all checks passed" : "SOME CHECKS FAILED (see check and note columns)") << "\n";
  if (!a.json.empty()) {
    if (a.json == "-") {
      print_json(std::cout, rep);
    } else {
      std::ofstream f(a.json);
      print_json(f, rep);
      if (!f) {
        std::cerr << "gdfs-gpu-bench: cannot write " << a.json << "\n";
        return 1;
      }
    }
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace gdfs::gpubench

int main(int argc, char** argv) {
  try {
    return gdfs::gpubench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gdfs-gpu-bench: " << e.what() << "\n";
    return 1;
  }
}
