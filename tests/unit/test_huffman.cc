// build_code_lengths / build_canonical_codes: complete, length-limited, optimal when the limit does not
// bind, deterministic; canonical codes are prefix-free and fill the code space exactly once. The decoder's
// build_decode_table agrees with the encoder's canonical codes on every 15-bit input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "decode_table.h"
#include "huffman.h"

namespace gdfs::gdeflate {
namespace {

using Freqs = std::vector<uint32_t>;
using Lens = std::vector<uint8_t>;

Lens lengths(const Freqs& f, unsigned max_len) {
  Lens lens(f.size(), 0xEE);  // poison: every entry must be written
  build_code_lengths(f.data(), static_cast<unsigned>(f.size()), max_len, lens.data());
  return lens;
}

// Kraft sum scaled by 2^15: exactly 1 << 15 for a complete code.
uint64_t kraft(const Lens& lens) {
  uint64_t sum = 0;
  for (uint8_t l : lens) {
    if (l) sum += l <= 15 ? uint64_t{1} << (15 - l) : 0;  // > 15 is reported separately
  }
  return sum;
}

uint64_t cost(const Freqs& f, const Lens& lens) {
  uint64_t c = 0;
  for (size_t i = 0; i < f.size(); ++i) c += uint64_t{f[i]} * lens[i];
  return c;
}

// Cost of an unrestricted optimal Huffman code: the sum of all internal node weights.
uint64_t optimal_cost(const Freqs& f) {
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> q;
  for (uint32_t x : f) {
    if (x) q.push(x);
  }
  uint64_t c = 0;
  while (q.size() > 1) {
    const uint64_t a = q.top();
    q.pop();
    const uint64_t b = q.top();
    q.pop();
    c += a + b;
    q.push(a + b);
  }
  return c;
}

// Checks the properties every result must have; returns the lengths for further checks.
Lens check_valid(const Freqs& f, unsigned max_len) {
  const Lens lens = lengths(f, max_len);
  EXPECT_EQ(kraft(lens), uint64_t{1} << 15) << "code is not complete";
  unsigned used = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_LE(lens[i], max_len) << "symbol " << i;
    if (f[i]) {
      ++used;
      EXPECT_GT(lens[i], 0) << "used symbol " << i << " has no code";
    }
  }
  // A more frequent symbol never gets a longer code than a less frequent one.
  for (size_t i = 0; i < f.size(); ++i) {
    for (size_t j = 0; j < f.size(); ++j) {
      if (f[i] && f[j] && f[i] > f[j]) {
        EXPECT_LE(lens[i], lens[j]) << i << " vs " << j;
      }
    }
  }
  if (used >= 2) {
    for (size_t i = 0; i < f.size(); ++i) {
      if (!f[i]) {
        EXPECT_EQ(lens[i], 0) << "unused symbol " << i << " got a code";
      }
    }
  }
  return lens;
}

Freqs random_freqs(std::mt19937& rng, unsigned n, double zero_prob, uint32_t max_f) {
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<uint32_t> f(1, max_f);
  Freqs fr(n);
  for (auto& x : fr) x = u(rng) < zero_prob ? 0 : f(rng);
  return fr;
}

TEST(Huffman, RandomFrequenciesGiveCompleteLimitedOptimalCodes) {
  std::mt19937 rng(1234);
  for (unsigned n : {2u, 3u, 19u, 30u, 32u, 257u, 286u, 288u}) {
    for (int iter = 0; iter < 40; ++iter) {
      Freqs f = random_freqs(rng, n, iter % 2 ? 0.5 : 0.0, iter % 3 ? 1000 : 100000);
      if (std::count_if(f.begin(), f.end(), [](uint32_t x) { return x; }) < 2) f[0] = f[1] = 1;
      const Lens lens = check_valid(f, 15);
      // With these distributions the 15-bit limit never binds, so the result must be optimal.
      if (*std::max_element(lens.begin(), lens.end()) < 15) {
        EXPECT_EQ(cost(f, lens), optimal_cost(f)) << n;
      }
    }
  }
}

TEST(Huffman, PrecodeLimitOfSeven) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 200; ++iter) {
    Freqs f = random_freqs(rng, 19, 0.3, iter % 2 ? 10 : 1u << 20);
    if (std::count_if(f.begin(), f.end(), [](uint32_t x) { return x; }) < 2) f[3] = f[4] = 1;
    check_valid(f, 7);
  }
}

// Fibonacci frequencies produce the deepest possible tree (depth n-1): the limit must bind and the
// code must still be complete.
Freqs fibonacci(unsigned n, unsigned offset) {
  Freqs f(offset, 0);
  uint32_t a = 1, b = 1;
  for (unsigned i = 0; i < n; ++i) {
    f.push_back(a);
    const uint32_t c = a + b;
    a = b;
    b = c;
  }
  return f;
}

