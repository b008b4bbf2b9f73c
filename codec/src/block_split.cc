#include "block_split.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "cpu.h"
#include "gdfs/gdeflate.h"

namespace gdfs::gdeflate {
namespace {

// The entropy estimate in fixed point, 1/256 bit units: integer sums do not depend on their order, so
// the AVX-512 and the scalar estimate are the same number and pick the same blocks.
constexpr unsigned kFracBits = 8;

// f * log2(f) in those units for every count a page can hold (at most one token per byte): one lookup
// instead of a std::log2 per histogram entry, a visible share of the time of the levels that price many
// candidate blocks.
const uint32_t* f_log2_f_table() {
  static const std::vector<uint32_t> table = [] {
    std::vector<uint32_t> t(kMaxPageBytes + 1, 0);
    for (uint32_t v = 2; v <= kMaxPageBytes; ++v)
      t[v] = static_cast<uint32_t>(std::llround(v * std::log2(static_cast<double>(v)) * (1u << kFracBits)));
    return t;
  }();
  return table.data();
}

// Sum of f log2 f, sum of f, and the number of non-zero entries of a histogram of n counts.
struct Entropy {
  uint64_t f_log_f = 0, total = 0, used = 0;
};

void add_entropy_scalar(const uint32_t* f, unsigned n, const uint32_t* table, Entropy& e) {
  for (unsigned i = 0; i < n; ++i) {
    e.f_log_f += table[f[i]];
    e.total += f[i];
    e.used += f[i] != 0;
  }
}

#if defined(__x86_64__)
#define GDFS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi2,popcnt")))
// n a multiple of 16. A gather per 16 counts; the zero counts (most of them) are masked out of it.
GDFS_AVX512 void add_entropy_avx512(const uint32_t* f, unsigned n, const uint32_t* table, Entropy& e) {
  __m512i flf = _mm512_setzero_si512(), total = _mm512_setzero_si512();
  uint64_t used = 0;
  for (unsigned i = 0; i < n; i += 16) {
    const __m512i v = _mm512_loadu_si512(f + i);
    const __mmask16 nz = _mm512_test_epi32_mask(v, v);
    if (!nz) continue;
    flf = _mm512_add_epi32(flf, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), nz, v, table, 4));
    total = _mm512_add_epi32(total, v);
    used += static_cast<unsigned>(__builtin_popcount(nz));
  }
  // Per lane at most 65536 * 16 * 256 (a lane's entries sum to at most a page's tokens): no overflow.
  alignas(64) uint32_t lanes[2][16];
  _mm512_store_si512(lanes[0], flf);
  _mm512_store_si512(lanes[1], total);
  for (unsigned k = 0; k < 16; ++k) e.f_log_f += lanes[0][k], e.total += lanes[1][k];
  e.used += used;
}
#endif

void add_entropy(const uint32_t* f, unsigned n, const uint32_t* table, bool simd, Entropy& e) {
#if defined(__x86_64__)
  if (simd && n % 16 == 0) return add_entropy_avx512(f, n, table, e);
#endif
  add_entropy_scalar(f, n, table, e);
}

// Entropy of a histogram in 1/256 bits, and its non-zero entries.
uint64_t estimate_bits(const uint32_t* f, unsigned n, const uint32_t* table, bool simd, uint64_t& used) {
  Entropy e;
  add_entropy(f, n, table, simd, e);
  used += e.used;
  return e.total ? table[e.total] - e.f_log_f : 0;
}

