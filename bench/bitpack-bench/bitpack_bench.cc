// gdfs-bitpack-bench: ratio and decode speed of the bitpack codec against GDeflate on the same pages.
//
//   gdfs-bitpack-bench [-l LEVEL] [--page-size BYTES] LABEL=FILE[,FILE...] ...
//
// Each data set is cut into pages the way mkfs.gdfs cuts files (from each file's start, the last page
// partial). Per set it reports, for gdeflate-only (GDeflate or stored, the mkfs default), bitpack-only
// (mkfs's best bitpack guess or stored) and auto (the smallest of the three, as `--codec auto`): stored
// bytes and ratio, and single-thread decode MB/s of decoded bytes (best of several timed passes, every
// page checked against its source before timing). It also times the encoders: the cost of auto is the
// GDeflate encode plus the bitpack size estimate of mkfs's candidates.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdfs/bitpack.h"
#include "gdfs/format.h"
#include "gdfs/gdeflate.h"
#include "gdfs/page.h"
#include "gdfs/page_encode.h"

namespace {

namespace bp = gdfs::bitpack;
namespace gd = gdfs::gdeflate;
using gdfs::page::CodecChoice;
using gdfs::page::Encoded;
using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

volatile size_t g_sink;  // timed results end up here so that no pass can be optimised away

struct Set {
  std::string label;
  std::vector<Bytes> pages;
  uint64_t bytes = 0;
};

Bytes slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

Set load_set(const std::string& arg, size_t page) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos) throw std::runtime_error("expected LABEL=FILE[,FILE...]: " + arg);
  Set s{arg.substr(0, eq), {}, 0};
  size_t from = eq + 1;
  while (from <= arg.size()) {
    const size_t comma = std::min(arg.find(',', from), arg.size());
    const Bytes file = slurp(arg.substr(from, comma - from));
    for (size_t off = 0; off < file.size(); off += page)
      s.pages.emplace_back(file.begin() + off, file.begin() + std::min(file.size(), off + page));
    s.bytes += file.size();
    from = comma + 1;
  }
  return s;
}

// One way of coding a set: every page's encoding, and the encode time.
struct Coded {
  std::vector<Encoded> pages;
  uint64_t stored = 0, bitpack_pages = 0;
  double encode_s = 0;
};

Coded code_set(const Set& s, CodecChoice choice, gd::Compressor& comp) {
  Coded c;
  c.pages.resize(s.pages.size());
  const auto t0 = Clock::now();
  for (size_t i = 0; i < s.pages.size(); ++i) gdfs::page::encode_page(s.pages[i], choice, comp, c.pages[i]);
  c.encode_s = std::chrono::duration<double>(Clock::now() - t0).count();
  for (size_t i = 0; i < s.pages.size(); ++i) {
    const Encoded& e = c.pages[i];
    c.stored += e.codec == gdfs::format::kCodecStored ? s.pages[i].size() : e.bytes.size();
    c.bitpack_pages += e.codec == gdfs::format::kCodecBitpack;
  }
  return c;
}

// Decodes one page as the reader would (the page layer, on bitpack path `path`); false on any error.
bool decode_page(const Encoded& e, const Bytes& raw, gdfs::PageDecoder& dec, uint8_t* out) {
  const bool stored = e.codec == gdfs::format::kCodecStored;  // its stored bytes are the raw ones
  const Bytes& in = stored ? raw : e.bytes;
  return dec.decode_codec(e.codec, e.param, in.data(), in.size(), out, raw.size()) == gdfs::PageStatus::kOk;
}

