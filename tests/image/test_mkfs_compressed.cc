// mkfs.gdfs from compressed archives that it decompresses itself: gzip with ISA-L and xz with liblzma's
// multi-threaded decoder, where built with them. Several gzip members or xz blocks and streams, padding,
// header fields and pipes read as the plain archive does, and a damaged stream (bad data, CRC or length,
// truncation, damage after the archive's end) fails the build, naming the archive, with no image left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#if GDFS_TEST_XZ
#include <lzma.h>
#endif

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "archive_input.h"
#include "archive_util.h"
#include "cli_util.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// One gzip member of `data`, with the optional header fields filled in where asked.
Bytes gzip_member(const uint8_t* data, size_t size, bool header_fields = false) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string extra = "GD\x04\x00gdfs", name = "m.tar", comment = "a comment";
  gz_header h{};
  if (header_fields) {
    h.extra = reinterpret_cast<Bytef*>(extra.data());
    h.extra_len = static_cast<uInt>(extra.size());
    h.name = reinterpret_cast<Bytef*>(name.data());
    h.comment = reinterpret_cast<Bytef*>(comment.data());
    h.hcrc = 1;
    EXPECT_EQ(deflateSetHeader(&z, &h), Z_OK);
  }
  Bytes out(deflateBound(&z, size) + 64);
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void append(Bytes& to, const Bytes& more) {
  to.insert(to.end(), more.begin(), more.end());
}

#if GDFS_TEST_XZ
// `data` as one xz stream of blocks of `block` bytes, written by two threads.
Bytes xz_stream(const uint8_t* data, size_t size, uint64_t block) {
  lzma_mt mt{};
  mt.threads = 2;
  mt.block_size = block;
  mt.preset = 1;
  mt.check = LZMA_CHECK_CRC64;
  lzma_stream z = LZMA_STREAM_INIT;
  EXPECT_EQ(lzma_stream_encoder_mt(&z, &mt), LZMA_OK);
  z.next_in = data;
  z.avail_in = size;
  Bytes out, buf(1 << 20);
  lzma_ret r = LZMA_OK;
  do {
    z.next_out = buf.data();
    z.avail_out = buf.size();
    r = lzma_code(&z, LZMA_FINISH);
    out.insert(out.end(), buf.data(), buf.data() + (buf.size() - z.avail_out));
  } while (r == LZMA_OK);
  EXPECT_EQ(r, LZMA_STREAM_END);
  lzma_end(&z);
  return out;
}
#endif

