// Near-optimal parsing (levels 8-12): find every useful match at every position once with the binary
// tree, then repeatedly choose the minimum-cost token path through the page under a bit-cost model fitted
// to the previous path's own Huffman statistics.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../block_split.h"
#include "bt_matchfinder.h"
#include "cost_model.h"
#include "lz_util.h"
#include "parsers.h"

namespace gdfs::gdeflate::lz {
namespace {

// Which of four lengths len..len+3, priced dcost + len_cost[j] + to_end[j], cost less than `best`: bit j
// for length len+j. The minimum-cost path tries every length of every match, and most lengths beat
// nothing, so four are ruled out at once and only the cheaper ones are priced again one by one, in
// order, which keeps the path (and the output) exactly what a one-at-a-time loop chooses. Costs stay
// below 2^31, so signed compares are exact.
inline unsigned cheaper4(const uint32_t* len_cost, const uint32_t* to_end, uint32_t dcost, uint32_t best) {
#if defined(__SSE2__)
  const __m128i c = _mm_add_epi32(_mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(len_cost)),
                                                _mm_loadu_si128(reinterpret_cast<const __m128i*>(to_end))),
                                  _mm_set1_epi32(static_cast<int>(dcost)));
  return static_cast<unsigned>(
      _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(_mm_set1_epi32(static_cast<int>(best)), c))));
#else
  unsigned mask = 0;
  for (unsigned j = 0; j < 4; ++j) mask |= (dcost + len_cost[j] + to_end[j] < best ? 1u : 0u) << j;
  return mask;
#endif
}

class NearOptimalParser final : public Parser {
 public:
  explicit NearOptimalParser(const OptParams& p)
      : p_(p), first_(65537), cost_(65537 + 3), choice_(65536), cache_(65536 * 4), merged_(p.depth + 2) {}

  TokenSpan parse(const uint8_t* in, size_t n) override {
    const uint32_t n32 = static_cast<uint32_t>(n);
    collect_matches(in, n32);
    // First model: the tokens of a greedy walk over the cached matches, a cheap stand-in for a
    // real first parse that still reflects this page's literal and match mix.
    Token* end = greedy_tokens(in, n32);
    for (unsigned pass = 0; pass < p_.passes; ++pass) {
      fit_models(static_cast<size_t>(end - buf_.data()), n32, pass > 0);
      min_cost_path(in, n32);
      end = path_tokens(n32);
    }
    return buf_.finish(end);
  }

 private:
  // Fills cache_ with every position's matches; first_[i]..first_[i+1] index position i's. After a
  // match of nice length or more, the positions it covers are only indexed: their own matches would
  // almost never beat continuing the long one, and skipping them keeps long runs linear.
  void collect_matches(const uint8_t* in, uint32_t n) {
    mf_.reset();
    const uint32_t limit = n >= 4 ? n - 3 : 0;
    uint32_t used = 0;
    uint32_t pos = 0;
    while (pos < n) {
      first_[pos] = used;
      if (pos >= limit) {
        ++pos;
        continue;
      }
      if (cache_.size() < used + p_.depth + 2) cache_.resize(2 * cache_.size() + p_.depth + 2);
      const uint32_t max_len = min_u32(n - pos, kMaxMatch);
      const unsigned cnt = mf_.find(in, pos, max_len, p_.nice, p_.depth, &cache_[used]);
      used += cnt;
      const uint32_t longest = cnt ? cache_[used - 1].len : 0;
      ++pos;
      if (longest < p_.nice) continue;
      for (const uint32_t stop = pos - 1 + longest; pos < stop; ++pos) {
        first_[pos] = used;
        if (pos < limit) mf_.skip(in, pos, min_u32(n - pos, kMaxMatch), p_.nice, p_.depth);
      }
    }
    first_[n] = used;
    merge_by_nearest(n);
  }

  // What the minimum-cost path needs of a position's matches does not change between passes: a length
  // is served by the nearest match at least that long, so each match's distance becomes the nearest
  // distance among it and the longer ones, and neighbours that then share a distance become one entry
  // (the longest). Every pass then walks fewer entries with the same (length, distance) candidates in
  // the same order. The last entry keeps the position's longest match and its own distance.
  void merge_by_nearest(uint32_t n) {
    if (dsym_.size() < first_[n]) dsym_.resize(first_[n]);
    uint32_t out = 0;
    for (uint32_t pos = 0; pos < n; ++pos) {
      const uint32_t a = first_[pos], b = first_[pos + 1];
      first_[pos] = out;
      size_t kept = 0;  // merged_[0..kept): longest first
      uint32_t near = UINT32_MAX;
      for (uint32_t k = b; k-- > a;) {
        near = cache_[k].dist < near ? cache_[k].dist : near;
        if (kept && merged_[kept - 1].dist == near) continue;  // a shorter match, same distance
        merged_[kept++] = Match{cache_[k].len, near};
      }
      // out <= a: the position's entries were read before any of them is overwritten.
      while (kept) {
        const Match m = merged_[--kept];
        dsym_[out] = static_cast<uint8_t>(dist_symbol(m.dist));
        cache_[out++] = m;
      }
    }
    first_[n] = out;
  }

