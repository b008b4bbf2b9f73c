// Small string helpers the tools and mkfs share: numbers and lists as text (names made safe to print:
// gdfs/printable.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gdfs::text {

// `v` with exactly `decimals` digits after the point ("%.*f").
std::string fixed(double v, int decimals);

// The items separated by `separator`; `if_empty` when there are none.
std::string join(const std::vector<std::string>& items, std::string_view separator,
                 std::string_view if_empty);

// `dir` and `name` joined by one slash: "" + "a" is "a", "/" + "a" is "/a", "d" + "a" is "d/a".
std::string join_path(std::string_view dir, std::string_view name);

// "512 B", or one decimal and a binary unit: "1.5 KiB", "3.2 GiB".
std::string human_size(uint64_t bytes);

}  // namespace gdfs::text
