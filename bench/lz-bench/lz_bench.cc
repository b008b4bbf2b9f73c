// Parser-only benchmark (a developer tool for tuning codec/src/lz, not the product benchmark, which
// is `gdeflate bench`): parses 64 KiB pages at each level, checks that the tokens rebuild the page,
// estimates the Huffman-coded size from the tokens' own statistics (one block per page plus a fixed
// header allowance) and compares with libdeflate's raw DEFLATE at the same level.
//
//   build/bench/lz-bench/gdfs-lz-bench /tmp/gdfs-corpora/pages.bin [levels...] [--nolibdeflate]
//     [--noverify] [--chain depth,nice,max_dist3,lazy_steps,good | --opt depth,nice,passes]
#include <libdeflate.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "gdfs/deflate64.h"
#include "huffman.h"
#include "lz/parser.h"
#include "lz/parsers.h"

using namespace gdfs::gdeflate;

namespace {

constexpr size_t kPage = 65536;
constexpr double kHeaderBytes = 80;

// Thread CPU time, not wall time: other builds share this machine's two cores, and waiting for a core
// should not count against either compressor.
double now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Estimated bytes for one page coded as one dynamic-Huffman block.
double estimate_bytes(const TokenVec& toks) {
  uint32_t lf[kNumLitlenSyms] = {}, df[kNumDistSyms] = {};
  uint64_t extra = 0;
  for (const Token& t : toks) {
    if (t.is_literal()) {
      ++lf[t.len];
      continue;
    }
    const unsigned ls = length_symbol(t.len), ds = dist_symbol(t.dist);
    ++lf[ls];
    ++df[ds];
    extra += kLenExtra[ls - 257] + kDistExtra[ds];
  }
  lf[kEob] = 1;
  uint8_t ll[kNumLitlenSyms], dl[kNumDistSyms];
  build_code_lengths(lf, kNumLitlenSyms, kMaxCodeLen, ll);
  build_code_lengths(df, kNumDistSyms, kMaxCodeLen, dl);
  uint64_t bits = extra;
  for (unsigned s = 0; s < kNumLitlenSyms; ++s) bits += uint64_t{lf[s]} * ll[s];
  for (unsigned s = 0; s < kNumDistSyms; ++s) bits += uint64_t{df[s]} * dl[s];
  return bits / 8.0 + kHeaderBytes;
}

bool rebuild_ok(const uint8_t* in, size_t n, const TokenVec& toks, std::vector<uint8_t>& buf) {
  buf.clear();
  for (const Token& t : toks) {
    if (t.is_literal()) {
      buf.push_back(static_cast<uint8_t>(t.len));
      continue;
    }
    if (t.len < kMinMatch || t.len > kMaxMatch || t.dist == 0 || t.dist > buf.size()) return false;
    const size_t from = buf.size() - t.dist;
    for (uint32_t i = 0; i < t.len; ++i) buf.push_back(buf[from + i]);
  }
  return buf.size() == n && std::memcmp(buf.data(), in, n) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s pages.bin [levels...] [--nolibdeflate] [--noverify] [--chain D,N,D3,L,G]"
                 " [--opt D,N,P]\n",
                 argv[0]);
    return 2;
  }
  FILE* f = std::fopen(argv[1], "rb");
  if (!f) return 2;
  std::vector<uint8_t> data;
  uint8_t tmp[1 << 16];
  size_t got;
  while ((got = std::fread(tmp, 1, sizeof tmp, f)) > 0) data.insert(data.end(), tmp, tmp + got);
  std::fclose(f);
  std::vector<int> levels;
  bool libd = true, verify = true;
  // --chain D,N,D3,L,G or --opt D,N,P: tune one level's parameters (levels given still pick libdeflate's).
  bool chain = false, opt = false;
  lz::ChainParams cp{};
  lz::OptParams op{};
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--chain") && i + 1 < argc) {
      chain = std::sscanf(argv[++i], "%u,%u,%u,%u,%u", &cp.depth, &cp.nice, &cp.max_dist3, &cp.lazy_steps,
                          &cp.good) == 5;
    } else if (!std::strcmp(argv[i], "--opt") && i + 1 < argc) {
      opt = std::sscanf(argv[++i], "%u,%u,%u", &op.depth, &op.nice, &op.passes) == 3;
    } else if (!std::strcmp(argv[i], "--nolibdeflate"))
      libd = false;
    else if (!std::strcmp(argv[i], "--noverify"))
      verify = false;
    else
      levels.push_back(std::atoi(argv[i]));
  }
  if (levels.empty())
    for (int l = 1; l <= 12; ++l) levels.push_back(l);
  const size_t pages = (data.size() + kPage - 1) / kPage;
  std::printf("%zu bytes, %zu pages\n", data.size(), pages);
  std::printf("lvl   ours: ratio    MB/s | libdeflate: ratio    MB/s | size ours/libd\n");
  std::vector<uint8_t> out(kPage * 2), rebuilt;
  for (int level : levels) {
    auto parser = chain ? lz::make_chain_parser(cp)
                  : opt ? lz::make_near_optimal_parser(op)
                        : make_parser(level);
    TokenVec toks;
    // Best of three runs: the build machine is shared, so single timings are noisy.
    double ours_s = 1e30, t0 = 0;
    for (int rep = 0; rep < (level >= 8 ? 1 : 3); ++rep) {
      t0 = now();
      for (size_t p = 0; p < pages; ++p) {
        const size_t n = std::min(kPage, data.size() - p * kPage);
        parser->parse(data.data() + p * kPage, n, toks);
      }
      ours_s = std::min(ours_s, now() - t0);
    }
    double ours_bytes = 0;
    for (size_t p = 0; p < pages; ++p) {
      const size_t n = std::min(kPage, data.size() - p * kPage);
      parser->parse(data.data() + p * kPage, n, toks);
      ours_bytes += estimate_bytes(toks);
      if (verify && !rebuild_ok(data.data() + p * kPage, n, toks, rebuilt)) {
        std::printf("LEVEL %d PAGE %zu: tokens do not rebuild the page\n", level, p);
        return 1;
      }
    }
    double ld_bytes = 0, ld_s = 0;
    if (libd) {
      libdeflate_compressor* c = libdeflate_alloc_compressor(level);
      ld_s = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        ld_bytes = 0;
        t0 = now();
        for (size_t p = 0; p < pages; ++p) {
          const size_t n = std::min(kPage, data.size() - p * kPage);
          ld_bytes += libdeflate_deflate_compress(c, data.data() + p * kPage, n, out.data(), out.size());
        }
        ld_s = std::min(ld_s, now() - t0);
        if (level >= 8) break;  // slow levels: one run is enough
      }
      libdeflate_free_compressor(c);
    }
    const double mb = data.size() / 1e6;
    std::printf("%3d  %11.4f %7.1f | %16.4f %7.1f | %.4f\n", level, data.size() / ours_bytes, mb / ours_s,
                libd ? data.size() / ld_bytes : 0.0, libd ? mb / ld_s : 0.0,
                libd ? ours_bytes / ld_bytes : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
