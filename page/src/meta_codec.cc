#include "gdfs/meta_codec.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "gdfs/gdeflate.h"

namespace gdfs::meta {
namespace {

using format::kMetaBlockSize;
using format::Section;

constexpr DeltaField kDirentDeltas[] = {{0, 4}, {4, 4}};  // name offsets and inode numbers climb
constexpr DeltaField kPageDeltas[] = {{0, 8}};            // page offsets climb by about csize

uint64_t load(const uint8_t* p, uint32_t width) {
  uint64_t v = 0;
  std::memcpy(&v, p, width);  // little-endian host (format.h)
  return v;
}
void store(uint8_t* p, uint64_t v, uint32_t width) {
  std::memcpy(p, &v, width);
}

// Byte k of record j goes to k * n + j. E is a template parameter so that the inner loop unrolls.
template <uint32_t E>
void transpose(const uint8_t* in, size_t n, uint8_t* out) {
  for (size_t j = 0; j < n; ++j)
    for (uint32_t k = 0; k < E; ++k) out[k * n + j] = in[j * E + k];
}
// In tiles of records whose output (at most 8 KiB) stays in L1: each plane is then read sequentially,
// where reading all E planes at once for every record ran at half the speed.
template <uint32_t E>
void untranspose(const uint8_t* in, size_t n, uint8_t* out) {
  constexpr size_t kTile = 256;
  for (size_t j0 = 0; j0 < n; j0 += kTile) {
    const size_t m = std::min(kTile, n - j0);
    for (uint32_t k = 0; k < E; ++k) {
      const uint8_t* plane = in + k * n + j0;
      uint8_t* o = out + j0 * E + k;
      for (size_t j = 0; j < m; ++j) o[j * E] = plane[j];
    }
  }
}

template <bool kForward>
void transpose_any(uint32_t e, const uint8_t* in, size_t n, uint8_t* out) {
  auto run = [&]<uint32_t E>() { kForward ? transpose<E>(in, n, out) : untranspose<E>(in, n, out); };
  switch (e) {
    case 8:
      return run.template operator()<8>();
    case 12:
      return run.template operator()<12>();
    case 16:
      return run.template operator()<16>();
    case 24:
      return run.template operator()<24>();
    case 32:
      return run.template operator()<32>();
    default:
      throw std::logic_error("meta: no transposition for entry size " + std::to_string(e));
  }
}

// Replaces each delta field by its difference to the previous record's (records in place).
void delta_encode(std::span<const DeltaField> fields, uint32_t e, uint8_t* recs, size_t n) {
  for (const DeltaField& f : fields) {
    const uint64_t mask = f.width == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * f.width)) - 1;
    uint64_t prev = 0;
    for (size_t j = 0; j < n; ++j) {
      uint8_t* p = recs + j * e + f.offset;
      const uint64_t v = load(p, f.width);
      store(p, (v - prev) & mask, f.width);
      prev = v;
    }
  }
}

void delta_decode(std::span<const DeltaField> fields, uint32_t e, uint8_t* recs, size_t n) {
  for (const DeltaField& f : fields) {
    uint64_t sum = 0;
    for (size_t j = 0; j < n; ++j) {
      uint8_t* p = recs + j * e + f.offset;
      sum += load(p, f.width);
      store(p, sum, f.width);  // the width's low bytes: the sum modulo 2^(8 * width)
    }
  }
}

// One metadata block: where its stored bytes are in the region, and where its inflated bytes go in the
// stored-form buffer (which has the inflated metadata's layout).
struct Block {
  uint64_t src = 0;
  uint32_t csize = 0;
  uint8_t codec = 0;
  uint64_t dst = 0;
  uint32_t usize = 0;
  uint32_t section = 0;
};

// The blocks of every section, in order, with their inflated places; src and csize are left to fill.
std::vector<Block> plan_blocks(std::span<const format::SectionRef> sections) {
  std::vector<Block> blocks;
  for (uint32_t s = 0; s < format::kSectionCount; ++s)
    for (uint64_t at = 0; at < sections[s].size; at += kMetaBlockSize)
      blocks.push_back({0, 0, 0, sections[s].offset + at,
                        static_cast<uint32_t>(std::min<uint64_t>(kMetaBlockSize, sections[s].size - at)), s});
  return blocks;
}