// Incompressible bytes, so that a member's data is larger than the inflater's output blocks.
std::string noise(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (char& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return s;
}

// Compressible bytes: words from a small list.
std::string words(size_t n, uint32_t seed) {
  static const char* const list[] = {"page ", "tail ", "gzip ", "member ", "archive ", "image\n"};
  std::string s;
  while (s.size() < n) {
    seed = seed * 1664525u + 1013904223u;
    s += list[(seed >> 24) % std::size(list)];
  }
  s.resize(n);
  return s;
}

class CompressedArchive : public ::testing::Test {
 protected:
  void SetUp() override {
    write_members({{"a.txt", 'f', words(5000, 1)},
                   {"dir/b.bin", 'f', noise(3 << 20, 2)},
                   {"dir/c.txt", 'f', words(70000, 3)},
                   {"link", 'l', "a.txt"}},
                  dir_ / "m.tar");
    tar_ = read_bytes(dir_ / "m.tar");
    ASSERT_EQ(run_mkfs({"-q", dir_ / "m.tar", dir_ / "plain.gdfs"}).code, 0);
  }
  std::string image() const { return dir_ / "m.gdfs"; }
  CliResult mkfs_from(const Bytes& gz) {
    write_bytes(dir_ / "m.tgz", gz);
    return run_mkfs({"-q", dir_ / "m.tgz", image()});
  }
  // The build from `gz` gives the same image as the plain tar's.
  void expect_same_image(const Bytes& gz) {
    const CliResult r = mkfs_from(gz);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(read_bytes(image()) == read_bytes(dir_ / "plain.gdfs"));
  }
  // A failed build: exit 1, an error naming the archive and saying `what`, no image or temp file.
  void expect_refused(const Bytes& gz, const std::string& what) {
    const CliResult r = mkfs_from(gz);
    last_err_ = r.err;
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("archive '" + dir_ / "m.tgz" + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(image()));
    for (const auto& e : fs::directory_iterator(dir_.path()))
      EXPECT_EQ(e.path().filename().string().find(".gdfs-tmp"), std::string::npos) << e.path();
  }
  // mkfs.gdfs - with `gz` written into its standard input by a pipe, in pieces of 1 to 100,000 bytes (the
  // first alone), so that reads see pieces of the magic, of headers and of codes.
  CliResult mkfs_from_pipe(const Bytes& gz) {
    std::signal(SIGPIPE, SIG_IGN);  // mkfs may stop reading early
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    std::thread writer([&] {
      const size_t sizes[] = {1, 1, 7, 4096, 100000};
      for (size_t at = 0, k = 0; at < gz.size(); ++k) {
        if (k == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const ssize_t n = write(fds[1], gz.data() + at, std::min<size_t>(gz.size() - at, sizes[k % 5]));
        if (n <= 0) break;
        at += static_cast<size_t>(n);
      }
      close(fds[1]);
    });
    const int saved = dup(STDIN_FILENO);
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    const CliResult r = run_mkfs({"-q", "-", image()});
    dup2(saved, STDIN_FILENO);  // closes the pipe's last read end: a writer still going gets EPIPE
    close(saved);
    writer.join();
    return r;
  }
  Bytes whole() const { return gzip_member(tar_.data(), tar_.size()); }
  // The archive's member, then a second of 4 MiB (after the tar's end) whose CRC is wrong.
  Bytes damaged_after_the_end() const {
    Bytes gz = whole();
    const std::string junk = noise(4 << 20, 9);
    Bytes tail = gzip_member(reinterpret_cast<const uint8_t*>(junk.data()), junk.size());
    tail[tail.size() - 6] ^= 1;
    append(gz, tail);
    return gz;
  }
  static void require_isal() {
    if (!mkfs::ArchiveInput::inflates_gzip())
      GTEST_SKIP() << "built without ISA-L: libarchive inflates gzip, and reads only up to the archive's end";
  }
  TempDir dir_{"archive-compressed"};
  Bytes tar_;
  std::string last_err_;
};

TEST_F(CompressedArchive, OneMember) {
  expect_same_image(whole());
}

// bgzip and `cat a.gz b.gz` write several members; cuts fall inside tar headers and data alike.
TEST_F(CompressedArchive, SeveralMembersWithZeroPaddingReadAsOne) {
  Bytes gz;
  const size_t cuts[] = {0, 700, 1000000, 2500001, tar_.size()};
  for (size_t i = 0; i + 1 < std::size(cuts); ++i)
    append(gz, gzip_member(tar_.data() + cuts[i], cuts[i + 1] - cuts[i]));
  append(gz, gzip_member(tar_.data(), 0));  // an empty member
  gz.resize(gz.size() + 4096, 0);
  expect_same_image(gz);
}

TEST_F(CompressedArchive, HeaderWithExtraNameCommentAndHeaderCrc) {
  expect_same_image(gzip_member(tar_.data(), tar_.size(), true));
}

// A pipe cannot be looked at without taking its bytes: the first bytes read decide, and are passed on.
TEST_F(CompressedArchive, FromAPipe) {
  const CliResult r = mkfs_from_pipe(whole());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(read_bytes(image()) == read_bytes(dir_ / "plain.gdfs"));
}

// From a pipe that gives the magic a byte at a time, the stream is still inflated here, and checked to
// its end.
TEST_F(CompressedArchive, DamageAfterTheArchiveEndIsFoundFromAPipeToo) {
  require_isal();
  const CliResult r = mkfs_from_pipe(damaged_after_the_end());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("gzip member 2, near compressed byte"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(image()));
}

TEST_F(CompressedArchive, DamagedDataIsRefused) {
  Bytes gz = whole();
  for (size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i) gz[i] ^= 0xa5;
  expect_refused(gz, "");
}

TEST_F(CompressedArchive, WrongCrcIsRefused) {
  require_isal();
  Bytes gz = whole();
  gz[gz.size() - 8] ^= 1;
  expect_refused(gz, "CRC-32 or length mismatch");
}

TEST_F(CompressedArchive, WrongLengthIsRefused) {
  require_isal();
  Bytes gz = whole();
  gz[gz.size() - 2] ^= 1;
  expect_refused(gz, "CRC-32 or length mismatch");
}

TEST_F(CompressedArchive, TruncatedStreamIsRefused) {
  require_isal();
  Bytes gz = whole();
  gz.resize(gz.size() - 5);
  expect_refused(gz, "truncated");
}

// libarchive stops reading at the archive's end marker; the rest of the stream is still checked.
TEST_F(CompressedArchive, DamageAfterTheArchiveEndIsRefused) {
  require_isal();
  expect_refused(damaged_after_the_end(), "gzip member 2, near compressed byte");
  EXPECT_NE(last_err_.find("CRC-32 or length mismatch"), std::string::npos);
}

TEST_F(CompressedArchive, GarbageAfterTheStreamIsIgnoredWithAWarning) {
  require_isal();
  Bytes gz = whole();
  const std::string junk = "not gzip";
  gz.insert(gz.end(), junk.begin(), junk.end());
  const CliResult r = mkfs_from(gz);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("data after the end of the gzip stream ignored"), std::string::npos) << r.err;
  EXPECT_TRUE(read_bytes(image()) == read_bytes(dir_ / "plain.gdfs"));
}

}  // namespace
}  // namespace gdfs::test

