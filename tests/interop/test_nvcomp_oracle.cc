// nvCOMP as a compatibility oracle: "nvCOMP decodes our pages" as a test. NVIDIA's host GDeflate codec
// (libnvcomp_cpu.so.6, nvCOMP 6.0.0.12's pip wheel) decodes our pages at every level 0..12 (reference
// vector inputs, real files, edge sizes) and every GDeflate page of an image made by mkfs.gdfs; our
// decoder, on every path this CPU has, decodes nvCOMP's pages of the same inputs.
//
// The library is found at $GDFS_NVCOMP_CPU_LIB, else at the build's default (.nvcomp-wheel/lib64/, where
// scripts/test puts it). Absent: every test skips, saying how to get it. Present but unusable: failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/gdeflate.h"
#include "gdfs/image.h"
#include "gdfs/x86_filter.h"
#include "nvcomp_cpu.h"
#include "test_util.h"
#include "tools/gdeflate/cli.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
namespace gd = gdfs::gdeflate;
using nvcomp_cpu::HostGdeflate;

constexpr const char* kHowToGet =
    "scripts/test fetches it (pip download of nvidia-libnvcomp-cu13==6.0.0.12 into .nvcomp-wheel/), or run "
    "`source scripts/lib.sh && nvcomp_cpu_lib .nvcomp-wheel`, or set GDFS_NVCOMP_CPU_LIB to a "
    "libnvcomp_cpu.so.6";

// ---- the library, loaded once per process ----------------------------------------------------------

struct Oracle {
  std::unique_ptr<HostGdeflate> lib;
  std::string absent;  // why the tests skip
  std::string error;   // why a library that is there cannot be used
};

const Oracle& oracle() {
  static const Oracle o = [] {
    Oracle r;
    const std::string path = nvcomp_cpu::library_path(GDFS_NVCOMP_CPU_DEFAULT);
    std::error_code ec;
    if (path.empty()) {
      r.absent = std::string(nvcomp_cpu::kEnvVar) + "=none";
    } else if (!fs::is_regular_file(path, ec)) {
      r.absent = "no nvCOMP host library at " + path;
    } else {
      try {
        r.lib = HostGdeflate::open(path);
      } catch (const std::exception& e) {
        r.error = e.what();
      }
    }
    return r;
  }();
  return o;
}

class NvcompOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    const Oracle& o = oracle();
    if (!o.absent.empty())
      GTEST_SKIP() << "nvCOMP's host GDeflate codec is unavailable (" << o.absent << "): " << kHowToGet;
    ASSERT_TRUE(o.lib) << o.error;
    nv_ = o.lib.get();
  }
  const HostGdeflate* nv_ = nullptr;
};

// ---- inputs ----------------------------------------------------------------------------------------

struct Input {
  std::string name;
  Bytes data;
};

Bytes read_or_fail(const std::string& path) {
  Bytes b;
  EXPECT_TRUE(read_file(path, &b)) << path;
  return b;
}

// Every reference input of tests/data/gdeflate (the .raw files, at most 64 KiB each), sorted by name. One
// is empty: our page for it is one empty stored block (132 bytes), which nvCOMP must decode to nothing.
std::vector<Input> vector_inputs() {
  std::vector<Input> out;
  for (const auto& e : fs::directory_iterator(vectors_dir()))
    if (e.path().extension() == ".raw") out.push_back({e.path().stem().string(), read_or_fail(e.path())});
  std::sort(out.begin(), out.end(), [](const Input& a, const Input& b) { return a.name < b.name; });
  return out;
}

// `data` cut into pages of 64 KiB (the last one shorter), named NAME@INDEX.
void add_pages(const std::string& name, const Bytes& data, std::vector<Input>& out) {
  for (size_t off = 0; off < data.size(); off += gd::kMaxPageBytes) {
    const size_t n = std::min(gd::kMaxPageBytes, data.size() - off);
    out.push_back(
        {name + "@" + std::to_string(off / gd::kMaxPageBytes),
         Bytes(data.begin() + static_cast<ptrdiff_t>(off), data.begin() + static_cast<ptrdiff_t>(off + n))});
  }
}

