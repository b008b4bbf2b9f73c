#include "text.h"

#include <cstdio>

namespace gdfs::text {

namespace {

// The length of the UTF-8 character at `s[i]` (a lead byte >= 0x80): 2..4, or 0 when it is not valid
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short) or a C1 control.
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1fu;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, cp = c & 0x0fu;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07u;
  else
    return 0;
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (byte(i + k) & 0x3fu);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f) {
      s += name[i++];
      continue;
    }
    if (const size_t n = c >= 0x80 ? utf8_length(name, i) : 0) {
      s.append(name.substr(i, n));
      i += n;
      continue;
    }
    s += "\\x";
    s += kHex[c >> 4];
    s += kHex[c & 15];
    ++i;
  }
  return s;
}

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
