#include "util.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>

#include "commands.h"
#include "gdfs/bitpack.h"
#include "json_text.h"

namespace gdfs::inspect {

std::unique_ptr<Image> open_image(const Options& o) {
  SourceOptions so;
  so.bases = o.bases;
  so.trusted_key = o.key;
  return Image::open(o.image, so);
}

uint32_t resolve_path(const Image& img, const std::string& path, Follow follow) {
  int error = 0;
  if (const uint32_t ino = img.resolve(path, &error, follow)) return ino;
  throw std::runtime_error(img.name() + ": " + path + ": " + Image::resolve_error(error) + " in the image");
}

namespace {

// Each file type once: its letter in ls -l and its name in listings and JSON.
struct FileType {
  uint32_t type;
  char letter;
  const char* name;
};
constexpr FileType kFileTypes[] = {{format::kTypeDir, 'd', "dir"},      {format::kTypeReg, '-', "file"},
                                   {format::kTypeLnk, 'l', "symlink"},  {format::kTypeChr, 'c', "chardev"},
                                   {format::kTypeBlk, 'b', "blockdev"}, {format::kTypeFifo, 'p', "fifo"},
                                   {format::kTypeSock, 's', "socket"}};

const FileType* file_type(uint32_t mode) {
  for (const FileType& t : kFileTypes)
    if ((mode & format::kTypeMask) == t.type) return &t;
  return nullptr;
}

}  // namespace

std::string last_name(const std::string& path) {
  std::vector<std::string> parts;
  for (size_t pos = 0; pos <= path.size();) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    const std::string part = path.substr(pos, slash - pos);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    pos = slash + 1;
  }
  if (parts.empty()) throw std::runtime_error(path + ": has no name to extract it under");
  return parts.back();
}

std::string mode_string(uint32_t mode) {
  std::string s = "?rwxrwxrwx";
  if (const FileType* t = file_type(mode)) s[0] = t->letter;
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
  const FileType* t = file_type(mode);
  return t ? t->name : "unknown";
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

double ratio(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

bool valid_utf8(std::string_view s) {
  try {
    (void)Json(s).dump();  // strict: throws on invalid UTF-8, exactly what print_json would replace
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

std::string base64(std::string_view s) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((s.size() + 2) / 3 * 4);
  for (size_t i = 0; i < s.size(); i += 3) {
    const size_t n = std::min<size_t>(3, s.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<uint8_t>(s[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out.push_back(k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=');
  }
  return out;
}

void put_name(Json& j, const std::string& key, std::string_view value) {
  j[key] = std::string(value);
  if (!valid_utf8(value)) j[key + "_b64"] = base64(value);
}

void print_json(std::ostream& out, const Json& j) {
  json_text::print(out, j);
}

int print_report(std::ostream& out, const Json& j, bool json, TextFn print_text) {
  if (json)
    print_json(out, j);
  else
    print_text(out, j);
  return 0;
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
