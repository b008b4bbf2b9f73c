#include "block_split.h"

#include <array>
#include <cmath>

namespace gdfs::gdeflate {
namespace {

// f * log2(f), from a table for the small counts most histogram entries hold: std::log2 per entry would
// be a visible share of level 1's time. The table holds the very values the call gives, so block
// boundaries do not move.
double f_log2_f(uint32_t f) {
  static constexpr uint32_t kTable = 1024;
  static const auto table = [] {
    std::array<double, kTable> t{};
    for (uint32_t v = 1; v < kTable; ++v) t[v] = v * std::log2(static_cast<double>(v));
    return t;
  }();
  return f < kTable ? table[f] : f * std::log2(static_cast<double>(f));
}

// Entropy of a histogram in bits, plus a rough price for the code lengths a dynamic header sends.
double estimate_bits(const uint32_t* f, unsigned n, unsigned* used) {
  uint64_t total = 0;
  double sum = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (!f[i]) continue;
    total += f[i];
    sum += f_log2_f(f[i]);
    ++*used;
  }
  return total ? total * std::log2(static_cast<double>(total)) - sum : 0.0;
}

double block_cost(const BlockStats& s, bool exact) {
  if (exact) {
    BlockCodes c;
    c.build_dynamic_lengths(s);
    return 3.0 + c.header_bits + static_cast<double>(c.data_bits(s));
  }
  unsigned used = 0;
  const double bits = estimate_bits(s.litlen.data(), kNumLitlenSyms, &used) +
                      estimate_bits(s.dist.data(), kNumDistSyms, &used) + static_cast<double>(s.extra_bits);
  return bits + 80.0 + 4.0 * used;  // header: fixed fields plus about 4 bits per sent code length
}

// One segment's tokens: their symbols into s[], their statistics into seg.stats. This is the only pass
// over the tokens before the lanes are written, so it does both jobs at once.
//
// Literals count into one of eight rotating dummy distance slots instead of dist[kNoDist]: incrementing
// one counter on every literal would make each increment wait for the previous one's store.
void scan_segment(const Token* t, Sym* s, size_t nt, size_t& i, size_t& pos, size_t limit, BlockRange& seg) {
  std::array<uint32_t, kNumDistSyms + 8> dist{};
  uint32_t* litlen = seg.stats.litlen.data();
  uint64_t extra = 0;
  for (; i < nt && pos < limit; ++i) {
    const Sym sym = token_symbol(t[i]);
    s[i] = sym;
    ++litlen[sym.lsym];
    ++dist[sym.dsym == kNoDist ? kNumDistSyms + (i & 7) : sym.dsym];
    extra += sym_extra_bits(sym);
    pos += t[i].is_literal() ? 1 : t[i].len;
  }
  for (unsigned k = 0; k < kNumDistSyms; ++k) seg.stats.dist[k] = dist[k];
  for (unsigned k = kNumDistSyms; k < kNumDistSyms + 8; ++k) seg.stats.dist[kNoDist] += dist[k];
  seg.stats.extra_bits = extra;
}

// Every block boundary at a segment boundary, chosen by dynamic programming over block costs:
// best[j] = min over i < j of best[i] + cost(segments i..j-1). A page has at most 65536 / segment_bytes
// segments, so this prices at most 136 candidate blocks at 4 KiB segments.
void split_optimal(const std::vector<BlockRange>& segs, bool exact, std::vector<BlockRange>& out) {
  const size_t m = segs.size();
  std::vector<double> best(m + 1, 0.0);
  std::vector<size_t> from(m + 1, 0);
  for (size_t j = 1; j <= m; ++j) best[j] = HUGE_VAL;
  for (size_t a = 0; a < m; ++a) {
    BlockStats merged{};
    for (size_t b = a + 1; b <= m; ++b) {
      merged.add(segs[b - 1].stats);
      const double c = best[a] + block_cost(merged, exact);
      if (c < best[b]) best[b] = c, from[b] = a;
    }
  }
  std::vector<size_t> cuts;
  for (size_t j = m; j > 0; j = from[j]) cuts.push_back(j);
  out.clear();
  for (size_t k = cuts.size(), a = 0; k-- > 0;) {
    const size_t b = cuts[k];
    BlockRange r{segs[a].tok_begin, segs[b - 1].tok_end, segs[a].byte_begin, segs[b - 1].byte_end, {}};
    for (size_t q = a; q < b; ++q) r.stats.add(segs[q].stats);
    out.push_back(r);
    a = b;
  }
}

// The greedy merge: segments in page order, blocks appended to `out` (cleared first).
class BlockMerger {
 public:
  BlockMerger(bool exact_cost, std::vector<BlockRange>& out) : exact_(exact_cost), out_(out) { out_.clear(); }
  void add(const BlockRange& seg);
  void finish();  // call once, after the last segment