// Real files of this machine: the GPL-3 text and an ELF binary, whole, in 64 KiB pages.
std::vector<Input> real_file_inputs() {
  std::vector<Input> out;
  for (const char* path : {"/usr/share/common-licenses/GPL-3", "/bin/bash"}) {
    Bytes b;
    if (read_file(path, &b) && !b.empty())
      add_pages(path, b, out);
    else
      std::printf("note: %s is not on this machine\n", path);
  }
  return out;
}

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// Edge sizes, each as text (the vendored GPL-3), random bytes and zeros: one byte; around a byte per lane
// (31, 32, 33) and a word per lane (127, 128; 32 lanes); one short of 4 KiB; one short of a full page, and
// a full page.
std::vector<Input> edge_inputs() {
  const Bytes text = read_or_fail(vectors_dir() + "/gpl3_full.raw");
  std::vector<Input> out;
  for (size_t n : {1, 31, 32, 33, 127, 128, 4095, 65535, 65536}) {
    Bytes t(n);
    for (size_t i = 0; i < n; ++i) t[i] = text.empty() ? 'a' : text[i % text.size()];
    out.push_back({"text" + std::to_string(n), t});
    out.push_back({"random" + std::to_string(n), random_bytes(n, static_cast<uint32_t>(n))});
    out.push_back({"zeros" + std::to_string(n), Bytes(n, 0)});
  }
  return out;
}

// ---- the two directions ----------------------------------------------------------------------------

// nvCOMP's decode of `page` into a full 64 KiB buffer, so a page that decodes long shows as such. The page
// sits in a buffer with 4 KiB of zeros after it: nvCOMP's decoder does not bounds-check its input.
::testing::AssertionResult nvcomp_decodes_to(const HostGdeflate& nv, std::span<const uint8_t> page,
                                             std::span<const uint8_t> want) {
  Bytes padded(page.begin(), page.end());
  padded.resize(page.size() + 4096);
  Bytes out(gd::kMaxPageBytes);
  size_t n = 0;
  try {
    n = nv.decompress(std::span(padded).first(page.size()), out);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << "nvCOMP rejects the " << page.size() << "-byte page: " << e.what();
  }
  if (n != want.size())
    return ::testing::AssertionFailure() << "nvCOMP decodes " << n << " bytes, not " << want.size();
  const auto diff = std::mismatch(want.begin(), want.end(), out.begin());
  if (diff.first != want.end())
    return ::testing::AssertionFailure() << "nvCOMP's bytes differ from byte " << (diff.first - want.begin());
  return ::testing::AssertionSuccess();
}

// Our page of each input at every level, which nvCOMP must decode exactly. Returns how many it did.
size_t check_nvcomp_decodes_ours(const HostGdeflate& nv, const std::vector<Input>& inputs) {
  size_t pages = 0;
  Bytes page(gd::compress_bound(gd::kMaxPageBytes));
  for (int level = gd::kMinLevel; level <= gd::kMaxLevel; ++level) {
    gd::Compressor c(level);
    for (const Input& in : inputs) {
      const size_t n = c.compress(in.data.data(), in.data.size(), page.data(), page.size());
      EXPECT_GT(n, 0u) << in.name << " level " << level;
      EXPECT_LE(n, gd::stored_size(in.data.size())) << in.name << " level " << level;
      const ::testing::AssertionResult decoded = nvcomp_decodes_to(nv, std::span(page).first(n), in.data);
      EXPECT_TRUE(decoded) << in.name << " level " << level;
      pages += static_cast<bool>(decoded);
    }
  }
  return pages;
}

// Every decoder path this CPU has (kAvx512 and kAvx2 fall back when absent: keep the distinct ones).
std::vector<gd::DecodePath> our_paths() {
  std::set<gd::DecodePath> paths;
  for (gd::DecodePath p : {gd::DecodePath::kScalar, gd::DecodePath::kAvx2, gd::DecodePath::kAvx512})
    paths.insert(gd::Decompressor(p).path());
  return {paths.begin(), paths.end()};
}

// What nvCOMP's encoder did over a set of inputs: the sizes it wrote against its own promise
// (compressCPUGetMaxOutputChunkSize) and the stored form, and the pages it refused to write.
struct EncoderReport {
  size_t pages = 0, largest = 0, over_promise = 0, over_stored = 0;
  std::vector<std::string> refused;  // "NAME level L"
};

