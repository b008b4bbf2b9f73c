// The stored form of the metadata (gdfs/meta_codec.h, FORMAT.md 5.5): the transform and its inverse,
// the layout rules, and encode/inflate round trips, deterministic at any thread count. Crafted block
// tables and blocks inside whole images are tests/image/test_image_corrupt.cc's.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

#include "gdfs/checksum.h"
#include "gdfs/meta_codec.h"

namespace gdfs {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng() % 7);  // few values: compressible
  return b;
}

// Inflated metadata with every section of `records` entries (blob: that many bytes) and the
// superblock fields a reader checks.
struct Meta {
  format::Superblock sb{};
  Bytes bytes;
};
Meta make_meta(size_t records, uint64_t seed) {
  std::array<uint64_t, format::kSectionCount> sizes{};
  for (uint32_t s = 0; s < format::kSectionCount; ++s) sizes[s] = records * format::kSectionEntrySize[s];
  Meta m;
  const auto refs = meta::layout_sections(sizes);
  std::copy(refs.begin(), refs.end(), m.sb.sections);
  m.sb.meta_usize = refs[format::kSecBlob].offset + refs[format::kSecBlob].size;
  m.bytes.assign(m.sb.meta_usize, 0);
  for (uint32_t s = 0; s < format::kSectionCount; ++s) {
    const Bytes r = random_bytes(refs[s].size, seed + s);
    std::copy(r.begin(), r.end(), m.bytes.begin() + static_cast<ptrdiff_t>(refs[s].offset));
  }
  return m;
}

meta::Encoded encode(Meta& m, int level, unsigned threads) {
  meta::Encoded e = meta::encode(m.bytes, {m.sb.sections, format::kSectionCount}, level, threads);
  m.sb.meta_size = e.region.size();
  m.sb.meta_blocks = e.blocks;
  return e;
}