// Single-thread decode speed in MB/s of decoded bytes: the best of 7 passes, each at least ~50 ms.
double decode_mb_s(const Set& s, const Coded& c, bp::DecodePath path) {
  gdfs::PageDecoder dec(gd::DecodePath::kAuto, path);
  Bytes out(gd::kMaxPageBytes);
  for (size_t i = 0; i < s.pages.size(); ++i) {  // verify before timing
    if (!decode_page(c.pages[i], s.pages[i], dec, out.data()) ||
        std::memcmp(out.data(), s.pages[i].data(), s.pages[i].size()) != 0)
      throw std::runtime_error(s.label + ": page " + std::to_string(i) + " does not round-trip");
  }
  size_t reps = 1;
  double best = 1e30;
  for (int pass = 0; pass < 7; ++pass) {
    const auto t0 = Clock::now();
    for (size_t r = 0; r < reps; ++r)
      for (size_t i = 0; i < s.pages.size(); ++i)
        g_sink = decode_page(c.pages[i], s.pages[i], dec, out.data());
    const double t = std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(reps);
    best = std::min(best, t);
    if (t * static_cast<double>(reps) < 0.05) reps *= 2, --pass;  // too short to time: redo with more
  }
  return static_cast<double>(s.bytes) / best / 1e6;
}

// The auto overhead over gdeflate-only: the bitpack size estimate of every candidate on every page.
double estimate_s(const Set& s) {
  const auto t0 = Clock::now();
  for (const Bytes& p : s.pages) g_sink = gdfs::page::best_bitpack(p.data(), p.size()).size;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void report(const Set& s, int level) {
  gd::Compressor comp(level);
  const Coded g = code_set(s, CodecChoice::kGDeflate, comp);
  const Coded b = code_set(s, CodecChoice::kBitpack, comp);
  const Coded a = code_set(s, CodecChoice::kAuto, comp);
  const double mb = static_cast<double>(s.bytes) / 1e6;
  // Decode MB/s on each bitpack path (avx512, avx2, portable); a path the CPU lacks prints "-". GDeflate
  // pages decode the same way whatever the bitpack path (with the best GDeflate decoder): timed once.
  const double gd_dec = decode_mb_s(s, g, bp::DecodePath::kAuto);
  auto row = [&](const char* name, const Coded& c, bool by_path) {
    std::printf("%-14s %-9s %6zu %10llu %10llu %7.3f %8llu", s.label.c_str(), name, s.pages.size(),
                static_cast<unsigned long long>(s.bytes), static_cast<unsigned long long>(c.stored),
                static_cast<double>(s.bytes) / static_cast<double>(c.stored),
                static_cast<unsigned long long>(c.bitpack_pages));
    for (bp::DecodePath path : {bp::DecodePath::kAvx512, bp::DecodePath::kAvx2, bp::DecodePath::kPortable}) {
      if (bp::decode_path(path) != path) {
        std::printf(" %10s", "-");
      } else {
        std::printf(" %10.0f", by_path ? decode_mb_s(s, c, path) : gd_dec);
      }
    }
    std::printf(" %9.1f\n", mb / c.encode_s);
  };
  row("gdeflate", g, false);
  row("bitpack", b, true);
  row("auto", a, true);
  std::printf(
      "%-14s estimate  bitpack size search (%zu candidates, interleave probe, refinements): %.1f MB/s "
      "(%.1f%% of the gdeflate encode time)\n",
      s.label.c_str(), gdfs::page::bitpack_candidates().size(), mb / estimate_s(s),
      100 * estimate_s(s) / g.encode_s);
}

}  // namespace

int main(int argc, char** argv) {
  int level = 7;
  size_t page = 65536;
  std::vector<std::string> sets;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-l" && i + 1 < argc) {
      level = std::stoi(argv[++i]);
    } else if (a == "--page-size" && i + 1 < argc) {
      page = std::stoul(argv[++i]);
    } else {
      sets.push_back(a);
    }
  }
  if (sets.empty() || page == 0 || page > gd::kMaxPageBytes) {
    std::fprintf(stderr,
                 "usage: gdfs-bitpack-bench [-l LEVEL] [--page-size BYTES] LABEL=FILE[,FILE...] ...\n");
    return 2;
  }
  try {
    std::printf(
        "GDeflate level %d, %zu-byte pages; decode MB/s of decoded bytes, one thread, per bitpack decode "
        "path (the GDeflate row: its own best decoder)\n",
        level, page);
    std::printf("%-14s %-9s %6s %10s %10s %7s %8s %10s %10s %10s %9s\n", "set", "codec", "pages", "bytes",
                "stored", "ratio", "bitpack", "avx512", "avx2", "portable", "enc MB/s");
    for (const std::string& arg : sets) report(load_set(arg, page), level);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdfs-bitpack-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
