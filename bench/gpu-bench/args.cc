#include "args.h"

#include <charconv>
#include <fstream>
#include <iostream>

namespace gdfs::gpubench {
namespace {

const char kUsage[] =
    R"(usage: gdfs-gpu-bench [options] PATH...
GPU batch page decoding throughput on a corpus: every file under PATH (files and directories, regular
files only, in byte order of their paths) is cut into 64 KiB pages and coded as mkfs.gdfs codes them.
corpus:
  --name NAME            label of the corpus (default: the last component of the first PATH)
  --files-from FILE      more PATHs, one per line ('-': standard input)
  --max-bytes N          add no more files once the corpus holds N bytes (suffix K, M, G: powers of 2)
  -l, --level N          GDeflate level 0..12 (default 6)
  --codec C              gdeflate, bitpack or auto, as mkfs.gdfs --codec (default gdeflate)
  --codec-for GLOB=C     as mkfs.gdfs --codec-for; repeatable
runs:
  --batches LIST         kernel-only batch sizes in pages, 'all' for all pages
                         (default 1,8,64,512,4096,32768,all)
  --max-launches N       at most N launches per timed pass of the kernel-only runs (default 2000)
  --order O              page order of the kernel-only and nvCOMP runs: given (corpus order, default) or
                         largest-first (by stored size, the same order for both decoders)
  --e2e LIST             end-to-end configurations STREAMSxCHUNK, CHUNK in pages or 'all'
                         (default 1xall,2x4096,4x2048,4x512)
  --reps N               timed repetitions of each run, after one warm-up (default 5)
  --threads N            CPU threads for the CPU baseline (default: all cores)
  --device N             CUDA device (default 0)
  --nvcomp LIB           dlopen nvCOMP 6 (libnvcomp.so.6) and run its batched GDeflate decoder on the
                         GDeflate pages, beside ours on the same pages
  --nvcomp-backend B     default, cuda or hardware (default: default)
  --cpu-only             load and code the corpus and run the CPU baseline only; no CUDA call
  --skip LIST            runs to leave out: kernel (all pages), e2e (with e2e-device), copies (with
                         h2d), batch-decoder, cpu
  --no-cpu               the same as --skip cpu
  --json FILE            also write the results as JSON to FILE ('-': to stdout, instead of the tables)
  -h, --help
Every run checks its output: every page's status and bytes against the source.
exit status: 0 all checks passed; 1 a check failed, or a CUDA or nvCOMP error; 2 usage error, or no
CUDA device (without --cpu-only)
)";

bool parse_u64(std::string_view s, uint64_t& v, bool suffix = false) {
  uint64_t mul = 1;
  if (suffix && !s.empty()) {
    switch (s.back()) {
      case 'K':
      case 'k':
        mul = uint64_t{1} << 10;
        break;
      case 'M':
      case 'm':
        mul = uint64_t{1} << 20;
        break;
      case 'G':
      case 'g':
        mul = uint64_t{1} << 30;
        break;
      default:
        break;
    }
    if (mul != 1) s.remove_suffix(1);
  }
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  if (v > UINT64_MAX / mul) return false;
  v *= mul;
  return true;
}

bool parse_u32(std::string_view s, uint32_t& v, uint32_t lo, uint32_t hi) {
  uint64_t x = 0;
  if (!parse_u64(s, x) || x < lo || x > hi) return false;
  v = static_cast<uint32_t>(x);
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (true) {
    const size_t at = s.find(sep, from);
    out.push_back(s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return out;
    from = at + 1;
  }
}

bool read_list(const std::string& file, std::vector<std::string>& paths, std::string& err) {
  std::ifstream f;
  std::istream* in = &std::cin;
  if (file != "-") {
    f.open(file);
    if (!f) {
      err = "cannot read " + file;
      return false;
    }
    in = &f;
  }
  for (std::string line; std::getline(*in, line);)
    if (!line.empty()) paths.push_back(line);
  return true;
}

}  // namespace

const char* usage() {
  return kUsage;
}

bool parse_args(int argc, char** argv, Args& a, bool& help, std::string& err) {
  help = false;
  a.argv.assign(argv, argv + argc);
  bool batches_set = false, e2e_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string opt = arg, val;
    bool has_val = false;
    if (arg.rfind("--", 0) == 0) {
      if (const size_t eq = arg.find('='); eq != std::string::npos) {
        opt = arg.substr(0, eq);
        val = arg.substr(eq + 1);
        has_val = true;
      }
    }
    // Takes the option's value, from "--opt=v" or the next argument.
    auto value = [&](std::string& out) {
      if (has_val) {
        out = val;
        return true;
      }
      if (i + 1 >= argc) {
        err = opt + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    auto bad = [&](const std::string& v) {
      err = "bad value for " + opt + ": '" + v + "'";
      return false;
    };
    std::string v;
    uint64_t n = 0;
    if (opt == "-h" || opt == "--help") {
      help = true;
      return true;
    } else if (opt == "--name") {
      if (!value(a.name)) return false;
    } else if (opt == "--files-from") {
      if (!value(v) || !read_list(v, a.paths, err)) return false;
    } else if (opt == "--max-bytes") {
      if (!value(v)) return false;
      if (!parse_u64(v, a.max_bytes, true)) return bad(v);
    } else if (opt == "-l" || opt == "--level") {
      if (!value(v)) return false;
      if (!parse_u64(v, n) || n > 12) return bad(v);
      a.level = static_cast<int>(n);
    } else if (opt == "--codec") {
      if (!value(v)) return false;
      const auto c = page::parse_codec(v);
      if (!c) return bad(v);
      a.codec = *c;
    } else if (opt == "--codec-for") {
      if (!value(v)) return false;
      const size_t eq = v.rfind('=');
      if (eq == std::string::npos || eq == 0) return bad(v);
      const auto c = page::parse_codec(std::string_view(v).substr(eq + 1));
      if (!c) return bad(v);
      a.codec_rules.push_back({v.substr(0, eq), *c});
    } else if (opt == "--order") {
      if (!value(v)) return false;
      if (v != "given" && v != "largest-first") return bad(v);
      a.largest_first = v == "largest-first";
    } else if (opt == "--batches") {
      if (!value(v)) return false;
      batches_set = true;
      a.batches.clear();
      for (std::string_view s : split(v, ',')) {
        uint32_t b = 0;
        if (s == "all") {
          a.batches.push_back(0);
        } else if (parse_u32(s, b, 1, UINT32_MAX)) {
          a.batches.push_back(b);
        } else {
          return bad(v);
        }
      }
    } else if (opt == "--max-launches") {
      if (!value(v)) return false;
      if (!parse_u32(v, a.max_launches, 1, UINT32_MAX)) return bad(v);
    } else if (opt == "--e2e") {
      if (!value(v)) return false;
      e2e_set = true;
      a.e2e.clear();
      for (std::string_view s : split(v, ',')) {
        const size_t x = s.find('x');
        E2eConfig c;
        uint32_t streams = 0;
        if (x == std::string_view::npos || !parse_u32(s.substr(0, x), streams, 1, 16)) return bad(v);
        c.streams = streams;
        const std::string_view chunk = s.substr(x + 1);
        if (chunk == "all") {
          c.chunk = 0;
        } else if (!parse_u32(chunk, c.chunk, 1, UINT32_MAX)) {
          return bad(v);
        }
        a.e2e.push_back(c);
      }
    } else if (opt == "--reps") {
      if (!value(v)) return false;
      uint32_t r = 0;
      if (!parse_u32(v, r, 1, 1000)) return bad(v);
      a.reps = r;
    } else if (opt == "--threads") {
      if (!value(v)) return false;
      uint32_t t = 0;
      if (!parse_u32(v, t, 1, 4096)) return bad(v);
      a.threads = t;
    } else if (opt == "--device") {
      if (!value(v)) return false;
      uint32_t d = 0;
      if (!parse_u32(v, d, 0, 1024)) return bad(v);
      a.device = static_cast<int>(d);
    } else if (opt == "--nvcomp") {
      if (!value(a.nvcomp)) return false;
      if (a.nvcomp.empty()) return bad(a.nvcomp);
    } else if (opt == "--nvcomp-backend") {
      if (!value(v)) return false;
      if (v == "default") {
        a.nvcomp_backend = 0;
      } else if (v == "hardware") {
        a.nvcomp_backend = 1;
      } else if (v == "cuda") {
        a.nvcomp_backend = 2;
      } else {
        return bad(v);
      }
    } else if (opt == "--cpu-only") {
      a.cpu_only = true;
    } else if (opt == "--no-cpu") {
      a.cpu = false;
    } else if (opt == "--skip") {
      if (!value(v)) return false;
      for (std::string_view s : split(v, ',')) {
        if (s == "kernel") {
          a.kernel = false;
        } else if (s == "e2e") {
          a.e2e_runs = false;
        } else if (s == "copies") {
          a.copies = false;
        } else if (s == "batch-decoder") {
          a.batch_decoder = false;
        } else if (s == "cpu") {
          a.cpu = false;
        } else if (!s.empty()) {
          return bad(v);
        }
      }
    } else if (opt == "--json") {
      if (!value(a.json)) return false;
      if (a.json.empty()) return bad(a.json);
    } else if (opt == "--") {
      for (++i; i < argc; ++i) a.paths.push_back(argv[i]);
    } else if (!arg.empty() && arg[0] == '-' && arg != "-") {
      err = "unknown option " + arg;
      return false;
    } else {
      a.paths.push_back(arg);
    }
    if (has_val && (opt == "--cpu-only" || opt == "--no-cpu")) {
      err = opt + " takes no value";
      return false;
    }
  }
  if (!batches_set) a.batches = {1, 8, 64, 512, 4096, 32768, 0};
  if (!e2e_set) a.e2e = {{1, 0}, {2, 4096}, {4, 2048}, {4, 512}};
  if (a.paths.empty()) {
    err = "no corpus: give at least one PATH";
    return false;
  }
  if (a.cpu_only && !a.cpu) {
    err = "--cpu-only and --no-cpu leave nothing to run";
    return false;
  }
  if (a.name.empty()) {
    std::string p = a.paths.front();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    const size_t slash = p.rfind('/');
    a.name = slash == std::string::npos || p.size() == 1 ? p : p.substr(slash + 1);
  }
  return true;
}

}  // namespace gdfs::gpubench
