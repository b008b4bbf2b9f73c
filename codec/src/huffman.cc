#include "huffman.h"

#include <algorithm>
#include <array>
#include <cassert>

namespace gdfs::gdeflate {
namespace {

// A leaf as one sort key: frequency above the symbol, so plain integer order is (freq, sym) order and
// sorting needs no comparator (a sort of structs by a lambda is a visible share of level 1's time).
using LeafKey = uint64_t;
constexpr unsigned kSymBits = 9;  // n <= 288
inline uint32_t leaf_freq(LeafKey k) {
  return static_cast<uint32_t>(k >> kSymBits);
}
inline unsigned leaf_sym(LeafKey k) {
  return static_cast<unsigned>(k & ((1u << kSymBits) - 1));
}

// Depth of every leaf in an optimal (unlimited) Huffman tree, by the two-queue method: the leaves
// are sorted, and internal nodes are created in non-decreasing weight order, so both queues stay sorted.
//
// Scratch arrays are left uninitialised: every entry read is written first, and zeroing ~9 KiB per
// code would be a visible share of level 1's time (a page builds several codes).
void optimal_depths(const LeafKey* leaves, unsigned n, unsigned* depth) {
  std::array<uint64_t, 2 * 288> weight;
  std::array<uint16_t, 2 * 288> parent;
  unsigned leaf_i = 0, node_i = n, node_end = n;
  auto take = [&]() -> unsigned {
    if (leaf_i < n && (node_i == node_end || leaf_freq(leaves[leaf_i]) <= weight[node_i])) {
      weight[leaf_i] = leaf_freq(leaves[leaf_i]);
      return leaf_i++;
    }
    return node_i++;
  };
  for (unsigned k = 0; k + 1 < n; ++k) {
    const unsigned a = take();
    const unsigned b = take();
    weight[node_end] = weight[a] + weight[b];
    parent[a] = parent[b] = static_cast<uint16_t>(node_end);
    ++node_end;
  }
  // The root is node_end - 1; walk down from it (parents always have higher indices).
  std::array<uint16_t, 2 * 288> d;
  d[node_end - 1] = 0;
  for (int i = static_cast<int>(node_end) - 2; i >= 0; --i) d[i] = static_cast<uint16_t>(d[parent[i]] + 1);
  for (unsigned i = 0; i < n; ++i) depth[i] = d[i];
}

// Rebalances a length histogram so no code is longer than max_len while keeping the Kraft sum exact.
// Longer codes are folded into max_len, then codes are lengthened from the longest level below max_len
// until the code is complete again (the classic JPEG/miniz adjustment).
void limit_lengths(unsigned* count, unsigned max_depth, unsigned max_len) {
  for (unsigned i = max_len + 1; i <= max_depth; ++i) {
    count[max_len] += count[i];
    count[i] = 0;
  }
  uint64_t total = 0;
  for (unsigned i = 1; i <= max_len; ++i) total += static_cast<uint64_t>(count[i]) << (max_len - i);
  while (total > (uint64_t{1} << max_len)) {
    --count[max_len];
    for (unsigned i = max_len - 1; i > 0; --i) {
      if (count[i]) {
        --count[i];
        count[i + 1] += 2;
        break;
      }
    }
    --total;
  }
}

// Bytes with their bits reversed: canonical codes are sent LSB-first, and a table beats a bit loop.
constexpr auto kRev8 = [] {
  std::array<uint8_t, 256> t{};
  for (unsigned v = 0; v < 256; ++v) {
    unsigned r = 0;
    for (unsigned b = 0; b < 8; ++b) r |= ((v >> b) & 1u) << (7 - b);
    t[v] = static_cast<uint8_t>(r);
  }
  return t;
}();

// Sorts leaves by (freq, sym): a stable LSD radix sort on the frequency bytes, over leaves that arrive
// in symbol order. A few hundred keys with frequencies below 2^16 take two counting passes, where
// std::sort spent about twice as long comparing.
void sort_leaves(LeafKey* leaves, unsigned n) {
  uint32_t max_freq = 0;
  for (unsigned i = 0; i < n; ++i) max_freq |= leaf_freq(leaves[i]);
  std::array<LeafKey, 288> tmp;
  LeafKey *src = leaves, *dst = tmp.data();
  for (unsigned shift = 0; shift < 32 && (max_freq >> shift) != 0; shift += 8) {
    std::array<uint16_t, 256> start{};
    for (unsigned i = 0; i < n; ++i) ++start[(leaf_freq(src[i]) >> shift) & 255];
    unsigned sum = 0;
    for (unsigned d = 0; d < 256; ++d) {
      const unsigned c = start[d];
      start[d] = static_cast<uint16_t>(sum);
      sum += c;
    }
    for (unsigned i = 0; i < n; ++i) dst[start[(leaf_freq(src[i]) >> shift) & 255]++] = src[i];
    std::swap(src, dst);
  }
  if (src != leaves) std::copy(src, src + n, leaves);
}

}  // namespace

void build_code_lengths(const uint32_t* freq, unsigned n, unsigned max_len, uint8_t* lens) {
  assert(n <= 288 && n >= 2 && max_len >= 1 && max_len <= 15);
  std::array<LeafKey, 288> leaves;
  unsigned used = 0;
  for (unsigned s = 0; s < n; ++s) {
    lens[s] = 0;
    if (freq[s]) leaves[used++] = LeafKey{freq[s]} << kSymBits | s;
  }
  if (used < 2) {
    // Pad to a complete two-symbol code: the used symbol (if any) plus the lowest other one.
    const unsigned a = used ? leaf_sym(leaves[0]) : 0;
    const unsigned b = a == 0 ? 1 : 0;
    lens[a] = lens[b] = 1;
    return;
  }
  sort_leaves(leaves.data(), used);
  std::array<unsigned, 288> depth;
  optimal_depths(leaves.data(), used, depth.data());
  unsigned max_depth = 0;
  std::array<unsigned, 288> count;  // depths are below `used`
  std::fill(count.begin(), count.begin() + used, 0u);
  for (unsigned i = 0; i < used; ++i) {
    ++count[depth[i]];
    max_depth = std::max(max_depth, depth[i]);
  }
  if (max_depth > max_len) limit_lengths(count.data(), max_depth, max_len);
  // Hand the longest lengths to the rarest symbols (leaves are sorted by rising frequency).
  unsigned len = std::min(max_depth, max_len), i = 0;
  for (; len > 0; --len) {
    for (unsigned k = 0; k < count[len]; ++k) lens[leaf_sym(leaves[i++])] = static_cast<uint8_t>(len);
  }
  assert(i == used);
}

void build_canonical_codes(const uint8_t* lens, unsigned n, uint16_t* codes) {
  std::array<uint16_t, 16> count{}, next{};
  for (unsigned s = 0; s < n; ++s) ++count[lens[s]];
  count[0] = 0;
  uint16_t code = 0;
  for (unsigned len = 1; len <= 15; ++len) {
    code = static_cast<uint16_t>((code + count[len - 1]) << 1);
    next[len] = code;
  }
  for (unsigned s = 0; s < n; ++s) {
    const unsigned len = lens[s];
    if (!len) {
      codes[s] = 0;
      continue;
    }
    const unsigned c = next[len]++;
    codes[s] = static_cast<uint16_t>(((kRev8[c & 255] << 8) | kRev8[c >> 8]) >> (16 - len));
  }
}

}  // namespace gdfs::gdeflate
