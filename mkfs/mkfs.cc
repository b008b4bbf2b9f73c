#include "mkfs.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <utility>

#include "archive_walk.h"
#include "base.h"
#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/meta_codec.h"
#include "image_writer.h"
#include "metadata.h"
#include "pack.h"
#include "scan.h"
#include "sign.h"
#include "tree.h"

namespace gdfs::mkfs {
namespace {

constexpr int kMinMetadataLevel = 8;

struct Timestamp {
  int64_t sec = 0;
  uint32_t nsec = 0;
};

// The image's own time. SOURCE_DATE_EPOCH, else --mtime, else the newest mtime in the tree: never the
// clock, so that the same tree gives the same image. An archive's implied directories (kImpliedMtime
// until they get this time) never count; an archive with nothing else gives 0.
Timestamp image_time(const Options& o, const ScanResult& scan, const Tree& tree) {
  if (o.source_date_epoch) return {*o.source_date_epoch, 0};
  if (o.mtime) return {*o.mtime, 0};
  Timestamp t{INT64_MIN, 0};
  for (uint32_t node : tree.order) {
    const ScanNode& n = scan.nodes[node];
    if (std::pair(n.mtime_sec, n.mtime_nsec) > std::pair(t.sec, t.nsec)) t = {n.mtime_sec, n.mtime_nsec};
  }
  return t.sec == kImpliedMtime ? Timestamp{} : t;
}

format::Superblock make_superblock(const Options& o, const Timestamp& time, const Tree& tree,
                                   const PackResult& pack, const Metadata& meta, const meta::Encoded& stored,
                                   uint64_t meta_offset, const LayerTable& layers) {
  using namespace format;
  Superblock sb{};
  std::memcpy(sb.magic, kMagic, sizeof sb.magic);
  sb.major = kMajor;
  sb.minor = kMinor;
  sb.sb_size = kSuperblockSize;
  if (pack.pages.stats.deduped > 0) sb.compat |= kCompatDedupe;
  if (pack.stats.tail_packs > 0) sb.compat |= kCompatTailPack;
  if (pack.pages.stats.pages_bitpack > 0) sb.incompat |= kIncompatBitpack;  // dedupe copies, never adds
  if (pack.pages.stats.pages_x86 > 0) sb.incompat |= kIncompatX86;
  const auto uuid = content_uuid(meta.bytes, pack.pages.entries);
  std::memcpy(sb.uuid, uuid.data(), uuid.size());
  std::memcpy(sb.label, o.label.data(), std::min(o.label.size(), sizeof sb.label));
  sb.time_sec = time.sec;
  sb.time_nsec = time.nsec;
  sb.page_log2 = page_log2(o);
  sb.data_offset = kDataOffset;
  sb.data_size = pack.pages.data_end - kDataOffset;
  sb.meta_offset = meta_offset;
  sb.meta_size = stored.region.size();
  sb.image_size = meta_offset + sb.meta_size;
  if (layers.count > 0) {
    sb.incompat |= kIncompatLayers;
    sb.layers_offset = align_up(sb.image_size, kSectionAlign);
    sb.layers_size = static_cast<uint32_t>(layers.region.size());
    sb.layer_count = layers.count;
    sb.layers_checksum = checksum64(layers.region.data(), layers.region.size());
    sb.image_size = sb.layers_offset + sb.layers_size;
  }
  // The lowest minor the image needs, so that older readers still take every image they can read.
  sb.minor = minor_needed(sb.incompat, sb.compat);
  sb.meta_checksum = checksum64(stored.region.data(), stored.region.size());
  sb.meta_usize = meta.bytes.size();
  sb.meta_ucheck = checksum64(meta.bytes.data(), meta.bytes.size());
  sb.meta_blocks = stored.blocks;
  sb.inode_count = tree.inode_count();
  sb.mkfs_level = static_cast<uint32_t>(o.level);
  sb.page_count = pack.pages.entries.size();
  sb.file_bytes = pack.stats.file_bytes;
  std::copy(meta.sections.begin(), meta.sections.end(), sb.sections);
  return sb;
}

Summary summarize(const Options& o, const ScanResult& scan, const Tree& tree, const PackResult& pack,
                  const format::Superblock& sb) {
  Summary s;
  s.image = o.image;
  for (uint32_t node : tree.order) {
    const uint32_t type = scan.nodes[node].mode & S_IFMT;
    ++(type == S_IFREG ? s.files : type == S_IFDIR ? s.dirs : type == S_IFLNK ? s.symlinks : s.others);
  }
  s.hardlinks = tree.hardlinks;
  s.bytes_in = pack.stats.file_bytes;
  s.image_bytes = sb.image_size;
  const PipelineStats& p = pack.pages.stats;
  s.pages_gdeflate = p.pages_gdeflate;
  s.pages_stored = p.pages_stored;
  s.pages_bitpack = p.pages_bitpack;
  s.pages_x86 = p.pages_x86;
  s.hole_pages = pack.stats.hole_pages;
  s.deduped_pages = p.deduped;
  s.dedup_bytes = p.dedup_bytes;
  s.dedup_stored_bytes = p.dedup_stored_bytes;
  s.tails = pack.stats.tails;
  s.tail_packs = pack.stats.tail_packs;
  s.tail_bytes = pack.stats.tail_bytes;
  s.tail_dedupe_hits = pack.stats.tail_dedupe_hits;
  s.reused_pages = p.reused;
  s.reused_bytes = p.reused_bytes;
  s.reused_stored_bytes = p.reused_stored_bytes;
  s.base_tails = pack.stats.base_tails;
  s.metadata_bytes = sb.meta_size;
  return s;
}

// The metadata is a small part of the input, so it gets at least level 8, the first near-optimal level:
// 1.3% smaller than level 7 on the Linux tree. Level 9's second pass saves only 0.65% more (Linux,
// dist-packages) for a third more time, and a rebuild cannot skip the metadata (its parse was 13% of a
// layered rebuild's CPU, at the end of the build):
// bench/results/2026-11-27-rebuild-metadata-level-zen5-vm.txt.
int metadata_level(const Options& o) {
  return std::max(o.level, kMinMetadataLevel);
}

// A layered IMAGE refers to its base and to the base's own bases by identity. Written over one of them
// (IMAGE replaces whatever file its path names), it would refer to itself, and the base would be lost:
// refused before the tree is read. A copied build (no --layered) may replace its base; it needs it only
// while it runs.
void check_keeps_its_bases(const Options& o, const Base& base) {
  if (!o.layered) return;
  const FileId out = existing_file_id(o.image);  // what the final rename replaces (a link, not its target)
  if (out == FileId{}) return;
  std::vector<std::string> chain{o.base};
  for (const Image::Layer& l : base.image().layers()) chain.push_back(l.location);
  for (const std::string& p : chain) {
    struct stat st {};
    if (is_url(p) || ::stat(p.c_str(), &st) != 0 || FileId{st.st_dev, st.st_ino} != out) continue;
    throw MkfsError(quote_path(o.image) + " is " +
                    (p == o.base ? std::string("the base image")
                                 : "an image the base is layered on (" + quote_path(p) + ")") +
                    ": a layered image refers to its bases, so it cannot replace one; write it under another "
                    "name");
  }
}

// A directory build: scan the tree, number the inodes, then pack the files (data_order.h).
void build_from_tree(const Options& o, ImageWriter& image, const FileId& old, Base* base, Diag& diag,
                     Progress& progress, ScanResult& scan, Tree& tree, PackResult& pack) {
  scan = scan_tree(o, diag, progress, {old, image.temp_id(), existing_file_id(o.base)});
  tree = number_inodes(scan);
  uint64_t files = 0, bytes = 0;
  for (uint32_t node : tree.order)
    if (S_ISREG(scan.nodes[node].mode)) ++files, bytes += scan.nodes[node].size;
  progress.set_totals(files, bytes);
  progress.start_packing();
  pack = pack_data(o, scan, tree, image, diag, progress, base);
  apply_pack_changes(scan, tree, pack);  // files skipped or resized while packed
}

// An archive build: one pass packs the data in archive order; the implied directories then get the
// image time, which depends on every other mtime.
void build_from_archive(const Options& o, ImageWriter& image, Base* base, Diag& diag, Progress& progress,
                        ScanResult& scan, Tree& tree, PackResult& pack) {
  progress.start_packing();
  ArchiveBuild b = read_archive(o, image, base, diag, progress);
  const Timestamp time = image_time(o, b.scan, b.tree);
  for (const uint32_t node : b.implied) {
    b.scan.nodes[node].mtime_sec = time.sec;
    b.scan.nodes[node].mtime_nsec = time.nsec;
  }
  scan = std::move(b.scan);
  tree = std::move(b.tree);
  pack = std::move(b.pack);
}

}  // namespace

bool is_archive_source(const Options& o) {
  struct stat st {};
  return o.source == "-" || (::stat(o.source.c_str(), &st) == 0 && !S_ISDIR(st.st_mode));
}

namespace {

// An image given as SOURCE would read as an archive libarchive does not know, and "-" on a terminal would
// wait for an archive typed in (a forgotten pipe, as tar says): say what to do instead.
void refuse_image_source(const Options& o) {
  if (o.source == "-" && ::isatty(STDIN_FILENO))
    throw MkfsError(
        "refusing to read an archive from a terminal; pipe one in (tar -cf - DIR | mkfs.gdfs - "
        "IMAGE), or give SOURCE");
  char head[sizeof format::kMagic] = {};
  std::ifstream in(o.source, std::ios::binary);
  if (o.source == "-" || !in.read(head, sizeof head) || std::memcmp(head, format::kMagic, sizeof head) != 0)
    return;
  throw MkfsError(
      quote_path(o.source) +
      " is a gdfs image, not a directory or an archive; to build from its tree, give its archive: "
      "gdfs-inspect extract " +
      quote_path(o.source) + " --archive - | mkfs.gdfs [OPTIONS] - NEW.gdfs");
}

}  // namespace

Summary make_image(const Options& o, Diag& diag, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const bool from_archive = is_archive_source(o);
  if (from_archive) refuse_image_source(o);
  const FileId old = existing_file_id(o.image);
  ImageWriter image(o.image, o.force);  // first: an unwritable IMAGE fails before a long scan
  const std::unique_ptr<Base> base = o.base.empty() ? nullptr : std::make_unique<Base>(o);
  if (base) check_keeps_its_bases(o, *base);
  ScanResult scan;
  Tree tree;
  PackResult pack;
  if (from_archive)
    build_from_archive(o, image, base.get(), diag, progress, scan, tree, pack);
  else
    build_from_tree(o, image, old, base.get(), diag, progress, scan, tree, pack);
  const LayerTable layers = o.layered ? make_layer_table(*base, pack.pages.entries, o.image) : LayerTable{};
  const uint64_t meta_offset = format::align_up(pack.pages.data_end, format::kSectionAlign);
  const Metadata meta = build_metadata(scan, tree, pack);
  // Take what the rest needs from the scan and the per-file lists, then free them before the metadata
  // encoder makes its copies of the records: at a million files the scan alone is about 250 MB, and
  // peak memory is the sum of what is alive at the encoder.
  const Timestamp time = image_time(o, scan, tree);
  Summary s = summarize(o, scan, tree, pack, format::Superblock{});
  scan = ScanResult{};
  pack.files = {};
  pack.sparse = {};
  pack.runs = {};
  malloc_trim(0);  // hand the freed small blocks back: the encoder's large buffers are fresh mappings
  const meta::Encoded stored = meta::encode(meta.bytes, meta.sections, metadata_level(o), o.threads);
  format::Superblock sb = make_superblock(o, time, tree, pack, meta, stored, meta_offset, layers);
  const std::vector<uint8_t> signature = o.sign_key.empty()
                                             ? std::vector<uint8_t>{}
                                             : sign_image(o.sign_key, sb, stored.region, layers.region,
                                                          pack.pages.entries, image, base.get(), o.threads);
  image.commit(sb, stored.region, layers.region, signature);

  s.image_bytes = sb.image_size + (signature.empty() ? 0 : sb.sig_offset - sb.image_size + sb.sig_size);
  s.metadata_bytes = sb.meta_size;
  s.skipped = diag.skipped();
  if (base) s.base_indexed_tails = base->indexed_tails();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace gdfs::mkfs
