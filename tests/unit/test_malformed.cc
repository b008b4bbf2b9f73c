// Hand-crafted pages from the test-only GdfWriter: first valid ones (they check the writer against the
// decoder, and the decoder's handling of stored/fixed/dynamic blocks and of end-of-block rounds), then
// the same pages with one thing broken, which must be rejected.
#include <gtest/gtest.h>

#include <algorithm>

#include "gdf_writer.h"
#include "test_util.h"

namespace gdfs::test {
namespace {

PageStatus decode_status(const std::vector<uint8_t>& page, size_t out_size, Bytes* out = nullptr) {
  PageStatus s;
  Bytes b = decode_both(page, out_size, &s);  // the two decoder paths must agree
  if (out) *out = std::move(b);
  return s;
}

Bytes as_bytes(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

// The all-stored page of `raw`: blocks of at most 65535 bytes, the last one final.
std::vector<uint8_t> stored_page(const Bytes& raw) {
  GdfWriter w;
  size_t at = 0;
  do {
    const auto len = static_cast<unsigned>(std::min<size_t>(65535, raw.size() - at));
    w.stored_block(at + len == raw.size(), raw.data() + at, len);
    at += len;
  } while (at < raw.size());
  return w.finish();
}

TEST(Crafted, StoredPagesDecodeAndHaveStoredSize) {
  std::vector<size_t> sizes = {65534, 65535, 65536};
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : sizes) {
    const Bytes raw = random_bytes(n, n);
    const auto page = stored_page(raw);
    EXPECT_EQ(page.size(), gdeflate::stored_size(n)) << n;
    Bytes out;
    ASSERT_EQ(decode_status(page, n, &out), PageStatus::kOk) << n;
    EXPECT_TRUE(out == raw) << n;
  }
}

TEST(Crafted, LevelZeroEqualsIndependentStoredWriter) {
  gdeflate::Compressor c(0);
  for (size_t n : {0u, 1u, 31u, 32u, 33u, 1000u, 65535u, 65536u}) {
    const Bytes raw = random_bytes(n, 3 * n);
    EXPECT_TRUE(encode(c, raw) == stored_page(raw)) << n;
  }
}

// Fixed-Huffman page: round 0 = lane 0 'a', lane 1 a length (litlen `len_sym` + `extra`), lane 2 EOB;
// round 1 = lane 1's distance, which it still owes after the EOB (docs/GDEFLATE.md,
// "The page bitstream, in one page": Data rounds, lanes before e).
std::vector<uint8_t> fixed_page(unsigned len_sym, uint32_t extra, unsigned nextra, unsigned dist_sym,
                                uint32_t dist_extra = 0, unsigned dist_nextra = 0) {
  GdfWriter w;
  w.block_header(true, 1);
  w.code(0, fixed_litlen('a'));
  w.code(1, fixed_litlen(len_sym), extra, nextra);
  w.code(2, fixed_litlen(256));
  w.code(1, fixed_dist(dist_sym), dist_extra, dist_nextra);
  return w.finish();
}

TEST(Crafted, FixedBlockMatchAfterEndOfBlock) {
  Bytes out;
  ASSERT_EQ(decode_status(fixed_page(257, 0, 0, 0), 4, &out), PageStatus::kOk);  // length 3, distance 1
  EXPECT_TRUE(out == as_bytes("aaaa"));
  // DEFLATE64 length code 285: 16 extra bits, base 3; 255 gives length 258.
  ASSERT_EQ(decode_status(fixed_page(285, 0, 16, 0), 4, &out), PageStatus::kOk);
  EXPECT_TRUE(out == as_bytes("aaaa"));
  ASSERT_EQ(decode_status(fixed_page(285, 255, 16, 0), 259, &out), PageStatus::kOk);
  EXPECT_TRUE(out == Bytes(259, 'a'));
  ASSERT_EQ(decode_status(fixed_page(285, 65532, 16, 0), 65536, &out), PageStatus::kOk);
  EXPECT_TRUE(out == Bytes(65536, 'a'));
}

TEST(Crafted, LitlenSymbols286And287AreRejected) {
  // Same bit lengths as the valid 285 page above; only the symbol differs.
  EXPECT_EQ(decode_status(fixed_page(286, 0, 16, 0), 4), PageStatus::kBadData);
  EXPECT_EQ(decode_status(fixed_page(287, 0, 16, 0), 4), PageStatus::kBadData);
  EXPECT_EQ(decode_status(fixed_page(286, 0, 0, 0), 4), PageStatus::kBadData);
  EXPECT_EQ(decode_status(fixed_page(287, 0, 0, 0), 4), PageStatus::kBadData);
}

TEST(Crafted, DistanceBeforePageStartIsRejected) {
  // The match starts at output position 1, so only distance 1 is legal.
  EXPECT_EQ(decode_status(fixed_page(257, 0, 0, 1), 4), PageStatus::kBadData);        // distance 2
  EXPECT_EQ(decode_status(fixed_page(257, 0, 0, 4, 1, 1), 4), PageStatus::kBadData);  // distance 6
  EXPECT_EQ(decode_status(fixed_page(257, 0, 0, 29, 8191, 13), 4), PageStatus::kBadData);
  EXPECT_EQ(decode_status(fixed_page(257, 0, 0, 30, 0, 14), 4), PageStatus::kBadData);  // DEFLATE64 codes
  EXPECT_EQ(decode_status(fixed_page(257, 0, 0, 31, 16383, 14), 4), PageStatus::kBadData);
  // A match as the very first symbol has nothing to copy from.
  GdfWriter w;
  w.block_header(true, 1);
  w.code(0, fixed_litlen(257));
  w.code(1, fixed_litlen(256));
  w.code(0, fixed_dist(0));
  EXPECT_EQ(decode_status(w.finish(), 3), PageStatus::kBadData);
}

TEST(Crafted, MatchLongerThanOutputIsRejected) {
  // Well-formed, but the copy would run past the caller's buffer.
  const auto page = fixed_page(285, 1000, 16, 0);  // 'a' + 1003 copies
  EXPECT_EQ(decode_status(page, 1004), PageStatus::kOk);
  EXPECT_EQ(decode_status(page, 10), PageStatus::kSizeMismatch);
  EXPECT_EQ(decode_status(page, 1003), PageStatus::kSizeMismatch);
}

TEST(Crafted, PendingDistanceOfLaterLaneIsDecodedInEobRound) {
  // docs/GDEFLATE.md, "The page bitstream, in one page": Data rounds. Lanes after e that owe a distance
  // from round R-1 still decode it in round R.
  GdfWriter w;
  w.block_header(true, 1);
  Bytes expect;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (lane == 2) {
      w.code(2, fixed_litlen(257));  // length 3, distance decoded next round
      expect.insert(expect.end(), {'A', 'B', 'A'});
    } else {
      w.code(lane, fixed_litlen('A' + lane));
      expect.push_back(static_cast<uint8_t>('A' + lane));
    }
  }
  w.code(0, fixed_litlen(256));
  w.code(2, fixed_dist(1));  // distance 2
  Bytes out;
  ASSERT_EQ(decode_status(w.finish(), expect.size(), &out), PageStatus::kOk);
  EXPECT_TRUE(out == expect);
}

TEST(Crafted, StoredThenFixedBlocksStartAtLaneZero) {
  // A non-final stored block of 37 bytes ends on lane 4; the next block header is still on lane 0.
  const Bytes data = random_bytes(37, 1);
  GdfWriter w;
  w.stored_block(false, data.data(), 37);
  w.block_header(true, 1);
  w.code(0, fixed_litlen('z'));
  w.code(1, fixed_litlen(256));
  Bytes out, expect = data;
  expect.push_back('z');
  ASSERT_EQ(decode_status(w.finish(), 38, &out), PageStatus::kOk);
  EXPECT_TRUE(out == expect);
}

TEST(Crafted, ReservedBlockTypeIsRejected) {
  GdfWriter w;
  w.block_header(true, 3);
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kBadData);
}

