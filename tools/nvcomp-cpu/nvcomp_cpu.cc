#include "nvcomp_cpu.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <type_traits>

namespace gdfs::nvcomp_cpu {
namespace {

// Why mangled names rather than a shim compiled against nvCOMP's header at configure time:
// - The build never needs the wheel, so a wheel fetched after configuring (or removed) changes nothing
//   but the test outcome: no stale CMake cache, no second compile path that only some machines take.
// - The mangled name encodes every parameter type, so binding by it checks the signature: an nvCOMP
//   whose functions take other arguments has other names, and open() fails with the missing symbol
//   instead of calling it with the wrong arguments. A shim would check this too, but only where the
//   header happens to be present at configure time.
// - No NVIDIA header is compiled or committed; these names are facts read off the library with nm -D.
// Itanium C++ ABI (GCC and Clang on Linux) with size_t = unsigned long ('m'): the wheel is x86-64 Linux.
constexpr const char* kMaxOutputSymbol = "_ZN6nvcomp8gdeflate32compressCPUGetMaxOutputChunkSizeEmPm";
constexpr const char* kCompressSymbol = "_ZN6nvcomp8gdeflate11compressCPUEPKPKvPKmmmPKPvPmi";
constexpr const char* kDecompressSymbol = "_ZN6nvcomp8gdeflate13decompressCPUEPKPKvPKmmPKPvPmSA_";

// nvCOMP reports errors as C++ exceptions (nvcomp::NVCompException, a std::exception). They cross the
// dlopen boundary like any other: both sides share the process's libstdc++.
template <class Call>
void call_nvcomp(const char* what, Call call) {
  try {
    call();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("nvCOMP ") + what + ": " + e.what());
  } catch (...) {
    throw std::runtime_error(std::string("nvCOMP ") + what + ": unknown exception");
  }
}

// The nvcompStatus_t at the end of an nvCOMP exception message ("...: code=19."), or -1.
constexpr int kCannotCompress = 19;  // nvcompErrorCannotCompress (nvCOMP 6.0 shared_types.h)
int status_in_message(const char* what) {
  const char* code = std::strstr(what, "code=");
  return code ? std::atoi(code + 5) : -1;
}

}  // namespace

std::string library_path(const std::string& fallback) {
  const char* env = std::getenv(kEnvVar);
  const std::string chosen = env ? env : fallback;
  return chosen == "none" ? std::string() : chosen;
}

std::unique_ptr<HostGdeflate> HostGdeflate::open(const std::string& path) {
  std::unique_ptr<HostGdeflate> lib(new HostGdeflate());
  lib->path_ = path;
  // RTLD_LOCAL: the library carries its own libdeflate fork (libdeflate_* symbols); kept local, they
  // cannot take the place of the stock libdeflate that `gdeflate bench` links.
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* e = dlerror();
    throw std::runtime_error("cannot load " + path + ": " + (e ? e : "dlopen failed"));
  }
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib->handle_, name));
    if (!fn)
      throw std::runtime_error(
          path + " has no " + name +
          " (not nvCOMP 6's host GDeflate API: the wheel pinned in scripts/lib.sh has it)");
  };
  bind(lib->max_output_, kMaxOutputSymbol);
  bind(lib->compress_, kCompressSymbol);
  bind(lib->decompress_, kDecompressSymbol);
  lib->capacity_ = 2 * lib->max_output(kMaxChunkBytes) + 4096;
  return lib;
}

HostGdeflate::~HostGdeflate() {
  if (handle_) dlclose(handle_);
}

size_t HostGdeflate::max_output(size_t n) const {
  size_t max = 0;
  call_nvcomp("compressCPUGetMaxOutputChunkSize", [&] { max_output_(n, &max); });
  return max;
}

size_t HostGdeflate::compress(std::span<const uint8_t> in, int level, std::span<uint8_t> out) const {
  if (in.empty() || in.size() > kMaxChunkBytes)
    throw std::invalid_argument("nvCOMP compressCPU takes 1..65536 bytes, not " + std::to_string(in.size()));
  if (out.size() < capacity_)
    throw std::invalid_argument("nvCOMP compressCPU needs an output buffer of output_capacity() bytes");
  const void* in_ptr = in.data();
  const size_t in_bytes = in.size();
  void* out_ptr = out.data();
  size_t out_bytes = 0;
  try {
    compress_(&in_ptr, &in_bytes, kMaxChunkBytes, 1, &out_ptr, &out_bytes, level);
  } catch (const std::exception& e) {
    // The exception's type is nvCOMP's (we have no header to name it); its message ends with the
    // nvcompStatus_t, and 19 is nvcompErrorCannotCompress: the encoder gave up on this page.
    if (status_in_message(e.what()) == kCannotCompress) return 0;
    throw std::runtime_error(std::string("nvCOMP compressCPU: ") + e.what());
  } catch (...) {
    throw std::runtime_error("nvCOMP compressCPU: unknown exception");
  }
  if (out_bytes > out.size()) {
    std::fprintf(stderr, "nvCOMP compressCPU wrote %zu bytes into a %zu-byte buffer: heap corrupted\n",
                 out_bytes, out.size());
    std::abort();
  }
  return out_bytes;
}

size_t HostGdeflate::decompress(std::span<const uint8_t> page, std::span<uint8_t> out) const {
  const void* in_ptr = page.data();
  const size_t in_bytes = page.size();
  void* out_ptr = out.data();
  size_t out_buffer_bytes = out.size();
  size_t out_bytes = 0;
  call_nvcomp("decompressCPU",
              [&] { decompress_(&in_ptr, &in_bytes, 1, &out_ptr, &out_buffer_bytes, &out_bytes); });
  return out_bytes;
}

}  // namespace gdfs::nvcomp_cpu
