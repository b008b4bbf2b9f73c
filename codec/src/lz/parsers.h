// Factories for the parser families behind make_parser(); parser.cc maps levels onto them.
#pragma once

#include <memory>

#include "../block_split.h"
#include "parser.h"

namespace gdfs::gdeflate::lz {

// Greedy and lazy parsing over hash chains.
struct ChainParams {
  unsigned depth;        // chain entries examined per search
  uint32_t nice;         // stop searching once a match this long is found
  uint32_t max_dist3;    // length-3 matches farther than this are not worth a match token
  unsigned lazy_steps;   // 0 = greedy, 1 = lazy, 2 = lazy2 (also try two bytes ahead)
  uint32_t good;         // look-aheads past a match this long search only depth / 4 entries
  uint32_t peek;         // greedy: a match shorter than this is checked against the next byte's match
  unsigned ahead_depth;  // lazy: entries a look-ahead past a match shorter than `good` searches
};

// Binary-tree match finder plus minimum-cost parsing.
struct OptParams {
  unsigned depth;                 // tree nodes examined per search
  uint32_t nice;                  // matches this long end the search and are taken as they are
  unsigned passes;                // cost-model refinement passes (each re-runs the minimum-cost path)
  SplitParams split{4096, true};  // how the encoder will split the page: each pass prices per block
};

std::unique_ptr<Parser> make_fastest_parser();
std::unique_ptr<Parser> make_chain_parser(const ChainParams& p);
std::unique_ptr<Parser> make_near_optimal_parser(const OptParams& p);

}  // namespace gdfs::gdeflate::lz
