// Helpers for the container and CLI tests: files, vector paths and reproducible mixed test data.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace gdfs::tools_test {

using Bytes = std::vector<uint8_t>;

inline Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const Bytes& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

// The tilestream vectors; $GDFS_VECTORS_DIR wins over the path CMake compiled in.
inline std::string tilestream_dir() {
  const char* env = std::getenv("GDFS_VECTORS_DIR");
  return std::string(env && *env ? env : GDFS_VECTORS_DIR) + "/tilestream";
}

// Compressible text, zero runs and random bytes in turn, so tiles differ in kind and size.
inline Bytes mixed_data(size_t n, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  static const std::string text = "the lane of the tile of the page, in a GDeflate container\n";
  Bytes out;
  out.reserve(n);
  while (out.size() < n) {
    const size_t kind = rng() % 3, run = 1000 + rng() % 30000;
    for (size_t i = 0; i < run && out.size() < n; ++i) {
      if (kind == 0)
        out.push_back(static_cast<uint8_t>(text[(i + (rng() % 16 == 0 ? rng() : 0)) % text.size()]));
      if (kind == 1) out.push_back(0);
      if (kind == 2) out.push_back(static_cast<uint8_t>(rng()));
    }
  }
  return out;
}

}  // namespace gdfs::tools_test
