// Real files found on the machine (binaries, man pages, headers, licences), cut into 64 KiB pages.
// Any file may be absent; callers require that enough was found in total.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace gdfs::test {

struct Sample {
  std::string name;
  Bytes data;
};

// Reads up to `limit` bytes of a gzip file through zlib (man pages are stored gzipped).
inline bool read_gz(const std::string& path, size_t limit, Bytes* out) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return false;
  out->resize(limit);
  const int n = gzread(f, out->data(), static_cast<unsigned>(limit));
  gzclose(f);
  out->resize(n > 0 ? static_cast<size_t>(n) : 0);
  return n > 0;
}

// Up to `per_file` bytes from each candidate that exists. Binaries are read from offset `per_file` when
// they are large enough, to get past the ELF header into code and data.
inline std::vector<Sample> real_samples(size_t per_file) {
  namespace fs = std::filesystem;
  std::vector<Sample> out;
  auto add = [&](const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return;
    Bytes b;
    if (path.ends_with(".gz") ? !read_gz(path, per_file, &b) : !read_file(path, &b)) return;
    if (b.size() > per_file) {
      const size_t skip = b.size() >= 2 * per_file ? per_file : 0;
      b = Bytes(b.begin() + skip, b.begin() + skip + per_file);
    }
    if (!b.empty()) out.push_back({path, std::move(b)});
  };
  for (const char* p : {"/usr/bin/bash", "/usr/local/cuda/lib64/libcudart.so", "/usr/bin/cmake",
                        "/usr/share/man/man1/bash.1.gz", "/usr/share/man/man1/git-config.1.gz",
                        "/usr/share/man/man1/cmake.1.gz", "/usr/share/common-licenses/GPL-3",
                        "/usr/local/cuda/include/cuda.h", "/usr/local/cuda/include/cuda_runtime_api.h",
                        "/usr/share/zoneinfo/zone1970.tab", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    add(p);
  }
  return out;
}

// Cuts samples into pages of 64 KiB (the last page of each sample may be shorter).
inline std::vector<Bytes> pages_of(const std::vector<Sample>& samples) {
  std::vector<Bytes> pages;
  for (const Sample& s : samples) {
    for (size_t at = 0; at < s.data.size(); at += gdeflate::kMaxPageBytes) {
      const size_t n = std::min(gdeflate::kMaxPageBytes, s.data.size() - at);
      pages.emplace_back(s.data.begin() + at, s.data.begin() + at + n);
    }
  }
  return pages;
}

}  // namespace gdfs::test