// Runs fn(i, worker) for i in [0, n) on up to `threads` threads; worker is 0..threads-1. Items are
// handed out one at a time, so uneven blocks balance. The first exception any call throws is rethrown
// here once every thread has stopped (the others stop taking items).
template <typename Fn>
void parallel_for(size_t n, unsigned threads, Fn&& fn) {
  threads = static_cast<unsigned>(std::clamp<size_t>(threads, 1, std::max<size_t>(n, 1)));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto work = [&](unsigned w) {
    try {
      for (size_t i; (i = next.fetch_add(1)) < n;) fn(i, w);
    } catch (...) {
      next = n;
      const std::lock_guard lock(mu);
      if (!error) error = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 1; w < threads; ++w) pool.emplace_back(work, w);
    work(0);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace

std::span<const DeltaField> delta_fields(Section s) {
  if (s == format::kSecDirents) return kDirentDeltas;
  if (s == format::kSecPages) return kPageDeltas;
  return {};
}

void to_stored(Section s, std::span<const uint8_t> in, uint8_t* out) {
  const uint32_t e = format::kSectionEntrySize[s];
  if (e == 1 || in.empty()) return void(std::copy(in.begin(), in.end(), out));
  std::vector<uint8_t> recs;
  const uint8_t* src = in.data();
  if (!delta_fields(s).empty()) {
    recs.assign(in.begin(), in.end());
    delta_encode(delta_fields(s), e, recs.data(), in.size() / e);
    src = recs.data();
  }
  transpose_any<true>(e, src, in.size() / e, out);
}

void from_stored(Section s, std::span<const uint8_t> in, uint8_t* out) {
  const uint32_t e = format::kSectionEntrySize[s];
  if (e == 1 || in.empty()) return void(std::copy(in.begin(), in.end(), out));
  transpose_any<false>(e, in.data(), in.size() / e, out);
  delta_decode(delta_fields(s), e, out, in.size() / e);
}

std::array<format::SectionRef, format::kMaxSections> layout_sections(
    const std::array<uint64_t, format::kSectionCount>& sizes) {
  std::array<format::SectionRef, format::kMaxSections> refs{};
  uint64_t end = 0;
  for (uint32_t s = 0; s < format::kSectionCount; ++s) {
    refs[s] = {format::align_up(end, format::kSectionAlign), sizes[s]};
    end = refs[s].offset + sizes[s];
  }
  return refs;
}

Encoded encode(std::span<const uint8_t> meta, std::span<const format::SectionRef> sections, int level,
               unsigned threads) {
  std::vector<uint8_t> stored(meta.size());
  for (uint32_t s = 0; s < format::kSectionCount; ++s)
    to_stored(static_cast<Section>(s), meta.subspan(sections[s].offset, sections[s].size),
              stored.data() + sections[s].offset);
  std::vector<Block> blocks = plan_blocks(sections);
  std::vector<std::vector<uint8_t>> packed(blocks.size());
  std::vector<gdeflate::Compressor> comps;
  for (unsigned w = 0; w < std::max(threads, 1u); ++w) comps.emplace_back(level);
  parallel_for(blocks.size(), threads, [&](size_t i, unsigned w) {
    Block& b = blocks[i];
    std::vector<uint8_t>& out = packed[i];
    out.resize(gdeflate::compress_bound(b.usize));
    const size_t n = comps[w].compress(stored.data() + b.dst, b.usize, out.data(), out.size());
    if (n == 0) throw std::logic_error("GDeflate compressor exceeded compress_bound");
    if (n < b.usize) {
      out.resize(n), b.codec = format::kCodecGDeflate;
    } else {
      out.assign(stored.data() + b.dst, stored.data() + b.dst + b.usize), b.codec = format::kCodecStored;
    }
    b.csize = static_cast<uint32_t>(out.size());
  });
  Encoded e;
  e.blocks = static_cast<uint32_t>(blocks.size());
  e.region.resize(blocks.size() * sizeof(format::MetaBlock));
  for (size_t i = 0; i < blocks.size(); ++i) {
    const format::MetaBlock mb{blocks[i].csize, blocks[i].codec, {}};
    std::memcpy(e.region.data() + i * sizeof mb, &mb, sizeof mb);
    const size_t at = format::align_up(e.region.size(), 4);
    e.stored[blocks[i].section] += packed[i].size() + (at - e.region.size());
    e.region.resize(at);
    e.region.insert(e.region.end(), packed[i].begin(), packed[i].end());
  }
  e.table = blocks.size() * sizeof(format::MetaBlock);
  return e;
}

std::string check_layout(const format::Superblock& sb) {
  uint64_t end = 0, blocks = 0;
  for (uint32_t s = 0; s < format::kMaxSections; ++s) {
    const format::SectionRef& r = sb.sections[s];
    const std::string name = "metadata section " + std::to_string(s);
    if (s >= format::kSectionCount) {
      if (r.offset != 0 || r.size != 0) return name + " is reserved but not empty";
      continue;
    }
    // Checked one at a time, each below the limit, so the sums below cannot overflow.
    if (r.size > format::kMaxMetaBytes) return name + " is too large";
    if (r.offset != format::align_up(end, format::kSectionAlign)) return name + " is not where it belongs";
    if (r.size % format::kSectionEntrySize[s] != 0) return name + " is not a whole number of entries";
    end = r.offset + r.size;
    if (end > format::kMaxMetaBytes) return "the metadata is too large (over 16 GiB inflated)";
    blocks += blocks_of(r.size);
  }
  if (sb.meta_usize != end) return "the inflated metadata size does not match its sections";
  if (sb.meta_blocks != blocks) return "the metadata block count does not match its sections";
  if (uint64_t{sb.meta_blocks} * sizeof(format::MetaBlock) > sb.meta_size)
    return "the metadata block table is larger than the metadata region";
  if ((sb.meta_usize + format::kMaxMetaRatio - 1) / format::kMaxMetaRatio > sb.meta_size)  // no overflow
    return "the metadata claims to inflate more than " + std::to_string(format::kMaxMetaRatio) + "-fold";
  return "";
}

Decoded inflate(const format::Superblock& sb, std::span<const uint8_t> region, std::vector<uint8_t>& out,
                unsigned threads) {
  Decoded d;
  const std::span<const format::SectionRef> sections(sb.sections, format::kSectionCount);
  std::vector<Block> blocks = plan_blocks(sections);
  if (blocks.size() != sb.meta_blocks || region.size() < blocks.size() * sizeof(format::MetaBlock))
    return {"the metadata block table does not match its sections", {}};
  // The table: every entry known and within its bounds, every block inside the region, none left over.
  uint64_t pos = blocks.size() * sizeof(format::MetaBlock);
  for (size_t i = 0; i < blocks.size(); ++i) {
    format::MetaBlock mb;
    std::memcpy(&mb, region.data() + i * sizeof mb, sizeof mb);
    Block& b = blocks[i];
    const std::string where = "metadata block " + std::to_string(i) + ": ";
    if (mb.reserved[0] | mb.reserved[1] | mb.reserved[2]) return {where + "reserved bytes are not zero", {}};
    if (mb.codec == format::kCodecStored) {
      if (mb.csize != b.usize) return {where + "stored block of the wrong size", {}};
    } else if (mb.codec == format::kCodecGDeflate) {
      if (mb.csize > gdeflate::compress_bound(b.usize))
        return {where + "GDeflate block larger than its bound", {}};
      if (b.usize > format::kMaxMetaRatio * uint64_t{mb.csize})
        return {where + "GDeflate block too small", {}};
    } else {
      return {where + "unknown codec " + std::to_string(mb.codec), {}};
    }
    const uint64_t at = format::align_up(pos, 4);
    d.stored[b.section] += at - pos;  // the padding before a block counts with it, as in encode()
    pos = at;
    if (mb.csize > region.size() || pos > region.size() - mb.csize)
      return {where + "past the end of the metadata region", {}};
    b.src = pos, b.csize = mb.csize, b.codec = mb.codec;
    pos += mb.csize;
    d.stored[b.section] += mb.csize;
  }
  if (pos != region.size()) return {"the metadata region has bytes after its last block", {}};
  d.table = blocks.size() * sizeof(format::MetaBlock);

  // One section at a time: inflate its blocks into a scratch buffer, then undo its transform into `out`.
  // Peak memory is the region, `out` and the largest section, not two copies of everything (a million
  // files: 120 MB instead of 164).
  out.assign(sb.meta_usize, 0);  // zeros between sections
  std::vector<uint8_t> stored;
  std::vector<uint8_t> failed(blocks.size(), 0);
  std::vector<gdeflate::Decompressor> decs(std::max(threads, 1u));
  for (uint32_t s = 0; s < format::kSectionCount; ++s) {
    const format::SectionRef& sec = sections[s];
    size_t first = 0;
    while (first < blocks.size() && blocks[first].section != s) ++first;
    size_t end = first;
    while (end < blocks.size() && blocks[end].section == s) ++end;
    if (first == end) continue;
    stored.resize(sec.size);
    parallel_for(end - first, threads, [&](size_t k, unsigned w) {
      const Block& b = blocks[first + k];
      uint8_t* dst = stored.data() + (b.dst - sec.offset);  // plan_blocks lays a section's blocks inside it
      if (b.codec == format::kCodecStored)
        std::memcpy(dst, region.data() + b.src, b.usize);
      else
        failed[first + k] =
            decs[w].decompress(region.data() + b.src, b.csize, dst, b.usize) != PageStatus::kOk;
    });
    if (const auto bad = std::find(failed.begin() + first, failed.begin() + end, 1);
        bad != failed.begin() + end)
      return {"metadata block " + std::to_string(bad - failed.begin()) + " does not decode", {}};
    from_stored(static_cast<Section>(s), std::span<const uint8_t>(stored.data(), sec.size),
                out.data() + sec.offset);
  }
  return d;
}

}  // namespace gdfs::meta
