#include "io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <istream>
#include <ostream>
#include <utility>

#include "gdfs/unique_fd.h"

namespace gdfs::tools {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw IoError("cannot " + what + " '" + path + "': " + std::strerror(error));
}

using Fd = UniqueFd;

std::vector<uint8_t> read_stream(std::istream& in) {
  std::vector<uint8_t> data;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) data.insert(data.end(), chunk, chunk + in.gcount());
  if (in.bad()) throw IoError("cannot read standard input");
  return data;
}

void write_all(int fd, std::span<const uint8_t> data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write", path, errno);
    data = data.subspan(static_cast<size_t>(n));
  }
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(022);  // read the umask: there is no way to do so without setting it
  ::umask(mask);
  return 0666 & ~mask;
}

void write_replacing(const std::string& path, std::span<const uint8_t> data, mode_t mode) {
  std::string temp = path + ".tmpXXXXXX";
  Fd fd(::mkstemp(temp.data()));
  if (fd.get() < 0) fail("create a temporary file for", path, errno);
  try {
    write_all(fd.get(), data, path);
    if (::fchmod(fd.get(), mode) != 0) fail("set the mode of", path, errno);
    if (::close(fd.release()) != 0) fail("write", path, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) fail("rename a temporary file to", path, errno);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
}

}  // namespace

std::vector<uint8_t> read_input(const std::string& path, std::istream& in) {
  if (path == "-") return read_stream(in);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail("open", path, errno);
  struct stat st {};
  std::vector<uint8_t> data;
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode)) data.reserve(static_cast<size_t>(st.st_size));
  uint8_t chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read", path, errno);
    if (n == 0) return data;
    data.insert(data.end(), chunk, chunk + n);
  }
}

void write_output(const std::string& path, std::span<const uint8_t> data, std::ostream& out) {
  if (path == "-") {
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) throw IoError("cannot write standard output");
    return;
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) fail("access", path, errno);
    return write_replacing(path, data, new_file_mode());
  }
  if (S_ISREG(st.st_mode)) return write_replacing(path, data, st.st_mode & 07777);
  Fd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  if (fd.get() < 0) fail("open", path, errno);
  write_all(fd.get(), data, path);
  if (::close(fd.release()) != 0) fail("write", path, errno);
}

}  // namespace gdfs::tools