TEST(Huffman, FibonacciFrequenciesRespectLimits) {
  for (unsigned n : {16u, 20u, 30u, 40u, 46u}) {
    const Freqs f = fibonacci(n, 3);
    const Lens lens = check_valid(f, 15);
    EXPECT_EQ(*std::max_element(lens.begin(), lens.end()), 15u) << "limit should bind for n=" << n;
    Freqs rev(f.rbegin(), f.rend());
    check_valid(rev, 15);
  }
  for (unsigned n : {9u, 12u, 19u}) check_valid(fibonacci(n, 0), 7);
  // Fibonacci symbols spread over a full litlen alphabet, the rest rare but used.
  Freqs big(288, 1);
  const Freqs fib = fibonacci(46, 0);
  std::copy(fib.begin(), fib.end(), big.begin() + 100);
  check_valid(big, 15);
}

TEST(Huffman, ExtremeButLegalFrequencies) {
  Freqs f(286, 1);
  f[65] = 0xFFFFFFFFu / 2;  // sums of many large weights must not overflow
  f[66] = 0xFFFFFFFFu / 2;
  check_valid(f, 15);
  Freqs all_max(288, 0xFFFFFFFFu);
  const Lens lens = check_valid(all_max, 15);
  EXPECT_EQ(cost(all_max, lens), optimal_cost(all_max));
}

TEST(Huffman, NoneOrOneUsedSymbolIsPaddedToTwoCodes) {
  for (unsigned max_len : {7u, 15u}) {
    const Lens none = lengths(Freqs(19, 0), max_len);
    EXPECT_EQ(kraft(none), uint64_t{1} << 15);
    EXPECT_EQ(std::count(none.begin(), none.end(), 1), 2);
    EXPECT_EQ(std::count(none.begin(), none.end(), 0), 17);
    for (unsigned used : {0u, 1u, 5u, 18u}) {
      Freqs f(19, 0);
      f[used] = 77;
      const Lens one = lengths(f, max_len);
      EXPECT_EQ(one[used], 1) << used;
      EXPECT_EQ(std::count(one.begin(), one.end(), 1), 2) << used;
      EXPECT_EQ(std::count(one.begin(), one.end(), 0), 17) << used;
    }
  }
}

TEST(Huffman, Deterministic) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 50; ++iter) {
    Freqs f = random_freqs(rng, 288, 0.2, 8);  // few distinct values: many ties
    f[0] = f[1] = 3;
    EXPECT_EQ(lengths(f, 15), lengths(f, 15));
    EXPECT_EQ(lengths(f, 9), lengths(f, 9));
  }
}

std::vector<uint16_t> codes_for(const Lens& lens) {
  std::vector<uint16_t> codes(lens.size(), 0xBEEF);
  build_canonical_codes(lens.data(), static_cast<unsigned>(lens.size()), codes.data());
  return codes;
}

// The codes are bit-reversed (sent LSB first). Walking every max_len-bit pattern, each must start with
// exactly one code: that is prefix-freedom and completeness at once.
void check_prefix_free_and_complete(const Lens& lens) {
  const std::vector<uint16_t> codes = codes_for(lens);
  const unsigned max_len = *std::max_element(lens.begin(), lens.end());
  for (uint32_t pattern = 0; pattern < (1u << max_len); ++pattern) {
    int matches = 0;
    for (size_t s = 0; s < lens.size(); ++s) {
      if (lens[s] && (pattern & ((1u << lens[s]) - 1)) == codes[s]) ++matches;
    }
    ASSERT_EQ(matches, 1) << "pattern " << pattern;
  }
}

TEST(Huffman, CanonicalCodesArePrefixFreeAndComplete) {
  std::mt19937 rng(42);
  for (unsigned n : {2u, 19u, 32u, 288u}) {
    for (int iter = 0; iter < 5; ++iter) {
      Freqs f = random_freqs(rng, n, 0.3, 5000);
      f[0] = f[1] = 1;
      check_prefix_free_and_complete(lengths(f, n == 19 ? 7 : 15));
    }
  }
  check_prefix_free_and_complete(lengths(fibonacci(40, 0), 15));
}

TEST(Huffman, CanonicalCodesMatchRfc1951Example) {
  // RFC 1951 §3.2.2: lengths (3,3,3,3,3,2,4,4) give 010 011 100 101 110 00 1110 1111 (MSB first).
  const Lens lens = {3, 3, 3, 3, 3, 2, 4, 4};
  const uint16_t msb_first[] = {0b010, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111};
  const std::vector<uint16_t> codes = codes_for(lens);
  for (size_t s = 0; s < lens.size(); ++s) {
    uint16_t rev = 0;
    for (unsigned b = 0; b < lens[s]; ++b) rev |= ((msb_first[s] >> b) & 1) << (lens[s] - 1 - b);
    EXPECT_EQ(codes[s], rev) << "symbol " << s;
  }
  EXPECT_EQ(codes_for({0, 1, 1})[0], 0) << "unused symbols get code 0";
}

