// Hash-chain match finder for the greedy and lazy levels.
//
// Positions are hashed on 4 bytes; each bucket heads a singly linked chain, newest first. A page is at
// most 64 KiB, so every inserted position fits in 16 bits; slots hold pos + 1 so that 0 can mean "empty"
// and the tables stay small (cheap to clear per page, friendly to L1/L2). Because the window is the whole
// page, no distance check is needed: every earlier position is in reach (pos <= 65532).
//
// With kPairs (the lazy levels) each position's link holds the next two chain entries, not one. A walk
// is a chain of dependent loads, each mostly an L2 access (the links span 256 KiB); with two entries a
// load it waits on half as many, and the second entry's bytes are compared while the next link loads.
// The walk visits the same entries in the same order, so the output does not depend on it. The price is
// a second dependent load per insertion (the displaced entry's own link), which pays where searches walk
// far (the lazy levels) and not where they insert much and walk little (the greedy levels, depth 6-16),
// which keep one entry a link.
//
// Heads use 17 hash bits (256 KiB) although a page has at most 64 Ki positions: with 16, a chain holds
// more entries of other 4-byte strings, each a wasted step; more than 17 would only add to the table
// cleared every page.
//
// A separate one-entry table on 3-byte hashes supplies length-3 matches, which the 4-byte chains cannot
// see; they only pay off at short distances, so the caller gives a distance limit (0 = off). It is updated
// at every position, the bytes a match covers included: its candidate is then the nearest one, which is
// what makes a 3-byte match cheaper than three literals. (Updating it only at searched positions would be
// faster, but would give up those near candidates and some of the output size with them.)
//
// The measurements behind these choices: bench/results/2026-11-25-lz-tuning-history.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "lz_util.h"

namespace gdfs::gdeflate::lz {

struct Match {
  uint32_t len;
  uint32_t dist;
};

inline int bsr(uint32_t x) {
  return 31 - __builtin_clz(x);
}

// Rough value of a match in bits saved: each matched byte is worth ~4 bits more than the token costs,
// and every doubling of the distance adds an extra bit to the token.
inline int score(const Match& m) {
  return 4 * static_cast<int>(m.len) - bsr(m.dist);
}

template <bool kPairs>
class HashChainMF {
  // One entry (16 bits) a link, or two: the next entry | the one after it << 16.
  using Link = std::conditional_t<kPairs, uint32_t, uint16_t>;

 public:
  static constexpr unsigned kBits = 17;
  static constexpr unsigned kBits3 = 12;

  HashChainMF() : head_(1u << kBits), head3_(1u << kBits3), links_(65536 + 1) {}

  void reset() {
    std::fill(head_.begin(), head_.end(), 0);
    std::fill(head3_.begin(), head3_.end(), 0);
  }

  // Adds pos (pos + 4 <= n) to the chains without searching.
  void insert(const uint8_t* in, uint32_t pos) { insert_range(in, pos, pos + 1); }

  // Adds every position in [from, to) (to + 3 <= n): the bytes a match covers, the ones a search skipped.
  // In a run of one hash (a run of one byte value) each insertion would wait for the last one's stores
  // to be read back (the bucket's head, then its link); the last insertion's values are reused from
  // registers instead, which builds the same chains. Data padded with zeros is full of such runs.
  void insert_range(const uint8_t* in, uint32_t from, uint32_t to) {
    uint32_t last_h = ~0u, last_link = 0;
    for (uint32_t pos = from; pos < to; ++pos) {
      const uint32_t v = load32(in + pos), h = hash4(v, kBits);
      if (h == last_h) {
        last_link = store_link(pos, pos, last_link);  // the head is pos - 1, stored as pos
      } else {
        const uint32_t next = head_[h];
        last_link = store_link(pos, next, kPairs ? links_[next] : 0);
      }
      head_[h] = static_cast<uint16_t>(pos + 1);
      head3_[hash3(v, kBits3)] = static_cast<uint16_t>(pos + 1);
      last_h = h;
    }
  }

  // Starts loading the bucket pos will use (pos + 4 <= n), so a later find(pos) does not stall on it.
  void prefetch(const uint8_t* in, uint32_t pos) const {
    __builtin_prefetch(&head_[hash4(load32(in + pos), kBits)]);
  }

