// The adaptive bit-plane page codec ("bitpack", codec 3): lossless per-block fixed-rate coding of
// little-endian int16 or int32 samples, after a block-local first difference (cuSZp's Lorenzo + plain
// or outlier-selection fixed-length coding, as cuSZp2 and FZGPUModules' AdaptiveBitpackStage describe it).
// Meant for numeric files: PCM audio, sensor streams, 16-bit images, integer columns.
//
// A page's bitstream has no header: how to read it (sample type, block size, mode, stride) is the 16-bit
// PageEntry::param, and its decoded size is PageEntry::usize. docs/FORMAT.md, section 4.1, is the
// normative layout. The functions are stateless (no tables, no scratch beyond the stack), so unlike
// GDeflate there is no compressor or decompressor object to keep per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "gdfs/page_status.h"

namespace gdfs::bitpack {

enum class Type : uint8_t { kInt16 = 0, kInt32 = 1 };
enum class Mode : uint8_t {
  kPlain = 0,    // every block: sign bitmap and bit-planes of all its samples
  kOutlier = 1,  // each block may instead store its first sample whole (cuSZp2's outlier selection)
};

inline constexpr unsigned kMinBlock = 1;
inline constexpr unsigned kMaxBlock = 1024;
inline constexpr unsigned kDefaultBlock = 32;  // cuSZp's
inline constexpr unsigned kMaxStride = 15;

struct Params {
  Type type = Type::kInt16;
  Mode mode = Mode::kPlain;
  uint16_t block = kDefaultBlock;  // samples per block, 1..1024
  // 0: samples are coded as they are. s >= 1: each sample minus the one s samples earlier in its block
  // (s = the channel count of interleaved multi-channel data); must be below `block`.
  uint8_t stride = 1;
  bool operator==(const Params&) const = default;
};

inline unsigned sample_bytes(Type t) {
  return t == Type::kInt16 ? 2 : 4;
}
bool valid(const Params& p);
// PageEntry::param: bit 0 type, bit 1 mode, bits 2..11 block - 1, bits 12..15 stride.
uint16_t to_param(const Params& p);                // p must be valid
std::optional<Params> from_param(uint16_t param);  // nullopt when the value breaks a rule of valid()

// Largest encoding of `n` bytes with `p`: an output buffer this big always suffices.
size_t compress_bound(size_t n, const Params& p);
// The exact size compress() would return, without writing anything: cheap (one pass, no output),
// so a caller can try several Params and keep the best.
size_t compressed_size(const void* in, size_t n, const Params& p);
// Encodes `n` bytes (any count; a trailing partial sample is carried as raw bytes). Returns the
// encoded size, or 0 when `out_cap` is too small or `p` is not valid. Deterministic.
size_t compress(const void* in, size_t n, const Params& p, void* out, size_t out_cap);

// Which decoder runs. Every path gives the same bytes and status on every input. kAuto takes the best
// the CPU has, checked at run time: AVX-512 (with VBMI and GFNI), then AVX2, then the portable code. A
// path the CPU lacks falls back to the next one down (kAvx512 -> kAvx2 -> kPortable). The vector paths
// cover int16 and int32 pages with blocks of 16, 32, 64 and 128 samples (what mkfs picks from); any
// other block size is decoded by the portable code whatever the path.
enum class DecodePath : uint8_t { kAuto, kPortable, kAvx512, kAvx2 };
const char* path_name(DecodePath p);
DecodePath decode_path(DecodePath want);  // what `want` resolves to on this CPU (never kAuto)

// Decodes exactly `in_size` bytes into exactly `out_size` bytes. The input is untrusted: it never reads
// outside [in, in+in_size) nor writes outside [out, out+out_size), and every input byte must be
// accounted for by the block metadata (trailing or missing bytes are kBadData). Returns kOk, kBadData
// (a bad rate or selector, sizes that do not add up to the input size) or kUnsupported (`p` is not
// valid()).
PageStatus decompress(const void* in, size_t in_size, const Params& p, void* out, size_t out_size,
                      DecodePath path = DecodePath::kAuto);

}  // namespace gdfs::bitpack
