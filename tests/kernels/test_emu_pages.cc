// The batch kernel's per-page dispatch (page_warp.h) on the warp emulator: zero and stored pages, the
// codec switch, and the limits every codec shares.
#include <gtest/gtest.h>

#include <cstring>

#include "emu/warp_emu.h"
#include "page_warp.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

using gpu::PageCodec;
using gpu::PageResult;

struct PageRun {
  PageResult result;
  Bytes out;
};

PageRun run_page(PageCodec codec, const Bytes& in, size_t out_size, uint16_t param = 0) {
  ExactBuf src(in), out(out_size);
  std::memset(out.data(), 0xEE, out_size);
  auto sm = std::make_unique<gpu::WarpSmem>();
  const gpu::DevicePage p{src.data(),
                          out.data(),
                          static_cast<uint32_t>(in.size()),
                          static_cast<uint32_t>(out_size),
                          static_cast<uint8_t>(codec),
                          0,
                          param,
                          0};
  PageResult lanes[32];
  EXPECT_EQ(gpu::emu::run_warp([&] { lanes[gpu::simt::lane_id()] = gpu::decode_page_warp(p, *sm); }), "");
  for (PageResult r : lanes) EXPECT_EQ(r, lanes[0]);
  return {lanes[0], out.bytes()};
}

TEST(EmuPages, StoredPagesCopyExactly) {
  for (size_t n : {1, 31, 32, 33, 4095, 65536}) {
    const Bytes raw = random_bytes(n, n);
    const PageRun r = run_page(PageCodec::kStored, raw, n);
    ASSERT_EQ(r.result, PageResult::kOk) << n;
    EXPECT_TRUE(r.out == raw) << n;
  }
}

TEST(EmuPages, StoredPageOfTheWrongSize) {
  EXPECT_EQ(run_page(PageCodec::kStored, Bytes(100, 1), 99).result, PageResult::kSizeMismatch);
  EXPECT_EQ(run_page(PageCodec::kStored, Bytes(100, 1), 101).result, PageResult::kSizeMismatch);
}

TEST(EmuPages, ZeroPagesFillAndTakeNoInput) {
  for (size_t n : {1, 100, 65536}) {
    const PageRun r = run_page(PageCodec::kZero, {}, n);
    ASSERT_EQ(r.result, PageResult::kOk);
    EXPECT_TRUE(r.out == Bytes(n, 0));
  }
  EXPECT_EQ(run_page(PageCodec::kZero, Bytes(4, 0), 10).result, PageResult::kBadData);
}

TEST(EmuPages, UnknownCodecsAreUnsupported) {
  for (unsigned c : {4u, 9u, 255u})
    EXPECT_EQ(run_page(static_cast<PageCodec>(c), Bytes(128, 0), 10).result, PageResult::kUnsupported) << c;
}

TEST(EmuPages, NoCodecTakesMoreThan64KiB) {
  for (PageCodec c : {PageCodec::kZero, PageCodec::kStored, PageCodec::kGDeflate, PageCodec::kBitpack})
    EXPECT_EQ(run_page(c, Bytes(65537, 0), 65537).result, PageResult::kSizeMismatch);
}

TEST(EmuPages, GdeflatePageThroughTheDispatch) {
  gdeflate::Compressor c(6);
  const Bytes raw = random_bytes(5000, 3);
  const PageRun r = run_page(PageCodec::kGDeflate, encode(c, raw), raw.size());
  ASSERT_EQ(r.result, PageResult::kOk);
  EXPECT_TRUE(r.out == raw);
}

}  // namespace
}  // namespace gdfs::test
