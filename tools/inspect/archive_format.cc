#include "archive_format.h"

#include <string_view>
#include <utility>

namespace gdfs::inspect {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Our names to libarchive's: the aliases say what a user means, not what libarchive calls it ("cpio" is
// odc there, a format that truncates owners above 262143 and sizes above 8 GiB).
std::string writer_name(const std::string& format) {
  if (format == "tar" || format == "posix") return "pax";
  if (format == "cpio") return "newc";
  if (format == "odc") return "cpio";
  return format;
}

// The compression a file name asks for, and the name without it: "a.tar.zst" -> zstd, "a.tar".
std::pair<std::string, std::string> split_filter(const std::string& file) {
  static const std::pair<const char*, const char*> kFilters[] = {{".gz", "gzip"}, {".zst", "zstd"},
                                                                 {".xz", "xz"},   {".bz2", "bzip2"},
                                                                 {".lz4", "lz4"}, {".lzma", "lzma"}};
  for (const auto& [ext, filter] : kFilters) {
    if (ends_with(file, ext)) return {filter, file.substr(0, file.size() - std::string_view(ext).size())};
  }
  static const std::pair<const char*, const char*> kShort[] = {
      {".tgz", "gzip"}, {".tzst", "zstd"}, {".txz", "xz"}, {".tbz2", "bzip2"}, {".tbz", "bzip2"}};
  for (const auto& [ext, filter] : kShort) {
    if (ends_with(file, ext))
      return {filter, file.substr(0, file.size() - std::string_view(ext).size()) + ".tar"};
  }
  return {"none", file};
}

// The format a file name (its compression suffix removed) asks for; "" when it names none.
std::string format_of_name(const std::string& base) {
  static const std::pair<const char*, const char*> kFormats[] = {
      {".tar", "pax"}, {".pax", "pax"}, {".cpio", "newc"}, {".zip", "zip"}, {".7z", "7zip"}, {".xar", "xar"}};
  for (const auto& [ext, format] : kFormats) {
    if (ends_with(base, ext)) return format;
  }
  return "";
}

}  // namespace

const std::vector<std::string>& archive_format_names() {
  static const std::vector<std::string> kNames = {"tar",  "pax",  "posix", "paxr", "ustar", "gnutar", "v7tar",
                                                  "cpio", "newc", "odc",   "zip",  "7zip",  "xar"};
  return kNames;
}

const std::vector<std::string>& archive_filter_names() {
  static const std::vector<std::string> kNames = {"none", "gzip", "zstd", "xz", "bzip2", "lz4", "lzma"};
  return kNames;
}

ArchiveFormat choose_archive_format(const std::string& file, const std::string& format,
                                    const std::string& compress) {
  ArchiveFormat f{"pax", "none"};
  if (file != "-") {
    const auto [filter, base] = split_filter(file);
    f.filter = filter;
    if (const std::string named = format_of_name(base); !named.empty()) f.format = named;
  }
  if (!format.empty()) f.format = writer_name(format);
  if (!compress.empty()) f.filter = compress;
  return f;
}

}  // namespace gdfs::inspect