TEST(MetaCodec, StoredFormIsTheTransposedRecordsWithDeltas) {
  // Two dirents {name, ino}: {10, 2} and {15, 3} store deltas {10, 2}, {5, 1}, byte 0 of each first.
  const uint32_t recs[4] = {10, 2, 15, 3};
  Bytes in(sizeof recs), out(sizeof recs), back(sizeof recs);
  std::memcpy(in.data(), recs, sizeof recs);
  meta::to_stored(format::kSecDirents, in, out.data());
  const Bytes want = {10, 5, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(out, want);
  meta::from_stored(format::kSecDirents, out, back.data());
  EXPECT_EQ(back, in);
}

TEST(MetaCodec, EverySectionRoundTripsIncludingWrappingDeltas) {
  for (uint32_t s = 0; s < format::kSectionCount; ++s) {
    const size_t n = 1000 * format::kSectionEntrySize[s];
    Bytes in(n);
    std::mt19937_64 rng(s);
    for (auto& x : in) x = static_cast<uint8_t>(rng());  // deltas of random values wrap around
    Bytes stored(n), back(n);
    meta::to_stored(static_cast<format::Section>(s), in, stored.data());
    if (format::kSectionEntrySize[s] > 1) {
      EXPECT_NE(stored, in) << s;
    }
    meta::from_stored(static_cast<format::Section>(s), stored, back.data());
    EXPECT_EQ(back, in) << "section " << s;
  }
}

TEST(MetaCodec, LayoutPutsSectionsBackToBackAlignedTo8) {
  std::array<uint64_t, format::kSectionCount> sizes{24, 0, 8, 32, 0, 12, 8, 12, 5};
  const auto refs = meta::layout_sections(sizes);
  uint64_t end = 0;
  for (uint32_t s = 0; s < format::kSectionCount; ++s) {
    EXPECT_EQ(refs[s].offset, format::align_up(end, 8)) << s;
    EXPECT_EQ(refs[s].size, sizes[s]);
    end = refs[s].offset + refs[s].size;
  }
  for (uint32_t s = format::kSectionCount; s < format::kMaxSections; ++s) EXPECT_EQ(refs[s].size, 0u);
}

TEST(MetaCodec, EncodeInflateRoundTripsAndIsTheSameAtAnyThreadCount) {
  Meta m = make_meta(20000, 1);  // several blocks per section
  const meta::Encoded one = encode(m, 9, 1);
  const meta::Encoded four = encode(m, 9, 4);
  EXPECT_EQ(one.region, four.region);
  EXPECT_GT(one.blocks, format::kSectionCount);
  EXPECT_LT(one.region.size(), m.bytes.size() / 2);  // few distinct byte values: it compresses
  ASSERT_EQ(meta::check_layout(m.sb), "");
  for (unsigned threads : {1u, 3u}) {
    Bytes out;
    const meta::Decoded d = meta::inflate(m.sb, one.region, out, threads);
    ASSERT_EQ(d.error, "");
    EXPECT_EQ(out, m.bytes);
    // The stored sizes and the table account for every byte of the region.
    EXPECT_EQ(std::accumulate(d.stored.begin(), d.stored.end(), d.table), one.region.size());
    EXPECT_EQ(d.stored, one.stored);
  }
}

TEST(MetaCodec, IncompressibleBlocksAreStored) {
  Meta m = make_meta(100, 2);
  std::mt19937_64 rng(3);
  for (auto& x : m.bytes) x = static_cast<uint8_t>(rng());
  const meta::Encoded e = encode(m, 9, 1);
  for (uint32_t i = 0; i < e.blocks; ++i) {
    format::MetaBlock b;
    std::memcpy(&b, e.region.data() + i * sizeof b, sizeof b);
    EXPECT_EQ(b.codec, format::kCodecStored) << i;
  }
  Bytes out;
  ASSERT_EQ(meta::inflate(m.sb, e.region, out, 1).error, "");
  EXPECT_EQ(out, m.bytes);
}

TEST(MetaCodec, LayoutChecksRefuseWhatDoesNotAddUp) {
  Meta m = make_meta(10, 4);
  encode(m, 9, 1);
  ASSERT_EQ(meta::check_layout(m.sb), "");
  auto refused = [&](auto edit) {
    format::Superblock sb = m.sb;
    edit(sb);
    return !meta::check_layout(sb).empty();
  };
  EXPECT_TRUE(refused([](format::Superblock& s) { s.sections[format::kSecAttrs].offset += 8; }));
  EXPECT_TRUE(refused([](format::Superblock& s) { s.sections[format::kSecPages].size += 1; }));
  EXPECT_TRUE(refused([](format::Superblock& s) { s.meta_usize -= 1; }));
  EXPECT_TRUE(refused([](format::Superblock& s) { s.meta_blocks += 1; }));
  EXPECT_TRUE(refused([](format::Superblock& s) { s.meta_size = s.meta_blocks * 8 - 1; }));
  EXPECT_TRUE(refused([](format::Superblock& s) { s.sections[11].offset = 8; }));
  EXPECT_TRUE(refused([](format::Superblock& s) {  // within 16 GiB but more than 512-fold
    s.sections[format::kSecBlob].size += 600 * s.meta_size;
    s.meta_usize += 600 * s.meta_size;
    s.meta_blocks = 0;
    for (uint32_t i = 0; i < format::kSectionCount; ++i) s.meta_blocks += meta::blocks_of(s.sections[i].size);
  }));
}

TEST(MetaCodec, InflateRefusesATruncatedOrPaddedRegion) {
  Meta m = make_meta(3000, 5);
  const meta::Encoded e = encode(m, 9, 1);
  Bytes out;
  Bytes cut(e.region.begin(), e.region.end() - 1);
  EXPECT_NE(meta::inflate(m.sb, cut, out, 1).error, "");
  Bytes longer = e.region;
  longer.resize(longer.size() + 4);
  EXPECT_NE(meta::inflate(m.sb, longer, out, 1).error.find("after its last block"), std::string::npos);
}

}  // namespace
}  // namespace gdfs
