// Every 64 KiB page of a few MB of real binaries and text, at every level: round trip, and never larger
// than the stored form (the reference encoder breaks this bound on real binaries; ours must not).
// Label `slow`. GDFS_TEST_REAL_KIB sets the amount of data per level (default 8192 KiB).
#include <gtest/gtest.h>

#include <cstdlib>

#include "real_data.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

const std::vector<Bytes>& real_pages() {
  static const std::vector<Bytes> pages = [] {
    const char* env = std::getenv("GDFS_TEST_REAL_KIB");
    const size_t budget = 1024 * (env ? std::strtoul(env, nullptr, 10) : 8192);
    const auto samples = real_samples(budget / 6);  // several files, each a slice of the budget
    std::vector<Bytes> all = pages_of(samples), kept;
    size_t total = 0;
    for (Bytes& p : all) {
      if (total >= budget) break;
      total += p.size();
      kept.push_back(std::move(p));
    }
    return kept;
  }();
  return pages;
}

class RealPages : public ::testing::TestWithParam<int> {};

TEST_P(RealPages, RoundTripWithinStoredSize) {
  const auto& pages = real_pages();
  ASSERT_GE(pages.size(), 16u) << "found too little real data on this machine";
  gdeflate::Compressor c(GetParam());
  gdeflate::Decompressor d;
  size_t raw_total = 0, page_total = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    const Bytes& raw = pages[i];
    const Bytes page = encode(c, raw);
    ASSERT_GT(page.size(), 0u) << "page " << i;
    ASSERT_LE(page.size(), gdeflate::stored_size(raw.size())) << "page " << i;
    ExactBuf in(page), out(raw.size());
    ASSERT_EQ(d.decompress(in.data(), in.size(), out.data(), out.size()), PageStatus::kOk) << "page " << i;
    ASSERT_TRUE(out.bytes() == raw) << "page " << i;
    raw_total += raw.size();
    page_total += page.size();
  }
  RecordProperty("pages", static_cast<int>(pages.size()));
  RecordProperty("ratio_x1000", static_cast<int>(1000.0 * raw_total / page_total));
  if (GetParam() > 0) {
    EXPECT_LT(page_total, raw_total) << "real data should compress";
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevels, RealPages,
                         ::testing::Range(gdeflate::kMinLevel, gdeflate::kMaxLevel + 1));

}  // namespace
}  // namespace gdfs::test
