#include "archive_input.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#ifndef GDFS_HAVE_ISAL
#define GDFS_HAVE_ISAL 0
#endif
#if GDFS_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
#ifndef GDFS_HAVE_LZMA_MT
#define GDFS_HAVE_LZMA_MT 0
#endif
#if GDFS_HAVE_LZMA_MT
#include <lzma.h>
#endif

#include "diag.h"
#include "gdfs/unique_fd.h"

namespace gdfs::mkfs {
namespace {

constexpr size_t kReadBlock = size_t{1} << 20;  // bytes per read of the archive file or pipe
constexpr size_t kOutBlock = size_t{1} << 20;   // inflated bytes handed to libarchive per call

[[maybe_unused]] bool gzip_magic(const uint8_t* p, size_t n) {
  return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

[[maybe_unused]] bool xz_magic(const uint8_t* p, size_t n) {
  static constexpr uint8_t kMagic[6] = {0xfd, '7', 'z', 'X', 'Z', 0};
  return n >= sizeof kMagic && std::memcmp(p, kMagic, sizeof kMagic) == 0;
}

constexpr size_t kMagicBytes = 6;  // the longest magic looked for

}  // namespace

struct ArchiveInput::Impl {
  enum class Mode { kLibarchive, kPlain, kGzip, kXz };

  std::string path, label;
  Diag& diag;
  UniqueFd owned;
  int fd = -1;
  Mode mode = Mode::kLibarchive;
  std::vector<uint8_t> in;  // bytes read from fd: a pipe's first block, or compressed bytes
  size_t in_size = 0;       // valid bytes in `in` (plain mode: not yet handed out)
  bool eof = false;
  std::string error;         // the first error, kept: libarchive may ask again
  std::vector<uint8_t> out;  // decompressed bytes handed to libarchive
  bool stream_end = false;
  bool damage = false;  // the error is damage, not an early end: bytes decoded before it may be wrong
  unsigned threads = 1;

  Impl(std::string p, std::string l, Diag& d, unsigned t)
      : path(std::move(p)), label(std::move(l)), diag(d), threads(std::max(1u, t)) {}

  la_ssize_t fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return -1;
  }

  // Reads the next block into `in` (after its first `keep` bytes). False on an error (then `error` says
  // it).
  bool read_block(size_t keep = 0) {
    in.resize(kReadBlock);
    for (;;) {
      const ssize_t n = ::read(fd, in.data() + keep, in.size() - keep);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail(std::string("read error: ") + std::strerror(errno)), false;
      in_size = keep + static_cast<size_t>(n);
      eof = n == 0;
      return true;
    }
  }

  la_ssize_t plain(const void** buf) {
    if (in_size == 0 && !eof && !read_block()) return -1;
    *buf = in.data();
    return static_cast<la_ssize_t>(std::exchange(in_size, 0));
  }

#if GDFS_HAVE_ISAL
  std::unique_ptr<inflate_state> st = std::make_unique<inflate_state>();
  bool in_member = false;
  uint64_t members = 0;   // gzip members finished
  uint64_t consumed = 0;  // compressed bytes before st->next_in, for messages

  bool refill() {
    if (!read_block()) return false;
    st->next_in = in.data();
    st->avail_in = static_cast<uint32_t>(in_size);
    return true;
  }

  std::string where() const {
    return "gzip member " + std::to_string(members + 1) + ", near compressed byte " +
           std::to_string(consumed - st->avail_in);
  }

  la_ssize_t damaged(int r) {
    const char* what = r == ISAL_INVALID_WRAPPER      ? "bad gzip header"
                       : r == ISAL_UNSUPPORTED_METHOD ? "not deflate-compressed"
                       : r == ISAL_INCORRECT_CHECKSUM ? "CRC-32 or length mismatch (the data is damaged)"
                       : r == ISAL_INVALID_LOOKBACK   ? "damaged data (a match reaches before the start)"
                                                      : "damaged data (an invalid deflate block or code)";
    damage = true;
    return fail(where() + ": " + what);
  }

