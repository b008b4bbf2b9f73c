// The x86 branch filter's loops (gdfs/x86_filter.h). The scan is the whole cost: decode runs on every
// read of a filtered page, so it tests 32 positions at a time with AVX2 where the CPU has it.
#include "gdfs/x86_filter.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "cpu.h"
#include "x86_filter_paths.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gdfs::x86 {
namespace {

// "No opcode since the last site": far enough back that no window of kLookback bytes reaches it.
constexpr ptrdiff_t kNoOpcode = PTRDIFF_MIN / 2;

// The definition's scan from position `i`, given the last opcode byte at or after the last site
// (`last_op`, or kNoOpcode); `site(data, pos)` is called at each site. Returns how many there were.
template <typename Site>
size_t scan_scalar(uint8_t* data, size_t n, size_t i, ptrdiff_t last_op, Site&& site) {
  size_t sites = 0;
  while (i + kSiteBytes <= n) {
    if (is_opcode(data[i])) {
      if (is_top_byte(data[i + 4]) &&
          static_cast<ptrdiff_t>(i) - last_op > static_cast<ptrdiff_t>(kLookback)) {
        site(data, i);
        ++sites;
        i += kSiteBytes;
        last_op = kNoOpcode;
        continue;
      }
      last_op = static_cast<ptrdiff_t>(i);
    }
    ++i;
  }
  return sites;
}

#if defined(__x86_64__)
// The SIMD scans test a block of 32 or 64 positions at once. No byte a position's test reads is
// rewritten by a site before it (the header says why), so one block's tests can all be made before any
// of its sites is rewritten; the sites are then picked from the candidates in position order, as the
// scan would. This is the picking, and the state carried from block to block.
struct BlockScan {
  using u128 = unsigned __int128;
  size_t next = 0;     // the first position not inside a site
  uint64_t carry = 0;  // opcode bits of the kLookback positions before the block
  size_t sites = 0;

  // The block of kWidth (32 or 64) positions at `i`: bit j of `op_bits` and `candidates` is position i + j.
  // 32-position blocks keep `ops` in 64 bits: 128-bit masks made the AVX2 scan a third slower.
  template <size_t kWidth, typename Site>
  void block(uint8_t* data, size_t i, uint64_t op_bits, uint64_t candidates, Site&& site) {
    using Ops = std::conditional_t<kWidth == 32, uint64_t, u128>;
    const Ops ops = Ops{op_bits} << kLookback | carry;  // bit b: position i - kLookback + b
    carry = static_cast<uint64_t>(ops >> kWidth);
    if (next > i) candidates &= ~uint64_t{0} << (next - i);  // next - i <= 4
    // Most blocks of code: no candidate within 4 bytes after another, and no opcode at all in the 3
    // bytes before any (counting those inside a site too, so more than bar one). Then each candidate
    // is a site on its own, and the sites need no order.
    const uint64_t after_another = candidates << 1 | candidates << 2 | candidates << 3 | candidates << 4;
    const auto opcode_before = static_cast<uint64_t>(ops | ops >> 1 | ops >> 2);  // bit j: i+j-3 .. i+j-1
    if (!(candidates & (after_another | opcode_before))) {
      if (candidates) next = i + (63 - static_cast<size_t>(__builtin_clzll(candidates))) + kSiteBytes;
      for (; candidates; candidates &= candidates - 1, ++sites)
        site(data, i + static_cast<size_t>(__builtin_ctzll(candidates)));
      return;
    }
    while (candidates) {
      const size_t j = static_cast<size_t>(__builtin_ctzll(candidates));
      // The window: positions max(next, i + j - 3) .. i + j - 1, as bits of `ops`.
      const size_t lo = std::max(j, next + kLookback > i ? next + kLookback - i : 0);
      if (ops & ((Ops{1} << (j + kLookback)) - (Ops{1} << lo))) {
        candidates &= candidates - 1;
        continue;
      }
      site(data, i + j);
      ++sites;
      next = i + j + kSiteBytes;
      candidates &= ~(uint64_t{0x1F} << j);  // the site and the 4 bytes it rewrote
    }
  }