#if GDFS_TEST_XZ
namespace gdfs::test {
namespace {

class CompressedXz : public CompressedArchive {
 protected:
  void SetUp() override {
    CompressedArchive::SetUp();
    if (!mkfs::ArchiveInput::decodes_xz()) GTEST_SKIP() << "built without liblzma 5.4: libarchive decodes xz";
  }
  Bytes blocks() const { return xz_stream(tar_.data(), tar_.size(), 256 << 10); }
};

TEST_F(CompressedXz, SeveralBlocksAndStreamsReadAsThePlainArchive) {
  expect_same_image(blocks());
  fs::remove(image());
  // Two streams, cut inside the data, and stream padding (four zero bytes) between them.
  Bytes two = xz_stream(tar_.data(), 1000000, 1 << 20);
  two.resize(two.size() + 4, 0);
  append(two, xz_stream(tar_.data() + 1000000, tar_.size() - 1000000, 1 << 20));
  expect_same_image(two);
}

TEST_F(CompressedXz, FromAPipe) {
  const CliResult r = mkfs_from_pipe(blocks());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(read_bytes(image()) == read_bytes(dir_ / "plain.gdfs"));
}

TEST_F(CompressedXz, TruncatedStreamIsRefused) {
  Bytes xz = blocks();
  xz.resize(xz.size() - 30);
  expect_refused(xz, "truncated");
}

TEST_F(CompressedXz, DamagedBlockIsRefused) {
  Bytes xz = blocks();
  for (size_t i = xz.size() / 2; i < xz.size() / 2 + 16; ++i) xz[i] ^= 0x5a;
  expect_refused(xz, "xz stream, near compressed byte");
}

TEST_F(CompressedXz, DamageAfterTheArchiveEndIsRefused) {
  Bytes xz = blocks();
  const std::string junk = noise(4 << 20, 9);
  Bytes tail = xz_stream(reinterpret_cast<const uint8_t*>(junk.data()), junk.size(), 1 << 20);
  tail[tail.size() / 2] ^= 1;
  append(xz, tail);
  expect_refused(xz, "xz stream, near compressed byte");
}

}  // namespace
}  // namespace gdfs::test
#endif
