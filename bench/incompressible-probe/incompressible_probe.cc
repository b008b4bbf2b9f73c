// gdfs-incompressible-probe: mkfs's incompressible-page shortcut (page::looks_incompressible) on whole
// 64 KiB pages of files: how many pages it stores without running the parser, what that costs in image
// bytes against GDeflate level 7 on the same pages, and the probe's own time.
//   gdfs-incompressible-probe full DIR|FILE ...   (compress every page at level 7 too: the loss as a share)
//   gdfs-incompressible-probe skip DIR|FILE ...   (only the skipped pages: faster, loss in bytes only)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gdfs/gdeflate.h"
#include "gdfs/page_encode.h"

namespace {

using namespace gdfs;
using Clock = std::chrono::steady_clock;
constexpr size_t kPage = 65536;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<std::string> regular_files(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (int a = 2; a < argc; ++a) {
    if (!fs::is_directory(argv[a])) {
      files.push_back(argv[a]);
      continue;
    }
    for (auto& e : fs::recursive_directory_iterator(argv[a], fs::directory_options::skip_permission_denied))
      if (e.is_regular_file() && !e.is_symlink()) files.push_back(e.path());
  }
  return files;
}

void probe(bool full, const std::vector<std::string>& files) {
  gdeflate::Compressor c7(7);
  std::vector<uint8_t> out(gdeflate::compress_bound(kPage)), buf(kPage);
  double tp = 0, tc = 0;
  size_t skip = 0, pages = 0, loss = 0, total = 0;
  for (const auto& fn : files) {
    std::ifstream f(fn, std::ios::binary);
    while (f.read(reinterpret_cast<char*>(buf.data()), kPage) &&
           f.gcount() == static_cast<std::streamsize>(kPage)) {
      const auto t0 = Clock::now();
      const bool inc = page::looks_incompressible(buf.data(), kPage);
      tp += seconds_since(t0);
      ++pages;
      skip += inc;
      if (full || inc) {
        const auto t1 = Clock::now();
        const size_t n7 = std::min(c7.compress(buf.data(), kPage, out.data(), out.size()), kPage);
        tc += seconds_since(t1);
        total += n7;
        if (inc) loss += kPage - n7;
      }
    }
  }
  std::printf(
      "pages %zu skip %zu probe %.3fs (%.1f us/page) loss %zu (%.4f%% of L7 data %zu) L7 time on those "
      "%.2fs\n",
      pages, skip, tp, pages ? 1e6 * tp / static_cast<double>(pages) : 0.0, loss,
      full && total ? 100.0 * static_cast<double>(loss) / static_cast<double>(total) : 0.0, total, tc);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc < 3 || (mode != "full" && mode != "skip")) {
    std::fprintf(stderr, "usage: gdfs-incompressible-probe full|skip DIR|FILE ...\n");
    return 2;
  }
  try {
    probe(mode == "full", regular_files(argc, argv));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdfs-incompressible-probe: %s\n", e.what());
    return 1;
  }
}