TEST(Crafted, StoredLengthBeyondOutputIsRejected) {
  const Bytes data = random_bytes(100, 2);
  GdfWriter w;
  w.stored_block(true, data.data(), 100);
  const auto page = w.finish();
  EXPECT_EQ(decode_status(page, 100), PageStatus::kOk);
  EXPECT_EQ(decode_status(page, 50), PageStatus::kSizeMismatch);
  EXPECT_EQ(decode_status(page, 101), PageStatus::kSizeMismatch) << "well-formed page that decodes short";
}

// A complete litlen code over 257 symbols (0..254: 8 bits, 255 and 256: 9 bits), two 1-bit distance
// codes, and a precode for lengths 8 (1 bit), 9 and 1 (2 bits each).
std::vector<uint8_t> litlen_lens_257() {
  std::vector<uint8_t> l(257, 8);
  l[255] = l[256] = 9;
  return l;
}
std::vector<uint8_t> good_precode() {
  std::vector<uint8_t> p(19, 0);
  p[8] = 1;
  p[9] = p[1] = 2;
  return p;
}

TEST(Crafted, DynamicBlockDecodes) {
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, litlen_lens_257(), {1, 1}, good_precode());
  const Bytes text = as_bytes("Dynamic Huffman block, two rounds of literals.");  // 46 bytes
  for (size_t i = 0; i < text.size(); ++i) w.code(i % 32, codes.litlen[text[i]]);
  w.code(text.size() % 32, codes.litlen[256]);
  Bytes out;
  ASSERT_EQ(decode_status(w.finish(), text.size(), &out), PageStatus::kOk);
  EXPECT_TRUE(out == text);
}

