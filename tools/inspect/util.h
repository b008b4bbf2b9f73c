// Small helpers shared by the subcommands: looking up paths, and formatting modes, times and names.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gdfs/image.h"
#include "gdfs/printable.h"
#include "text.h"

namespace gdfs::inspect {

using Json = nlohmann::ordered_json;  // keeps keys in the order we write them: easier to read

struct Options;
// Opens o.image, with o.bases as the places a layered image's bases may be.
std::unique_ptr<Image> open_image(const Options& o);

// The inode at `path` inside the image, resolved as Image::resolve does (symlinks on the way followed,
// the last one too with Follow::kYes, as cat(1) does); throws naming the image and the path when there
// is none.
uint32_t resolve_path(const Image& img, const std::string& path, Follow follow = Follow::kNo);

// The name PATH gives its last entry ("/a/./b/" -> "b", "a/b/../c" -> "c"): what `extract` names a single
// file it extracts. Throws when PATH names no entry ("/", "a/..").
std::string last_name(const std::string& path);

// "drwxr-xr-x", with s/S and t/T like ls -l.
std::string mode_string(uint32_t mode);
// "file", "dir", "symlink", "chardev", "blockdev", "fifo", "socket".
const char* type_name(uint32_t mode);
// "2024-05-01T12:00:00Z", with ".nnnnnnnnn" before the Z when nsec is not 0. UTC, never local time.
std::string iso_time(int64_t sec, uint32_t nsec);
// "2024-05-01 12:00:00" (UTC), for listings.
std::string short_time(int64_t sec);
// "stored", "gdeflate", "bitpack", or "codec N" for a value this build does not name.
// How a page is coded, parameters included: "gdeflate", or for bitpack "bitpack i16 B32 S1 outlier" (sample
// type, block size, stride, mode; docs/FORMAT.md 4.1).
std::string codec_label(const format::PageEntry& e);
// The bitpack parameters of an entry as JSON ({"type", "block", "stride", "mode"}), or null for other codecs.
Json codec_params(const format::PageEntry& e);
std::string hex32(uint32_t v);
// Decimal digits of v, for column widths.
int digits(uint64_t v);
using text::fixed;
// a / b, or 0 when b is 0.
double ratio(uint64_t a, uint64_t b);

// True when `s` is valid UTF-8, so that JSON can carry it unchanged.
bool valid_utf8(std::string_view s);
// Standard base64 (RFC 4648, with padding) of the bytes of `s`.
std::string base64(std::string_view s);
// Puts `value` under `key`; when it is not valid UTF-8 (names are any bytes), also its exact bytes in
// base64 under KEY_b64, since the JSON text replaces the invalid bytes (see print_json).
void put_name(Json& j, const std::string& key, std::string_view value);

// Writes `j` indented, one document per line. Names may be any bytes: invalid UTF-8 is replaced by U+FFFD
// rather than refused, since JSON cannot carry raw bytes (put_name adds the exact bytes beside them).
void print_json(std::ostream& out, const Json& j);
// The report `j` on `out`: JSON (print_json) when `json`, else text by `print_text`. Returns 0, the exit
// code.
using TextFn = void (*)(std::ostream& out, const Json& j);
int print_report(std::ostream& out, const Json& j, bool json, TextFn print_text);
// `j` on one line, with the same replacement; for output too large to build as one document.
std::string compact_json(const Json& j);

// A text table: columns padded to their widest cell, numbers right-aligned, text left-aligned; the last
// column is never padded (it holds names).
class Table {
 public:
  // `align` holds 'r' (right) or 'l' (left) per column; missing columns are left-aligned.
  explicit Table(std::vector<std::string> header, std::string align = "");
  void add(std::vector<std::string> row);
  void print(std::ostream& out, bool with_header = true) const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::vector<std::string>> rows_;  // rows_[0] is the header
  std::string align_;
};

}  // namespace gdfs::inspect
