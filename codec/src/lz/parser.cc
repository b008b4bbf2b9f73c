// Level table: which parser family and search effort each compression level uses.
#include "parser.h"

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

std::unique_ptr<Parser> make_parser(int level) {
  // {depth, nice, max_dist3, lazy_steps, good, peek}: effort grows with the level, following libdeflate's
  // split. The greedy levels' one-byte peek past short matches gained 0.8-1.7% on pages.bin and on Go and
  // Linux source pages for ~15% of their speed; it also makes 3-byte matches pay at level 2. Lazy levels
  // stop at longer matches than libdeflate's (nice 64 / 96 at levels 5 / 6): source text is full of long
  // repeats (level 5: +1% on Go sources, +0.1% on pages.bin, ~1% slower).
  //
  // Levels 6 and 7 as retuned on 2026-11-23 (exact sizes vs libdeflate 1.14 at the same level, 64 KiB
  // pages; speed as single-thread CPU time on Go and Linux sources and Go binaries, AMD EPYC VM), after
  // the faster chain walk, score-based match picking and literal-run skipping in lazy.cc/hash_chain.h:
  //   6: depth 35 -> 40, good 8 -> 6, peek 5 (a second look-ahead past 3- and 4-byte matches): output
  //      -0.12% on Go sources, -0.15% on Linux sources, -0.06% on pages.bin, unchanged on Go binaries,
  //      for ~1.7% more time (still ~1.7% faster than before the parser changes).
  //   7: depth 64 -> 100, good 16 -> 12: output -0.14% on Linux and Go sources, -0.18% on Go binaries;
  //      time about as before the parser changes (+0.7%), which had made level 7 ~9% faster. Depth 128
  //      with good 8 gives another -0.08% on Linux sources for ~2% more time.
  static constexpr lz::ChainParams kChain[] = {
      {6, 12, 4096, 0, 0, 6},      // 2
      {12, 20, 1024, 0, 0, 8},     // 3
      {16, 32, 1024, 0, 0, 8},     // 4
      {20, 64, 1024, 1, 8, 0},     // 5
      {40, 96, 2048, 1, 6, 5},     // 6
      {100, 130, 2048, 2, 12, 0},  // 7
  };
  // {depth, nice, passes}
  static constexpr lz::OptParams kOpt[] = {
      {24, 48, 1},    // 8
      {40, 80, 2},    // 9
      {64, 128, 2},   // 10
      {100, 192, 3},  // 11
      {200, 258, 4},  // 12
  };
  if (level < 1 || level > 12) throw std::invalid_argument("gdeflate: parser level must be 1..12");
  if (level == 1) return lz::make_fastest_parser();
  if (level <= 7) return lz::make_chain_parser(kChain[level - 2]);
  lz::OptParams opt = kOpt[level - 8];
  opt.split = split_params_for_level(level);
  return lz::make_near_optimal_parser(opt);
}

}  // namespace gdfs::gdeflate
