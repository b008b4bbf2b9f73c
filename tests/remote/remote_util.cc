#include "remote_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "cli_util.h"

namespace gdfs::test {
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// Removed at exit: ctest runs every test in a process of its own, each building its images here (up to
// 830 MB), so a directory left behind per process fills /tmp.
const std::string& scratch() {
  static TempDir dir("remote");
  static const bool opened = chmod(dir.path().c_str(), 0755) == 0;
  (void)opened;
  return dir.path();
}

std::string fresh_dir(const std::string& tag) {
  static int n = 0;
  const std::string p = scratch() + "/" + tag + "-" + std::to_string(n++);
  fs::create_directories(p);
  return p;
}

std::string www() {
  const std::string p = scratch() + "/www";
  fs::create_directories(p);
  return p;
}

void no_proxies() {
  for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"})
    unsetenv(v);
}

namespace {

std::vector<std::string> regular_files(const std::string& root) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it)
    if (fs::is_regular_file(it->symlink_status())) out.push_back(it->path().string().substr(root.size()));
  std::sort(out.begin(), out.end());
  return out;
}

void build(TestImage& img, const std::string& name) {
  img.name = name;
  img.file = www() + "/" + name;
  const CliResult r = run_mkfs({"-q", img.src, img.file});
  if (r.code != 0) throw std::runtime_error("mkfs.gdfs failed: " + r.err);
  img.files = regular_files(img.src);
}

}  // namespace

const TestImage& edge_image() {
  static TestImage* img = [] {
    auto* i = new TestImage;
    i->src = scratch() + "/edge";
    fs::create_directories(i->src);
    i->caps = make_edge_tree(i->src);
    build(*i, "edge.gdfs");
    return i;
  }();
  return *img;
}

const TestImage& data_image() {
  static TestImage* img = [] {
    auto* i = new TestImage;
    i->src = scratch() + "/data";
    fs::create_directories(i->src + "/small");
    write_text_file(i->src + "/text", 3 * 1000 * 1000 + 321, 7);
    std::mt19937_64 rng(42);
    std::string random(4 * 1024 * 1024 + 4097, '\0');
    for (char& c : random) c = static_cast<char>(rng());
    write_file(i->src + "/random", random);
    std::string mixed(1 << 20, '\0');
    for (size_t k = mixed.size() / 2; k < mixed.size(); ++k) mixed[k] = "gdfs remote "[k % 12];
    write_file(i->src + "/mixed", mixed);
    for (int k = 0; k < 60; ++k) write_text_file(i->src + "/small/f" + std::to_string(k), 10 + k * 997, k);
    i->caps.root = geteuid() == 0;
    build(*i, "data.gdfs");
    return i;
  }();
  return *img;
}

WebServer::WebServer(const TestCert* cert) {
  no_proxies();
  for (int attempt = 0; attempt < 3; ++attempt) {
    http = free_port();
    https = cert ? free_port() : 0;
    std::string servers = "  server { listen 127.0.0.1:" + std::to_string(http) + "; root " + www() + "; }\n";
    if (cert)
      servers += "  server { listen 127.0.0.1:" + std::to_string(https) + " ssl http2; root " + www() +
                 "; ssl_certificate " + cert->cert + "; ssl_certificate_key " + cert->key + "; }\n";
    std::vector<int> ports = {http};
    if (cert) ports.push_back(https);
    nginx = std::make_unique<Nginx>(fresh_dir("nginx"), servers, ports);
    if (nginx->ok()) return;
  }
}

std::string WebServer::http_url(const std::string& name) const {
  return "http://127.0.0.1:" + std::to_string(http) + "/" + name;
}

std::string WebServer::https_url(const std::string& name) const {
  return "https://127.0.0.1:" + std::to_string(https) + "/" + name;
}

