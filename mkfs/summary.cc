#include "summary.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "diag.h"
#include "json_text.h"
#include "text.h"

namespace gdfs::mkfs {
void print_text(const Summary& s, std::ostream& out) {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "%s: %llu files, %llu dirs, %llu symlinks, %llu other, %llu hard links\n"
      "  input     %s\n"
      "  image     %s (ratio %.2f), metadata %s\n"
      "  pages     %llu gdeflate (%llu x86), %llu bitpack, %llu stored, %llu holes\n"
      "  dedupe    %llu pages, %s saved (%s stored)\n"
      "  tails     %llu in %llu packs (%s), %llu shared\n"
      "  time      %.2f s, %.1f MB/s\n",
      display(s.image).c_str(), static_cast<unsigned long long>(s.files),
      static_cast<unsigned long long>(s.dirs), static_cast<unsigned long long>(s.symlinks),
      static_cast<unsigned long long>(s.others), static_cast<unsigned long long>(s.hardlinks),
      text::human_size(s.bytes_in).c_str(), text::human_size(s.image_bytes).c_str(), s.ratio(),
      text::human_size(s.metadata_bytes).c_str(), static_cast<unsigned long long>(s.pages_gdeflate),
      static_cast<unsigned long long>(s.pages_x86), static_cast<unsigned long long>(s.pages_bitpack),
      static_cast<unsigned long long>(s.pages_stored), static_cast<unsigned long long>(s.hole_pages),
      static_cast<unsigned long long>(s.deduped_pages), text::human_size(s.dedup_bytes).c_str(),
      text::human_size(s.dedup_stored_bytes).c_str(), static_cast<unsigned long long>(s.tails),
      static_cast<unsigned long long>(s.tail_packs), text::human_size(s.tail_bytes).c_str(),
      static_cast<unsigned long long>(s.tail_dedupe_hits), s.seconds, s.mb_per_s());
  out << buf;
  if (s.reused_pages || s.base_tails)
    out << "  base      " << s.reused_pages << " pages reused (" << text::human_size(s.reused_bytes) << ", "
        << text::human_size(s.reused_stored_bytes) << " stored), " << s.base_tails << " tails in them\n";
  if (s.skipped) out << "  skipped   " << s.skipped << " entries (see the errors above)\n";
}

void print_json(const Summary& s, std::ostream& out) {
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
        {"x86", s.pages_x86},
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
      {"base",
       {{"reused_pages", s.reused_pages},
        {"reused_bytes", s.reused_bytes},
        {"reused_stored_bytes", s.reused_stored_bytes},
        {"tails", s.base_tails},
        {"indexed_tails", s.base_indexed_tails}}},
      {"seconds", s.seconds},
      {"mb_per_s", s.mb_per_s()},
  };
  json_text::print(out, j);
}

}  // namespace gdfs::mkfs
