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
  // {depth, nice, max_dist3, lazy_steps, good, peek, ahead_depth}: effort grows with the level,
  // following libdeflate's split. The greedy levels' one-byte peek past short matches gained 0.8-1.7% on
  // pages.bin and on Go and Linux source pages for ~15% of their speed; it also makes 3-byte matches pay
  // at level 2. Lazy levels stop at longer matches than libdeflate's (nice 64 / 96 at levels 5 / 6):
  // source text is full of long repeats (level 5: +1% on Go sources, +0.1% on pages.bin, ~1% slower).
  //
  // Level 7 as retuned on 2026-11-23 (exact sizes vs libdeflate 1.14, 64 KiB pages; single-thread CPU
  // time on Go and Linux sources and Go binaries, AMD EPYC VM): depth 64 -> 100, good 16 -> 12: output
  // -0.14% on Linux and Go sources, -0.18% on Go binaries, time about as before.
  //
  // Level 6 as retuned later that day, for binaries (x86 code and data tables: shared libraries of
  // FFmpeg, Qt, GTK, SQLite, libxml2 and espeak's data, where it ran at 0.83-0.89x libdeflate's speed
  // and left its output 0.2-0.8% larger): a deeper first search (40 -> 48) but shallower look-aheads
  // (16 entries past matches shorter than good, 12 past longer ones), good 6 -> 4, and no second
  // look-ahead past 3- and 4-byte matches (level 6 alone used that option; it cost ~2% of the time on
  // binaries for nothing there, and lazy.cc dropped it).
  // With the chain links of hash_chain.h, level 6 went to 1.00-1.07x on those libraries, 0.82 -> 0.94x on
  // DejaVu's fonts and 1.10-1.21x on the other tuning corpora (gdeflate bench --paired 3:
  // bench/results/2026-11-23-codec-l6-tuning-vm.txt); the retuning's share of it, in per-page minimum
  // times, was ~12% on the libraries for output +0.02% there, +0.10% on Go sources, +0.04% on Linux
  // sources, -0.01% on Go binaries.
  static constexpr lz::ChainParams kChain[] = {
      {6, 12, 4096, 0, 0, 6, 0},        // 2
      {12, 20, 1024, 0, 0, 8, 0},       // 3
      {16, 32, 1024, 0, 0, 8, 0},       // 4
      {20, 64, 1024, 1, 8, 0, 20},      // 5
      {48, 96, 2048, 1, 4, 0, 16},      // 6
      {100, 130, 2048, 2, 12, 0, 100},  // 7
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
