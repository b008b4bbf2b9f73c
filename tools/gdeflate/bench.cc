#include "bench.h"

#include <libdeflate.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <memory>
#include <ostream>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>

#include "gdfs/gdeflate.h"
#include "io.h"
#include "nvcomp_cpu.h"

namespace gdfs::tools {
namespace {

namespace gd = gdfs::gdeflate;
using Bytes = std::span<const uint8_t>;

volatile size_t g_sink;  // timed results end up here so that no pass can be optimised away

struct Page {
  Bytes data;
  size_t file;
  size_t index;
};

struct Corpus {
  std::vector<std::string> names;
  std::vector<std::vector<uint8_t>> files;
  std::vector<Page> pages;
  uint64_t bytes = 0;
};

Corpus load(const std::vector<std::string>& paths, std::istream& in) {
  Corpus c;
  c.names = paths;
  for (const auto& p : paths) c.files.push_back(read_input(p, in));
  for (size_t f = 0; f < c.files.size(); ++f) {
    const Bytes all(c.files[f]);
    for (size_t off = 0; off < all.size(); off += gd::kMaxPageBytes)
      c.pages.push_back(
          {all.subspan(off, std::min(gd::kMaxPageBytes, all.size() - off)), f, off / gd::kMaxPageBytes});
    c.bytes += all.size();
  }
  if (c.pages.empty()) throw std::runtime_error("no data to benchmark: every input is empty");
  return c;
}

// One page codec under test; the same loop times ours and the baseline.
class Codec {
 public:
  virtual ~Codec() = default;
  virtual std::string name() const = 0;
  virtual size_t bound(size_t n) const = 0;
  virtual size_t compress(Bytes in, std::span<uint8_t> out) = 0;         // 0 on failure
  virtual const char* decompress(Bytes in, std::span<uint8_t> out) = 0;  // nullptr on success
};

class OurCodec : public Codec {
 public:
  OurCodec(int level, gd::DecodePath path) : compressor_(level), decompressor_(path) {}
  std::string name() const override { return "gdfs GDeflate"; }
  size_t bound(size_t n) const override { return gd::compress_bound(n); }
  size_t compress(Bytes in, std::span<uint8_t> out) override {
    return compressor_.compress(in.data(), in.size(), out.data(), out.size());
  }
  const char* decompress(Bytes in, std::span<uint8_t> out) override {
    const gd::Status s = decompressor_.decompress(in.data(), in.size(), out.data(), out.size());
    return s == gd::Status::kOk ? nullptr : gd::status_name(s);
  }

 private:
  gd::Compressor compressor_;
  gd::Decompressor decompressor_;
};

class LibdeflateCodec : public Codec {
 public:
  explicit LibdeflateCodec(libdeflate_compressor* c) : c_(c), d_(libdeflate_alloc_decompressor()) {
    if (!d_) throw std::bad_alloc();
  }
  std::string name() const override { return "libdeflate " LIBDEFLATE_VERSION_STRING " DEFLATE"; }
  size_t bound(size_t n) const override { return libdeflate_deflate_compress_bound(c_.get(), n); }
  size_t compress(Bytes in, std::span<uint8_t> out) override {
    return libdeflate_deflate_compress(c_.get(), in.data(), in.size(), out.data(), out.size());
  }
  const char* decompress(Bytes in, std::span<uint8_t> out) override {
    // A null actual-size pointer makes libdeflate require exactly out.size() bytes, as ours does.
    const auto r =
        libdeflate_deflate_decompress(d_.get(), in.data(), in.size(), out.data(), out.size(), nullptr);
    return r == LIBDEFLATE_SUCCESS ? nullptr : "libdeflate decompression failed";
  }

 private:
  struct Free {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
    void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
  };
  std::unique_ptr<libdeflate_compressor, Free> c_;
  std::unique_ptr<libdeflate_decompressor, Free> d_;
};

// nvCOMP's host GDeflate codec. A page it refuses to write (nvcompErrorCannotCompress: some nearly
// incompressible pages) is written by its own level 0 instead, as any user of it has to, and counted and
// timed that way; note() reports those pages and the ones larger than nvCOMP's own bound.
class NvcompCodec : public Codec {
 public:
  NvcompCodec(const nvcomp_cpu::HostGdeflate& nv, int level)
      : nv_(nv), level_(level), promise_(nv.max_output(gd::kMaxPageBytes)) {}
  std::string name() const override { return "nvCOMP CPU GDeflate"; }
  size_t bound(size_t) const override { return nv_.output_capacity(); }
  size_t compress(Bytes in, std::span<uint8_t> out) override {
    size_t n = nv_.compress(in, level_, out);
    if (n == 0) {
      refused_.insert(in.data());
      n = nv_.compress(in, 0, out);
    }
    if (n > promise_) over_promise_.insert(in.data());
    largest_ = std::max(largest_, n);
    return n;
  }
  const char* decompress(Bytes in, std::span<uint8_t> out) override {
    try {
      return nv_.decompress(in, out) == out.size() ? nullptr : "nvCOMP decoded another size";
    } catch (const std::exception&) {
      return "nvCOMP rejected the page";
    }
  }
  std::string note() const {
    return "nvCOMP level " + std::to_string(level_) + ": refused " + std::to_string(refused_.size()) +
           " page(s), written by its level 0 instead (counted and timed so); " +
           std::to_string(over_promise_.size()) + " page(s) over its own bound of " +
           std::to_string(promise_) + " bytes; largest page " + std::to_string(largest_) + " bytes";
  }

