// `stats`: how well the image compresses and where the space goes: page ratio histogram, codec mix,
// largest files, and what dedupe and tail packing saved.
#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "commands.h"
#include "stored_pages.h"
#include "util.h"
#include "walk.h"

namespace gdfs::inspect {
namespace {

constexpr std::array<double, 6> kBucketBounds = {1.1, 1.5, 2, 3, 5, 10};
constexpr std::array<const char*, 7> kBucketNames = {"<1.1", "1.1-1.5", "1.5-2", "2-3",
                                                     "3-5",  "5-10",    ">=10"};

struct CodecUse {
  uint64_t pages = 0, stored = 0, decoded = 0;
};

struct Pages {
  std::array<uint64_t, 7> buckets{};
  std::map<std::string, CodecUse> codecs;
  std::map<std::string, CodecUse> bitpack;  // by parameters ("i16 B32 S1 outlier")
  uint64_t entries = 0, distinct = 0, flagged_dedupe = 0, dup_entries = 0, dup_stored = 0, dup_decoded = 0;
};

// Everything about stored pages, each distinct stored page counted once.
Pages page_stats(const Image& img) {
  const StoredPages sp = distinct_stored_pages(img);
  const auto entries = img.pages();
  Pages p;
  p.entries = entries.size();
  p.distinct = sp.first.size();
  for (uint64_t first : sp.first) {
    const format::PageEntry& e = entries[first];
    const double r = ratio(e.usize, e.csize);
    const size_t bucket =
        std::upper_bound(kBucketBounds.begin(), kBucketBounds.end(), r) - kBucketBounds.begin();
    ++p.buckets[bucket];
    CodecUse& c = p.codecs[codec_name(e.codec)];
    ++c.pages, c.stored += e.csize, c.decoded += e.usize;
    if (e.codec == format::kCodecBitpack) {
      CodecUse& b = p.bitpack[codec_label(e).substr(8)];  // the label without "bitpack "
      ++b.pages, b.stored += e.csize, b.decoded += e.usize;
    }
  }
  for (uint64_t i = 0; i < entries.size(); ++i) {
    p.flagged_dedupe += (entries[i].flags & format::kPageDeduped) != 0;
    if (sp.first[sp.group_of[i]] != i)
      ++p.dup_entries, p.dup_stored += entries[i].csize, p.dup_decoded += entries[i].usize;
  }
  return p;
}

struct Files {
  uint64_t hole_pages = 0, hole_bytes = 0, tails = 0, tail_bytes = 0, packs = 0, shared_tails = 0;
  std::vector<std::pair<uint64_t, uint32_t>> largest;  // (size, ino), largest first
};

// Holes come from the file's runs, never from a walk over its pages: a crafted image may declare
// billions of them.
void count_holes(const Image& img, uint32_t ino, Files& f) {
  const uint64_t n = img.logical_pages(ino), ps = img.page_size(), size = img.inode(ino).size;
  for (const format::HoleRun& r : img.hole_runs(ino)) {
    f.hole_pages += r.count;
    const uint64_t end = uint64_t{r.first_page} + r.count;
    f.hole_bytes += r.count * ps - (end == n ? n * ps - size : 0);  // the last page may be partial
  }
}

// Per regular inode (so each hardlinked file once): holes, tails and sizes.
Files file_stats(const Image& img) {
  Files f;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> tail_users;  // (pack entry, offset) -> tails there
  std::vector<std::pair<uint64_t, uint32_t>> sizes;
  for (uint32_t ino = 1; ino <= img.inode_count(); ++ino) {
    if (img.type(ino) != format::kTypeReg) continue;
    const format::Inode& in = img.inode(ino);
    sizes.push_back({in.size, ino});
    count_holes(img, ino, f);
    if (in.tail_entry == format::kNone) continue;
    ++f.tails;
    f.tail_bytes += img.page_ref(ino, img.logical_pages(ino) - 1).length;
    ++tail_users[{in.tail_entry, in.tail_offset}];
  }
  for (const auto& [where, users] : tail_users) f.shared_tails += users > 1 ? users : 0;
  for (const format::PageEntry& e : img.pages()) f.packs += (e.flags & format::kPageTailPack) != 0;
  const size_t top = std::min<size_t>(10, sizes.size());
  std::partial_sort(sizes.begin(), sizes.begin() + top, sizes.end(), [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  f.largest.assign(sizes.begin(), sizes.begin() + top);
  return f;
}

Json to_json(const Image& img, const Pages& p, const Files& f) {
  Json hist = Json::object();
  for (size_t i = 0; i < p.buckets.size(); ++i) hist[kBucketNames[i]] = p.buckets[i];
  Json codecs = Json::object();
  for (const auto& [name, c] : p.codecs)
    codecs[name] = {{"pages", c.pages}, {"stored_bytes", c.stored}, {"decoded_bytes", c.decoded}};
  codecs["hole"] = {{"pages", f.hole_pages}, {"stored_bytes", 0}, {"decoded_bytes", f.hole_bytes}};
  Json bitpack = Json::object();
  for (const auto& [params, c] : p.bitpack)
    bitpack[params] = {{"pages", c.pages}, {"stored_bytes", c.stored}, {"decoded_bytes", c.decoded}};
  const PathIndex paths(img);
  Json largest = Json::array();
  for (auto [size, ino] : f.largest)
    largest.push_back({{"path", paths.path(ino)}, {"inode", ino}, {"size", size}});
  return {{"image", img.name()},
          {"page_entries", p.entries},
          {"stored_pages", p.distinct},
          {"ratio_histogram", hist},
          {"codecs", codecs},
          {"bitpack_params", bitpack},
          {"largest_files", largest},
          {"dedupe",
           {{"entries", p.dup_entries},
            {"flagged_entries", p.flagged_dedupe},
            {"bytes_not_stored", p.dup_stored},
            {"decoded_bytes", p.dup_decoded}}},
          {"tails",
           {{"tails", f.tails},
            {"packs", f.packs},
            {"tail_bytes", f.tail_bytes},
            {"pages_avoided", static_cast<int64_t>(f.tails) - static_cast<int64_t>(f.packs)},
            {"deduped_tails", f.shared_tails}}}};
}

std::string n(const Json& v) {
  return v.is_number_integer() ? v.dump() : v.get<std::string>();
}

void print_text(std::ostream& out, const Json& j) {
  out << "stored pages: " << n(j["stored_pages"]) << " (" << n(j["page_entries"]) << " page entries)\n\n";
  out << "page ratio (decoded/stored) over stored pages:\n";
  Table hist({"ratio", "pages"}, "lr");
  for (const auto& [bucket, count] : j["ratio_histogram"].items()) hist.add({bucket, n(count)});
  hist.print(out);
  out << "\ncodecs:\n";
  Table codecs({"codec", "pages", "stored", "decoded"}, "lrrr");
  for (const auto& [name, c] : j["codecs"].items())
    codecs.add({name, n(c["pages"]), n(c["stored_bytes"]), n(c["decoded_bytes"])});
  codecs.print(out);
  if (!j["bitpack_params"].empty()) {
    out << "\nbitpack parameters (type, block, stride, mode):\n";
    Table params({"params", "pages", "stored", "decoded"}, "lrrr");
    for (const auto& [name, c] : j["bitpack_params"].items())
      params.add({name, n(c["pages"]), n(c["stored_bytes"]), n(c["decoded_bytes"])});
    params.print(out);
  }
  out << "\nlargest files:\n";
  Table largest({"size", "inode", "path"}, "rrl");
  for (const auto& f : j["largest_files"])
    largest.add({n(f["size"]), n(f["inode"]), printable_name(n(f["path"]))});
  largest.print(out);
  const Json& d = j["dedupe"];
  out << "\ndedupe: " << n(d["entries"]) << " entries share stored pages (" << n(d["flagged_entries"])
      << " flagged), " << n(d["bytes_not_stored"]) << " bytes not stored (" << n(d["decoded_bytes"])
      << " decoded bytes)\n";
  const Json& t = j["tails"];
  out << "tails: " << n(t["tails"]) << " tails in " << n(t["packs"]) << " packs, " << n(t["tail_bytes"])
      << " tail bytes, " << n(t["pages_avoided"]) << " pages avoided, " << n(t["deduped_tails"])
      << " tails share their bytes with another\n";
}

}  // namespace

int stats(const Options& o, std::ostream& out) {
  auto img = open_image(o);
  return print_report(out, to_json(*img, page_stats(*img), file_stats(*img)), o.json, print_text);
}

}  // namespace gdfs::inspect
