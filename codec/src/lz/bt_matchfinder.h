// Binary-tree match finder for the near-optimal levels.
//
// Every 4-byte hash bucket roots a binary search tree of earlier positions, ordered by the bytes that
// follow them and rebuilt on each insertion so that the newest position becomes the root (the scheme
// of LZMA's bt4 and libdeflate's bt_matchfinder). Walking down the tree visits the candidates that share
// the longest prefixes with the current position first, so one descent yields every useful match length
// with (roughly) its nearest distance. A one-entry table on 3-byte hashes adds length-3 matches.
//
// Slots hold pos + 1 (0 = empty) in 16 bits: a page has at most 65536 bytes and only positions with 4
// readable bytes are inserted (pos <= 65532). The whole page is the window, so there is no cutoff.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hash_chain.h"  // Match
#include "lz_util.h"

namespace gdfs::gdeflate::lz {

class BtMatchFinder {
 public:
  static constexpr unsigned kBits4 = 16;
  static constexpr unsigned kBits3 = 14;

  BtMatchFinder() : head4_(1u << kBits4), head3_(1u << kBits3), child_(2 * 65536) {}

  void reset() {
    std::fill(head4_.begin(), head4_.end(), 0);
    std::fill(head3_.begin(), head3_.end(), 0);
  }

  // Inserts pos (pos + 4 <= n) and writes its matches to `out` in increasing length order; returns how
  // many. Tree compares stop at `nice` (so a long run costs O(nice) per position, not O(run)); the
  // longest match, if it reached nice, is then extended to its true length, up to max_len. At most
  // depth tree nodes are visited. `out` needs room for depth + 1 entries.
  unsigned find(const uint8_t* in, uint32_t pos, uint32_t max_len, uint32_t nice, unsigned depth,
                Match* out) {
    return walk<true>(in, pos, max_len, nice, depth, out);
  }

  // Inserts pos (pos + 4 <= n) without reporting matches: used for bytes inside a taken long match.
  void skip(const uint8_t* in, uint32_t pos, uint32_t max_len, uint32_t nice, unsigned depth) {
    walk<false>(in, pos, max_len, nice, depth, nullptr);
  }

 private:
  template <bool kReport>
  unsigned walk(const uint8_t* in, uint32_t pos, uint32_t max_len, uint32_t nice, unsigned depth,
                Match* out) {
    const uint8_t* cur = in + pos;
    const uint32_t v = load32(cur);
    const uint32_t lim = min_u32(max_len, nice);
    unsigned count = 0;
    uint32_t best_len = 3;  // tree matches must beat the length-3 table's
    uint16_t& h3 = head3_[hash3(v, kBits3)];
    if (kReport && h3 != 0) {
      const uint8_t* m = in + h3 - 1;
      if ((load32(m) & 0xFFFFFF) == (v & 0xFFFFFF)) out[count++] = {3, static_cast<uint32_t>(cur - m)};
    }
    h3 = static_cast<uint16_t>(pos + 1);

    uint16_t& h4 = head4_[hash4(v, kBits4)];
    uint32_t node = h4;
    h4 = static_cast<uint16_t>(pos + 1);
    uint16_t* lt = &child_[2 * pos];      // where the next node smaller than cur goes
    uint16_t* gt = &child_[2 * pos + 1];  // where the next node greater than cur goes
    uint32_t lt_len = 0, gt_len = 0;      // prefix already shared with every node under lt / gt
    while (node != 0) {
      const uint32_t np = node - 1;
      const uint8_t* m = in + np;
      uint32_t len = min_u32(lt_len, gt_len);
      if (m[len] == cur[len]) {
        len = match_len_from(m, cur, len + 1, lim);
        if (kReport && len > best_len) {
          best_len = len;
          out[count++] = {len, pos - np};
        }
        if (len >= lim) {  // equal as far as we look: np's subtrees become ours and np drops out
          *lt = child_[2 * np];
          *gt = child_[2 * np + 1];
          if (kReport && len < max_len) out[count - 1].len = match_len_from(m, cur, len, max_len);
          return count;
        }
      }
      if (m[len] < cur[len]) {
        *lt = static_cast<uint16_t>(node);
        lt = &child_[2 * np + 1];
        node = *lt;
        lt_len = len;
      } else {
        *gt = static_cast<uint16_t>(node);
        gt = &child_[2 * np];
        node = *gt;
        gt_len = len;
      }
      if (--depth == 0) break;
    }
    *lt = 0;
    *gt = 0;
    return count;
  }

  std::vector<uint16_t> head4_;
  std::vector<uint16_t> head3_;
  std::vector<uint16_t> child_;
};

}  // namespace gdfs::gdeflate::lz
