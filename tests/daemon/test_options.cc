// The daemon's own -o option parsing (label unit).
#include <gtest/gtest.h>

#include "daemon/options.h"

namespace gdfs::daemon {
namespace {

TEST(Options, ParseSize) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_size("4096", v));
  EXPECT_EQ(v, 4096u);
  EXPECT_TRUE(parse_size("512M", v));
  EXPECT_EQ(v, 512ull << 20);
  EXPECT_TRUE(parse_size("2G", v));
  EXPECT_EQ(v, 2ull << 30);
  EXPECT_TRUE(parse_size("64KiB", v));
  EXPECT_EQ(v, 64ull << 10);
  for (const char* bad : {"", "M", "-1", "1T", "12 M", "99999999999999999999", "17179869184G"})
    EXPECT_FALSE(parse_size(bad, v)) << bad;
}

}  // namespace
}  // namespace gdfs::daemon
