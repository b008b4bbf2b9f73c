// A name from an image (or any untrusted text) made safe to print: control bytes (newline, escape, DEL,
// ...) are written as \xNN, so that it stays on one line and cannot drive the terminal; so are bytes
// that are not valid UTF-8 and the C1 controls (U+0080..U+009F, which a terminal may take as escape
// sequences). Valid UTF-8 passes through unchanged. Shared by the reader's messages, mkfs and the tools.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gdfs {
namespace detail {

// The length of the UTF-8 character at `s[i]` (a lead byte >= 0x80): 2..4, or 0 when it is not valid
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short) or a C1 control.
inline size_t utf8_length(std::string_view s, size_t i) {
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

}  // namespace detail

inline std::string printable_name(std::string_view name) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f) {
      s += name[i++];
      continue;
    }
    if (const size_t n = c >= 0x80 ? detail::utf8_length(name, i) : 0) {
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

}  // namespace gdfs