// Decodes the next symbol of `bits` (LSB first) the way the CPU decoder does: main entry, then subtable.
uint32_t table_lookup(const std::vector<uint32_t>& t, unsigned table_bits, uint32_t bits) {
  uint32_t e = t[bits & ((1u << table_bits) - 1)];
  if (e & kEntryLong) e = t[entry_value(e) + ((bits >> table_bits) & ((1u << entry_extra(e)) - 1))];
  return e;
}

// Every 15-bit input decodes to the symbol whose encoder code is its prefix, with that code's length;
// inputs no code is a prefix of decode to kEntryBad.
// Both ways of sorting the symbols (AVX-512 where the CPU has it, and scalar) build the same table.
void check_table_against_codes(const Lens& lens, unsigned table_bits) {
  const unsigned n = static_cast<unsigned>(lens.size());
  std::vector<uint32_t> sym(n);
  for (unsigned s = 0; s < n; ++s) sym[s] = make_entry(s, 0, 0);
  std::vector<uint32_t> table((1u << table_bits) + n * (1u << (15 - table_bits)), 0xDEADBEEF);
  std::vector<uint32_t> scalar(table);
  ASSERT_TRUE(build_decode_table(lens.data(), n, sym.data(), table_bits, 15, table.data()));
  ASSERT_TRUE(build_decode_table(lens.data(), n, sym.data(), table_bits, 15, scalar.data(), false));
  ASSERT_TRUE(table == scalar);
  const std::vector<uint16_t> codes = codes_for(lens);
  for (uint32_t x = 0; x < (1u << 15); ++x) {
    unsigned want = n;
    for (unsigned s = 0; s < n && want == n; ++s)
      if (lens[s] && (x & ((1u << lens[s]) - 1)) == codes[s]) want = s;
    const uint32_t e = table_lookup(table, table_bits, x);
    if (want == n) {
      ASSERT_TRUE(e & kEntryBad) << "input " << x;
      continue;
    }
    ASSERT_FALSE(e & kEntrySpecial) << "input " << x;
    ASSERT_EQ(entry_value(e), want) << "input " << x;
    ASSERT_EQ(entry_codelen(e), lens[want]) << "input " << x;
  }
}

TEST(Huffman, DecodeTablesAgreeWithCanonicalCodes) {
  std::mt19937 rng(7);
  for (unsigned table_bits : {7u, 8u, 11u}) {
    for (unsigned n : {2u, 19u, 32u, 288u}) {
      for (int iter = 0; iter < 3; ++iter) {
        Freqs f = random_freqs(rng, n, 0.3, 5000);
        f[0] = f[1] = 1;
        check_table_against_codes(lengths(f, 15), table_bits);
      }
    }
    check_table_against_codes(lengths(fibonacci(40, 0), 15), table_bits);  // codes up to 15 bits
  }
  // The incomplete codes DEFLATE accepts: one code of length 1 (the other word is unused), none at all.
  check_table_against_codes({0, 1, 0}, 8);
  check_table_against_codes({0, 0, 0}, 8);
  // Other incomplete codes and over-subscribed ones are refused.
  std::vector<uint32_t> table(1u << 16), sym(288, 0);
  for (const bool simd : {true, false}) {
    EXPECT_FALSE(build_decode_table(Lens{1, 2, 0, 0}.data(), 4, sym.data(), 8, 15, table.data(), simd));
    EXPECT_FALSE(build_decode_table(Lens{1, 1, 1, 0}.data(), 4, sym.data(), 8, 15, table.data(), simd));
    // Lengths past max_len, in any of the 288 places (a corrupt header, or a precode length over 7).
    for (const unsigned at : {0u, 31u, 32u, 200u, 287u}) {
      Lens lens(288, 0);
      lens[at] = 16;
      EXPECT_FALSE(build_decode_table(lens.data(), 288, sym.data(), 11, 15, table.data(), simd)) << at;
      lens[at] = 255;
      EXPECT_FALSE(build_decode_table(lens.data(), 288, sym.data(), 11, 15, table.data(), simd)) << at;
    }
    EXPECT_FALSE(build_decode_table(Lens{8, 1, 1}.data(), 3, sym.data(), 7, 7, table.data(), simd));
  }
}

}  // namespace
}  // namespace gdfs::gdeflate
