#include "summary.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "diag.h"

namespace gdfs::mkfs {
namespace {

std::string size_str(uint64_t bytes) {
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

}  // namespace

void print_text(const Summary& s, std::ostream& out) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: %llu files, %llu dirs, %llu symlinks, %llu other, %llu hard links\n"
                "  input     %s\n"
                "  image     %s (ratio %.2f), metadata %s\n"
                "  pages     %llu gdeflate, %llu bitpack, %llu stored, %llu holes\n"
                "  dedupe    %llu pages, %s saved (%s stored)\n"
                "  tails     %llu in %llu packs (%s), %llu shared\n"
                "  time      %.2f s, %.1f MB/s\n",
                display(s.image).c_str(), static_cast<unsigned long long>(s.files),
                static_cast<unsigned long long>(s.dirs), static_cast<unsigned long long>(s.symlinks),
                static_cast<unsigned long long>(s.others), static_cast<unsigned long long>(s.hardlinks),
                size_str(s.bytes_in).c_str(), size_str(s.image_bytes).c_str(), s.ratio(),
                size_str(s.metadata_bytes).c_str(), static_cast<unsigned long long>(s.pages_gdeflate),
                static_cast<unsigned long long>(s.pages_bitpack),
                static_cast<unsigned long long>(s.pages_stored),
                static_cast<unsigned long long>(s.hole_pages),
                static_cast<unsigned long long>(s.deduped_pages), size_str(s.dedup_bytes).c_str(),
                size_str(s.dedup_stored_bytes).c_str(), static_cast<unsigned long long>(s.tails),
                static_cast<unsigned long long>(s.tail_packs), size_str(s.tail_bytes).c_str(),
                static_cast<unsigned long long>(s.tail_dedupe_hits), s.seconds, s.mb_per_s());
  out << buf;
  if (s.skipped) out << "  skipped   " << s.skipped << " entries (see the errors above)\n";
}

void print_json(const Summary& s, std::ostream& out) {
  // The image name is arbitrary bytes; JSON needs UTF-8, so invalid sequences become U+FFFD.
  nlohmann::json j = {
      {"image", s.image},
      {"files", s.files},
      {"dirs", s.dirs},
      {"symlinks", s.symlinks},
      {"other_inodes", s.others},
      {"hardlinks", s.hardlinks},
      {"skipped", s.skipped},
      {"bytes_in", s.bytes_in},
      {"image_bytes", s.image_bytes},
      {"ratio", s.ratio()},
      {"metadata_bytes", s.metadata_bytes},
      {"pages",
       {{"gdeflate", s.pages_gdeflate},
        {"bitpack", s.pages_bitpack},
        {"stored", s.pages_stored},
        {"holes", s.hole_pages}}},
      {"dedupe",
       {{"pages", s.deduped_pages},
        {"bytes_saved", s.dedup_bytes},
        {"stored_bytes_saved", s.dedup_stored_bytes}}},
      {"tails",
       {{"packed", s.tails},
        {"packs", s.tail_packs},
        {"bytes", s.tail_bytes},
        {"dedupe_hits", s.tail_dedupe_hits}}},
      {"seconds", s.seconds},
      {"mb_per_s", s.mb_per_s()},
  };
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace gdfs::mkfs