constexpr uint8_t kCanary = 0xA5;

// nvCOMP's page of `in` at `level`, empty when it refuses. The buffer is prefilled: nothing past the
// size nvCOMP reports may have been written, nor past its promise when it refuses (it gives up after
// writing part of a page).
Bytes nvcomp_page(const HostGdeflate& nv, const Input& in, int level, EncoderReport& report) {
  Bytes out(nv.output_capacity(), kCanary);
  const size_t n = nv.compress(in.data, level, out);
  const size_t written = n ? n : nv.max_output(in.data.size());
  EXPECT_TRUE(std::all_of(out.begin() + static_cast<ptrdiff_t>(written), out.end(),
                          [](uint8_t b) { return b == kCanary; }))
      << in.name << " level " << level << ": nvCOMP wrote past " << written << " bytes (it reports " << n
      << ")";
  if (n == 0) {
    report.refused.push_back(in.name + " level " + std::to_string(level));
    return {};
  }
  report.pages++;
  report.largest = std::max(report.largest, n);
  report.over_promise += n > nv.max_output(in.data.size());
  report.over_stored += n > gd::stored_size(in.data.size());
  out.resize(n);
  return out;
}

void print(const HostGdeflate& nv, const EncoderReport& r) {
  std::printf(
      "nvCOMP wrote %zu pages, largest %zu bytes; %zu over its promise of %zu for 64 KiB, %zu over the "
      "stored size; it refused %zu:",
      r.pages, r.largest, r.over_promise, nv.max_output(gd::kMaxPageBytes), r.over_stored, r.refused.size());
  for (const std::string& what : r.refused) std::printf(" [%s]", what.c_str());
  std::printf("\n");
}

// `page` through each of our decoders (exact-size buffers: ASan sees any overrun), which must give `want`.
void expect_ours_decode(std::vector<gd::Decompressor>& decoders, const Bytes& page, const Bytes& want,
                        const std::string& what) {
  for (gd::Decompressor& d : decoders) {
    ExactBuf in(page), out(want.size());
    EXPECT_EQ(d.decompress(in.data(), in.size(), out.data(), out.size()), PageStatus::kOk)
        << what << ", " << page.size() << "-byte page";
    EXPECT_EQ(out.bytes(), want) << what;
  }
}

// nvCOMP's page of each input (all but empty ones: nvCOMP cannot take them) at every level, which each
// of our decoder paths must decode exactly. A page nvCOMP refuses to write has nothing to check; it is
// reported. Returns what nvCOMP's encoder did.
EncoderReport check_ours_decode_nvcomp(const HostGdeflate& nv, const std::vector<Input>& inputs) {
  EncoderReport report;
  std::vector<gd::Decompressor> decoders;
  for (gd::DecodePath p : our_paths()) decoders.emplace_back(p);
  for (int level = 0; level <= nvcomp_cpu::kMaxLevel; ++level) {
    for (const Input& in : inputs) {
      if (in.data.empty()) continue;
      const Bytes page = nvcomp_page(nv, in, level, report);
      if (!page.empty())
        expect_ours_decode(decoders, page, in.data, in.name + " level " + std::to_string(level));
    }
  }
  print(nv, report);
  return report;
}

// ---- our pages, decoded by nvCOMP --------------------------------------------------------------------

TEST_F(NvcompOracle, DecodesOurPagesOfTheVectorInputsAtEveryLevel) {
  const auto inputs = vector_inputs();
  ASSERT_GE(inputs.size(), 30u) << vectors_dir();
  EXPECT_EQ(check_nvcomp_decodes_ours(*nv_, inputs), inputs.size() * 13);
}

TEST_F(NvcompOracle, DecodesOurPagesOfRealFilesAtEveryLevel) {
  const auto inputs = real_file_inputs();
  ASSERT_FALSE(inputs.empty()) << "neither GPL-3 nor /bin/bash on this machine";
  EXPECT_EQ(check_nvcomp_decodes_ours(*nv_, inputs), inputs.size() * 13);
}

TEST_F(NvcompOracle, DecodesOurPagesOfEdgeSizesAtEveryLevel) {
  const auto inputs = edge_inputs();
  EXPECT_EQ(check_nvcomp_decodes_ours(*nv_, inputs), inputs.size() * 13);
}

