// Level table: which parser family and search effort each compression level uses.
#include "parser.h"

#include <iterator>
#include <stdexcept>

#include "parsers.h"

namespace gdfs::gdeflate {

namespace lz {
std::unique_ptr<Parser> make_greedy_parser(const ChainParams& p);
std::unique_ptr<Parser> make_lazy_parser(const ChainParams& p);

std::unique_ptr<Parser> make_chain_parser(const ChainParams& p) {
  return p.lazy_steps == 0 ? make_greedy_parser(p) : make_lazy_parser(p);
}
}  // namespace lz

namespace {

enum class Family {
  kStored,       // level 0: never reaches a parser
  kFastest,      // level 1: one two-entry hash table, no chains (greedy.cc)
  kGreedy,       // levels 2-4: longest match over hash chains (greedy.cc)
  kLazy,         // levels 5-7: look ahead before taking a match (lazy.cc)
  kNearOptimal,  // levels 8-12: binary trees and minimum-cost paths (near_optimal.cc)
};

// One level's parser and effort. The families and the way effort grows with the level follow
// libdeflate's split; a field a family does not use is 0. The measurements behind the values are in
// bench/results/2026-11-25-lz-tuning-history.md.
struct LevelParams {
  Family family = Family::kStored;
  // Chain entries (greedy, lazy) or tree nodes (near-optimal) examined per search: the main effort
  // knob, so it grows with the level. Level 6 searches deeper than level 5 but looks ahead less
  // (ahead_depth), which suits binaries, where the first search finds most of what there is.
  unsigned depth = 0;
  // A match this long ends the search (near-optimal: and is taken as it is). The lazy levels stop later
  // than libdeflate's, since source text is full of long repeats that a longer match keeps covering.
  uint32_t nice = 0;
  // Greedy, lazy: length-3 matches farther back than this cost more than three literals. Level 2 allows
  // the farthest: its one-byte peek (below) turns many of them into longer matches a byte later.
  uint32_t max_dist3 = 0;
  // Lazy: how many bytes ahead a match is challenged before it is taken: 1, or 2 at level 7 (lazy2).
  unsigned lazy_steps = 0;
  // Lazy: past a match this long, a look-ahead searches only depth / 4 entries (zlib's good_length): a
  // longer match is then unlikely. Lowest at level 6, where binaries' matches of 4 bytes or more rarely
  // have a better one a byte later.
  uint32_t good = 0;
  // Greedy: a match shorter than this is checked against the next byte's match (a 3-byte match cut from
  // a word's start). Short matches only: most matched bytes sit in long matches, so it costs little.
  uint32_t peek = 0;
  // Lazy: entries a look-ahead searches past a match shorter than `good`. A look-ahead only has to beat
  // the match in hand, so it may search less than the first search (level 6); levels 5 and 7 search
  // as deep, as their first searches are shallow (5) or their output matters more than speed (7).
  unsigned ahead_depth = 0;
  // Near-optimal: minimum-cost passes, each under a cost model fitted to the previous path's own
  // statistics. Later passes refine less, so they are spent only where speed matters least.
  unsigned passes = 0;
};

using enum Family;
// One row a level, the row's index; the columns are LevelParams' fields in order.
// clang-format off
constexpr LevelParams kLevels[] = {
    // family       depth   nice   max_dist3   lazy_steps   good   peek   ahead_depth  passes     level
    {kStored,           0,     0,          0,           0,     0,     0,            0,      0},  //  0
    {kFastest,          0,     0,          0,           0,     0,     0,            0,      0},  //  1
    {kGreedy,           6,    12,       4096,           0,     0,     6,            0,      0},  //  2
    {kGreedy,          12,    20,       1024,           0,     0,     8,            0,      0},  //  3
    {kGreedy,          16,    32,       1024,           0,     0,     8,            0,      0},  //  4
    {kLazy,            20,    64,       1024,           1,     8,     0,           20,      0},  //  5
    {kLazy,            48,    96,       2048,           1,     4,     0,           16,      0},  //  6
    {kLazy,           100,   130,       2048,           2,    12,     0,          100,      0},  //  7
    {kNearOptimal,     24,    48,          0,           0,     0,     0,            0,      1},  //  8
    {kNearOptimal,     40,    80,          0,           0,     0,     0,            0,      2},  //  9
    {kNearOptimal,     64,   128,          0,           0,     0,     0,            0,      2},  // 10
    {kNearOptimal,    100,   192,          0,           0,     0,     0,            0,      3},  // 11
    {kNearOptimal,    200,   258,          0,           0,     0,     0,            0,      3},  // 12
};
// clang-format on
static_assert(std::size(kLevels) == 13, "one entry per level, 0..12");

}  // namespace

std::unique_ptr<Parser> make_parser(int level) {
  if (level < 1 || level > 12) throw std::invalid_argument("gdeflate: parser level must be 1..12");
  const LevelParams& l = kLevels[level];
  switch (l.family) {
    case Family::kFastest:
      return lz::make_fastest_parser();
    case Family::kGreedy:
    case Family::kLazy:
      return lz::make_chain_parser(
          {l.depth, l.nice, l.max_dist3, l.lazy_steps, l.good, l.peek, l.ahead_depth});
    default:
      return lz::make_near_optimal_parser({l.depth, l.nice, l.passes, split_params_for_level(level)});
  }
}

}  // namespace gdfs::gdeflate