  // Between members: zero bytes (padding some writers add) are skipped, the end of input ends the
  // stream, and another gzip header starts the next member (bgzip and `cat a.gz b.gz` write
  // several). Anything else is ignored with a warning, as gzip does. False at the end (or an error).
  bool next_member() {
    for (;;) {
      if (st->avail_in == 0) {
        if (eof) return stream_end = true, false;
        if (!refill()) return false;
        consumed += st->avail_in;
        continue;
      }
      if (st->next_in[0] == 0) {
        ++st->next_in;
        --st->avail_in;
        continue;
      }
      if (st->next_in[0] != 0x1f && members > 0) {
        diag.warn(label + ": data after the end of the gzip stream ignored");
        return stream_end = true, false;
      }
      uint8_t* const next_in = st->next_in;
      const uint32_t avail_in = st->avail_in;
      isal_inflate_reset(st.get());
      st->next_in = next_in;
      st->avail_in = avail_in;
      st->crc_flag = ISAL_GZIP;
      return in_member = true;
    }
  }

  // Up to kOutBlock inflated bytes in `out`; 0 at the end of the stream, -1 on an error.
  la_ssize_t inflate_some() {
    if (!error.empty()) return -1;
    out.resize(kOutBlock);
    st->next_out = out.data();
    st->avail_out = static_cast<uint32_t>(out.size());
    while (st->avail_out > 0 && !stream_end) {
      if (!in_member && !next_member()) break;
      if (st->avail_in == 0 && !eof) {
        if (!refill()) return -1;
        consumed += st->avail_in;
      }
      const uint32_t in_before = st->avail_in, out_before = st->avail_out;
      const int r = isal_inflate(st.get());
      if (r < 0) return damaged(r);
      if (st->block_state == ISAL_BLOCK_FINISH) {
        in_member = false;
        ++members;
      } else if (st->avail_in == in_before && st->avail_out == out_before && (eof || in_before > 0)) {
        // No progress: at the end of input that is a truncated stream; with input left it would loop.
        return fail(where() + (eof ? ": truncated" : ": no progress"));
      }
    }
    if (!error.empty()) return -1;
    return static_cast<la_ssize_t>(out.size() - st->avail_out);
  }
#endif

#if GDFS_HAVE_LZMA_MT
  // xz, decoded on several threads where the file has several blocks (as `xz -T` writes them), which
  // libarchive's one-thread decoder does not do; concatenated streams read as one. The memory bound
  // is libarchive's own (1 GiB); threads past 256 MiB of buffers fall back to fewer.
  lzma_stream xz = LZMA_STREAM_INIT;

  ~Impl() {
    lzma_end(&xz);
  }

  bool start_xz() {
    lzma_mt mt{};
    mt.flags = LZMA_CONCATENATED | LZMA_FAIL_FAST;
    mt.threads = threads;
    mt.memlimit_threading = uint64_t{256} << 20;
    mt.memlimit_stop = uint64_t{1} << 30;
    if (lzma_stream_decoder_mt(&xz, &mt) != LZMA_OK) return false;
    xz.next_in = in.data();
    xz.avail_in = in_size;
    return true;
  }

  la_ssize_t xz_failed(lzma_ret r) {
    const uint64_t at = xz.total_in;
    damage = r != LZMA_BUF_ERROR && r != LZMA_MEM_ERROR && r != LZMA_MEMLIMIT_ERROR;
    const char* what = r == LZMA_BUF_ERROR        ? "truncated"
                       : r == LZMA_MEM_ERROR      ? "out of memory"
                       : r == LZMA_MEMLIMIT_ERROR ? "it needs more than 1 GiB of memory to decode"
                       : r == LZMA_FORMAT_ERROR  ? "not xz data (damaged, or something else after the stream)"
                       : r == LZMA_OPTIONS_ERROR ? "options this xz decoder does not support"
                                                 : "damaged data (a block's check or size does not match)";
    return fail("xz stream, near compressed byte " + std::to_string(at) + ": " + what);
  }

