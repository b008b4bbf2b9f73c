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
#include "gdfs/x86_filter.h"
#include "io.h"
#include "nvcomp_cpu.h"
#include "text.h"

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
    const PageStatus s = decompressor_.decompress(in.data(), in.size(), out.data(), out.size());
    return s == PageStatus::kOk ? nullptr : page_status_message(s);
  }

 private:
  gd::Compressor compressor_;
  gd::Decompressor decompressor_;
};

// Ours after the x86 branch filter, on every page (mkfs filters only pages that look like code): what
// the filter saves on machine code, and what its inverse costs a decode.
class X86Codec : public Codec {
 public:
  X86Codec(int level, gd::DecodePath path) : compressor_(level), decompressor_(path) {}
  std::string name() const override { return "gdfs GDeflate, x86 filter"; }
  size_t bound(size_t n) const override { return gd::compress_bound(n); }
  size_t compress(Bytes in, std::span<uint8_t> out) override {
    filtered_.assign(in.begin(), in.end());
    x86::encode(filtered_.data(), filtered_.size());
    return compressor_.compress(filtered_.data(), filtered_.size(), out.data(), out.size());
  }
  const char* decompress(Bytes in, std::span<uint8_t> out) override {
    const PageStatus s = decompressor_.decompress(in.data(), in.size(), out.data(), out.size());
    if (s != PageStatus::kOk) return page_status_message(s);
    x86::decode(out.data(), out.size());
    return nullptr;
  }

 private:
  gd::Compressor compressor_;
  gd::Decompressor decompressor_;
  std::vector<uint8_t> filtered_;
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

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Best time of whole passes, repeated until their sum reaches min_seconds (at least one pass).
template <class Pass>
double best_pass(Pass pass, double min_seconds) {
  double best = std::numeric_limits<double>::infinity(), total = 0;
  do {
    const auto t0 = Clock::now();
    pass();
    const double s = seconds_since(t0);
    best = std::min(best, s);
    total += s;
  } while (total < min_seconds);
  return best;
}

std::string where(const Corpus& c, const Page& p) {
  return c.names[p.file] + " page " + std::to_string(p.index);
}

// Compresses and decompresses every page once, checking the round trip: never time a broken codec.
Result round_trip(Codec& codec, const Corpus& c, int level) {
  std::vector<uint8_t> scratch(codec.bound(gd::kMaxPageBytes)), plain(gd::kMaxPageBytes);
  Result r;
  r.pages.resize(c.pages.size());
  for (size_t i = 0; i < c.pages.size(); ++i) {
    const Bytes page = c.pages[i].data;
    const size_t n = codec.compress(page, scratch);
    const auto fail = [&](const std::string& why) {
      throw std::runtime_error(where(c, c.pages[i]) + ": " + codec.name() + " level " +
                               std::to_string(level) + " round trip failed: " + why);
    };
    if (n == 0) fail("compression failed");
    r.pages[i].assign(scratch.begin(), scratch.begin() + n);
    r.compressed += n;
    if (const char* e = codec.decompress(r.pages[i], std::span(plain).first(page.size()))) fail(e);
    if (!std::equal(page.begin(), page.end(), plain.begin())) fail("decompressed data differs");
  }
  return r;
}

// One codec's page calls, each a timed unit; `sink` keeps their results observable.
struct PageCalls {
  Codec& codec;
  const Corpus& c;
  const Result& r;
  std::vector<uint8_t> scratch, plain;
  size_t sink = 0;

  PageCalls(Codec& k, const Corpus& corpus, const Result& res)
      : codec(k), c(corpus), r(res), scratch(k.bound(gd::kMaxPageBytes)), plain(gd::kMaxPageBytes) {}
  void compress(size_t i) { sink += codec.compress(c.pages[i].data, scratch); }
  void decompress(size_t i) {
    if (codec.decompress(r.pages[i], std::span(plain).first(c.pages[i].data.size())))
      throw std::runtime_error(where(c, c.pages[i]) + ": decompression failed while timing");
    sink += plain[0];
  }
};

// Each codec alone, whole passes over the corpus (best_pass).
void time_by_passes(std::span<PageCalls> calls, std::span<Result> results, double min_seconds) {
  for (size_t k = 0; k < calls.size(); ++k) {
    PageCalls& pc = calls[k];
    const size_t n = pc.c.pages.size();
    results[k].compress_s = best_pass(
        [&] {
          for (size_t i = 0; i < n; ++i) pc.compress(i);
        },
        min_seconds);
    results[k].decompress_s = best_pass(
        [&] {
          for (size_t i = 0; i < n; ++i) pc.decompress(i);
        },
        min_seconds);
    g_sink = pc.sink;
  }
}

// The codecs take turns page by page, `rounds` times over the corpus, and each page's time is its
// fastest round: a slow spell of a shared machine (seconds long) then falls on every codec's calls
// alike, instead of on whichever codec's pass it happened to overlap. Their ratio is what is reported.
void time_paired(std::span<PageCalls> calls, std::span<Result> results, unsigned rounds) {
  const size_t n = calls[0].c.pages.size(), m = calls.size();
  std::vector<double> best_c(n * m, std::numeric_limits<double>::infinity()), best_d(best_c);
  for (unsigned round = 0; round < rounds; ++round)
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < m; ++k) {
        auto t0 = Clock::now();
        calls[k].compress(i);
        best_c[i * m + k] = std::min(best_c[i * m + k], seconds_since(t0));
        t0 = Clock::now();
        calls[k].decompress(i);
        best_d[i * m + k] = std::min(best_d[i * m + k], seconds_since(t0));
      }
  for (size_t k = 0; k < m; ++k) {
    results[k].compress_s = results[k].decompress_s = 0;
    for (size_t i = 0; i < n; ++i) {
      results[k].compress_s += best_c[i * m + k];
      results[k].decompress_s += best_d[i * m + k];
    }
    g_sink = calls[k].sink;
  }
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
  out << "| " << codec << " | " << level << " | " << text::fixed(ratio, 3) << " | "
      << text::fixed(cmb, decimals) << " | " << text::fixed(dmb, decimals) << " |\n";
}