// ---- nvCOMP's pages, decoded by ours -----------------------------------------------------------------

TEST_F(NvcompOracle, ItsPagesOfTheVectorInputsDecodeWithOurs) {
  const auto inputs = vector_inputs();
  ASSERT_GE(inputs.size(), 30u) << vectors_dir();
  const auto empty =
      std::count_if(inputs.begin(), inputs.end(), [](const Input& in) { return in.data.empty(); });
  const EncoderReport r = check_ours_decode_nvcomp(*nv_, inputs);
  EXPECT_EQ(r.pages + r.refused.size(), (inputs.size() - static_cast<size_t>(empty)) * 13);
}

TEST_F(NvcompOracle, ItsPagesOfRealFilesDecodeWithOurs) {
  const auto inputs = real_file_inputs();
  ASSERT_FALSE(inputs.empty()) << "neither GPL-3 nor /bin/bash on this machine";
  const EncoderReport r = check_ours_decode_nvcomp(*nv_, inputs);
  EXPECT_EQ(r.pages + r.refused.size(), inputs.size() * 13);
}

TEST_F(NvcompOracle, ItsPagesOfEdgeSizesDecodeWithOurs) {
  const auto inputs = edge_inputs();
  const EncoderReport r = check_ours_decode_nvcomp(*nv_, inputs);
  EXPECT_EQ(r.pages, inputs.size() * 13);  // nothing here is hard to fit: no refusals
}

// The facts docs/GDEFLATE.md states about nvCOMP 6.0.0.12's encoder, on the vendored binary page that
// shows them: it writes more than its own promise (so its promise cannot size a buffer), and at levels
// 11 and 12 it refuses the page. Ours fits every level in the stored size, and nvCOMP decodes ours. A
// newer pin that fixes these fails here: update the document with it.
TEST_F(NvcompOracle, ItsEncoderOverrunsItsPromiseOrRefusesWhereOursFits) {
  const Input in{"elf_cublas_oversize", read_or_fail(vectors_dir() + "/elf_cublas_oversize.raw")};
  ASSERT_EQ(in.data.size(), gd::kMaxPageBytes);
  EXPECT_EQ(nv_->max_output(gd::kMaxPageBytes), 65708u);
  EncoderReport r;
  std::vector<gd::Decompressor> ours(1);
  const Bytes l1 = nvcomp_page(*nv_, in, 1, r);
  EXPECT_EQ(l1.size(), 65736u);
  expect_ours_decode(ours, l1, in.data, "nvCOMP level 1");
  EXPECT_TRUE(nvcomp_page(*nv_, in, 12, r).empty()) << "nvCOMP 6.0.0.12 refuses this page at level 12";
  Bytes page(gd::compress_bound(in.data.size()));
  for (int level : {1, 12}) {
    const size_t n = gd::Compressor(level).compress(in.data.data(), in.data.size(), page.data(), page.size());
    EXPECT_LE(n, gd::stored_size(in.data.size())) << "level " << level;
    EXPECT_TRUE(nvcomp_decodes_to(*nv_, std::span(page).first(n), in.data)) << "level " << level;
  }
}

// ---- the pages of a real image -----------------------------------------------------------------------

// A small tree of real and generated files: text, an ELF binary, zeros, random bytes and many small files
// (tails, packed together into tail-pack pages).
void make_tree(const std::string& src) {
  fs::create_directories(src + "/small");
  for (const char* path : {"/usr/share/common-licenses/GPL-3", "/bin/bash"}) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) fs::copy_file(path, src + "/" + fs::path(path).filename().string());
  }
  write_text_file(src + "/text.txt", 5 * 65536 + 4321, 7);
  write_bytes(src + "/zeros.bin", Bytes(3 * 65536 + 5, 0));
  write_bytes(src + "/random.bin", random_bytes(2 * 65536 + 100, 11));
  for (int i = 0; i < 40; ++i) write_text_file(src + "/small/f" + std::to_string(i), 100 + 37 * i, 100 + i);
}

