// Checks the image tests share: an image that verifies and extracts to its source tree, and the message
// with which a reader refuses an image's bytes at open.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_util.h"
#include "gdfs/image.h"
#include "tree_util.h"

namespace gdfs::test {

// `gdfs-inspect verify IMAGE` passes, and `extract` gives back `src` (contents and modes).
inline void expect_verifies_and_extracts(const std::string& image, const std::string& src) {
  CliResult v = run_inspect({"verify", image});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  const std::string out = image + ".x";
  std::filesystem::remove_all(out);
  CliResult x = run_inspect({"extract", image, out});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_EQ(compare_trees(src, out, false, false), std::vector<std::string>{});
}

// Why Image::from_memory refuses `bytes`; empty when it opens them.
inline std::string open_error(std::vector<uint8_t> bytes) {
  try {
    Image::from_memory(std::move(bytes), "crafted");
  } catch (const ImageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace gdfs::test
