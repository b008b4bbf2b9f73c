// Builds the seed corpora from the reference vectors: fuzz_decode seeds are each .gdf page behind the
// 3-byte expected-size prefix that harness reads; fuzz_roundtrip seeds are each .raw file behind a
// level byte. Usage: make_seeds VECTORS_DIR OUT_DIR (writes OUT_DIR/fuzz_decode, OUT_DIR/fuzz_roundtrip).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Bytes = std::vector<char>;

static Bytes slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

static void write(const fs::path& p, const Bytes& prefix, const Bytes& body) {
  std::ofstream f(p, std::ios::binary);
  f.write(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  f.write(body.data(), static_cast<std::streamsize>(body.size()));
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_seeds VECTORS_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path vectors = argv[1], out = argv[2];
  std::ifstream manifest(vectors / "MANIFEST.tsv");
  if (!manifest) {
    std::fprintf(stderr, "make_seeds: cannot read %s\n", (vectors / "MANIFEST.tsv").c_str());
    return 1;
  }
  fs::create_directories(out / "fuzz_decode");
  fs::create_directories(out / "fuzz_roundtrip");
  std::string line;
  std::getline(manifest, line);  // header
  int n = 0;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string name, level, raw_bytes;
    std::getline(fields, name, '\t');
    std::getline(fields, level, '\t');
    std::getline(fields, raw_bytes, '\t');
    if (name.empty()) continue;
    const std::string gdf = name + ".L" + level + ".gdf";
    const unsigned long size = std::stoul(raw_bytes);
    const Bytes size_prefix = {static_cast<char>(size & 0xFF), static_cast<char>(size >> 8 & 0xFF),
                               static_cast<char>(size >> 16 & 0xFF)};
    write(out / "fuzz_decode" / gdf, size_prefix, slurp(vectors / gdf));
    write(out / "fuzz_roundtrip" / (name + ".L" + level), {static_cast<char>(std::stoi(level))},
          slurp(vectors / (name + ".raw")));
    ++n;
  }
  std::printf("make_seeds: %d seeds per fuzzer in %s\n", n, out.c_str());
  return n > 0 ? 0 : 1;
}
