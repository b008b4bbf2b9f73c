#include "text.h"

#include <cstdio>

namespace gdfs::text {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string join(const std::vector<std::string>& items, std::string_view separator,
                 std::string_view if_empty) {
  if (items.empty()) return std::string(if_empty);
  std::string s = items.front();
  for (size_t i = 1; i < items.size(); ++i) {
    s += separator;
    s += items[i];
  }
  return s;
}

std::string join_path(std::string_view dir, std::string_view name) {
  std::string s(dir);
  if (!s.empty() && s.back() != '/') s += '/';
  s += name;
  return s;
}

std::string human_size(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

}  // namespace gdfs::text