  // Up to kOutBlock decoded bytes in `out`; 0 at the end of the stream, -1 on an error.
  la_ssize_t unxz_some() {
    if (!error.empty()) return -1;
    out.resize(kOutBlock);
    xz.next_out = out.data();
    xz.avail_out = out.size();
    while (xz.avail_out > 0 && !stream_end) {
      if (xz.avail_in == 0 && !eof) {
        if (!read_block()) return -1;
        xz.next_in = in.data();
        xz.avail_in = in_size;
      }
      const lzma_ret r = lzma_code(&xz, eof && xz.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
      if (r == LZMA_STREAM_END)
        stream_end = true;
      else if (r != LZMA_OK)
        return xz_failed(r);
    }
    return static_cast<la_ssize_t>(out.size() - xz.avail_out);
  }
#endif

  // The next decompressed (or plain) bytes for libarchive.
  la_ssize_t next_bytes(const void** buf) {
#if GDFS_HAVE_ISAL
    if (mode == Mode::kGzip) {
      const la_ssize_t n = inflate_some();  // first: it may move `out`
      *buf = out.data();
      return n;
    }
#endif
#if GDFS_HAVE_LZMA_MT
    if (mode == Mode::kXz) {
      const la_ssize_t n = unxz_some();
      *buf = out.data();
      return n;
    }
#endif
    return plain(buf);
  }

  static la_ssize_t read_callback(archive* a, void* self, const void** buf) {
    auto* me = static_cast<Impl*>(self);
    const la_ssize_t n = me->next_bytes(buf);
    if (n < 0) archive_set_error(a, EIO, "%s", me->error.c_str());
    return n;
  }
};

std::string archive_error(archive* a) {
  const char* s = archive_error_string(a);
  return s != nullptr ? s : "unknown error";
}

ArchiveInput::ArchiveInput(std::string path, std::string label, Diag& diag, unsigned threads)
    : impl_(std::make_unique<Impl>(std::move(path), std::move(label), diag, threads)) {}

ArchiveInput::~ArchiveInput() = default;

void ArchiveInput::open(archive* a) {
  Impl& m = *impl_;
  const bool stdin_source = m.path == "-";
  if (stdin_source) {
    m.fd = STDIN_FILENO;
  } else {
    m.owned.reset(::open(m.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (m.owned.get() < 0) throw MkfsError(io_message("open", m.path, errno));
    m.fd = m.owned.get();
  }
  // Look at the first bytes without taking them where the input can seek; a pipe's first block is read
  // and handed on.
  const off_t at = ::lseek(m.fd, 0, SEEK_CUR);
  uint8_t peek[kMagicBytes] = {};
  size_t peeked = 0;
  if (at >= 0) {
    peeked = static_cast<size_t>(std::max<ssize_t>(0, ::pread(m.fd, peek, kMagicBytes, at)));
  } else {
    do {  // a pipe may give the magic a byte at a time
      if (!m.read_block(m.in_size)) throw MkfsError("cannot read " + m.label + ": " + m.error);
    } while (m.in_size < kMagicBytes && !m.eof);
    peeked = std::min(m.in_size, kMagicBytes);
    std::memcpy(peek, m.in.data(), peeked);
  }
#if GDFS_HAVE_ISAL
  if (gzip_magic(peek, peeked)) {
    m.mode = Impl::Mode::kGzip;
    m.st->next_in = m.in.data();
    m.st->avail_in = static_cast<uint32_t>(m.in_size);
    m.consumed = m.in_size;
  }
#endif
#if GDFS_HAVE_LZMA_MT
  if (xz_magic(peek, peeked) && m.start_xz()) m.mode = Impl::Mode::kXz;
#endif
  if (m.mode == Impl::Mode::kLibarchive && at >= 0) {
    // libarchive reads a file itself: it can then seek in it (a zip's central directory).
    m.owned.reset();
    const int r = stdin_source ? archive_read_open_fd(a, STDIN_FILENO, kReadBlock)
                               : archive_read_open_filename(a, m.path.c_str(), kReadBlock);
    if (r != ARCHIVE_OK) throw MkfsError("cannot read " + m.label + ": " + archive_error(a));
    return;
  }
  if (m.mode == Impl::Mode::kLibarchive) m.mode = Impl::Mode::kPlain;
  if (archive_read_open(a, &m, nullptr, &Impl::read_callback, nullptr) != ARCHIVE_OK)
    throw MkfsError("cannot read " + m.label + ": " + archive_error(a));
}

void ArchiveInput::finish() {
  Impl& m = *impl_;
  if (m.mode != Impl::Mode::kGzip && m.mode != Impl::Mode::kXz) return;
  if (m.error.empty()) {
    la_ssize_t n = 0;
    const void* buf = nullptr;
    while ((n = m.next_bytes(&buf)) > 0) {
    }
    if (n == 0) return;
  } else if (!m.damage) {
    return;  // an early end, reported for the member it cut: what came before it is sound
  }
  // Damage met while members were read was reported for one member (and skipped under --ignore-errors),
  // but a CRC covers a whole gzip member (or xz block): members before it may hold wrong bytes.
  throw MkfsError("cannot read " + m.label + ": " + m.error);
}

bool ArchiveInput::inflates_gzip() {
  return GDFS_HAVE_ISAL != 0;
}

bool ArchiveInput::decodes_xz() {
  return GDFS_HAVE_LZMA_MT != 0;
}

}  // namespace gdfs::mkfs
