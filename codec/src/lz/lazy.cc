// Lazy parsers (levels 5-7): before taking the match at pos, look one (lazy2: two) bytes ahead and emit
// a literal instead when the later match is clearly better.
#include "hash_chain.h"
#include "lz_util.h"
#include "parsers.h"
#include "token_writers.h"

namespace gdfs::gdeflate::lz {
namespace {

// Skipping searches in long literal runs: after kSkipAfter searches in a row found nothing, each
// further miss also passes over min(1 + (misses - kSkipAfter) / kSkipGrowth, kSkipMax) bytes without
// searching them. Incompressible stretches (about a quarter of pages.bin) then cost mostly hash
// insertions: level 6 on pages.bin went from 0.75 to ~0.96 of libdeflate's speed for 0.03% more output
// there (none on Go and Linux sources, 0.01% on Go binaries). The skipped bytes must stay indexed:
// leaving them out was faster still (~1.04) but lost every match into them, which made a TZif file (a
// run of unique timestamps, then repeats) 15% larger. kSkipMax bounds how late a repeat after random
// bytes is found; a larger one gained no speed.
constexpr uint32_t kSkipAfter = 64, kSkipGrowth = 16, kSkipMax = 8;

class LazyParser final : public WriterParser<LazyParser> {
 public:
  explicit LazyParser(const ChainParams& p) : p_(p) {}

 private:
  friend class WriterParser;
  template <class Out>
  void run(const uint8_t* in, size_t n, Out& out) {
    mf_.reset();
    // Everything the loop touches lives in locals: token and count stores are uint32 stores, which the
    // compiler would otherwise have to assume may overwrite uint32 members, forcing reloads.
    const uint32_t n32 = static_cast<uint32_t>(n);
    const uint32_t limit = n >= 4 ? n32 - 3 : 0;
    const ChainParams p = p_;
    HashChainMF<true>& mf = mf_;
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
    for (; pos < n32; ++pos) out.literal(pos, in[pos]);
    out.finish(n32);
  }

  ChainParams p_;
  HashChainMF<true> mf_;
};

}  // namespace

std::unique_ptr<Parser> make_lazy_parser(const ChainParams& p) {
  return std::make_unique<LazyParser>(p);
}

}  // namespace gdfs::gdeflate::lz
