// Builds the seed corpora from the reference vectors: fuzz_decode seeds are each .gdf page behind the
// 3-byte expected-size prefix that harness reads; fuzz_roundtrip seeds are each .raw file behind a
// level byte (plus a 2 KiB cut of each, so the round-trip fuzzer, slow on whole pages, gets going);
// fuzz_container seeds are the tilestream examples. Usage: make_seeds VECTORS_DIR OUT_DIR (writes
// OUT_DIR/fuzz_decode, OUT_DIR/fuzz_roundtrip, OUT_DIR/fuzz_container).
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
  fs::create_directories(out / "fuzz_container");
  for (const auto& e : fs::directory_iterator(vectors / "tilestream")) {
    if (e.path().extension() == ".gdeflate")
      write(out / "fuzz_container" / e.path().filename(), {}, slurp(e.path()));
  }
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
    const Bytes raw = slurp(vectors / (name + ".raw"));
    const Bytes level_byte = {static_cast<char>(std::stoi(level))};
    write(out / "fuzz_roundtrip" / (name + ".L" + level), level_byte, raw);
    if (raw.size() > 2048)
      write(out / "fuzz_roundtrip" / (name + ".L" + level + ".2k"), level_byte,
            Bytes(raw.begin(), raw.begin() + 2048));
    ++n;
  }
  std::printf("make_seeds: %d seeds per fuzzer in %s\n", n, out.c_str());
  return n > 0 ? 0 : 1;
}