  // The positions from `i` on, by the scalar scan, which needs the last opcode at or after `next`.
  template <typename Site>
  size_t finish(uint8_t* data, size_t n, size_t i, Site&& site) {
    ptrdiff_t last_op = kNoOpcode;
    if (next <= i)
      for (size_t b = 0; b < kLookback; ++b)
        if ((carry >> b & 1) && i - kLookback + b >= next)
          last_op = static_cast<ptrdiff_t>(i - kLookback + b);
    return sites + scan_scalar(data, n, std::max(next, i), last_op, site);
  }
};

template <typename Site>
__attribute__((target("avx2"))) size_t scan_avx2(uint8_t* data, size_t n, Site&& site) {
  const __m256i fe = _mm256_set1_epi8(static_cast<char>(0xFE));
  const __m256i e8 = _mm256_set1_epi8(static_cast<char>(0xE8));
  const __m256i ff = _mm256_set1_epi8(static_cast<char>(0xFF));
  const __m256i zero = _mm256_setzero_si256();
  BlockScan scan;
  size_t i = 0;
  for (; i + 32 + 4 <= n; i += 32) {
    const __m256i op = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    const __m256i top = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 4));
    const __m256i is_op = _mm256_cmpeq_epi8(_mm256_and_si256(op, fe), e8);
    const __m256i is_top = _mm256_or_si256(_mm256_cmpeq_epi8(top, zero), _mm256_cmpeq_epi8(top, ff));
    scan.block<32>(data, i, static_cast<uint32_t>(_mm256_movemask_epi8(is_op)),
                   static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_and_si256(is_op, is_top))), site);
  }
  return scan.finish(data, n, i, site);
}

// 64 positions a block: 4.8 against 5.9 us a page of code for scan_avx2, in cache
// (bench/results/2026-11-27-x86-filter-vm.txt).
template <typename Site>
__attribute__((target("avx512f,avx512bw"))) size_t scan_avx512(uint8_t* data, size_t n, Site&& site) {
  const __m512i fe = _mm512_set1_epi8(static_cast<char>(0xFE));
  const __m512i e8 = _mm512_set1_epi8(static_cast<char>(0xE8));
  const __m512i ff = _mm512_set1_epi8(static_cast<char>(0xFF));
  const __m512i zero = _mm512_setzero_si512();
  BlockScan scan;
  size_t i = 0;
  for (; i + 64 + 4 <= n; i += 64) {
    const __m512i op = _mm512_loadu_si512(data + i);
    const __m512i top = _mm512_loadu_si512(data + i + 4);
    const uint64_t op_bits = _mm512_cmpeq_epi8_mask(_mm512_and_si512(op, fe), e8);
    const uint64_t top_bits = _mm512_cmpeq_epi8_mask(top, zero) | _mm512_cmpeq_epi8_mask(top, ff);
    scan.block<64>(data, i, op_bits, op_bits & top_bits, site);
  }
  return scan.finish(data, n, i, site);
}
#endif

template <typename Site>
size_t scan_on(ScanPath path, uint8_t* data, size_t n, Site&& site) {
#if defined(__x86_64__)
  if (path == ScanPath::kAvx512) return scan_avx512(data, n, site);
  if (path == ScanPath::kAvx2) return scan_avx2(data, n, site);
#endif
  (void)path;
  return scan_scalar(data, n, 0, kNoOpcode, site);
}

// The fastest path this CPU has.
template <typename Site>
size_t scan(uint8_t* data, size_t n, Site&& site) {
  static const ScanPath best = path_usable(ScanPath::kAvx512) ? ScanPath::kAvx512
                               : path_usable(ScanPath::kAvx2) ? ScanPath::kAvx2
                                                              : ScanPath::kScalar;
  return scan_on(best, data, n, site);
}

uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void store32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

const auto kEncodeSite = [](uint8_t* d, size_t pos) {
  store32(d + pos + 1, encode_site(load32(d + pos + 1), static_cast<uint32_t>(pos)));
};
const auto kDecodeSite = [](uint8_t* d, size_t pos) {
  store32(d + pos + 1, decode_site(load32(d + pos + 1), static_cast<uint32_t>(pos)));
};
// The scan never writes through the counting callback.
const auto kCountSite = [](uint8_t*, size_t) {};

}  // namespace

size_t count_sites(const uint8_t* data, size_t n) {
  return scan(const_cast<uint8_t*>(data), n, kCountSite);  // the cast only shares the scan's code
}

bool looks_like_code(const uint8_t* data, size_t n) {
  return n >= kCodeBytesPerSite && count_sites(data, n) >= n / kCodeBytesPerSite;
}

void encode(uint8_t* data, size_t n) {
  scan(data, n, kEncodeSite);
}

void decode(uint8_t* data, size_t n) {
  scan(data, n, kDecodeSite);
}

bool path_usable(ScanPath path) {
  const CpuFeatures cpu = cpu_features();
  return path == ScanPath::kScalar || (path == ScanPath::kAvx2 && cpu.avx2) ||
         (path == ScanPath::kAvx512 && cpu.avx512f && cpu.avx512bw);
}

size_t run_path(ScanPath path, int direction, uint8_t* data, size_t n) {
  if (direction > 0) return scan_on(path, data, n, kEncodeSite);
  if (direction < 0) return scan_on(path, data, n, kDecodeSite);
  return scan_on(path, data, n, kCountSite);
}

}  // namespace gdfs::x86