 private:
  bool exact_;
  bool started_ = false;
  std::vector<BlockRange>& out_;
  BlockRange cur_{0, 0, 0, 0, {}};
  double cur_cost_ = 0;
};

}  // namespace

SplitParams split_params_for_level(int level) {
  if (level <= 3) return {16384, false};
  // Levels 4-7: every split at 8 KiB boundaries, priced by the entropy estimate (36 candidate blocks per
  // page rather than 8): a little smaller output for a small share of these levels' time.
  if (level <= 7) return {8192, false, level >= 4};
  // Levels 8-9 merge 4 KiB segments left to right and price each candidate with real Huffman codes.
  // Levels 10-12 try every split at 4 KiB segment boundaries (the near-optimal parser prices each block
  // with its own model, so a better split also steers the parse): 136 candidate blocks per page, priced
  // by the entropy estimate. Real codes for all 136 cost a quarter of level 12's time on binaries and
  // saved about 0.03% of the output (bench/results/2026-11-27-codec-level12-speed-zen5-vm.txt).
  if (level <= 9) return {4096, true};
  return {4096, false, true};
}

// A segment joins the current block when coding them together is estimated to cost no more than
// coding them apart.
void BlockMerger::add(const BlockRange& seg) {
  const double seg_cost = block_cost(seg.stats, exact_);
  if (!started_) {
    cur_ = seg;
    cur_cost_ = seg_cost;
    started_ = true;
    return;
  }
  BlockStats merged = cur_.stats;
  merged.add(seg.stats);
  const double merged_cost = block_cost(merged, exact_);
  if (merged_cost <= cur_cost_ + seg_cost) {
    cur_.stats = merged;
    cur_.tok_end = seg.tok_end;
    cur_.byte_end = seg.byte_end;
    cur_cost_ = merged_cost;
  } else {
    out_.push_back(cur_);
    cur_ = seg;
    cur_cost_ = seg_cost;
  }
}

void BlockMerger::finish() {
  out_.push_back(cur_);
}

void split_blocks(const Token* t, size_t nt, const SplitParams& p, Sym* s, std::vector<BlockRange>& out) {
  std::vector<BlockRange> segs;
  size_t pos = 0, i = 0;
  do {
    BlockRange seg{i, i, pos, pos, {}};
    scan_segment(t, s, nt, i, pos, seg.byte_begin + p.segment_bytes, seg);
    seg.tok_end = i;
    seg.byte_end = pos;
    segs.push_back(seg);
  } while (i < nt);
  merge_segments(segs, p, out);
}

void merge_segments(const std::vector<BlockRange>& segs, const SplitParams& p, std::vector<BlockRange>& out) {
  if (p.optimal) return split_optimal(segs, p.exact_cost, out);
  BlockMerger merger(p.exact_cost, out);
  for (const BlockRange& seg : segs) merger.add(seg);
  merger.finish();
}

}  // namespace gdfs::gdeflate
