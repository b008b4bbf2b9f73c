// Fuzzes the signature of signed images (FORMAT.md 7.1): the superblock's signature fields, the
// region's header and digests, the root and the Ed25519 check, then reads of every file, whose pages
// are checked against their digests. The harness makes the checksums match (superblock, metadata,
// signature region) so that mutations reach the parsing behind them. The seeds are images signed by
// tests/fuzz/signature-test-key.pem, whose public key the reader trusts: a mutation of the page data
// keeps the signature valid and exercises the per-page digest check. Any ImageError is a correct
// refusal; a crash, a sanitizer report or a trusted image whose signature region is not well formed
// (abort) is a bug.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gdfs/format.h"
#include "gdfs/image.h"
#include "gdfs/trust.h"
#include "image_surgery.h"
#include "scratch_dir.h"

namespace {

using namespace gdfs;

// The public half of tests/fuzz/signature-test-key.pem (a test key: it signs nothing else).
constexpr char kTrustedKey[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEAB4Ro+qElQxvWR8Cc6hjfyyaLfMhC0XRd78TcwWT/+tU=\n"
    "-----END PUBLIC KEY-----\n";

const std::string& key_file() {
  static const gdfs::fuzz::ScratchDir dir("gdfs-fuzz-key");
  static const std::string path = [] {
    std::string p = dir.path() + "/trusted.pem";
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr || std::fwrite(kTrustedKey, 1, sizeof kTrustedKey - 1, f) != sizeof kTrustedKey - 1 ||
        std::fclose(f) != 0)
      std::abort();
    return p;
  }();
  return path;
}

void check(bool ok) {
  if (!ok) std::abort();
}

// Recomputes the signature region's checksum (then the superblock's), like surgery::reseal.
void reseal_signature(std::vector<uint8_t>& bytes) {
  format::Superblock sb = surgery::superblock(bytes);
  if (sb.sig_offset <= bytes.size() && sb.sig_size <= bytes.size() - sb.sig_offset)
    sb.sig_checksum = checksum64(bytes.data() + sb.sig_offset, sb.sig_size);
  surgery::put_superblock(bytes, sb);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  surgery::reseal(bytes);
  if (bytes.size() >= sizeof(format::Superblock)) reseal_signature(bytes);
  const format::Superblock sb = surgery::superblock(bytes);
  if (sb.sig_offset <= bytes.size() && sb.sig_size <= bytes.size() - sb.sig_offset)
    (void)trust::check_region(sb, {bytes.data() + sb.sig_offset, sb.sig_size});
  SourceOptions options;
  options.trusted_key = key_file();
  try {
    auto img = Image::open(memory_source(std::move(bytes), "fuzz.img"), "fuzz.img", options);
    check(img->trusted());
    PageDecoder dec;
    std::vector<uint8_t> buf(1 << 18);
    for (uint32_t ino = 1; ino <= img->inode_count(); ++ino) {
      if (img->type(ino) != format::kTypeReg) continue;
      try {
        img->read(ino, 0, std::min<uint64_t>(img->inode(ino).size, buf.size()), buf.data(), dec);
      } catch (const ImageError&) {  // a page that is not the signed one: refused, as it should be
      }
    }
  } catch (const ImageError&) {
  }
  return 0;
}