  // Inserts pos (pos + 4 <= n) and returns its longest match among the `depth` newest chain entries,
  // stopping early at `nice`. max_len = bytes left, capped at kMaxMatch. Only matches longer than
  // `min_len` (< max_len) count: a lazy look-ahead then starts with a stricter filter on candidates.
  // dist == 0 means none was found.
  //
  // kByScore: a longer match found farther down the chain replaces the best one only when score() rates
  // it higher, i.e. its extra bytes outweigh its costlier distance (a 5-byte match 30 KiB back loses to a
  // 4-byte one 100 bytes back). Chains run newest first, so distances only grow along the walk and a
  // match of equal length never wins.
  template <bool kByScore = false>
  Match find(const uint8_t* in, uint32_t pos, uint32_t max_len, unsigned depth, uint32_t nice,
             uint32_t max_dist3, uint32_t min_len = 0) {
    const uint8_t* cur = in + pos;
    const uint32_t v = load32(cur);
    uint32_t pair;  // with kPairs, links_[first], loaded by link() already
    const uint32_t first = link(head_[hash4(v, kBits)], pos, pair);
    uint32_t cand3 = 0;
    if (max_dist3 != 0) {
      uint16_t& h3 = head3_[hash3(v, kBits3)];
      cand3 = h3;
      h3 = static_cast<uint16_t>(pos + 1);
    }

    Match best{min_len, 0};
    // A candidate longer than best.len (>= 4) matches the 4 bytes ending at best.len and the first 4:
    // checking both rejects most candidates before the extension loop runs. best.len < max_len, so
    // cur[best.len] is in bounds. Returns true when the search is over.
    auto visit = [&](uint32_t cand) {
      const uint8_t* m = in + cand - 1;
      if (best.len < 4) {  // no match yet: any candidate whose first 4 bytes agree beats min_len
        if (load32(m) != v) return false;
        best = {match_len_from(m, cur, 4, max_len), static_cast<uint32_t>(cur - m)};
        return best.len >= nice || best.len >= max_len;
      }
      if (load32(m + best.len - 3) != load32(cur + best.len - 3) || load32(m) != v) return false;
      const uint32_t len = match_len_from(m, cur, 4, max_len);
      const Match found{len, static_cast<uint32_t>(cur - m)};
      if (len <= best.len || (kByScore && best.dist != 0 && score(found) <= score(best))) return false;
      best = found;
      return len >= nice || len >= max_len;
    };
    if constexpr (kPairs) {
      // Entries two at a time: the pair's link is loaded before either entry is compared.
      for (uint32_t cand = first; cand != 0 && depth != 0;) {
        if (visit(cand) || --depth == 0) break;
        const uint32_t second = pair & 0xFFFF;
        if (second == 0 || visit(second) || --depth == 0) break;
        cand = pair >> 16;
        pair = links_[cand];
      }
    } else {
      for (uint32_t cand = first; cand != 0 && depth != 0; cand = links_[cand])
        if (visit(cand) || --depth == 0) break;
    }
    // A match that ended the search is kept as it is (with_len3 could only replace a 4-byte one).
    if (best.dist != 0 && (!kByScore || best.len >= nice || best.len >= max_len)) return best;
    return with_len3<kByScore>(in, pos, best, cand3, max_dist3, min_len);
  }

 private:
  // Adds the nearest length-3 match to a search's result: in place of no match (when min_len < 3 lets
  // one count), and with kByScore also in place of a 4-byte match that score() rates lower (one far
  // back): a near 3-byte match codes in fewer bits than a far 4-byte one.
  template <bool kByScore>
  static Match with_len3(const uint8_t* in, uint32_t pos, Match best, uint32_t cand3, uint32_t max_dist3,
                         uint32_t min_len) {
    const bool wanted = best.dist == 0 || (kByScore && best.len == 4);
    if (!wanted || min_len >= 3 || cand3 == 0 || pos + 1 - cand3 > max_dist3) return best;
    const Match m3{3, pos + 1 - cand3};
    if (((load32(in + cand3 - 1) ^ load32(in + pos)) & 0xFFFFFF) != 0) return best;
    return best.dist == 0 || score(m3) > score(best) ? m3 : best;
  }

  // Makes pos + 1 the newest entry of the chain headed by h; returns the entry it displaced (0: none) and,
  // with kPairs, that entry's own link in next_pair. links_[pos + 1] = that entry (| the one after it <<
  // 16). links_[0]
  // stays 0, so an empty chain needs no test; links_ needs no clearing per page, since a walk only reaches
  // entries inserted (and so linked) in the page at hand.
  uint32_t link(uint16_t& h, uint32_t pos, uint32_t& next_pair) {
    const uint32_t next = h;
    next_pair = kPairs ? links_[next] : 0;
    store_link(pos, next, next_pair);
    h = static_cast<uint16_t>(pos + 1);
    return next;
  }

  // Writes and returns pos's link: next, and with kPairs the first entry of next's own link.
  uint32_t store_link(uint32_t pos, uint32_t next, uint32_t next_link) {
    const uint32_t l = kPairs ? next | (next_link & 0xFFFF) << 16 : next;
    links_[pos + 1] = static_cast<Link>(l);
    return l;
  }

  std::vector<uint16_t> head_;
  std::vector<uint16_t> head3_;
  std::vector<Link> links_;  // by pos + 1: the next entry (or two) of pos's chain
};

}  // namespace gdfs::gdeflate::lz
