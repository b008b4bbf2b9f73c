// nvCOMP's host (CPU) GDeflate codec, bound at run time: a compatibility oracle for our pages (the
// NvcompOracle tests) and a row of `gdeflate bench`. Nothing of nvCOMP is needed to build; the library
// is libnvcomp_cpu.so.6 from NVIDIA's pip wheel nvidia-libnvcomp-cu13 (scripts/lib.sh fetches it).
//
// The three functions are C++ (namespace nvcomp::gdeflate, header nvcomp/native/gdeflate_cpu.h of
// nvCOMP 6.0.0). The declarations below are ours, written from those documented signatures; their
// Itanium-mangled names are what we look up (checked with `nm -D` on 6.0.0.12's libnvcomp_cpu.so.6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace gdfs::nvcomp_cpu {

// The environment variable that names the library; "none" (or empty) means: do not use nvCOMP.
inline constexpr const char* kEnvVar = "GDFS_NVCOMP_CPU_LIB";

// $GDFS_NVCOMP_CPU_LIB when set, else `fallback`. Empty when the choice is "none" or empty.
std::string library_path(const std::string& fallback);

// nvCOMP's page limits (gdeflate_cpu.h): chunks of 1..65536 bytes, levels 0..12.
inline constexpr size_t kMaxChunkBytes = 65536;
inline constexpr int kMaxLevel = 12;

class HostGdeflate {
 public:
  // dlopens `path` and binds the three functions. Throws std::runtime_error with the path and the reason
  // (not loadable, or a symbol missing: another nvCOMP whose signatures differ from 6.0's).
  static std::unique_ptr<HostGdeflate> open(const std::string& path);
  ~HostGdeflate();
  HostGdeflate(const HostGdeflate&) = delete;
  HostGdeflate& operator=(const HostGdeflate&) = delete;

  const std::string& path() const { return path_; }

  // What compressCPUGetMaxOutputChunkSize promises for chunks of up to `n` bytes (1..65536).
  size_t max_output(size_t n) const;
  // The output buffer we hand compressCPU for any page: twice its promise for 64 KiB plus 4 KiB. nvCOMP
  // 6.0.0.12 writes more than its promise on some pages (docs/GDEFLATE.md), so the promise cannot size a
  // buffer.
  size_t output_capacity() const { return capacity_; }

  // Compresses `in` (1..65536 bytes; nvCOMP divides by zero on empty input) at `level` (0..12) into one
  // page in `out`, which must hold output_capacity() bytes. Returns the page size, or 0 when nvCOMP
  // refuses the page (nvcompErrorCannotCompress: 6.0.0.12 does so on some nearly incompressible pages).
  // Throws std::runtime_error on any other nvCOMP error, and aborts when it reports a page larger than
  // `out` (it has then written past the buffer: the heap is no longer trustworthy).
  size_t compress(std::span<const uint8_t> in, int level, std::span<uint8_t> out) const;

  // Decodes one page into `out` (nvCOMP may fill all of it). Returns the byte count nvCOMP reports, or
  // throws std::runtime_error with nvCOMP's message when it rejects the page. nvCOMP does not bounds-check
  // its input: a malformed page may be read past its end, so give it readable bytes after the page.
  size_t decompress(std::span<const uint8_t> page, std::span<uint8_t> out) const;

 private:
  // nvcomp::gdeflate::compressCPUGetMaxOutputChunkSize(size_t, size_t*)
  using MaxOutputFn = void (*)(size_t max_uncompressed_chunk_bytes, size_t* max_compressed_chunk_bytes);
  // nvcomp::gdeflate::compressCPU(const void* const*, const size_t*, size_t, size_t, void* const*,
  //                               size_t*, int level)
  using CompressFn = void (*)(const void* const* in_ptr, const size_t* in_bytes,
                              size_t max_uncompressed_chunk_bytes, size_t batch_size, void* const* out_ptr,
                              size_t* out_bytes, int level);
  // nvcomp::gdeflate::decompressCPU(const void* const*, const size_t*, size_t, void* const*, size_t*,
  //                                 size_t*): out_buffer_bytes is a non-const pointer in 6.0.
  using DecompressFn = void (*)(const void* const* in_ptr, const size_t* in_bytes, size_t batch_size,
                                void* const* out_ptr, size_t* out_buffer_bytes, size_t* out_bytes);

  HostGdeflate() = default;

  std::string path_;
  void* handle_ = nullptr;
  MaxOutputFn max_output_ = nullptr;
  CompressFn compress_ = nullptr;
  DecompressFn decompress_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace gdfs::nvcomp_cpu
