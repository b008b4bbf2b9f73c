#include "chmod.h"

#include <sys/stat.h>

#include <string_view>

namespace gdfs::mkfs {

std::string parse_mode_change(const std::string& text, ModeChange& out) {
  out = ModeChange{};
  if (text.empty()) return "is empty";
  if (text.find_first_not_of("01234567") == std::string::npos) {
    if (text.size() > 5 || (text.size() == 5 && text[0] != '0'))
      return "'" + text + "' is more than 4 octal digits (or 5 with a leading 0)";
    out.octal = true;
    out.keep_dir_ids = text.size() < 5;
    out.mode = static_cast<uint32_t>(std::stoul(text, nullptr, 8));
    return {};
  }
  const auto is_op = [](char c) { return c == '+' || c == '-' || c == '='; };
  size_t at = 0;
  for (;;) {
    uint32_t who = 0;
    for (; at < text.size() && std::string("ugoa").find(text[at]) != std::string::npos; ++at)
      who |= text[at] == 'u' ? 04700 : text[at] == 'g' ? 02070 : text[at] == 'o' ? 01007 : 07777;
    if (who == 0) who = 07777;
    if (at == text.size() || !is_op(text[at]))
      return "'" + text + "': expected +, - or = at '" + text.substr(at) + "'";
    while (at < text.size() && is_op(text[at])) {
      ModeAction a{who, text[at++]};
      for (; at < text.size() && text[at] != ',' && !is_op(text[at]); ++at) {
        // r w x s t as mode bits (who masks them later); X is decided per inode.
        static constexpr std::string_view kLetters = "rwxst";
        static constexpr uint32_t kBits[] = {0444, 0222, 0111, 06000, 01000};
        if (text[at] == 'X') {
          a.cond_x = true;
        } else if (const size_t i = kLetters.find(text[at]); i != std::string_view::npos) {
          a.bits |= kBits[i];
        } else {
          return "'" + text + "': '" + text[at] + "' is not one of r, w, x, X, s, t";
        }
      }
      out.actions.push_back(a);
    }
    if (at == text.size()) return {};
    ++at;  // ','
  }
}

uint32_t apply_mode_change(const ModeChange& change, uint32_t mode) {
  if (S_ISLNK(mode)) return mode;
  const uint32_t type = mode & S_IFMT;
  // chmod(1) keeps a directory's setuid and setgid bits unless MODE sets either or has 5 digits.
  if (change.octal)
    return type | change.mode |
           (S_ISDIR(mode) && change.keep_dir_ids && !(change.mode & 06000) ? mode & 06000 : 0);
  uint32_t perm = mode & 07777;
  for (const ModeAction& a : change.actions) {
    uint32_t bits = a.bits;
    if (a.cond_x && (S_ISDIR(mode) || (perm & 0111))) bits |= 0111;
    bits &= a.who;
    if (a.op == '+')
      perm |= bits;
    else if (a.op == '-')
      perm &= ~bits;
    else  // = keeps a directory's setuid and setgid bits unless it names s, as chmod(1) does
      perm = (perm & ~(S_ISDIR(mode) && !(a.bits & 06000) ? a.who & ~06000u : a.who)) | bits;
  }
  return type | perm;
}

}  // namespace gdfs::mkfs
