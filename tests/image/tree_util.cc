#include "tree_util.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gdfs::test {

namespace fs = std::filesystem;

namespace {

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what + ": " + std::strerror(errno));
}

void set_mtime(const std::string& path, int64_t sec, long nsec) {
  struct timespec ts[2] = {{sec, nsec}, {sec, nsec}};
  check(utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW) == 0, "utimensat " + path);
}

void write_at(const std::string& path, uint64_t off, const std::string& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  check(fd >= 0, "open " + path);
  check(pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(off)) == static_cast<ssize_t>(bytes.size()),
        "pwrite " + path);
  close(fd);
}

std::string text(uint64_t n, uint32_t seed) {
  static const char* words[] = {"page ", "gdfs ", "deflate ", "lane ", "warp ",  "inode ", "tail ",
                                "the ",  "of ",   "read ",    "\n",    "cache ", "42 ",    "zero "};
  std::mt19937 rng(seed);
  std::string s;
  s.reserve(n + 16);
  while (s.size() < n) s += words[rng() % (sizeof words / sizeof *words)];
  s.resize(n);
  return s;
}

bool try_xattr(const std::string& path) {
  return lsetxattr(path.c_str(), "user.gdfs.probe", "1", 1, 0) == 0 &&
         lremovexattr(path.c_str(), "user.gdfs.probe") == 0;
}

void make_files(const std::string& d) {
  write_file(d + "/empty", "");
  write_file(d + "/one", "x");
  write_text_file(d + "/page", 65536, 1);
  write_text_file(d + "/page+1", 65537, 2);
  write_text_file(d + "/pages+tail", 3 * 65536 + 1234, 3);
  write_text_file(d + "/big", 5 * 1024 * 1024 + 77, 4);
  write_text_file(d + "/dup-a", 256 * 1024 + 10, 5);  // dup-b is byte-identical: dedupe
  write_text_file(d + "/dup-b", 256 * 1024 + 10, 5);
  std::string rnd(200000, '\0');  // incompressible: stored pages
  std::mt19937 rng(9);
  for (char& c : rnd) c = static_cast<char>(rng());
  write_file(d + "/random", rnd);
  // Zero pages inside a file that was written densely: they must become holes.
  write_file(d + "/zeros-inside", text(1000, 6) + std::string(3 * 65536, '\0') + text(70000, 7));
  write_file(d + "/all-zero", std::string(200000, '\0'));
}

void make_sparse(const std::string& d) {
  const std::string f = d + "/sparse-5g";
  write_at(f, 1 << 20, text(5000, 11));
  write_at(f, (4ull << 30) + 100, text(70000, 12));  // data straddling pages past 4 GiB
  check(truncate(f.c_str(), 5ll << 30) == 0, "truncate " + f);
}

void make_tiny_files(const std::string& d) {
  fs::create_directory(d + "/tiny");
  for (int i = 0; i < 2000; ++i) {
    // Some are identical: their tails are deduplicated inside the packs.
    write_file(d + "/tiny/f" + std::to_string(i),
               i % 10 == 0 ? "same tiny content\n" : text(20 + i % 300, i));
  }
}

void make_links(const std::string& d) {
  check(symlink("page", (d + "/link-rel").c_str()) == 0, "symlink");
  check(symlink("/etc/passwd", (d + "/link-abs").c_str()) == 0, "symlink");
  check(symlink("does/not/exist", (d + "/link-dangling").c_str()) == 0, "symlink");
  check(symlink(std::string(1000, 'L').c_str(), (d + "/link-long").c_str()) == 0, "symlink");
  write_text_file(d + "/hard-1", 100000, 21);
  check(link((d + "/hard-1").c_str(), (d + "/hard-2").c_str()) == 0, "link");
  fs::create_directory(d + "/sub");
  check(link((d + "/hard-1").c_str(), (d + "/sub/hard-3").c_str()) == 0, "link");
  write_file(d + "/sub/hard-empty", "");
  check(link((d + "/sub/hard-empty").c_str(), (d + "/hard-empty-2").c_str()) == 0, "link");
}

void make_specials(const std::string& d, TreeCaps& caps) {
  check(mkfifo((d + "/fifo").c_str(), 0640) == 0, "mkfifo");
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = d + "/socket";
  if (sock.size() < sizeof addr.sun_path) {
    std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
    check(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "bind");
  } else {
    caps.notes.push_back("socket skipped: path too long for sockaddr_un");
  }
  close(s);
  if (!caps.root) {
    caps.notes.push_back("devices and foreign owners skipped: not root");
    return;
  }
  check(mknod((d + "/chr").c_str(), S_IFCHR | 0620, makedev(1, 3)) == 0, "mknod chr");
  check(mknod((d + "/blk").c_str(), S_IFBLK | 0660, makedev(259, 70000)) == 0, "mknod blk");
  check(lchown((d + "/page").c_str(), 1234, 5678) == 0, "lchown");
  check(lchown((d + "/link-rel").c_str(), 4321, 8765) == 0, "lchown");
  check(lchown((d + "/sub").c_str(), 65534, 65534) == 0, "lchown");
}

