// Match finding and parsing: turns one page of bytes into an LZ77 token stream.
//
// Levels (following the reference's split; docs/GDEFLATE.md, "Where the descriptions disagree"):
//   1-4   greedy parsing over hash chains (depth grows with level)
//   5-7   lazy parsing over hash chains
//   8-12  binary-tree match finder with near-optimal (cost-model) parsing, more passes at higher levels
// Level 0 (stored) never reaches a parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "../tokens.h"

namespace gdfs::gdeflate {

struct Sym;
struct BlockRange;

class Parser {
 public:
  virtual ~Parser() = default;
  // Appends the tokens for in[0..n) (n <= 65536) to `out`; `out` is cleared first. Deterministic: the
  // same input always gives the same tokens. Matches never reach before in[0] and never past in[n-1].
  void parse(const uint8_t* in, size_t n, TokenVec& out) {
    const TokenSpan t = parse(in, n);
    out.assign(t.begin, t.begin + t.size);
  }

  // The same tokens, left in the parser's own buffer (valid until its next parse): the encoder reads
  // them from there rather than copying every page's tokens.
  struct TokenSpan {
    const Token* begin;
    size_t size;
  };
  virtual TokenSpan parse(const uint8_t* in, size_t n) = 0;

  // The same parse, delivered as symbols (s[0..count), count returned) and as segments of about
  // `segment_bytes` input bytes each with their statistics, exactly as split_blocks would cut and count
  // the tokens. Parsers that can do this while parsing (levels 1-7, where a separate pass over the
  // tokens would be a large share of the time) override it; the others return SIZE_MAX and the caller
  // parses to tokens.
  // s must hold n entries.
  virtual size_t parse_segments(const uint8_t*, size_t, size_t /*segment_bytes*/, Sym*,
                                std::vector<BlockRange>&) {
    return SIZE_MAX;
  }
};

// Parser for `level` in 1..12. The object owns its scratch memory and is reused across pages.
std::unique_ptr<Parser> make_parser(int level);

}  // namespace gdfs::gdeflate