double ratio(const Corpus& c, const Result& r) {
  return static_cast<double>(c.bytes) / static_cast<double>(r.compressed);
}

// One level: ours, libdeflate, and nvCOMP when loaded (`nv`), each round-tripped on every page, then
// timed by passes or paired (BenchOptions::paired_rounds); nvCOMP's note goes to `notes`. nvCOMP's pages
// and ours must be interchangeable (the same format): each codec decodes every page of the other.
void bench_level(const Corpus& c, int level, const BenchOptions& o, const nvcomp_cpu::HostGdeflate* nv,
                 std::vector<std::string>& notes, std::ostream& out) {
  const double mb = static_cast<double>(c.bytes) / 1e6;
  OurCodec ours(level, o.decoder);
  std::vector<Codec*> codecs{&ours};
  std::unique_ptr<LibdeflateCodec> base;
  if (libdeflate_compressor* raw = libdeflate_alloc_compressor(level)) {
    base = std::make_unique<LibdeflateCodec>(raw);
    codecs.push_back(base.get());
  }
  std::unique_ptr<NvcompCodec> nvc;
  if (nv && level <= nvcomp_cpu::kMaxLevel) {
    nvc = std::make_unique<NvcompCodec>(*nv, level);
    codecs.push_back(nvc.get());
  }
  std::unique_ptr<X86Codec> x86c;
  if (o.x86_filter) {
    x86c = std::make_unique<X86Codec>(level, o.decoder);
    codecs.push_back(x86c.get());
  }
  std::vector<Result> results;
  for (Codec* k : codecs) results.push_back(round_trip(*k, c, level));
  if (nvc) {
    cross_decode(ours, results.back(), nvc->name(), c);
    cross_decode(*nvc, results[0], ours.name(), c);
  }
  std::vector<PageCalls> calls;
  for (size_t k = 0; k < codecs.size(); ++k) calls.emplace_back(*codecs[k], c, results[k]);
  if (o.paired_rounds > 0)
    time_paired(calls, results, o.paired_rounds);
  else
    time_by_passes(calls, results, o.min_seconds);

  const Result& a = results[0];
  print_row(out, ours.name(), level, ratio(c, a), mb / a.compress_s, mb / a.decompress_s, 1);
  const auto versus = [&](const Codec& k, const Result& b, const std::string& label) {
    print_row(out, k.name(), level, ratio(c, b), mb / b.compress_s, mb / b.decompress_s, 1);
    print_row(out, label, level, ratio(c, a) / ratio(c, b), b.compress_s / a.compress_s,
              b.decompress_s / a.decompress_s, 3);
  };
  size_t next = 1;
  if (base)
    versus(*base, results[next++], "ours / libdeflate");
  else
    out << "| libdeflate " LIBDEFLATE_VERSION_STRING " | " << level << " | level not supported | | |\n";
  if (nvc) {
    versus(*nvc, results[next++], "ours / nvCOMP");
    notes.push_back(nvc->note());
  }
  if (x86c) {
    const Result& x = results[next];
    print_row(out, x86c->name(), level, ratio(c, x), mb / x.compress_s, mb / x.decompress_s, 1);
    print_row(out, "x86 filter / ours", level, ratio(c, x) / ratio(c, a), a.compress_s / x.compress_s,
              a.decompress_s / x.decompress_s, 3);
  }
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

// The 'method:' line's timing part, its second line first indented.
std::string timing_method(const BenchOptions& o) {
  if (o.paired_rounds > 0)
    return "codecs take turns page by page and\n        each page's time is its fastest of " +
           std::to_string(o.paired_rounds) + " rounds (--paired);";
  return "each time is the best of passes\n        totalling >= " + text::fixed(o.min_seconds, 2) + " s;";
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
      << "method: single thread; every page round-trips before timing; " << timing_method(options)
      << " MB/s = 10^6 uncompressed bytes/s\n"
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
