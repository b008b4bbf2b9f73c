// gdfs-metadata-inflate-time: what inflating an image's metadata costs at open: meta::inflate (the block
// decode, the un-transposition and the deltas), the un-transposition and deltas alone, and the
// meta_ucheck hash, each the best of 30 runs.
//   gdfs-metadata-inflate-time IMAGE [THREADS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "gdfs/checksum.h"
#include "gdfs/meta_codec.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gdfs;
  if (argc < 2) return std::fprintf(stderr, "usage: gdfs-metadata-inflate-time IMAGE [THREADS]\n"), 2;
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> img((std::istreambuf_iterator<char>(in)), {});
  format::Superblock sb;
  if (img.size() < sizeof sb) return std::fprintf(stderr, "too small\n"), 1;
  std::memcpy(&sb, img.data(), sizeof sb);
  if (!meta::check_layout(sb).empty() || sb.meta_offset > img.size() ||
      sb.meta_size > img.size() - sb.meta_offset)
    return std::fprintf(stderr, "not a format 2 image\n"), 1;
  const std::span<const uint8_t> region(img.data() + sb.meta_offset, sb.meta_size);
  const unsigned threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1;
  double inflate = 1e9, untranspose = 1e9, ucheck = 1e9;
  for (int i = 0; i < 30; ++i) {
    std::vector<uint8_t> out, back;
    const auto t0 = Clock::now();
    const meta::Decoded d = meta::inflate(sb, region, out, threads);
    const auto t1 = Clock::now();
    if (!d.error.empty()) return std::fprintf(stderr, "%s\n", d.error.c_str()), 1;
    volatile uint64_t sum = checksum64(out.data(), out.size());
    (void)sum;
    const auto t2 = Clock::now();
    back.resize(out.size());
    for (uint32_t s = 0; s < format::kSectionCount; ++s)
      meta::from_stored(static_cast<format::Section>(s),
                        std::span<const uint8_t>(out).subspan(sb.sections[s].offset, sb.sections[s].size),
                        back.data() + sb.sections[s].offset);
    const auto t3 = Clock::now();
    inflate = std::min(inflate, seconds(t0, t1));
    ucheck = std::min(ucheck, seconds(t1, t2));
    untranspose = std::min(untranspose, seconds(t2, t3));
  }
  std::printf(
      "%s: %llu stored -> %llu bytes, %u thread(s): inflate %.2f ms (un-transposition and deltas "
      "%.2f ms of it), ucheck %.2f ms\n",
      argv[1], static_cast<unsigned long long>(sb.meta_size), static_cast<unsigned long long>(sb.meta_usize),
      threads, inflate * 1e3, untranspose * 1e3, ucheck * 1e3);
  return 0;
}