// Page entry `i` of `img`, a GDeflate page (codec 2, or 4: the stream of the filtered bytes): decoded by
// ours and by nvCOMP, both must give the same bytes, and those must be what its checksums promise.
void check_image_page(const HostGdeflate& nv, const Image& img, size_t i, gd::Decompressor& ours) {
  const format::PageEntry& e = img.pages()[i];
  Bytes stored(e.csize);
  ASSERT_TRUE(img.read_stored(e, stored.data())) << "page " << i;
  ASSERT_EQ(checksum32(stored.data(), stored.size()), e.ccheck) << "page " << i;
  Bytes mine(e.usize);
  ASSERT_EQ(ours.decompress(stored.data(), stored.size(), mine.data(), mine.size()), PageStatus::kOk)
      << "page " << i;
  EXPECT_TRUE(nvcomp_decodes_to(nv, stored, mine)) << img.name() << " page " << i << " (" << e.csize << " -> "
                                                   << e.usize << " bytes, flags " << int{e.flags} << ")";
  if (e.codec == format::kCodecGDeflateX86) x86::decode(mine.data(), mine.size());
  EXPECT_EQ(checksum32(mine.data(), mine.size()), e.ucheck) << "page " << i;
}

struct ImagePages {
  size_t gdeflate = 0, tail_packs = 0, x86 = 0;  // x86: of gdeflate, codec 4 pages
};

// Checks every GDeflate page of the image at `path`; returns how many there are, and how many of them
// are tail packs.
ImagePages check_image_pages(const HostGdeflate& nv, const std::string& path) {
  const auto img = Image::open(path);
  gd::Decompressor ours;
  ImagePages n;
  for (size_t i = 0; i < img->pages().size(); ++i) {
    const format::PageEntry& e = img->pages()[i];
    if (e.codec != format::kCodecGDeflate && e.codec != format::kCodecGDeflateX86) continue;
    check_image_page(nv, *img, i, ours);
    ++n.gdeflate;
    n.x86 += e.codec == format::kCodecGDeflateX86;
    n.tail_packs += (e.flags & format::kPageTailPack) != 0;
  }
  std::printf("%s: %zu page entries, %zu GDeflate (%zu tail packs, %zu x86) checked with nvCOMP\n",
              path.c_str(), img->pages().size(), n.gdeflate, n.tail_packs, n.x86);
  return n;
}

TEST_F(NvcompOracle, DecodesEveryGDeflatePageOfAnMkfsImage) {
  TempDir dir("nvcomp-image");
  const std::string src = dir / "src";
  make_tree(src);
  for (int level : {1, 7, 12}) {
    const std::string image = dir / ("L" + std::to_string(level) + ".gdfs");
    const CliResult r = run_mkfs({"-q", "-l", std::to_string(level), src, image});
    ASSERT_EQ(r.code, 0) << r.err;
    const ImagePages n = check_image_pages(*nv_, image);
    EXPECT_GE(n.gdeflate, 10u) << "level " << level;
    EXPECT_GE(n.tail_packs, 1u) << "level " << level;
    if (fs::exists(src + "/bash")) {
      EXPECT_GE(n.x86, 1u) << "level " << level;  // its machine code
    }
  }
}

// ---- `gdeflate bench --nvcomp-cpu` ---------------------------------------------------------------------

// The bench's nvCOMP rows on the page nvCOMP refuses at level 12: written by its level 0 instead, reported,
// and every page of each codec decoded by the other.
TEST_F(NvcompOracle, GdeflateBenchAddsItsRows) {
  const std::string page = vectors_dir() + "/elf_cublas_oversize.raw";
  std::vector<std::string> args = {"gdeflate", "bench", "--min-time", "0", "-l", "1,12"};
  args.insert(args.end(), {"--nvcomp-cpu", nv_->path(), page});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::istringstream in;
  std::ostringstream out, err;
  ASSERT_EQ(tools::gdeflate_main(static_cast<int>(args.size()), argv.data(), in, out, err), 0) << err.str();
  const std::string text = out.str();
  for (const char* want :
       {"| nvCOMP CPU GDeflate | 1 |", "| ours / nvCOMP | 1 |", "| nvCOMP CPU GDeflate | 12 |",
        "nvCOMP level 1: refused 0 page(s)", "1 page(s) over its own bound of 65708 bytes",
        "nvCOMP level 12: refused 1 page(s), written by its level 0 instead"})
    EXPECT_NE(text.find(want), std::string::npos) << want << " not in:\n" << text;
}

}  // namespace
}  // namespace gdfs::test