double block_cost(const BlockStats& s, bool exact) {
  if (exact) {
    BlockCodes c;
    c.build_dynamic_lengths(s);
    return 3.0 + c.header_bits + static_cast<double>(c.data_bits(s));
  }
  return estimate_block_bits(s);
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
// segments, so this prices at most 136 candidate blocks at 4 KiB segments. Returns the block ends, in
// segment indices, last first.
std::vector<size_t> optimal_cuts(const std::vector<BlockRange>& segs, bool exact) {
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
  return cuts;
}

BlockStats stats_of(const std::vector<BlockRange>& segs, size_t a, size_t b) {
  BlockStats s{};
  for (size_t q = a; q < b; ++q) s.add(segs[q].stats);
  return s;
}

// The optimal cuts over pairs of segments (a quarter of the candidate blocks), then each cut, left to
// right, moved by one segment where the two blocks beside it cost less that way. Only the pairs' stats
// are read; their token and byte ranges stay the first segment's.
std::vector<size_t> paired_cuts(const std::vector<BlockRange>& segs, bool exact) {
  std::vector<BlockRange> pairs;
  for (size_t k = 0; k < segs.size(); k += 2) {
    BlockRange r = segs[k];
    if (k + 1 < segs.size()) r.stats.add(segs[k + 1].stats);
    pairs.push_back(r);
  }
  std::vector<size_t> cuts = optimal_cuts(pairs, exact);  // last first
  std::reverse(cuts.begin(), cuts.end());
  for (size_t& c : cuts) c = std::min(2 * c, segs.size());
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const size_t lo = k == 0 ? 0 : cuts[k - 1], hi = cuts[k + 1], c = cuts[k];
    size_t pick = c;
    double pick_cost = block_cost(stats_of(segs, lo, c), exact) + block_cost(stats_of(segs, c, hi), exact);
    for (const size_t t : {c - 1, c + 1}) {
      if (t <= lo || t >= hi) continue;
      const double cost = block_cost(stats_of(segs, lo, t), exact) + block_cost(stats_of(segs, t, hi), exact);
      if (cost < pick_cost) pick = t, pick_cost = cost;
    }
    cuts[k] = pick;
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

void split_optimal(const std::vector<BlockRange>& segs, const SplitParams& p, std::vector<BlockRange>& out) {
  const std::vector<size_t> cuts =
      p.pairs ? paired_cuts(segs, p.exact_cost) : optimal_cuts(segs, p.exact_cost);
  out.clear();
  for (size_t k = cuts.size(), a = 0; k-- > 0;) {
    const size_t b = cuts[k];
    out.push_back({segs[a].tok_begin, segs[b - 1].tok_end, segs[a].byte_begin, segs[b - 1].byte_end,
                   stats_of(segs, a, b)});
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

double estimate_block_bits(const BlockStats& s, bool simd) {
  static const uint32_t* const table = f_log2_f_table();
  static const bool usable = avx512_usable();  // a CPUID query per call would be on the split's hot path
  simd = simd && usable;
  uint64_t used = 0;
  const uint64_t bits = estimate_bits(s.litlen.data(), kNumLitlenSyms, table, simd, used) +
                        estimate_bits(s.dist.data(), kNumDistSyms, table, simd, used) +
                        (s.extra_bits << kFracBits);
  // Header: fixed fields plus about 4 bits per sent code length. Multiples of 1/256 below 2^53 add up
  // exactly in a double.
  return std::ldexp(static_cast<double>(bits + ((80 + 4 * used) << kFracBits)), -static_cast<int>(kFracBits));
}

SplitParams split_params_for_level(int level) {
  if (level <= 3) return {16384, false};
  // Levels 4-6: every split at 8 KiB boundaries, priced by the entropy estimate (36 candidate blocks per
  // page rather than 8): a little smaller output for a small share of these levels' time.
  if (level <= 6) return {8192, false, level >= 4};
  // Level 7, the default: every split at 4 KiB, then each cut moved by 2 KiB where that is cheaper. On
  // tail packs (the tails of many files in one page) block edges matter most: 0.3% smaller images of two
  // Python trees, 0.1% on Linux source pages, for ~1.5% of the level's time; every split at 2 KiB (528
  // candidates) saved 0.03% more for 4-7% of it (bench/results/2026-11-27-split-2k-zen5-vm.txt).
  if (level == 7) return {2048, false, true, true};
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
  if (p.optimal) return split_optimal(segs, p, out);
  BlockMerger merger(p.exact_cost, out);
  for (const BlockRange& seg : segs) merger.add(seg);
  merger.finish();
}

}  // namespace gdfs::gdeflate
