// A program that knows gdfs only through its installed tree (headers and libgdfs.so found by
// `pkg-config gdfs`): it does what the FUSE daemon does, through the same public calls. Every file of
// SOURCE_DIR is stat'ed and read (whole, through a zero-copy view, and in one batch) and compared with
// the source; the sparse file's holes are walked with SEEK_DATA/SEEK_HOLE; errors carry their errno.
// usage: use_libgdfs IMAGE SOURCE_DIR SPARSE_PATH      exit 0 and one "ok" line, or a message and 1
#include <gdfs/reader.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "use_libgdfs: %s\n", what.c_str());
  ++failures;
}

std::vector<char> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int errno_of(auto&& fn) {
  try {
    fn();
  } catch (const gdfs::ImageError& e) {
    return e.code();
  }
  return 0;
}

// Each regular file: stat as the kernel would see it, a copy, a view, and a batch of its halves.
size_t check_files(gdfs::Reader& r, const std::filesystem::path& src) {
  size_t files = 0;
  gdfs::ReadView view;
  r.walk([&](const std::string& path, const gdfs::FileStat& st) {
    if (!S_ISREG(st.mode) || st.size > (64u << 20)) return;
    const std::vector<char> want = slurp(src.string() + path);
    struct stat s {};
    ::lstat((src.string() + path).c_str(), &s);
    check(st.size == want.size() && (st.mode & 07777) == (s.st_mode & 07777), path + ": stat");
    check(st.blksize == r.image().page_size() && st.blocks <= (st.size + 511) / 512, path + ": blocks");
    check(r.lookup(r.path(st.ino)) == st.ino, path + ": path of the inode");
    std::vector<char> got(st.size);
    check(r.read(st.ino, 0, got.size(), got.data()) == got.size() && got == want, path + ": read");
    std::vector<char> viewed(st.size);
    check(r.read(st.ino, 0, st.size, view) == st.size && view.copy_to(viewed.data()) == st.size &&
              viewed == want,
          path + ": read into a view");
    std::vector<char> a(st.size / 2), b(st.size - st.size / 2);
    gdfs::ReadRequest reqs[2];
    reqs[0].ino = reqs[1].ino = st.ino;
    reqs[0].length = a.size();
    reqs[0].dst = a.data();
    reqs[1].offset = a.size();
    reqs[1].length = b.size();
    reqs[1].dst = b.data();
    r.read_batch(reqs);
    a.insert(a.end(), b.begin(), b.end());
    check(reqs[0].error == 0 && reqs[1].error == 0 && a == want, path + ": batch read");
    ++files;
  });
  return files;
}

// SEEK_DATA/SEEK_HOLE alternate up to the end of file; holes read as zeros.
int check_holes(gdfs::Reader& r, const std::string& sparse) {
  const uint32_t ino = r.lookup(sparse);
  const uint64_t size = r.stat(ino).size;
  int regions = 0;
  for (uint64_t off = 0; off < size;) {
    uint64_t data = 0;
    if (errno_of([&] { data = r.seek(ino, off, gdfs::Seek::kData); }) == ENXIO) break;
    char byte = 1;
    if (data > off) check(r.read(ino, off, 1, &byte) == 1 && byte == 0, sparse + ": a hole that is not zero");
    off = r.seek(ino, data, gdfs::Seek::kHole);
    check(off > data, sparse + ": SEEK_HOLE did not move past data");
    ++regions;
  }
  check(r.stat(ino).blocks * 512 < size, sparse + ": holes counted in st_blocks");
  return regions;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: use_libgdfs IMAGE SOURCE_DIR SPARSE_PATH\n");
    return 2;
  }
  try {
    gdfs::ReaderOptions opt;
    opt.decoder = *gdfs::parse_decoder_choice("cpu");
    auto r = gdfs::Reader::open(argv[1], opt);
    const size_t files = check_files(*r, argv[2]);
    const int regions = check_holes(*r, argv[3]);
    check(regions >= 2, "the sparse file has fewer than 2 data regions");
    check(r->lookup(gdfs::format::kRootIno, "no such name") == 0, "a missing name is not 0");
    check(errno_of([&] { r->lookup("/no/such"); }) == ENOENT, "lookup of a missing path is not ENOENT");
    check(errno_of([&] { gdfs::Reader::open(std::string(argv[2]) + "/missing.gdfs"); }) == ENOENT,
          "opening a missing image is not ENOENT");
    check(r->counters().at("cache_misses") > 0, "the counters did not count");
    if (failures) return 1;
    std::printf("ok: %zu files, %d data regions in %s, decoder %s\n", files, regions, argv[3],
                r->decoder_name());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "use_libgdfs: %s (errno %d)\n", e.what(), gdfs::error_code(e));
    return 1;
  }
}
