// The frame shared by the hash-chain parsers (GreedyLoop in greedy.cc, LazyLoop in lazy.cc): the level's
// parameters, the match finder, and what every parse does around the main loop.
#pragma once

#include "hash_chain.h"
#include "lz_util.h"
#include "parsers.h"
#include "token_writers.h"

namespace gdfs::gdeflate::lz {
namespace {

// Loop supplies the main loop as a static member
//   template <class Out> uint32_t scan(const uint8_t* in, uint32_t n, uint32_t limit, ChainParams p,
//                                      HashChainMF<kPairs>& mf, Out& out)
// which searches positions below `limit` (4 bytes readable there) and returns the first position it did
// not emit; the bytes from there to n go out as literals. Everything the loop touches is handed over as a
// parameter or copied to a local: token and count stores are uint32 stores, which the compiler would
// otherwise have to assume may overwrite uint32 members, forcing reloads.
template <class Loop, bool kPairs>
class ChainParser final : public WriterParser<ChainParser<Loop, kPairs>> {
 public:
  explicit ChainParser(const ChainParams& p) : p_(p) {}

 private:
  friend class WriterParser<ChainParser>;
  template <class Out>
  void run(const uint8_t* in, size_t n, Out& out) {
    mf_.reset();
    const uint32_t n32 = static_cast<uint32_t>(n);
    const uint32_t limit = n >= 4 ? n32 - 3 : 0;
    uint32_t pos = Loop::scan(in, n32, limit, p_, mf_, out);
    for (; pos < n32; ++pos) out.literal(pos, in[pos]);
    out.finish(n32);
  }

  ChainParams p_;
  HashChainMF<kPairs> mf_;
};

}  // namespace
}  // namespace gdfs::gdeflate::lz
