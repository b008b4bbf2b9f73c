// Measures mkfs's incompressible-page shortcut (page::looks_incompressible) on whole 64 KiB pages of
// files: how many pages it stores without running the parser, what that costs in image bytes against
// GDeflate level 7 on the same pages, and the probe's own time. Not part of the build:
//   g++ -O2 -std=c++20 -Icodec/include -Ipage/include -Iformat/include bench/incompressible-probe.cc
//     build/page/libgdfs_page.a build/codec/libgdfs_codec.a -lxxhash -lpthread -o /tmp/probe
//   /tmp/probe full DIR|FILE ...   (full: compress every page at level 7 too, for the loss as a share)
//   /tmp/probe skip DIR|FILE ...   (only the skipped pages: faster, loss in bytes only)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include "gdfs/gdeflate.h"
#include "gdfs/page_encode.h"
using namespace gdfs;
int main(int argc, char** argv) {
  bool full = std::string(argv[1]) == "full";
  gdeflate::Compressor c7(7);
  std::vector<uint8_t> out(gdeflate::compress_bound(65536));
  double tp = 0, tc = 0;
  size_t skip = 0, pages = 0, loss = 0, total = 0;
  std::vector<std::string> files;
  for (int a = 2; a < argc; ++a) {
    if (std::filesystem::is_directory(argv[a])) {
      for (auto& e : std::filesystem::recursive_directory_iterator(argv[a]))
        if (e.is_regular_file() && !e.is_symlink()) files.push_back(e.path());
    } else
      files.push_back(argv[a]);
  }
  std::vector<uint8_t> buf(65536);
  for (auto& fn : files) {
    std::ifstream f(fn, std::ios::binary);
    while (f.read((char*)buf.data(), 65536) && f.gcount() == 65536) {
      auto s = std::chrono::steady_clock::now();
      bool inc = page::looks_incompressible(buf.data(), 65536);
      auto e = std::chrono::steady_clock::now();
      tp += std::chrono::duration<double>(e - s).count();
      ++pages;
      skip += inc;
      if (full || inc) {
        auto s2 = std::chrono::steady_clock::now();
        size_t n7 = std::min<size_t>(c7.compress(buf.data(), 65536, out.data(), out.size()), 65536);
        tc += std::chrono::duration<double>(std::chrono::steady_clock::now() - s2).count();
        total += n7;
        if (inc) loss += 65536 - n7;
      }
    }
  }
  printf(
      "pages %zu skip %zu probe %.3fs (%.1f us/page) loss %zu (%.4f%% of L7 data %zu) L7 time on those "
      "%.2fs\n",
      pages, skip, tp, 1e6 * tp / pages, loss, full ? 100.0 * loss / total : 0.0, total, tc);
}
