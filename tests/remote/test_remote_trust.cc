// Signed images over HTTP (FORMAT.md 7.1, docs/SECURITY.md): nginx stands in for a hostile server or
// cache that serves whatever bytes it likes, and a disk cache is altered between two opens. A reader
// with trusted_key refuses what is not signed by its key, and returns EIO, never a wrong byte, for
// a page that is not the signed one, wherever the bytes came from.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "cli_util.h"
#include "gdfs/checksum.h"
#include "gdfs/image.h"
#include "key_util.h"
#include "remote_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kPage = 65536;

#define REQUIRE_SERVER(server) \
  if (!(server).ok()) GTEST_SKIP() << "cannot start the test server: " << (server).error()

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_random(const std::string& path, uint64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  write_file(path, s);
}

// Two signed images of trees with the same names and sizes, served from www()/trust/; /f's pages are
// stored as they are (random bytes), so a page of B lies where the same page of A does.
struct Signed {
  std::string dir = fresh_dir("trust");
  KeyPair key = make_key_pair(dir + "/key"), other = make_key_pair(dir + "/other");
  std::string a = dir + "/a", b = dir + "/b";
  Signed() {
    for (const std::string& t : {a, b}) {
      fs::create_directories(t);
      write_random(t + "/f", 4 * kPage, t == a ? 1 : 2);
      write_text_file(t + "/text", 200000, 3);
    }
    fs::create_directories(www() + "/trust");
    EXPECT_EQ(run_mkfs({"-q", "--force", a, www() + "/trust/A.gdfs", "--sign", key.priv}).code, 0);
    EXPECT_EQ(run_mkfs({"-q", "--force", b, www() + "/trust/B.gdfs", "--sign", key.priv}).code, 0);
    EXPECT_EQ(run_mkfs({"-q", "--force", a, www() + "/trust/U.gdfs"}).code, 0);
    EXPECT_EQ(run_mkfs({"-q", "--force", a, www() + "/trust/O.gdfs", "--sign", other.priv}).code, 0);
  }
  // Where page `page` of /f is stored in A (and B).
  format::PageEntry entry_of_f(uint64_t page) const {
    auto img = Image::open(www() + "/trust/A.gdfs");
    return img->pages()[img->page_ref(img->resolve("/f"), page).entry];
  }
};

ReaderOptions options(const std::string& key) {
  ReaderOptions o;
  o.threads = 2;
  o.cache_size = 64 << 20;
  o.decoder = DecoderChoice::kCpu;
  o.source.trusted_key = key;
  return o;
}

// Reads all of `path`; the errno of the failure, or 0 with the bytes compared to `src`.
int read_compare(Reader& r, const std::string& path, const std::string& src) {
  std::string got(r.stat(path).size, '\0');
  try {
    r.read(path, 0, got.size(), got.data());
  } catch (const ImageError& e) {
    return e.code();
  }
  EXPECT_EQ(got, slurp(src)) << path << ": wrong bytes";
  return 0;
}

TEST(RemoteTrust, AHostileServerIsRefusedOrEioWithNoWrongByte) {
  no_proxies();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  Signed s;
  {
    auto r = Reader::open(web.http_url("trust/A.gdfs"), options(s.key.pub));
    EXPECT_EQ(read_compare(*r, "/f", s.a + "/f"), 0);
    EXPECT_EQ(read_compare(*r, "/text", s.a + "/text"), 0);
  }
  for (const char* name : {"trust/U.gdfs", "trust/O.gdfs"}) {
    try {
      Reader::open(web.http_url(name), options(s.key.pub));
      ADD_FAILURE() << name << " was opened";
    } catch (const ImageError& e) {
      EXPECT_EQ(e.code(), EACCES) << e.what();
    }
  }
  // The server swaps in B's third page of /f: a valid page of an image signed by the same key.
  const format::PageEntry e = s.entry_of_f(2);
  Bytes a = read_bytes(www() + "/trust/A.gdfs");
  const Bytes b = read_bytes(www() + "/trust/B.gdfs");
  std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(e.offset), e.csize,
              a.begin() + static_cast<std::ptrdiff_t>(e.offset));
  write_bytes(www() + "/trust/swapped.gdfs", a);
  auto r = Reader::open(web.http_url("trust/swapped.gdfs"), options(s.key.pub));
  EXPECT_EQ(read_compare(*r, "/f", s.a + "/f"), EIO);
  std::string two(2 * kPage, '\0');
  EXPECT_EQ(r->read("/f", 0, two.size(), two.data()), two.size()) << "the pages before it still read";
  EXPECT_EQ(two, slurp(s.a + "/f").substr(0, two.size()));
  EXPECT_EQ(read_compare(*r, "/text", s.a + "/text"), 0);
  EXPECT_GE(counter(*r, "bad_pages"), 1u);
}

TEST(RemoteTrust, ADiskCacheAlteredBetweenReadsIsEio) {
  no_proxies();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  Signed s;
  ReaderOptions o = options(s.key.pub);
  o.source.cache_dir = fresh_dir("trust-cache");
  {
    auto r = Reader::open(web.http_url("trust/A.gdfs"), o);
    EXPECT_EQ(read_compare(*r, "/f", s.a + "/f"), 0);
  }
  // The image is one cache block (1 MiB): a 64-byte header, then the image's bytes. Put B's page in
  // place of A's and make the block's own checksums match, as anyone who can write the folder could.
  const auto blocks = files_named(o.source.cache_dir, ".blk");
  ASSERT_EQ(blocks.size(), 1u);
  const format::PageEntry e = s.entry_of_f(3);
  const Bytes b = read_bytes(www() + "/trust/B.gdfs");
  Bytes blk = read_bytes(blocks[0]);
  constexpr size_t kHeader = 64, kDataCheck = 32, kHeaderCheck = 56;
  ASSERT_GE(blk.size(), kHeader + e.offset + e.csize);
  std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(e.offset), e.csize,
              blk.begin() + static_cast<std::ptrdiff_t>(kHeader + e.offset));
  const uint64_t data_check = checksum64(blk.data() + kHeader, blk.size() - kHeader);
  std::memcpy(blk.data() + kDataCheck, &data_check, 8);
  const uint64_t header_check = checksum64(blk.data(), kHeaderCheck);
  std::memcpy(blk.data() + kHeaderCheck, &header_check, 8);
  write_bytes(blocks[0], blk);
  auto r = Reader::open(web.http_url("trust/A.gdfs"), o);
  EXPECT_GT(counter(*r, "disk_cache_hits"), 0u) << "the altered block was used";
  EXPECT_EQ(read_compare(*r, "/f", s.a + "/f"), EIO);
  EXPECT_EQ(read_compare(*r, "/text", s.a + "/text"), 0);
}

}  // namespace
}  // namespace gdfs::test
