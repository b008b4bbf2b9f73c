// GDeflate page decoding by one warp: lane i decodes sub-stream i.
//
// The rules are those of docs/GDEFLATE.md, and the result (bytes and status) equals the
// CPU decoder's (codec/src/decoder.cc) on every input, valid or not. How the warp does it:
// - Each lane keeps its own 64-bit bit buffer. After every step the lanes that hold fewer than 32 bits
//   take the next input words in lane order: a ballot and a popcount give each its word index.
// - A data round decodes one symbol per lane, speculatively; a ballot finds the end-of-block lane,
//   after which only lanes owing a distance take part. An inclusive warp sum of the output lengths
//   places literals and reserves match ranges in lane order.
// - Literals are stored at once. Matches are deferred: a length reserves its range and goes to a
//   list in shared memory, its distance fills the entry one round later, and the list is resolved
//   when it fills and at the end of the page. Resolution copies, in one step, every match whose
//   source lies below the first unresolved destination, so independent matches copy in parallel and
//   long ones use all 32 lanes.
// - Errors are found per lane and the first in lane order wins, which is what the CPU's sequential
//   walk reports.
#pragma once
#include <cstdint>

#include "gdeflate_tables.h"
#include "gdfs/gpu_page.h"
#include "simt.h"

namespace gdfs::gpu {
namespace gdw {

inline constexpr unsigned kLitBits = 9;
inline constexpr unsigned kDistBits = 7;
inline constexpr unsigned kPrecodeBits = 7;
inline constexpr unsigned kMaxMatches = 128;

}  // namespace gdw

// Per-warp shared memory of the GDeflate decoder.
struct GdeflateSmem {
  uint32_t lit[1u << gdw::kLitBits];
  uint32_t dist[1u << gdw::kDistBits];
  uint32_t pre[1u << gdw::kPrecodeBits];
  uint32_t match_pos_len[gdw::kMaxMatches];  // pos | (len - 1) << 16
  uint16_t match_dist[gdw::kMaxMatches];
  uint16_t lit_sorted[288];
  uint16_t dist_sorted[32];
  uint16_t pre_sorted[19];
  gdw::Canon lit_canon, dist_canon, pre_canon;
  uint8_t lens[288 + 32];
};

namespace gdw {

// This lane's sub-stream.
struct LaneBits {
  uint64_t buf;
  uint32_t cnt;  // valid bits in buf; >= 32 at the start of every step
  bool overrun;  // asked for a word past the end (zeros were supplied)
};

// The input words and the next one to hand out (uniform). The warp reads ahead: lane j holds words
// base+j (cur), base+32+j (ahead) and base+64+j (far), each loaded two chunks of 32 words before it is
// needed, so a refill is a shuffle and not a wait on global memory (global loads were 43% of the stalls
// in an H100 profile of the kernel, docs/GPU.md).
struct Words {
  const uint8_t* in;
  uint32_t nwords;
  uint32_t next;  // base <= next < base + 32 between refills
  uint32_t base;  // a multiple of 32
  uint32_t cur, ahead, far;
  bool aligned;
};

GDFS_DEV uint32_t load_word(const Words& w, uint32_t idx) {
#if defined(__CUDACC__)
  if (w.aligned) return reinterpret_cast<const uint32_t*>(w.in)[idx];
#endif
  const uint8_t* p = w.in + 4 * size_t{idx};
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

GDFS_DEV uint32_t load_word_or_zero(const Words& w, uint32_t idx) {
  return idx < w.nwords ? load_word(w, idx) : 0;
}

// Lane j's stream starts with word j; the read-ahead window starts at word 32.
GDFS_DEV void start_words(Words& w, const uint8_t* in, uint32_t in_size) {
  const unsigned lane = simt::lane_id();
  w.in = in;
  w.nwords = in_size / 4;
  w.aligned = (reinterpret_cast<uintptr_t>(in) & 3u) == 0;
  w.next = w.base = 32;
  w.cur = load_word_or_zero(w, 32 + lane);
  w.ahead = load_word_or_zero(w, 64 + lane);
  w.far = load_word_or_zero(w, 96 + lane);
}

GDFS_DEV void consume(LaneBits& b, uint32_t n) {
  b.buf >>= n;
  b.cnt -= n;
}

// Every lane that now holds fewer than 32 bits takes the next word, in lane order (section 2).
GDFS_DEV void refill(LaneBits& b, Words& w) {
  const bool need = b.cnt < 32;
  const uint32_t m = simt::ballot(need);
  if (m == 0) return;
  const uint32_t idx = w.next + simt::popc(m & simt::lanes_below());
  const uint32_t off = idx - w.base;  // below 64 for the lanes in need
  const uint32_t from_cur = simt::shfl(w.cur, off & 31u), from_ahead = simt::shfl(w.ahead, off & 31u);
  if (need) {
    uint64_t word = 0;
    if (idx < w.nwords) {
      word = off < 32 ? from_cur : from_ahead;
    } else {
      b.overrun = true;
    }
    b.buf |= word << b.cnt;
    b.cnt += 32;
  }
  const uint32_t next = w.next + simt::popc(m);
  w.next = next < w.nwords ? next : w.nwords;
  if (w.next - w.base >= 32) {
    w.base += 32;
    w.cur = w.ahead;
    w.ahead = w.far;
    w.far = load_word_or_zero(w, w.base + 64 + simt::lane_id());
  }
}

GDFS_DEV bool any_overrun(const LaneBits& b) {
  return simt::ballot(b.overrun) != 0;
}

// Copies this step's ready matches with the whole warp, their bytes laid end to end: in each pass lane
// k writes byte c + k of the concatenation. Every byte a ready match reads is final already (see
// resolve_matches), so the loads of a pass depend on no store of it and wait on memory once per pass,
// not once per byte. Byte k of a match is byte k mod dist of the `dist` bytes before it, which also
// holds when the match overlaps itself.
GDFS_DEV void copy_ready_matches(uint8_t* out, bool ready, uint32_t pos, uint32_t dist, uint32_t len) {
  const unsigned lane = simt::lane_id();
  const uint32_t mine = ready ? len : 0;
  const uint32_t end = simt::inclusive_sum(mine);  // rises with the lane
  const uint32_t total = simt::shfl(end, 31);
  for (uint32_t c = 0; c < total; c += 32) {
    const uint32_t b = c + lane;
    unsigned owner = 0;  // the number of lanes whose bytes all lie below b: b's match
    for (unsigned step = 16; step; step >>= 1)
      if (simt::shfl(end, owner + step - 1) <= b) owner += step;
    const uint32_t o_end = simt::shfl(end, owner), o_len = simt::shfl(mine, owner);
    const uint32_t o_pos = simt::shfl(pos, owner), o_dist = simt::shfl(dist, owner);
    if (b < total) {
      const uint32_t k = b - (o_end - o_len);
      out[o_pos + k] = out[o_pos - o_dist + (k < o_dist ? k : k % o_dist)];
    }
  }
}

// Performs list entries [0, n), whose distances are all known. Called by the whole warp. Each step
// copies every pending match whose source lies entirely below the first pending destination, so
// independent matches copy together.
GDFS_DEV void resolve_matches(GdeflateSmem& sm, uint32_t n, uint8_t* out) {
  const unsigned lane = simt::lane_id();
  simt::syncwarp();  // literals and list entries of every lane are visible
  for (uint32_t base = 0; base < n; base += 32) {
    const uint32_t i = base + lane;
    bool pending = i < n;
    uint32_t pos = 0, len = 0, dist = 1;
    if (pending) {
      pos = sm.match_pos_len[i] & 0xffffu;
      len = (sm.match_pos_len[i] >> 16) + 1;
      dist = sm.match_dist[i];
    }
    for (uint32_t m; (m = simt::ballot(pending)) != 0;) {
      const unsigned first = simt::ffs(m) - 1;
      const uint32_t first_pos = simt::shfl(pos, first);
      const uint32_t src_end = pos - dist + (len < dist ? len : dist);
      const bool ready = pending && (lane == first || src_end <= first_pos);
      copy_ready_matches(out, ready, pos, dist, len);
      simt::syncwarp();
      if (ready) pending = false;
    }
  }
}

struct Decoder {
  GdeflateSmem& sm;
  const DevicePage& page;
  LaneBits bits;
  Words words;
  uint32_t opos = 0;    // output bytes placed (uniform)
  uint32_t nmatch = 0;  // list entries (uniform)

  GDFS_DEV Table lit_table() const {
    return {sm.lit, &sm.lit_canon, sm.lit_sorted, kLitBits, Alphabet::kLitlen};
  }
  GDFS_DEV Table dist_table() const {
    return {sm.dist, &sm.dist_canon, sm.dist_sorted, kDistBits, Alphabet::kDist};
  }
  GDFS_DEV Table pre_table() const {
    return {sm.pre, &sm.pre_canon, sm.pre_sorted, kPrecodeBits, Alphabet::kPrecode};
  }

  // `n` bits of lane 0's stream, consumed there (headers are on lane 0, section 3).
  GDFS_DEV uint32_t lane0_bits(unsigned n) {
    const uint32_t v = simt::shfl(static_cast<uint32_t>(bits.buf), 0) & ((1u << n) - 1u);
    if (simt::lane_id() == 0) consume(bits, n);
    refill(bits, words);
    return v;
  }

  GDFS_DEV PageStatus stored_block();
  GDFS_DEV PageStatus read_dynamic_tables();
  GDFS_DEV PageStatus read_code_lengths(uint32_t total);
  GDFS_DEV bool build_fixed_tables();
  GDFS_DEV PageStatus huffman_block();
  GDFS_DEV PageStatus run();
};

// Stored block: a 16-bit LEN on lane 0, then byte k on lane k mod 32 (section 4).
GDFS_DEV PageStatus Decoder::stored_block() {
  const unsigned lane = simt::lane_id();
  const uint32_t len = lane0_bits(16);
  if (len > page.out_size - opos) return PageStatus::kSizeMismatch;
  for (uint32_t k = 0; k < len; k += 32) {
    if (k + lane < len) {
      page.out[opos + k + lane] = static_cast<uint8_t>(bits.buf);
      consume(bits, 8);
    }
    refill(bits, words);
  }
  opos += len;
  return any_overrun(bits) ? PageStatus::kBadData : PageStatus::kOk;
}

// The code lengths of a dynamic block: precode symbols round-robin from lane 0 (section 5). A round
// decodes one symbol per lane; the lanes whose output would start at or past `total` sit it out.
GDFS_DEV PageStatus Decoder::read_code_lengths(uint32_t total) {
  const Table pre = pre_table();
  for (uint32_t k = 0; k < total;) {
    const uint32_t e = lookup(pre, bits.buf);
    const bool bad = e & kEntryBad;
    const uint32_t sym = entry_value(e), x = extra_value(e, bits.buf);
    const uint32_t count = bad ? 0 : sym < 16 ? 1 : sym == 18 ? 11 + x : 3 + x;
    const uint32_t incl = simt::inclusive_sum(count);
    const uint32_t start = k + incl - count;
    const bool active = start < total;
    const bool err = active && (bad || (sym == 16 && start == 0) || (sym >= 16 && count > total - start));
    if (simt::ballot(err)) return PageStatus::kBadData;
    // A repeat of the previous length copies the nearest earlier non-repeat of this round, or the last
    // length of the rounds before.
    const uint32_t own = sym < 16 ? sym : 0;
    const uint32_t givers = simt::ballot(active && sym != 16) & simt::lanes_below();
    const uint32_t from_lane = simt::shfl(own, givers ? 31 - simt::clz(givers) : 0);
    const uint32_t fill = sym != 16 ? own : givers ? from_lane : k ? sm.lens[k - 1] : 0;
    if (active) {
      consume(bits, entry_codelen(e) + entry_extra(e));
      for (uint32_t j = 0; j < count; ++j) sm.lens[start + j] = static_cast<uint8_t>(fill);
    }
    refill(bits, words);
    simt::syncwarp();
    const uint32_t last = 31 - simt::clz(simt::ballot(active));
    k += simt::shfl(incl, last);
  }
  return any_overrun(bits) ? PageStatus::kBadData : PageStatus::kOk;
}

GDFS_DEV PageStatus Decoder::read_dynamic_tables() {
  const unsigned lane = simt::lane_id();
  const uint32_t h = lane0_bits(14);
  const uint32_t hlit = (h & 31) + 257, hdist = ((h >> 5) & 31) + 1, hclen = ((h >> 10) & 15) + 4;
  if (hlit > 286) return PageStatus::kBadData;
  // One 3-bit precode length per lane, in RFC 1951's permutation order.
  const uint8_t perm[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  uint32_t plen = 0;
  if (lane < hclen) {
    plen = static_cast<uint32_t>(bits.buf) & 7u;
    consume(bits, 3);
  }
  refill(bits, words);
  if (lane < 19) sm.lens[perm[lane]] = static_cast<uint8_t>(plen);
  simt::syncwarp();
  if (!build_table(sm.lens, 19, 7, pre_table())) return PageStatus::kBadData;
  if (PageStatus r = read_code_lengths(hlit + hdist); r != PageStatus::kOk) return r;
  if (!build_table(sm.lens, hlit, kMaxCodeLen, lit_table())) return PageStatus::kBadData;
  if (!build_table(sm.lens + hlit, hdist, kMaxCodeLen, dist_table())) return PageStatus::kBadData;
  return PageStatus::kOk;
}

GDFS_DEV bool Decoder::build_fixed_tables() {
  for (unsigned s = simt::lane_id(); s < 288 + 32; s += 32)
    sm.lens[s] = s >= 288 ? 5 : s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  simt::syncwarp();
  return build_table(sm.lens, 288, kMaxCodeLen, lit_table()) &&
         build_table(sm.lens + 288, 32, kMaxCodeLen, dist_table());
}

// Data rounds of one Huffman block (sections 6 and 7).
GDFS_DEV PageStatus Decoder::huffman_block() {
  const unsigned lane = simt::lane_id();
  const Table lit = lit_table(), dist = dist_table();
  bool owe = false;  // this lane decoded a length last round and owes its distance
  uint32_t slot = 0, mpos = 0;
  bool eob_seen = false;  // uniform
  for (;;) {
    if (nmatch + 32 > kMaxMatches) {
      // Resolve the complete entries; the owed ones (the last round's) move to the front.
      const uint32_t owed = simt::popc(simt::ballot(owe));
      const uint32_t done = nmatch - owed;
      resolve_matches(sm, done, page.out);
      const uint32_t keep = owe ? sm.match_pos_len[slot] : 0;
      simt::syncwarp();
      if (owe) {
        slot -= done;
        sm.match_pos_len[slot] = keep;
      }
      nmatch = owed;
    }
    const uint32_t e = lookup(owe ? dist : lit, bits.buf);
    const bool is_eob = !owe && !eob_seen && (e & kEntryEob);
    const uint32_t eobs = simt::ballot(is_eob);
    const unsigned eob_lane = eobs ? simt::ffs(eobs) - 1 : 32;
    const bool active = owe || (!eob_seen && lane <= eob_lane);
    const bool literal = active && !owe && (e & kEntryLiteral);
    const bool length = active && !owe && !(e & (kEntryLiteral | kEntryEob | kEntryBad));
    const uint32_t value = entry_value(e) + extra_value(e, bits.buf);
    const uint32_t out_len = literal ? 1 : length ? value : 0;
    const uint32_t incl = simt::inclusive_sum(out_len);
    const uint32_t pos = opos + incl - out_len;

    PageStatus err = PageStatus::kOk;
    if (active && (e & kEntryBad))
      err = PageStatus::kBadData;  // unused code word or symbol 286/287
    else if (owe && value > mpos)
      err = PageStatus::kBadData;  // reaches before the page start
    else if ((literal || length) && (pos > page.out_size || out_len > page.out_size - pos))
      err = PageStatus::kSizeMismatch;
    const uint32_t errs = simt::ballot(err != PageStatus::kOk);
    if (errs) return static_cast<PageStatus>(simt::shfl(static_cast<uint32_t>(err), simt::ffs(errs) - 1));

    if (active) consume(bits, entry_codelen(e) + entry_extra(e));
    if (literal) page.out[pos] = static_cast<uint8_t>(entry_value(e));
    if (owe) sm.match_dist[slot] = static_cast<uint16_t>(value);
    const uint32_t lengths = simt::ballot(length);
    if (length) {
      slot = nmatch + simt::popc(lengths & simt::lanes_below());
      sm.match_pos_len[slot] = pos | (value - 1) << 16;
      mpos = pos;
    }
    owe = length;
    nmatch += simt::popc(lengths);
    opos += simt::shfl(incl, 31);
    refill(bits, words);
    if (any_overrun(bits)) return PageStatus::kBadData;
    if (eob_seen) break;  // that was the round for distances owed at the end of the block
    if (eob_lane < 32) {
      eob_seen = true;
      if (!simt::ballot(owe)) break;
    }
  }
  return PageStatus::kOk;
}

GDFS_DEV PageStatus Decoder::run() {
  const unsigned lane = simt::lane_id();
  start_words(words, page.in, page.in_size);
  bits.buf = load_word(words, lane);
  bits.cnt = 32;
  bits.overrun = false;
  for (bool final_block = false; !final_block;) {
    const uint32_t hdr = lane0_bits(3);
    if (any_overrun(bits)) return PageStatus::kBadData;
    final_block = hdr & 1;
    PageStatus r = PageStatus::kBadData;
    switch (hdr >> 1) {
      case 0:
        r = stored_block();
        break;
      case 1:
        r = build_fixed_tables() ? huffman_block() : PageStatus::kBadData;
        break;
      case 2:
        r = read_dynamic_tables();
        if (r == PageStatus::kOk) r = huffman_block();
        break;
      default:
        break;  // BTYPE 3 is reserved
    }
    if (r != PageStatus::kOk) return r;
  }
  if (words.next != words.nwords) return PageStatus::kBadData;  // trailing words (docs/GDEFLATE.md)
  if (opos != page.out_size) return PageStatus::kSizeMismatch;
  resolve_matches(sm, nmatch, page.out);
  return PageStatus::kOk;
}

}  // namespace gdw

// Decodes one GDeflate page with the calling warp; every lane returns the same result.
GDFS_DEV PageStatus gdeflate_decode_warp(const DevicePage& page, GdeflateSmem& sm) {
  if (page.out_size > kMaxPageBytes) return PageStatus::kSizeMismatch;
  if (page.in_size % 4 != 0 || page.in_size < 4 * 32) return PageStatus::kBadData;
  gdw::Decoder d{sm, page, {}, {}};
  return d.run();
}

}  // namespace gdfs::gpu