void make_names_and_modes(const std::string& d) {
  fs::create_directory(d + "/names");
  write_file(d + "/names/" + std::string(255, 'n'), "longest name");
  write_file(d + "/names/with space", "1");
  write_file(d + "/names/new\nline", "2");
  write_file(d + "/names/\xff\xfe high bytes", "3");
  write_file(d + "/names/-dash", "4");
  write_file(d + "/names/UPPER", "5");  // byte order puts it before lower case
  write_file(d + "/modes-suid", "s");
  check(chmod((d + "/modes-suid").c_str(), 04755) == 0, "chmod");
  write_file(d + "/modes-none", "n");
  check(chmod((d + "/modes-none").c_str(), 0) == 0, "chmod");
  fs::create_directory(d + "/sticky");
  check(chmod((d + "/sticky").c_str(), 01777) == 0, "chmod");
  fs::create_directory(d + "/empty-dir");
  std::string deep = d + "/deep";
  fs::create_directory(deep);
  for (int i = 0; i < 40; ++i) {
    deep += "/d" + std::to_string(i);
    fs::create_directory(deep);
  }
  write_file(deep + "/leaf", "deep leaf");
}

void make_xattrs(const std::string& d, TreeCaps& caps) {
  if (!caps.xattrs) {
    caps.notes.push_back("xattrs skipped: the test filesystem refuses user xattrs");
    return;
  }
  auto set = [](const std::string& p, const std::string& k, const std::string& v) {
    check(lsetxattr(p.c_str(), k.c_str(), v.data(), v.size(), 0) == 0, "lsetxattr " + p + " " + k);
  };
  set(d + "/page", "user.mime", "text/plain");
  set(d + "/page", "user.empty", "");
  set(d + "/page+1", "user.mime", "text/plain");  // page+1 and random share one xattr set
  set(d + "/random", "user.mime", "text/plain");
  set(d + "/sub", "user.dir", "on a directory");
  set(d + "/big", "user.binary", std::string("\0\x01\xff\n", 4));
  set(d + "/dup-a", "user.large", text(4000, 31));
  if (caps.root) set(d + "/one", "trusted.gdfs", "root-only namespace");
}

// Times last: creating entries above changes their directories' mtimes.
void set_times(const std::string& d) {
  set_mtime(d + "/one", 1700000000, 123456789);
  set_mtime(d + "/page", -86400 * 365, 5);  // 1969
  set_mtime(d + "/link-rel", 1600000000, 999999999);
  set_mtime(d + "/sub", 1500000000, 1);
  set_mtime(d, 1650000000, 42);
}

}  // namespace

TempDir::TempDir(const std::string& tag) {
  std::string base = fs::temp_directory_path().string() + "/gdfs-test-" + tag + "-XXXXXX";
  std::vector<char> buf(base.begin(), base.end());
  buf.push_back('\0');
  check(mkdtemp(buf.data()) != nullptr, "mkdtemp");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  // Extracted trees may hold mode-0 files and dirs; as root that does not matter, otherwise fix modes.
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) chmod(it->path().c_str(), 0755);
  }
  fs::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  check(fd >= 0, "open " + path);
  check(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()), "write " + path);
  close(fd);
}

void write_text_file(const std::string& path, uint64_t n, uint32_t seed) {
  write_file(path, text(n, seed));
}

TreeCaps make_edge_tree(const std::string& dir) {
  TreeCaps caps;
  caps.root = geteuid() == 0;
  write_file(dir + "/.probe", "");
  caps.xattrs = try_xattr(dir + "/.probe");
  unlink((dir + "/.probe").c_str());
  make_files(dir);
  make_sparse(dir);
  make_tiny_files(dir);
  make_links(dir);
  make_specials(dir, caps);
  make_names_and_modes(dir);
  make_xattrs(dir, caps);
  set_times(dir);
  return caps;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string fake_bytecode(const std::string& source, uint32_t seed) {
  std::string out = "\xa7\r\r\n";
  std::istringstream lines(source);
  std::string line;
  for (uint32_t k = 0; std::getline(lines, line); ++k) {
    if ((k + seed) % 3 == 0) continue;
    out += static_cast<char>(0xe0 + k % 16);
    out += static_cast<char>(k * 7 + seed);
    out += line;
  }
  return out;
}

void make_python_package(const std::string& root, int modules, bool matching) {
  std::filesystem::create_directories(root + "/pkg/__pycache__");
  for (int i = 0; i < modules; ++i) {
    const std::string name = "mod" + std::to_string(i);
    const std::string py = root + "/pkg/" + name + ".py";
    write_text_file(py, 9000 + 300 * i, 100 + i);
    const std::string pyc = (matching ? name : "other" + std::to_string(i)) + ".cpython-311.pyc";
    write_file(root + "/pkg/__pycache__/" + pyc, fake_bytecode(read_text(py), i));
  }
}

}  // namespace gdfs::test
