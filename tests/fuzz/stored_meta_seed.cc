// Writes a copy of an image whose metadata blocks are all stored rather than GDeflate, with every
// checksum recomputed. fuzz_image seeds of this kind let libFuzzer's byte mutations land on the metadata
// records themselves (the harness reseals the checksums), instead of dying in a block decoder.
// Usage: fuzz_stored_meta_seed IN OUT
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>

#include "image_surgery.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_stored_meta_seed IN OUT\n");
    return 2;
  }
  try {
    std::ifstream in(argv[1], std::ios::binary);
    const gdfs::surgery::Bytes image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const gdfs::surgery::Bytes out =
        gdfs::surgery::repack_image(image, gdfs::surgery::unpack_image(image), /*level=*/0);
    std::ofstream(argv[2], std::ios::binary)
        .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_stored_meta_seed: %s\n", e.what());
    return 1;
  }
  return 0;
}
