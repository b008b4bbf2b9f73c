// Lazy parsers (levels 5-7): before taking the match at pos, look one (lazy2: two) bytes ahead and emit
// a literal instead when the later match is clearly better.
#include "chain_parser.h"

namespace gdfs::gdeflate::lz {
namespace {

// Skipping searches in long literal runs: after kSkipAfter searches in a row found nothing, each
// further miss also passes over min(1 + (misses - kSkipAfter) / kSkipGrowth, kSkipMax) bytes without
// searching them, so incompressible stretches cost mostly hash insertions. The skipped bytes stay
// indexed: data that repeats what came after random bytes (a run of unique values, then the same values
// again) must still find its matches. kSkipMax bounds how late such a repeat is found.
constexpr uint32_t kSkipAfter = 64, kSkipGrowth = 16, kSkipMax = 8;

// Two entries a chain link (HashChainMF<true>): look-aheads make these levels walk much more than they
// insert.
struct LazyLoop {
  template <class Out>
  static uint32_t scan(const uint8_t* in, uint32_t n32, uint32_t limit, const ChainParams p,
                       HashChainMF<true>& mf, Out& out) {
    uint32_t next_insert = 0;
    // Searches at pos (pos < limit), first indexing the positions skipped since the last search. The loop
    // below never searches a position twice (a rejected look-ahead's match is never revisited, and a
    // taken match always ends past every looked-ahead position), so each position is indexed once.
    auto find = [&](uint32_t pos, uint32_t min_len, unsigned depth) -> Match {
      if (next_insert < pos) mf.insert_range(in, next_insert, pos);
      next_insert = pos + 1;
      if (pos + 1 < limit) mf.prefetch(in, pos + 1);
      const uint32_t max_len = min_u32(n32 - pos, kMaxMatch);
      if (min_len >= max_len) {  // nothing longer fits, but pos must still be indexed
        mf.insert(in, pos);
        return {0, 0};
      }
      return mf.find<true>(in, pos, max_len, depth, p.nice, p.max_dist3, min_len);
    };

    uint32_t pos = 0;
    uint32_t misses = 0;  // searches in a row that found nothing
    while (pos < limit) {
      Match cur = find(pos, 0, p.depth);
      if (cur.dist == 0) {
        out.literal(pos, in[pos]);
        ++pos;
        // Deep in a run of failed searches the data is most likely incompressible: skip searches, more
        // the longer the run. The bytes skipped are still indexed (by the next find) for later matches.
        if (++misses > kSkipAfter) {
          const uint32_t skip = min_u32(1 + (misses - kSkipAfter) / kSkipGrowth, kSkipMax);
          const uint32_t stop = min_u32(pos + skip, limit);
          for (; pos < stop; ++pos) out.literal(pos, in[pos]);
        }
        continue;
      }
      misses = 0;
      // Defer while a later start gives a better match; each deferral costs one literal.
      while (cur.len < p.nice && pos + 1 < limit) {
        // A look-ahead only has to beat the match in hand, so it can search less than the first
        // search did; like zlib's good_length, once that match is good a longer one is unlikely
        // enough that a quarter of the first search's effort suffices.
        const unsigned depth = cur.len >= p.good ? (p.depth + 3) / 4 : p.ahead_depth;
        // A match of equal length counts too: when it is much closer, its distance code is cheaper.
        const Match next = find(pos + 1, cur.len - 1, depth);
        if (next.dist != 0 && score(next) - score(cur) > 2) {
          out.literal(pos, in[pos]);
          ++pos;
          cur = next;
          continue;
        }
        // lazy2 looks two bytes ahead too.
        if (p.lazy_steps >= 2 && pos + 2 < limit && cur.len + 1 < p.nice) {
          const Match next2 = find(pos + 2, cur.len + 1, depth);
          if (next2.dist != 0 && score(next2) - score(cur) > 6) {
            out.literal(pos, in[pos]);
            out.literal(pos + 1, in[pos + 1]);
            pos += 2;
            cur = next2;
            continue;
          }
        }
        break;
      }
      out.match(pos, cur.len, cur.dist);
      const uint32_t end = min_u32(pos + cur.len, limit);
      if (next_insert < end) {
        mf.insert_range(in, next_insert, end);
        next_insert = end;
      }
      pos += cur.len;
    }
    return pos;
  }
};

}  // namespace

std::unique_ptr<Parser> make_lazy_parser(const ChainParams& p) {
  return std::make_unique<ChainParser<LazyLoop, true>>(p);
}

}  // namespace gdfs::gdeflate::lz