// docs/GDEFLATE.md: an incomplete code is accepted when it is a single code of length 1 (or empty).
// Here the distance code has one code, the litlen code is complete, and only 18 precode lengths are sent.
TEST(Crafted, SingleDistanceCodeOfLengthOneIsAccepted) {
  std::vector<uint8_t> litlen(258, 0);  // HLIT = 1
  litlen['a'] = 1;
  litlen[256] = litlen[257] = 2;  // EOB, and length 3
  std::vector<uint8_t> pre(19, 0);
  pre[0] = 1;
  pre[1] = pre[2] = 2;
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, litlen, {1}, pre, 18);
  w.code(0, codes.litlen['a']);
  w.code(1, codes.litlen[257]);
  w.code(2, codes.litlen[256]);
  w.code(1, codes.dist[0]);  // distance 1
  Bytes out;
  ASSERT_EQ(decode_status(w.finish(), 4, &out), PageStatus::kOk);
  EXPECT_TRUE(out == as_bytes("aaaa"));
}

TEST(Crafted, EndOfBlockAsOnlyLitlenCodeIsAccepted) {
  std::vector<uint8_t> litlen(257, 0);
  litlen[256] = 1;  // a single code of length 1; no distance codes at all
  std::vector<uint8_t> pre(19, 0);
  pre[0] = pre[1] = 1;
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, litlen, {0}, pre);
  w.code(0, codes.litlen[256]);
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kOk);
}

TEST(Crafted, HlitAbove286IsRejected) {
  // 287 litlen lengths (HLIT = 30), 286 itself unused: docs/GDEFLATE.md rejects the header.
  std::vector<uint8_t> lens(287, 0);
  std::fill_n(lens.begin(), 255, 8);  // the complete code of litlen_lens_257()
  lens[255] = lens[256] = 9;
  std::vector<uint8_t> pre(19, 0);
  pre[8] = 1;
  pre[9] = 2;
  pre[0] = pre[1] = 3;
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, lens, {1, 1}, pre);
  w.code(0, codes.litlen[256]);
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kBadData);
}

TEST(Crafted, OversubscribedPrecodeIsRejected) {
  GdfWriter w;
  dynamic_tables(w, true, 257, 1, std::vector<uint8_t>(19, 1), {});
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kBadData);
}

