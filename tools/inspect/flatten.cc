// `flatten`: a layered image (FORMAT.md 4.3) as one standalone image. Every page is read from the layer
// that holds it, checked by both checksums (decoded), and written once; the metadata is the image's own
// with the page table pointing at the copies. The files, their metadata and the uuid stay the same; a
// signature does not carry over (it covered the layered page table): the image written is unsigned, or
// signed anew with --sign.
#include <algorithm>
#include <cstring>
#include <ostream>
#include <thread>

#include "commands.h"
#include "gdfs/checksum.h"
#include "gdfs/machine.h"
#include "gdfs/meta_codec.h"
#include "image_writer.h"
#include "sign.h"
#include "stored_pages.h"
#include "util.h"

namespace gdfs::inspect {
namespace {

constexpr size_t kBatch = 64;  // pages per source read: a remote layer serves them concurrently

// Copies the stored pages, one copy per distinct stored page, and returns the new page table.
std::vector<format::PageEntry> copy_pages(const Image& img, mkfs::ImageWriter& out, uint64_t& data_end) {
  const StoredPages groups = distinct_stored_pages(img);
  const auto entries = img.pages();
  std::vector<uint64_t> new_offset(groups.first.size());
  PageDecoder dec;
  std::vector<uint8_t> plain(img.page_size()), staged;
  std::vector<ReadRange> ranges;
  for (size_t g0 = 0; g0 < groups.first.size(); g0 += kBatch) {
    const size_t g1 = std::min(groups.first.size(), g0 + kBatch);
    uint64_t bytes = 0;
    for (size_t g = g0; g < g1; ++g) bytes += entries[groups.first[g]].csize;
    staged.resize(bytes);
    ranges.clear();
    bytes = 0;
    for (size_t g = g0; g < g1; ++g) {
      const format::PageEntry& e = entries[groups.first[g]];
      ranges.push_back({e.offset, e.csize, staged.data() + bytes, false});
      bytes += e.csize;
    }
    img.source().read(ranges);
    for (size_t g = g0; g < g1; ++g) {
      const ReadRange& r = ranges[g - g0];
      const format::PageEntry& e = entries[groups.first[g]];
      // With --key, a page must also match its signed digest: a hostile base is not copied.
      const uint64_t entry = groups.first[g];
      const PageStatus st = !r.ok                          ? PageStatus::kIoError
                            : !img.stored_ok(entry, r.dst) ? PageStatus::kDigest
                                                           : dec.decode(e, r.dst, plain.data());
      if (st != PageStatus::kOk)
        throw ImageError(img.name() + ": page entry " + std::to_string(entry) + ": " +
                         page_status_message(st));
      data_end = format::align_up(data_end, format::kPageAlign);
      out.write_at(data_end, r.dst, r.length);
      new_offset[g] = data_end;
      data_end += r.length;
    }
  }
  std::vector<format::PageEntry> table(img.stored_pages().begin(), img.stored_pages().end());
  std::vector<bool> seen(groups.first.size(), false);
  for (size_t i = 0; i < table.size(); ++i) {
    format::PageEntry& e = table[i];
    const uint64_t g = groups.group_of[i];
    e.offset = new_offset[g];
    e.layer = 0;
    e.flags = static_cast<uint8_t>((e.flags & format::kPageTailPack) | (seen[g] ? format::kPageDeduped : 0));
    seen[g] = true;
  }
  return table;
}

}  // namespace

int flatten(const Options& o, std::ostream& out) {
  const auto img = open_image(o);
  mkfs::ImageWriter writer(o.dir, o.force);
  uint64_t data_end = format::kDataOffset;
  const std::vector<format::PageEntry> table = copy_pages(*img, writer, data_end);

  format::Superblock sb = img->superblock();
  std::vector<uint8_t> meta(img->metadata().begin(), img->metadata().end());
  std::memcpy(meta.data() + sb.sections[format::kSecPages].offset, table.data(),
              table.size() * sizeof table[0]);
  const int level = std::max<int>(static_cast<int>(sb.mkfs_level), 9);
  const meta::Encoded stored = meta::encode(meta, {sb.sections, format::kSectionCount}, level,
                                            machine::usable_cpus());

  sb.incompat &= ~format::kIncompatLayers;
  sb.layers_offset = sb.layers_checksum = 0;
  sb.layers_size = sb.layer_count = 0;
  // The signature covered the layered image's superblock and page table, both rewritten here: the
  // standalone image is unsigned unless signed again below.
  sb.compat &= ~(format::kCompatDedupe | format::kCompatSigned);
  sb.sig_offset = sb.sig_size = sb.sig_checksum = 0;
  for (const format::PageEntry& e : table)
    if (e.flags & format::kPageDeduped) sb.compat |= format::kCompatDedupe;
  sb.minor = format::minor_needed(sb.incompat, sb.compat);  // signing below sets it again
  sb.data_size = data_end - format::kDataOffset;
  sb.meta_offset = format::align_up(data_end, format::kSectionAlign);
  sb.meta_size = stored.region.size();
  sb.meta_checksum = checksum64(stored.region.data(), stored.region.size());
  sb.meta_usize = meta.size();
  sb.meta_ucheck = checksum64(meta.data(), meta.size());
  sb.meta_blocks = stored.blocks;
  sb.image_size = sb.meta_offset + sb.meta_size;
  const std::vector<uint8_t> signature =
      o.sign_key.empty() ? std::vector<uint8_t>{}
                         : mkfs::sign_image(o.sign_key, sb, stored.region, {}, table, writer, nullptr,
                                            machine::usable_cpus());
  writer.commit(sb, stored.region, {}, signature);
  out << o.dir << ": " << table.size() << " page entries from " << img->layers().size() + 1 << " images, "
      << sb.image_size << " bytes" << (signature.empty() ? "" : ", signed") << "\n";
  return 0;
}

}  // namespace gdfs::inspect
