#include "util.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>

#include "gdfs/bitpack.h"

namespace gdfs::inspect {

uint32_t resolve_path(const Image& img, const std::string& path) {
  const uint32_t ino = img.resolve(path);
  if (ino == 0)
    throw std::runtime_error(img.name() + ": " + path + ": no such file or directory in the image");
  return ino;
}

std::string mode_string(uint32_t mode) {
  std::string s = "?rwxrwxrwx";
  switch (mode & format::kTypeMask) {
    case format::kTypeDir:
      s[0] = 'd';
      break;
    case format::kTypeReg:
      s[0] = '-';
      break;
    case format::kTypeLnk:
      s[0] = 'l';
      break;
    case format::kTypeChr:
      s[0] = 'c';
      break;
    case format::kTypeBlk:
      s[0] = 'b';
      break;
    case format::kTypeFifo:
      s[0] = 'p';
      break;
    case format::kTypeSock:
      s[0] = 's';
      break;
  }
  for (int i = 0; i < 9; ++i)
    if (!(mode & (0400u >> i))) s[1 + i] = '-';
  // The special bits take the execute slot: lower case when execute is also set, upper case when not.
  auto special = [&](uint32_t bit, size_t slot, char c) {
    if (mode & bit) s[slot] = s[slot] == 'x' ? c : static_cast<char>(c - 'a' + 'A');
  };
  special(04000u, 3, 's');
  special(02000u, 6, 's');
  special(01000u, 9, 't');
  return s;
}

const char* type_name(uint32_t mode) {
  switch (mode & format::kTypeMask) {
    case format::kTypeDir:
      return "dir";
    case format::kTypeReg:
      return "file";
    case format::kTypeLnk:
      return "symlink";
    case format::kTypeChr:
      return "chardev";
    case format::kTypeBlk:
      return "blockdev";
    case format::kTypeFifo:
      return "fifo";
    case format::kTypeSock:
      return "socket";
  }
  return "unknown";
}

namespace {

// strftime over UTC; a time gmtime cannot represent (years past INT_MAX) falls back to raw seconds.
std::string utc(int64_t sec, const char* format) {
  const time_t t = static_cast<time_t>(sec);
  struct tm tm {};
  char buf[64];
  if (gmtime_r(&t, &tm) == nullptr || std::strftime(buf, sizeof buf, format, &tm) == 0)
    std::snprintf(buf, sizeof buf, "@%lld", static_cast<long long>(sec));
  return buf;
}

}  // namespace

std::string iso_time(int64_t sec, uint32_t nsec) {
  std::string s = utc(sec, "%Y-%m-%dT%H:%M:%S");
  if (nsec != 0) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%09u", nsec);
    s += frac;
  }
  return s + "Z";
}

std::string short_time(int64_t sec) {
  return utc(sec, "%Y-%m-%d %H:%M:%S");
}

std::string printable(std::string_view name) {
  std::string s;
  s.reserve(name.size());
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      s += buf;
    } else {
      s += static_cast<char>(c);
    }
  }
  return s;
}

std::string codec_label(const format::PageEntry& e) {
  if (e.codec != format::kCodecBitpack) return codec_name(e.codec);
  const auto p = bitpack::from_param(e.param);  // validated at open
  if (!p) return "bitpack ?";
  return std::string("bitpack ") + (p->type == bitpack::Type::kInt16 ? "i16" : "i32") + " B" +
         std::to_string(p->block) + " S" + std::to_string(p->stride) +
         (p->mode == bitpack::Mode::kOutlier ? " outlier" : " plain");
}

Json codec_params(const format::PageEntry& e) {
  const auto p = e.codec == format::kCodecBitpack ? bitpack::from_param(e.param) : std::nullopt;
  if (!p) return nullptr;
  return {{"type", p->type == bitpack::Type::kInt16 ? "int16" : "int32"},
          {"block", p->block},
          {"stride", p->stride},
          {"mode", p->mode == bitpack::Mode::kOutlier ? "outlier" : "plain"}};
}

int digits(uint64_t v) {
  int n = 1;
  while (v >= 10) v /= 10, ++n;
  return n;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double ratio(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

void print_json(std::ostream& out, const Json& j) {
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

std::string compact_json(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Table::Table(std::vector<std::string> header, std::string align) : align_(std::move(align)) {
  rows_.push_back(std::move(header));
}

void Table::add(std::vector<std::string> row) {
  rows_.push_back(std::move(row));
}

void Table::print(std::ostream& out, bool with_header) const {
  std::vector<size_t> width;
  for (size_t r = with_header ? 0 : 1; r < rows_.size(); ++r)
    for (size_t c = 0; c < rows_[r].size(); ++c) {
      if (width.size() <= c) width.resize(c + 1, 0);
      width[c] = std::max(width[c], rows_[r][c].size());
    }
  for (size_t r = with_header ? 0 : 1; r < rows_.size(); ++r) {
    const auto& row = rows_[r];
    for (size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      const std::string pad(width[c] - row[c].size(), ' ');
      const bool right = c < align_.size() && align_[c] == 'r';
      if (c > 0) out << "  ";
      if (right) out << pad;
      out << row[c];
      if (!right && !last) out << pad;
    }
    out << "\n";
  }
}

}  // namespace gdfs::inspect