 private:
  const nvcomp_cpu::HostGdeflate& nv_;
  int level_;
  size_t promise_, largest_ = 0;
  std::set<const uint8_t*> refused_, over_promise_;  // pages, by their input: timing passes repeat them
};

struct Result {
  uint64_t compressed = 0;
  double compress_s = 0, decompress_s = 0;
  std::vector<std::vector<uint8_t>> pages;  // the compressed pages, in corpus order
};

// Best time of whole passes, repeated until their sum reaches min_seconds (at least one pass).
template <class Pass>
double best_pass(Pass pass, double min_seconds) {
  using Clock = std::chrono::steady_clock;
  double best = std::numeric_limits<double>::infinity(), total = 0;
  do {
    const auto t0 = Clock::now();
    pass();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  } while (total < min_seconds);
  return best;
}

std::string where(const Corpus& c, const Page& p) {
  return c.names[p.file] + " page " + std::to_string(p.index);
}

Result measure(Codec& codec, const Corpus& c, int level, double min_seconds) {
  std::vector<std::vector<uint8_t>> packed(c.pages.size());
  std::vector<uint8_t> scratch(codec.bound(gd::kMaxPageBytes)), plain(gd::kMaxPageBytes);
  Result r;
  for (size_t i = 0; i < c.pages.size(); ++i) {  // round trip first: never time a broken codec
    const Bytes page = c.pages[i].data;
    const size_t n = codec.compress(page, scratch);
    const auto fail = [&](const std::string& why) {
      throw std::runtime_error(where(c, c.pages[i]) + ": " + codec.name() + " level " +
                               std::to_string(level) + " round trip failed: " + why);
    };
    if (n == 0) fail("compression failed");
    packed[i].assign(scratch.begin(), scratch.begin() + n);
    r.compressed += n;
    if (const char* e = codec.decompress(packed[i], std::span(plain).first(page.size()))) fail(e);
    if (!std::equal(page.begin(), page.end(), plain.begin())) fail("decompressed data differs");
  }
  size_t sink = 0;
  r.compress_s = best_pass(
      [&] {
        for (const Page& p : c.pages) sink += codec.compress(p.data, scratch);
      },
      min_seconds);
  r.decompress_s = best_pass(
      [&] {
        for (size_t i = 0; i < c.pages.size(); ++i)
          if (codec.decompress(packed[i], std::span(plain).first(c.pages[i].data.size())))
            throw std::runtime_error(where(c, c.pages[i]) + ": decompression failed while timing");
        sink += plain[0];
      },
      min_seconds);
  g_sink = sink;
  r.pages = std::move(packed);
  return r;
}

// `decoder` must decode every page of another codec of the same format (GDeflate) exactly.
void cross_decode(Codec& decoder, const Result& other, const std::string& other_name, const Corpus& c) {
  std::vector<uint8_t> plain(gd::kMaxPageBytes);
  for (size_t i = 0; i < c.pages.size(); ++i) {
    const Bytes page = c.pages[i].data;
    const char* e = decoder.decompress(other.pages[i], std::span(plain).first(page.size()));
    if (!e && !std::equal(page.begin(), page.end(), plain.begin())) e = "decompressed data differs";
    if (e)
      throw std::runtime_error(where(c, c.pages[i]) + ": " + decoder.name() + " cannot decode the page of " +
                               other_name + ": " + e);
  }
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

void print_row(std::ostream& out, const std::string& codec, int level, double ratio, double cmb, double dmb,
               int decimals) {
  out << "| " << codec << " | " << level << " | " << fixed(ratio, 3) << " | " << fixed(cmb, decimals) << " | "
      << fixed(dmb, decimals) << " |\n";
}

double ratio(const Corpus& c, const Result& r) {
  return static_cast<double>(c.bytes) / static_cast<double>(r.compressed);
}

void bench_libdeflate(const Corpus& c, int level, double min_seconds, const Result& ours, std::ostream& out) {
  const double mb = static_cast<double>(c.bytes) / 1e6;
  libdeflate_compressor* raw = libdeflate_alloc_compressor(level);
  if (!raw) {
    out << "| libdeflate " LIBDEFLATE_VERSION_STRING " | " << level << " | level not supported | | |\n";
    return;
  }
  LibdeflateCodec base(raw);
  const Result b = measure(base, c, level, min_seconds);
  print_row(out, base.name(), level, ratio(c, b), mb / b.compress_s, mb / b.decompress_s, 1);
  print_row(out, "ours / libdeflate", level, ratio(c, ours) / ratio(c, b), b.compress_s / ours.compress_s,
            b.decompress_s / ours.decompress_s, 3);
}

// nvCOMP's row, once every page of each codec has been decoded by the other: the same format, so the
// pages must be interchangeable. Returns the codec's note.
std::string bench_nvcomp(const Corpus& c, int level, double min_seconds, const nvcomp_cpu::HostGdeflate& nv,
                         OurCodec& our_codec, const Result& ours, std::ostream& out) {
  const double mb = static_cast<double>(c.bytes) / 1e6;
  NvcompCodec codec(nv, level);
  const Result n = measure(codec, c, level, min_seconds);
  cross_decode(our_codec, n, codec.name(), c);
  cross_decode(codec, ours, our_codec.name(), c);
  print_row(out, codec.name(), level, ratio(c, n), mb / n.compress_s, mb / n.decompress_s, 1);
  print_row(out, "ours / nvCOMP", level, ratio(c, ours) / ratio(c, n), n.compress_s / ours.compress_s,
            n.decompress_s / ours.decompress_s, 3);
  return codec.note();
}

// One level: ours, libdeflate, and nvCOMP when loaded (`nv`); nvCOMP's note goes to `notes`.
void bench_level(const Corpus& c, int level, const BenchOptions& o, const nvcomp_cpu::HostGdeflate* nv,
                 std::vector<std::string>& notes, std::ostream& out) {
  const double mb = static_cast<double>(c.bytes) / 1e6;
  OurCodec ours(level, o.decoder);
  const Result a = measure(ours, c, level, o.min_seconds);
  print_row(out, ours.name(), level, ratio(c, a), mb / a.compress_s, mb / a.decompress_s, 1);
  out.flush();
  bench_libdeflate(c, level, o.min_seconds, a, out);
  out.flush();
  if (nv && level <= nvcomp_cpu::kMaxLevel)
    notes.push_back(bench_nvcomp(c, level, o.min_seconds, *nv, ours, a, out));
  out.flush();
}

// The page decoder our Decompressor runs on this CPU, since it changes the decompression speed.
const char* decoder_name(gd::DecodePath want) {
  switch (gd::Decompressor(want).path()) {
    case gd::DecodePath::kScalar:
      return "scalar";
    case gd::DecodePath::kAvx2:
      return "AVX2";
    case gd::DecodePath::kAvx512:
      return "AVX-512";
    case gd::DecodePath::kAuto:
      break;
  }
  return "auto";
}

}  // namespace

std::optional<std::vector<int>> parse_levels(const std::string& text) {
  std::vector<int> levels;
  if (text == "all") {
    for (int l = gd::kMinLevel; l <= gd::kMaxLevel; ++l) levels.push_back(l);
    return levels;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty() || item.size() > 2 ||
        !std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      return std::nullopt;
    const int l = std::stoi(item);
    if (l < gd::kMinLevel || l > gd::kMaxLevel) return std::nullopt;
    levels.push_back(l);
  }
  if (levels.empty() || text.back() == ',') return std::nullopt;
  return levels;
}

void run_bench(const BenchOptions& options, std::istream& in, std::ostream& out) {
  const Corpus c = load(options.files, in);
  std::unique_ptr<nvcomp_cpu::HostGdeflate> nv;  // loaded before any output: a bad path prints nothing
  if (!options.nvcomp_cpu.empty()) nv = nvcomp_cpu::HostGdeflate::open(options.nvcomp_cpu);
  out << "gdeflate bench: " << c.files.size() << " file(s), " << c.bytes << " bytes in " << c.pages.size()
      << " pages of up to 64 KiB\n"
      << "machine: " << cpu_model() << "\n"
      << "date: " << utc_now() << "\n"
      << "method: single thread; every page round-trips before timing; each time is the best of passes\n"
      << "        totalling >= " << fixed(options.min_seconds, 2) << " s; MB/s = 10^6 uncompressed bytes/s\n"
      << "gdfs decoder: " << decoder_name(options.decoder) << "\n"
      << "baseline: stock libdeflate " LIBDEFLATE_VERSION_STRING " raw DEFLATE on the same pages\n"
      << "ours / libdeflate: ratio, then speed ratios (> 1 means ours is faster)\n";
  if (nv)
    out << "nvCOMP: the host GDeflate codec of " << nv->path() << " on the same pages, one call per page;\n"
        << "        every page of each GDeflate codec is decoded by the other before timing\n";
  out << "\n| codec | level | ratio | compress MB/s | decompress MB/s |\n"
      << "| --- | ---: | ---: | ---: | ---: |\n";
  std::vector<std::string> notes;
  for (int level : options.levels) bench_level(c, level, options, nv.get(), notes, out);
  if (!notes.empty()) out << "\n";
  for (const std::string& n : notes) out << n << "\n";
}

}  // namespace gdfs::tools