TEST(Crafted, OversubscribedLitlenCodeIsRejected) {
  auto lens = litlen_lens_257();
  lens[255] = 8;  // 256 codes of 8 bits already fill the space; 256 (9 bits) over-subscribes it
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, lens, {1, 1}, good_precode());
  w.code(0, codes.litlen[256]);
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kBadData);
}

TEST(Crafted, OversubscribedDistanceCodeIsRejected) {
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, litlen_lens_257(), {1, 1, 1}, good_precode());
  w.code(0, codes.litlen[256]);
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kBadData);
}

TEST(Crafted, IncompleteLitlenCodeUsedOutsideItsCodes) {
  // Only 'x' and EOB have codes (1 bit each would be complete; 2 bits each leaves half the space empty).
  std::vector<uint8_t> lens(257, 0);
  lens['x'] = lens[256] = 2;
  std::vector<uint8_t> pre(19, 0);
  pre[0] = pre[2] = 1;
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, lens, {2, 2}, pre);
  w.code(0, Code{0b11, 2});  // an unassigned pattern
  w.code(1, codes.litlen[256]);
  EXPECT_EQ(decode_status(w.finish(), 1), PageStatus::kBadData);  // docs/GDEFLATE.md: incomplete is bad data
}

TEST(Crafted, Litlen286InDynamicCodeIsRejected) {
  // HLIT = 31 (288 lengths); 286 gets a code and is used. Rejecting HLIT > 29 up front is fine too.
  std::vector<uint8_t> lens(288, 0);
  for (unsigned s = 0; s < 254; ++s) lens[s] = 8;
  lens[254] = lens[255] = lens[256] = lens[286] = 9;
  std::vector<uint8_t> pre(19, 0);
  pre[8] = 1;  // lengths 8, 9, 0 and 1
  pre[9] = 2;
  pre[0] = pre[1] = 3;
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, lens, {1, 1}, pre);
  w.code(0, codes.litlen[286]);
  w.code(0, codes.dist[0]);
  EXPECT_EQ(decode_status(w.finish(), 4), PageStatus::kBadData);
}

TEST(Crafted, MissingEndOfBlockCodeIsRejected) {
  std::vector<uint8_t> lens(257, 8);
  lens[256] = 0;  // 256 literals of 8 bits: complete, but no way to end the block
  std::vector<uint8_t> pre(19, 0);
  pre[8] = pre[0] = pre[1] = pre[2] = 2;  // lengths 8, 0 and 1 (and an unused 2)
  GdfWriter w;
  const DynamicCodes codes = dynamic_header(w, true, lens, {1, 1}, pre);
  for (unsigned lane = 0; lane < 32; ++lane) w.code(lane, codes.litlen['q']);
  EXPECT_NE(decode_status(w.finish(), 32), PageStatus::kOk);
}

TEST(Crafted, RepeatWithoutPreviousLengthIsRejected) {
  std::vector<uint8_t> pre(19, 0);
  pre[16] = pre[8] = 1;
  GdfWriter w;
  std::vector<ClSym> syms = {{16, 0}};  // "repeat previous length" as the very first symbol
  for (int i = 0; i < 255; ++i) syms.push_back({8});
  dynamic_tables(w, true, 257, 1, pre, syms);
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kBadData);
}

TEST(Crafted, RepeatPastTheEndOfTheLengthsIsRejected) {
  // 257 + 1 lengths expected; 8 x 'length 8' twice (16 lengths), then 18 zero runs totalling 276.
  std::vector<uint8_t> pre(19, 0);
  pre[18] = pre[8] = 1;
  GdfWriter w;
  std::vector<ClSym> syms;
  for (int i = 0; i < 16; ++i) syms.push_back({8});
  syms.push_back({18, 127});  // 138 zeros
  syms.push_back({18, 127});  // 138 more: 292 > 258
  dynamic_tables(w, true, 257, 1, pre, syms);
  EXPECT_EQ(decode_status(w.finish(), 0), PageStatus::kBadData);
}

}  // namespace
}  // namespace gdfs::test