namespace {

Bytes read_source(const std::string& path, uint64_t off, size_t len) {
  Bytes out(len);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  size_t got = 0;
  while (got < len) {
    const ssize_t n = pread(fd, out.data() + got, len - got, static_cast<off_t>(off + got));
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(got);
  return out;
}

Bytes read_reader(Reader& r, uint32_t ino, uint64_t off, size_t len) {
  Bytes out(len);
  out.resize(r.read(ino, off, len, out.data()));
  return out;
}

// Compares [off, off + len) of a file; false (after one failure message) on a difference.
bool same_range(Reader& r, uint32_t ino, const std::string& src, const std::string& path, uint64_t off,
                size_t len) {
  const Bytes want = read_source(src, off, len);
  const Bytes got = read_reader(r, ino, off, len);
  if (got == want) return true;
  ADD_FAILURE() << path << " at " << off << " +" << len << ": " << got.size()
                << " bytes differ from the source's " << want.size();
  return false;
}

}  // namespace

bool same_file(Reader& r, const TestImage& img, const std::string& path) {
  const std::string src = img.src + path;
  struct stat st {};
  if (lstat(src.c_str(), &st) != 0) return false;
  const uint32_t ino = r.lookup(path);
  if (r.stat(ino).size != static_cast<uint64_t>(st.st_size)) {
    ADD_FAILURE() << path << ": size " << r.stat(ino).size << ", source " << st.st_size;
    return false;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size <= (64u << 20)) return same_range(r, ino, src, path, 0, size + 100);
  // A large sparse file: its data segments, and samples of its holes.
  const int fd = open(src.c_str(), O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0;
  for (off_t pos = 0; ok && static_cast<uint64_t>(pos) < size;) {
    const off_t data = lseek(fd, pos, SEEK_DATA);
    if (data < 0) break;
    const off_t hole = lseek(fd, data, SEEK_HOLE);
    for (off_t at = data; ok && at < hole; at += 8 << 20)
      ok = same_range(r, ino, src, path, static_cast<uint64_t>(at), std::min<off_t>(8 << 20, hole - at));
    if (ok && static_cast<uint64_t>(hole) < size)  // the start of the next hole
      ok = same_range(r, ino, src, path, static_cast<uint64_t>(hole), 4096);
    pos = hole;
  }
  if (fd >= 0) close(fd);
  return ok && same_range(r, ino, src, path, size / 2, 4096) &&
         same_range(r, ino, src, path, size - 100, 200);
}

size_t expect_same_tree(Reader& r, const TestImage& img) {
  std::set<std::string> seen;
  size_t files = 0;
  r.walk([&](const std::string& path, const FileStat& st) {
    seen.insert(path);
    struct stat s {};
    if (lstat((img.src + path).c_str(), &s) != 0) {
      ADD_FAILURE() << path << ": in the image, not in the source";
      return;
    }
    EXPECT_EQ(st.mode & S_IFMT, s.st_mode & S_IFMT) << path;
    EXPECT_EQ(st.mode & 07777, s.st_mode & 07777) << path;
    if (S_ISLNK(s.st_mode)) {
      std::string target(4096, '\0');
      const ssize_t n = readlink((img.src + path).c_str(), target.data(), target.size());
      target.resize(n < 0 ? 0 : size_t(n));
      EXPECT_EQ(r.readlink(st.ino), target) << path;
    } else if (S_ISREG(s.st_mode)) {
      EXPECT_TRUE(same_file(r, img, path)) << path;
      ++files;
    }
  });
  for (auto it = fs::recursive_directory_iterator(img.src); it != fs::recursive_directory_iterator(); ++it)
    EXPECT_TRUE(seen.count(it->path().string().substr(img.src.size())))
        << it->path() << " missing from the image";
  return files;
}

size_t random_reads(Reader& r, const TestImage& img, uint64_t seed, int count, size_t max_len) {
  std::mt19937_64 rng(seed);
  size_t eio = 0;
  for (int i = 0; i < count; ++i) {
    const std::string& path = img.files[rng() % img.files.size()];
    const std::string src = img.src + path;
    struct stat st {};
    lstat(src.c_str(), &st);
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    const uint64_t off = size > (64u << 20) ? (4ull << 30) + rng() % (1 << 20) : rng() % (size + 1000);
    const size_t len = rng() % max_len;
    try {
      const uint32_t ino = r.lookup(path);
      const Bytes got = read_reader(r, ino, off, len);
      const Bytes want = read_source(src, off, len);
      if (got != want) ADD_FAILURE() << "WRONG BYTES: " << path << " at " << off << " +" << len;
    } catch (const ImageError& e) {
      if (e.code() != EIO) ADD_FAILURE() << "unexpected error: " << e.what();
      ++eio;
    }
  }
  return eio;
}

uint64_t tree_bytes(const std::string& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) n += it->file_size(ec);
  return n;
}

std::vector<std::string> files_named(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec) && it->path().string().ends_with(suffix)) out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t counter(Reader& r, const std::string& name) {
  const auto j = nlohmann::json::parse(r.stats_json());
  return j.contains(name) ? j[name].get<uint64_t>() : 0;
}

}  // namespace gdfs::test
