// The x86 branch filter's loops (gdfs/x86_filter.h). The scan is the whole cost: decode runs on every
// read of a filtered page, so it tests 32 positions at a time with AVX2 where the CPU has it.
#include "gdfs/x86_filter.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "cpu.h"

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
// The same scan, 32 positions a test. No byte a position's test reads is rewritten by a site before
// it (the header says why), so one block's tests can all be made before any of its sites is rewritten;
// the sites are then picked from the candidates in position order, as the scan would.
template <typename Site>
__attribute__((target("avx2"))) size_t scan_avx2(uint8_t* data, size_t n, Site&& site) {
  const __m256i fe = _mm256_set1_epi8(static_cast<char>(0xFE));
  const __m256i e8 = _mm256_set1_epi8(static_cast<char>(0xE8));
  const __m256i ff = _mm256_set1_epi8(static_cast<char>(0xFF));
  const __m256i zero = _mm256_setzero_si256();
  size_t sites = 0;
  size_t next = 0;     // the first position not inside a site
  uint64_t carry = 0;  // opcode bits of the kLookback positions before the block
  size_t i = 0;
  for (; i + 32 + 4 <= n; i += 32) {
    const __m256i op = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    const __m256i top = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 4));
    const __m256i is_op = _mm256_cmpeq_epi8(_mm256_and_si256(op, fe), e8);
    const __m256i is_top = _mm256_or_si256(_mm256_cmpeq_epi8(top, zero), _mm256_cmpeq_epi8(top, ff));
    const auto op_bits = static_cast<uint32_t>(_mm256_movemask_epi8(is_op));
    // Bit b of `ops` is position i - kLookback + b.
    const uint64_t ops = uint64_t{op_bits} << kLookback | carry;
    carry = ops >> 32;
    uint64_t candidates = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_and_si256(is_op, is_top)));
    if (next > i) candidates &= ~uint64_t{0} << (next - i);  // next - i <= 4
    // Most blocks of code: no candidate within 4 bytes after another, and no opcode at all in the 3
    // bytes before any (counting those inside a site too, so more than bar one). Then each candidate
    // is a site on its own, and the sites need no order.
    const uint64_t after_another = candidates << 1 | candidates << 2 | candidates << 3 | candidates << 4;
    const uint64_t opcode_before = ops | ops >> 1 | ops >> 2;  // bit j: positions i + j - 3 .. i + j - 1
    if (!(candidates & (after_another | opcode_before))) {
      if (candidates) next = i + (63 - static_cast<size_t>(__builtin_clzll(candidates))) + kSiteBytes;
      for (; candidates; candidates &= candidates - 1, ++sites)
        site(data, i + static_cast<size_t>(__builtin_ctzll(candidates)));
      continue;
    }
    while (candidates) {
      const size_t j = static_cast<size_t>(__builtin_ctzll(candidates));
      // The window: positions max(next, i + j - 3) .. i + j - 1, as bits of `ops`.
      const size_t lo = std::max(j, next + kLookback > i ? next + kLookback - i : 0);
      const uint64_t window = (uint64_t{1} << (j + kLookback)) - (uint64_t{1} << lo);
      if (ops & window) {
        candidates &= candidates - 1;
        continue;
      }
      site(data, i + j);
      ++sites;
      next = i + j + kSiteBytes;
      candidates &= ~(uint64_t{0x1F} << j);  // the site and the 4 bytes it rewrote
    }
  }
  // The scalar tail needs the last opcode at or after `next` before where it starts.
  ptrdiff_t last_op = kNoOpcode;
  if (next <= i)
    for (size_t b = 0; b < kLookback; ++b)
      if ((carry >> b & 1) && i - kLookback + b >= next) last_op = static_cast<ptrdiff_t>(i - kLookback + b);
  return sites + scan_scalar(data, n, std::max(next, i), last_op, site);
}
#endif

template <typename Site>
size_t scan(uint8_t* data, size_t n, Site&& site) {
#if defined(__x86_64__)
  static const bool avx2 = cpu_features().avx2;
  if (avx2) return scan_avx2(data, n, site);
#endif
  return scan_scalar(data, n, 0, kNoOpcode, site);
}

uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void store32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

}  // namespace

size_t count_sites(const uint8_t* data, size_t n) {
  // The scan never writes through a counting callback; the cast only shares its code.
  return scan(const_cast<uint8_t*>(data), n, [](uint8_t*, size_t) {});
}

bool looks_like_code(const uint8_t* data, size_t n) {
  return n >= kCodeBytesPerSite && count_sites(data, n) >= n / kCodeBytesPerSite;
}

void encode(uint8_t* data, size_t n) {
  scan(data, n, [](uint8_t* d, size_t pos) {
    store32(d + pos + 1, encode_site(load32(d + pos + 1), static_cast<uint32_t>(pos)));
  });
}

void decode(uint8_t* data, size_t n) {
  scan(data, n, [](uint8_t* d, size_t pos) {
    store32(d + pos + 1, decode_site(load32(d + pos + 1), static_cast<uint32_t>(pos)));
  });
}

}  // namespace gdfs::x86
