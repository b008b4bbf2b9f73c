// GDeflate page codec: DEFLATE with DEFLATE64 lengths/distances, its codes interleaved into 32 lanes.
//
// One "page" is at most 64 KiB of uncompressed data, encoded as one raw GDeflate bitstream (a multiple of
// 4 bytes, at least 132 bytes). The API follows libdeflate: one object per level and per thread, no
// global state, a status that separates bad data from a size mismatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gdfs/page_status.h"

namespace gdfs::gdeflate {

inline constexpr size_t kMaxPageBytes = 65536;  // largest uncompressed page
inline constexpr int kMinLevel = 0;             // 0 = stored blocks only
inline constexpr int kMaxLevel = 12;
inline constexpr int kDefaultLevel = 6;
inline constexpr unsigned kLanes = 32;

// Exact size of the all-stored encoding of `n` bytes (n <= 64 KiB). Our encoder never exceeds it.
size_t stored_size(size_t n);
// Worst-case compressed size for `n` input bytes; an output buffer this big always suffices.
size_t compress_bound(size_t n);

class Compressor {
 public:
  explicit Compressor(int level = kDefaultLevel);  // throws std::invalid_argument outside 0..12
  ~Compressor();
  Compressor(Compressor&&) noexcept;
  Compressor& operator=(Compressor&&) noexcept;

  // Compresses `n` <= kMaxPageBytes bytes into one page. Returns the page size in bytes, or 0 when
  // `out_cap` is too small (never the case for out_cap >= compress_bound(n)). Deterministic.
  size_t compress(const void* in, size_t n, void* out, size_t out_cap);
  int level() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Which decoder implementation runs. All give identical output and status on every input; kAuto picks
// the best the CPU has, checked at run time: AVX-512, then AVX2, then the portable scalar code.
enum class DecodePath : uint8_t { kAuto, kScalar, kAvx512, kAvx2 };

class Decompressor {
 public:
  // A path the CPU lacks falls back to the next one down (kAvx512 -> kAvx2 -> kScalar).
  explicit Decompressor(DecodePath path = DecodePath::kAuto);
  ~Decompressor();
  Decompressor(Decompressor&&) noexcept;
  Decompressor& operator=(Decompressor&&) noexcept;

  // Decodes one page of exactly `in_size` bytes into exactly `out_size` (<= 64 KiB) bytes. Never reads
  // outside [in, in+in_size) nor writes outside [out, out+out_size). Every input word must be consumed:
  // trailing words are kBadData (see docs/GDEFLATE.md for why). Returns kOk, kBadData or kSizeMismatch.
  PageStatus decompress(const void* in, size_t in_size, void* out, size_t out_size);
  DecodePath path() const;  // the implementation actually in use (never kAuto)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdfs::gdeflate
