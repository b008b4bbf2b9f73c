// `pages`: the page pointer table of one regular file, one row per logical page in file order.
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <stdexcept>

#include "commands.h"
#include "util.h"

namespace gdfs::inspect {
namespace {

// One logical page, resolved. For holes `e` is null; for tails `e` is the tail pack.
struct Row {
  uint64_t index, file_offset;
  PageRef ref;
  const format::PageEntry* e;
};

std::vector<std::string> flag_list(const Row& r) {
  std::vector<std::string> flags;
  if (r.e && (r.e->flags & format::kPageDeduped)) flags.push_back("dedupe");
  if (r.ref.kind == PageRef::kTail) flags.push_back("tail");
  return flags;
}

Json row_json(const Row& r) {
  Json j;
  j["index"] = r.index;
  j["file_offset"] = r.file_offset;
  j["length"] = r.ref.length;  // bytes of the file in this page
  if (!r.e) {
    j["image_offset"] = nullptr;
    j["stored_size"] = 0;
    j["size"] = r.ref.length;
    j["ratio"] = nullptr;
    j["codec"] = "hole";
    j["checksum"] = "-";
  } else {
    j["image_offset"] = r.e->offset;
    j["stored_size"] = r.e->csize;
    j["size"] = r.e->usize;
    j["ratio"] = ratio(r.e->usize, r.e->csize);
    j["codec"] = codec_name(r.e->codec);
    if (r.e->codec == format::kCodecBitpack) j["codec_params"] = codec_params(*r.e);
    j["checksum"] = hex32(r.e->ucheck);
  }
  j["flags"] = flag_list(r);
  if (r.e) j["entry"] = r.ref.entry;
  if (r.ref.kind == PageRef::kTail) j["pack_offset"] = r.ref.offset;
  return j;
}

// Fixed-width text rows: a file may have millions of pages, so rows are streamed, not collected.
class TextTable {
 public:
  TextTable(const Image& img, uint64_t pages, uint64_t size)
      : wi_(std::max(5, digits(pages))),
        wf_(std::max(11, digits(size))),
        wo_(std::max(12, digits(img.superblock().image_size))),
        we_(std::max(5, digits(img.pages().size()))),
        wc_(img.superblock().incompat & format::kIncompatBitpack ? 26 : 8) {}

  void header(std::ostream& out) const {
    line(out, {"page", "file_offset", "image_offset", "stored", "size", "ratio", "codec", "checksum", "flags",
               "entry", "pack_off"});
  }
  void row(std::ostream& out, const Row& r) const {
    const bool hole = !r.e;
    line(out, {std::to_string(r.index), std::to_string(r.file_offset),
               hole ? "-" : std::to_string(r.e->offset), hole ? "-" : std::to_string(r.e->csize),
               hole ? std::to_string(r.ref.length) : std::to_string(r.e->usize),
               hole ? "-" : fixed(ratio(r.e->usize, r.e->csize), 2), hole ? "hole" : codec_label(*r.e),
               hole ? "-" : hex32(r.e->ucheck), text::join(flag_list(r), ",", "-"),
               hole ? "-" : std::to_string(r.ref.entry),
               r.ref.kind == PageRef::kTail ? std::to_string(r.ref.offset) : "-"});
  }

 private:
  void line(std::ostream& out, const std::vector<std::string>& c) const {
    out << std::right << std::setw(wi_) << c[0] << "  " << std::setw(wf_) << c[1] << "  " << std::setw(wo_)
        << c[2] << "  " << std::setw(6) << c[3] << "  " << std::setw(6) << c[4] << "  " << std::setw(6)
        << c[5] << "  " << std::left << std::setw(wc_) << c[6] << "  " << std::setw(8) << c[7] << "  "
        << std::setw(11) << c[8] << "  " << std::right << std::setw(we_) << c[9] << "  " << c[10] << "\n";
  }
  int wi_, wf_, wo_, we_;
  int wc_;  // codec column: wide enough for bitpack's parameters when the image has any
};

// What the file costs in the image: its own stored pages once each, plus its share of a tail pack in
// proportion to the tail's decoded bytes (the pack is shared, so charging all of it would mislead).
struct Totals {
  uint64_t pages = 0, holes = 0, tails = 0, stored = 0;
  std::set<std::pair<uint64_t, uint32_t>> seen;  // (offset, csize) of stored pages already counted

  void add(const Row& r) {
    ++pages;
    if (!r.e) {
      ++holes;
    } else if (r.ref.kind == PageRef::kTail) {
      ++tails;
      stored += (uint64_t{r.e->csize} * r.ref.length + r.e->usize - 1) / r.e->usize;
    } else if (seen.insert({r.e->offset, r.e->csize}).second) {
      stored += r.e->csize;
    }
  }
};

Row resolve_row(const Image& img, uint32_t ino, uint64_t i) {
  Row r{i, i * img.page_size(), img.page_ref(ino, i), nullptr};
  if (r.ref.kind != PageRef::kHole) r.e = &img.pages()[r.ref.entry];
  return r;
}

}  // namespace

int pages(const Options& o, std::ostream& out) {
  auto img = open_image(o);
  const uint32_t ino = resolve_path(*img, o.path, Follow::kYes);  // a file's pages, as cat reads them
  if (img->type(ino) != format::kTypeReg)
    throw std::runtime_error(img->name() + ": " + o.path + ": not a regular file");
  const uint64_t n = img->logical_pages(ino), size = img->inode(ino).size;
  Totals t;
  if (o.json) {
    // Streamed, one page object per line: a large sparse file has millions of pages, too many to build
    // as one document in memory.
    out << "{\n  \"path\": " << compact_json(o.path) << ",\n  \"inode\": " << ino << ",\n  \"size\": " << size
        << ",\n  \"page_size\": " << img->page_size() << ",\n  \"pages\": [";
    for (uint64_t i = 0; i < n; ++i) {
      const Row r = resolve_row(*img, ino, i);
      t.add(r);
      out << (i ? ",\n    " : "\n    ") << compact_json(row_json(r));
    }
    const Json summary = {{"pages", t.pages},
                          {"holes", t.holes},
                          {"tails", t.tails},
                          {"stored_bytes", t.stored},
                          {"ratio", ratio(size, t.stored)}};
    out << (n ? "\n  ],\n" : "],\n") << "  \"summary\": " << compact_json(summary) << "\n}\n";
    return 0;
  }
  const TextTable table(*img, n, size);
  out << printable_name(o.path) << ": inode " << ino << ", " << size << " bytes, " << n << " pages of "
      << img->page_size() << " bytes\n";
  table.header(out);
  for (uint64_t i = 0; i < n; ++i) {
    const Row r = resolve_row(*img, ino, i);
    t.add(r);
    table.row(out, r);
  }
  out << t.pages << " pages (" << t.pages - t.holes - t.tails << " stored, " << t.holes << " holes, "
      << t.tails << " tail), " << t.stored << " stored bytes, ratio " << fixed(ratio(size, t.stored), 2)
      << "\n";
  return 0;
}

}  // namespace gdfs::inspect
