// Seeds for fuzz_bitpack: pages made by the encoder from a few signals (a sine, a random walk, noise,
// two interleaved channels, the extremes) under several params, each behind the harness's 5-byte prefix
// (param, decoded size). Usage: make_bitpack_seeds OUT_DIR.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gdfs/bitpack.h"

namespace bp = gdfs::bitpack;
using Bytes = std::vector<uint8_t>;

static Bytes signal(int kind, size_t n) {
  std::mt19937 rng(static_cast<unsigned>(kind));
  Bytes b(n);
  int32_t walk = 0;
  for (size_t i = 0; i + 1 < n; i += 2) {
    int32_t v = 0;
    switch (kind) {
      case 0:
        v = static_cast<int32_t>(12000 * std::sin(static_cast<double>(i) / 40));
        break;
      case 1:
        v = walk += static_cast<int32_t>(rng() % 201) - 100;
        break;
      case 2:
        v = static_cast<int32_t>(rng());
        break;
      case 3:
        v = (i / 2) % 2 ? -20000 + static_cast<int32_t>(i % 64) : static_cast<int32_t>(i % 100);
        break;
      default:
        v = (i / 2) % 3 == 0 ? -32768 : 0;
        break;
    }
    b[i] = static_cast<uint8_t>(v), b[i + 1] = static_cast<uint8_t>(v >> 8);
  }
  return b;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_bitpack_seeds OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const bp::Params params[] = {{bp::Type::kInt16, bp::Mode::kPlain, 32, 1},
                               {bp::Type::kInt16, bp::Mode::kOutlier, 32, 1},
                               {bp::Type::kInt16, bp::Mode::kOutlier, 64, 2},
                               {bp::Type::kInt32, bp::Mode::kOutlier, 32, 1},
                               {bp::Type::kInt32, bp::Mode::kPlain, 7, 0}};
  int n = 0;
  for (int kind = 0; kind < 5; ++kind) {
    for (const bp::Params& p : params) {
      for (size_t size : {size_t{4096}, size_t{1001}}) {
        const Bytes in = signal(kind, size);
        Bytes page(bp::compress_bound(size, p));
        page.resize(bp::compress(in.data(), in.size(), p, page.data(), page.size()));
        const uint16_t param = bp::to_param(p);
        const Bytes prefix = {static_cast<uint8_t>(param), static_cast<uint8_t>(param >> 8),
                              static_cast<uint8_t>(size), static_cast<uint8_t>(size >> 8),
                              static_cast<uint8_t>(size >> 16)};
        std::ofstream f(out / ("seed-" + std::to_string(n++)), std::ios::binary);
        f.write(reinterpret_cast<const char*>(prefix.data()), static_cast<std::streamsize>(prefix.size()));
        f.write(reinterpret_cast<const char*>(page.data()), static_cast<std::streamsize>(page.size()));
      }
    }
  }
  std::printf("make_bitpack_seeds: %d seeds in %s\n", n, out.c_str());
  return 0;
}
