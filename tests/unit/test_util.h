// Small helpers shared by the codec unit tests: exact-size heap buffers (so ASan sees any overrun),
// file reading, the reference-vector manifest, and a seeded PRNG for reproducible "random" data.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gdfs/gdeflate.h"

namespace gdfs {
// Lets GoogleTest print "bad data" instead of "1-byte object <01>".
inline void PrintTo(PageStatus s, std::ostream* os) {
  *os << page_status_message(s);
}
}  // namespace gdfs

namespace gdfs::test {

using Bytes = std::vector<uint8_t>;

// A heap block of exactly `n` bytes. Unlike an empty std::vector, data() is never null, and ASan
// reports a read or write even one byte past the end.
class ExactBuf {
 public:
  explicit ExactBuf(size_t n) : size_(n), p_(new uint8_t[n]) {}
  ExactBuf(const uint8_t* src, size_t n) : ExactBuf(n) { std::copy(src, src + n, p_.get()); }
  explicit ExactBuf(const Bytes& b) : ExactBuf(b.data(), b.size()) {}
  uint8_t* data() { return p_.get(); }
  const uint8_t* data() const { return p_.get(); }
  size_t size() const { return size_; }
  Bytes bytes() const { return Bytes(p_.get(), p_.get() + size_); }

 private:
  size_t size_;
  std::unique_ptr<uint8_t[]> p_;
};

// An output buffer with guard bytes on both sides, for the decoder paths whose masked vector stores
// ASan does not check: a store outside [data(), data() + size()) changes a guard byte.
class GuardedBuf {
 public:
  static constexpr size_t kGuard = 128;
  static constexpr uint8_t kFill = 0xA5;
  explicit GuardedBuf(size_t n) : size_(n), b_(n + 2 * kGuard, kFill) {}
  uint8_t* data() { return b_.data() + kGuard; }
  size_t size() const { return size_; }
  Bytes bytes() const {
    return Bytes(b_.begin() + kGuard, b_.begin() + static_cast<ptrdiff_t>(kGuard + size_));
  }
  bool intact() const {
    const auto is_fill = [](uint8_t x) { return x == kFill; };
    return std::all_of(b_.begin(), b_.begin() + kGuard, is_fill) &&
           std::all_of(b_.end() - kGuard, b_.end(), is_fill);
  }

 private:
  size_t size_;
  Bytes b_;
};

inline bool read_file(const std::string& path, Bytes* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// The vector directory: $GDFS_VECTORS_DIR wins over the path CMake compiled in.
inline std::string vectors_dir() {
  if (const char* env = std::getenv("GDFS_VECTORS_DIR"); env && *env) return env;
  return GDFS_VECTORS_DIR;
}

struct VectorCase {
  std::string name;
  int level = 0;
  size_t raw_bytes = 0;
  size_t gdf_bytes = 0;
  uint32_t crc32 = 0;
  std::string raw_path() const { return vectors_dir() + "/" + name + ".raw"; }
  std::string gdf_path() const { return vectors_dir() + "/" + name + ".L" + std::to_string(level) + ".gdf"; }
};

// Parses MANIFEST.tsv (header line, then name, level, raw_bytes, gdf_bytes, crc32 hex, source).
inline std::vector<VectorCase> read_manifest(const std::string& path) {
  std::vector<VectorCase> cases;
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    VectorCase c;
    std::string level, raw, gdf, crc;
    std::getline(fields, c.name, '\t');
    std::getline(fields, level, '\t');
    std::getline(fields, raw, '\t');
    std::getline(fields, gdf, '\t');
    std::getline(fields, crc, '\t');
    c.level = std::stoi(level);
    c.raw_bytes = std::stoul(raw);
    c.gdf_bytes = std::stoul(gdf);
    c.crc32 = static_cast<uint32_t>(std::stoul(crc, nullptr, 16));
    cases.push_back(c);
  }
  return cases;
}

inline Bytes random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng() >> 56);
  return b;
}

// Every decoder implementation; a SIMD path the CPU lacks quietly falls back to the next one down.
inline constexpr gdeflate::DecodePath kPaths[] = {gdeflate::DecodePath::kScalar, gdeflate::DecodePath::kAvx2,
                                                  gdeflate::DecodePath::kAvx512};

inline const char* path_name(gdeflate::DecodePath p) {
  return p == gdeflate::DecodePath::kScalar   ? "scalar"
         : p == gdeflate::DecodePath::kAvx2   ? "avx2"
         : p == gdeflate::DecodePath::kAvx512 ? "avx512"
                                              : "auto";
}

// Decodes `page` into exactly `out_size` bytes; `status` receives the codec's verdict. The AVX-512 path
// decodes between guard bytes, which must stay untouched; the others into an exact buffer (ASan).
inline Bytes decode(const Bytes& page, size_t out_size, PageStatus* status,
                    gdeflate::DecodePath path = gdeflate::DecodePath::kAuto) {
  ExactBuf in(page);
  gdeflate::Decompressor d(path);
  if (d.path() == gdeflate::DecodePath::kAvx512) {
    GuardedBuf out(out_size);
    *status = d.decompress(in.data(), in.size(), out.data(), out.size());
    EXPECT_TRUE(out.intact()) << "the AVX-512 decoder wrote outside its " << out_size << "-byte page";
    return out.bytes();
  }
  ExactBuf out(out_size);
  *status = d.decompress(in.data(), in.size(), out.data(), out.size());
  return out.bytes();
}

// Decodes with every implementation and checks they agree (status always, bytes when kOk), as the
// API promises. Returns the scalar result.
inline Bytes decode_both(const Bytes& page, size_t out_size, PageStatus* status) {
  Bytes out = decode(page, out_size, status, gdeflate::DecodePath::kScalar);
  for (gdeflate::DecodePath p : {gdeflate::DecodePath::kAvx2, gdeflate::DecodePath::kAvx512}) {
    PageStatus simd_status;
    const Bytes simd = decode(page, out_size, &simd_status, p);
    EXPECT_EQ(*status, simd_status) << "scalar and " << path_name(p) << " decoders disagree";
    if (*status == PageStatus::kOk && simd_status == PageStatus::kOk) {
      EXPECT_TRUE(out == simd) << "scalar and " << path_name(p) << " decoders produce different bytes";
    }
  }
  return out;
}

// Compresses into a compress_bound() buffer and returns exactly the page.
inline Bytes encode(gdeflate::Compressor& c, const Bytes& raw) {
  ExactBuf in(raw), out(gdeflate::compress_bound(raw.size()));
  const size_t n = c.compress(in.data(), in.size(), out.data(), out.size());
  return Bytes(out.data(), out.data() + n);
}

}  // namespace gdfs::test