  Token* greedy_tokens(const uint8_t* in, uint32_t n) {
    Token* t = buf_.begin();
    for (uint32_t pos = 0; pos < n;) {
      const uint32_t a = first_[pos], b = first_[pos + 1];
      if (a == b) {
        *t++ = Token::literal(in[pos++]);
        continue;
      }
      const Match m = cache_[b - 1];
      *t++ = Token::match(m.len, m.dist);
      pos += m.len;
    }
    return t;
  }

  // One cost model per block that the previous path would be split into: a page often joins files (or
  // parts of one) whose statistics differ, and each block gets Huffman codes of its own. The greedy
  // walk's blocks mislead more than they help (it is no real parse), so its model covers the whole page.
  void fit_models(size_t count, uint32_t n, bool per_block) {
    if (syms_.size() < count) syms_.resize(count);
    if (per_block) {
      split_blocks(buf_.data(), count, p_.split, syms_.data(), ranges_);
    } else {
      ranges_.assign(1, BlockRange{0, count, 0, n, {}});
    }
    if (models_.size() < ranges_.size()) models_.resize(ranges_.size());
    for (size_t k = 0; k < ranges_.size(); ++k)
      models_[k].fit(buf_.data() + ranges_[k].tok_begin, ranges_[k].tok_end - ranges_[k].tok_begin);
  }

  // Backward dynamic program: cost_[i] is the cheapest way to code in[i..n); choice_[i] its first token.
  // A token is priced by the model of the block it starts in.
  // For each match, every length from just past the previous (shorter) match up to its own is tried
  // with its distance: shorter prefixes of a match are matches too, and can end on a cheaper boundary.
  void min_cost_path(const uint8_t* in, uint32_t n) {
    cost_[n] = 0;
    size_t block = ranges_.size() - 1;
    for (uint32_t i = n; i-- > 0;) {
      while (i < ranges_[block].byte_begin) --block;
      const CostModel& model = models_[block];
      uint32_t best = cost_[i + 1] + model.literal(in[i]);
      Token pick = Token::literal(in[i]);
      // A length can be served by any match at least that long; the nearest one's distance is the
      // cheapest, and merge_by_nearest() gave each entry that distance.
      const uint32_t a = first_[i], b = first_[i + 1];
      uint32_t len = kMinMatch;
      for (uint32_t k = a; k < b; ++k) {
        const uint32_t dist = cache_[k].dist;
        const uint32_t dcost = model.distance_symbol(dsym_[k]);
        const auto consider = [&](uint32_t l) {
          const uint32_t c = dcost + model.length(l) + cost_[i + l];
          if (c < best) {
            best = c;
            pick = Token::match(l, dist);
          }
        };
        // Groups of four, the last one cut by a lane mask: cost_ and the length table are padded so
        // that the lanes past v_end read initialised values.
        const uint32_t end = cache_[k].len;
        const uint32_t v_end = min_u32(end, CostModel::kLongestPriced);
        if (len <= v_end) {
          for (uint32_t g = len; g <= v_end; g += 4) {
            const unsigned live = v_end - g >= 3 ? 0xFu : (1u << (v_end - g + 1)) - 1;
            for (unsigned m = cheaper4(model.lengths() + g, &cost_[i + g], dcost, best) & live; m; m &= m - 1)
              consider(g + static_cast<uint32_t>(std::countr_zero(m)));
          }
          len = v_end + 1;
        }
        for (; len <= end; ++len) consider(len);
      }
      cost_[i] = best;
      choice_[i] = pick;
    }
  }

  Token* path_tokens(uint32_t n) {
    Token* t = buf_.begin();
    for (uint32_t pos = 0; pos < n;) {
      const Token c = choice_[pos];
      *t++ = c;
      pos += c.is_literal() ? 1 : c.len;
    }
    return t;
  }

  OptParams p_;
  BtMatchFinder mf_;
  std::vector<CostModel> models_;
  std::vector<BlockRange> ranges_;
  std::vector<Sym> syms_;
  std::vector<uint32_t> first_;
  std::vector<uint32_t> cost_;
  std::vector<Token> choice_;
  std::vector<Match> cache_;
  std::vector<Match> merged_;  // one position's matches in merge_by_nearest()
  std::vector<uint8_t> dsym_;  // dsym_[k]: dist_symbol() of cache_[k], derived once for every pass
  TokenBuf buf_;
};

}  // namespace

std::unique_ptr<Parser> make_near_optimal_parser(const OptParams& p) {
  return std::make_unique<NearOptimalParser>(p);
}

}  // namespace gdfs::gdeflate::lz
