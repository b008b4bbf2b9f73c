// The batch kernel's per-page dispatch (page_warp.h) on the warp emulator: zero and stored pages, the
// codec switch, and the limits every codec shares.
#include <gtest/gtest.h>

#include <cstring>

#include "emu/warp_emu.h"
#include "gdfs/x86_filter.h"
#include "page_warp.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

struct PageRun {
  PageStatus result;
  Bytes out;
};

PageRun run_page(format::Codec codec, const Bytes& in, size_t out_size, uint16_t param = 0) {
  ExactBuf src(in), out(out_size);
  std::memset(out.data(), 0xEE, out_size);
  auto sm = std::make_unique<gpu::WarpSmem>();
  const gpu::DevicePage p{
      src.data(), out.data(), static_cast<uint32_t>(in.size()), static_cast<uint32_t>(out_size), codec, 0,
      param,      0};
  PageStatus lanes[32];
  EXPECT_EQ(gpu::emu::run_warp([&] { lanes[gpu::simt::lane_id()] = gpu::decode_page_warp(p, *sm); }), "");
  for (PageStatus r : lanes) EXPECT_EQ(r, lanes[0]);
  return {lanes[0], out.bytes()};
}

TEST(EmuPages, StoredPagesCopyExactly) {
  for (size_t n : {1, 31, 32, 33, 4095, 65536}) {
    const Bytes raw = random_bytes(n, n);
    const PageRun r = run_page(format::kCodecStored, raw, n);
    ASSERT_EQ(r.result, PageStatus::kOk) << n;
    EXPECT_TRUE(r.out == raw) << n;
  }
}

TEST(EmuPages, StoredPageOfTheWrongSize) {
  EXPECT_EQ(run_page(format::kCodecStored, Bytes(100, 1), 99).result, PageStatus::kSizeMismatch);
  EXPECT_EQ(run_page(format::kCodecStored, Bytes(100, 1), 101).result, PageStatus::kSizeMismatch);
}

TEST(EmuPages, ZeroPagesFillAndTakeNoInput) {
  for (size_t n : {1, 100, 65536}) {
    const PageRun r = run_page(gpu::kZeroFill, {}, n);
    ASSERT_EQ(r.result, PageStatus::kOk);
    EXPECT_TRUE(r.out == Bytes(n, 0));
  }
  EXPECT_EQ(run_page(gpu::kZeroFill, Bytes(4, 0), 10).result, PageStatus::kBadData);
}

TEST(EmuPages, UnknownCodecsAreUnsupported) {
  for (unsigned c : {5u, 9u, 255u})
    EXPECT_EQ(run_page(static_cast<format::Codec>(c), Bytes(128, 0), 10).result, PageStatus::kUnsupported)
        << c;
}

TEST(EmuPages, NoCodecTakesMoreThan64KiB) {
  for (format::Codec c : {gpu::kZeroFill, format::kCodecStored, format::kCodecGDeflate, format::kCodecBitpack,
                          format::kCodecGDeflateX86})
    EXPECT_EQ(run_page(c, Bytes(65537, 0), 65537).result, PageStatus::kSizeMismatch);
}

TEST(EmuPages, GdeflatePageThroughTheDispatch) {
  gdeflate::Compressor c(6);
  const Bytes raw = random_bytes(5000, 3);
  const PageRun r = run_page(format::kCodecGDeflate, encode(c, raw), raw.size());
  ASSERT_EQ(r.result, PageStatus::kOk);
  EXPECT_TRUE(r.out == raw);
}

// Codec 4: GDeflate, then the x86 filter's inverse, by the warp. Pages dense in E8/E9 and 00/FF bytes,
// so that sites chain, are barred and straddle every 32-position step; sizes around the step.
TEST(EmuPages, X86PagesGiveTheCpuFiltersBytes) {
  gdeflate::Compressor c(6);
  for (size_t n : {0, 4, 5, 37, 64, 100, 1000, 65536}) {
    Bytes raw = random_bytes(n, 40 + n);
    static constexpr uint8_t kPick[] = {0xE8, 0xE9, 0x00, 0xFF};
    for (size_t i = 0; i < n; ++i)
      if (raw[i] % 3) raw[i] = kPick[raw[i] % 4];
    Bytes filtered = raw;
    x86::encode(filtered.data(), filtered.size());
    const PageRun r = run_page(format::kCodecGDeflateX86, encode(c, filtered), n);
    ASSERT_EQ(r.result, PageStatus::kOk) << n;
    EXPECT_TRUE(r.out == raw) << n;
  }
  // A damaged stream is the decoder's error, with no filter run over whatever it left.
  EXPECT_NE(run_page(format::kCodecGDeflateX86, Bytes(200, 0xAB), 1000).result, PageStatus::kOk);
}

// launch_order: the most stored bytes first, equal sizes in the given order, every page exactly once.
TEST(LaunchOrder, LargestStoredPageFirstTiesInGivenOrder) {
  std::vector<gpu::DevicePage> pages(7);
  const uint32_t sizes[] = {100, 65536, 0, 100, 4096, 65536, 7};
  for (size_t i = 0; i < pages.size(); ++i) pages[i].in_size = sizes[i];
  std::vector<uint32_t> order = {42};  // whatever was there is replaced
  gpu::launch_order(pages, order);
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 5, 4, 0, 3, 6, 2}));
  gpu::launch_order(std::span<const gpu::DevicePage>(), order);
  EXPECT_TRUE(order.empty());
}

}  // namespace
}  // namespace gdfs::test
