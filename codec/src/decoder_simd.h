// The SIMD data-round loops, written once for every instruction set (the way libdeflate's
// decompress_template.h is): decoder_avx2.cc and decoder_avx512.cc each define GDFS_SIMD as their target
// attribute, include this file, and instantiate its templates with their own Isa traits struct.
//
// What is the same for every ISA lives here: the 32 lanes' bit buffers as registers of Isa::kWidth
// lanes, which lanes refill and how many words they take, the round loop (look up, check, commit,
// consume), the stored-block loop, and the scalar parts of a commit. What an ISA does differently is
// its traits' job:
//   Vec, Mask, kWidth            a register of kWidth 32-bit lanes, and a lane bit set over one register
//   load(p), store(p, v)         aligned register loads and stores of uint32_t
//   set1(x), sub(a, b)           broadcast, lane-wise a - b
//   below32(v), count(m)         the lanes with v < 32; the lanes in m
//   refill(lo, hi, cnt, total, newcnt, m, words)
//                                drops `total` bits from the lo:hi pairs and gives the lanes in m one
//                                word each from `words`, in lane order
//   store_low_bytes(lo, dst)     the low byte of all 32 lanes to dst[0..32)
//   copy_match(dst, dist, len)   an owed match's copy, exact length (the bytes after it may be final)
//   Round, lookup_round, place, bad_distance, commit, match_lanes
//                                one data round: see data_rounds()
//
// Everything is in an unnamed namespace: each including file gets its own copy, compiled for its target.
#pragma once

#ifndef GDFS_SIMD
#error "define GDFS_SIMD (the target attribute) before including decoder_simd.h"
#endif

#include <cstddef>
#include <cstdint>

#include "decoder_rounds.h"

namespace gdfs::gdeflate {
namespace {

template <class Isa>
inline constexpr unsigned kRegs = 32 / Isa::kWidth;

// Each lane's 64-bit bit buffer as two 32-bit halves, plus its bit count.
template <class Isa>
struct Lanes {
  typename Isa::Vec lo[kRegs<Isa>], hi[kRegs<Isa>], cnt[kRegs<Isa>];
};

template <class Isa>
GDFS_SIMD inline void load_lanes(const LaneReader& r, Lanes<Isa>& v) {
  alignas(64) uint32_t lo[32], hi[32], cnt[32];
  for (unsigned l = 0; l < 32; ++l) {
    lo[l] = static_cast<uint32_t>(r.buf[l]);
    hi[l] = static_cast<uint32_t>(r.buf[l] >> 32);
    cnt[l] = r.cnt[l];
  }
  for (unsigned g = 0; g < kRegs<Isa>; ++g) {
    v.lo[g] = Isa::load(lo + Isa::kWidth * g);
    v.hi[g] = Isa::load(hi + Isa::kWidth * g);
    v.cnt[g] = Isa::load(cnt + Isa::kWidth * g);
  }
}

template <class Isa>
GDFS_SIMD inline void store_lanes(const Lanes<Isa>& v, LaneReader& r) {
  alignas(64) uint32_t lo[32], hi[32], cnt[32];
  for (unsigned g = 0; g < kRegs<Isa>; ++g) {
    Isa::store(lo + Isa::kWidth * g, v.lo[g]);
    Isa::store(hi + Isa::kWidth * g, v.hi[g]);
    Isa::store(cnt + Isa::kWidth * g, v.cnt[g]);
  }
  for (unsigned l = 0; l < 32; ++l) {
    r.buf[l] = lo[l] | (uint64_t{hi[l]} << 32);
    r.cnt[l] = cnt[l];
  }
}

// Bit counts after consuming total[g] bits, and the lanes that then fall under 32 bits and refill.
// Returns how many words the refill takes, so the caller can check they exist before committing.
template <class Isa>
GDFS_SIMD inline size_t plan_refill(const Lanes<Isa>& v, const typename Isa::Vec* total,
                                    typename Isa::Vec* newcnt, typename Isa::Mask* refill) {
  size_t words = 0;
  for (unsigned g = 0; g < kRegs<Isa>; ++g) {
    newcnt[g] = Isa::sub(v.cnt[g], total[g]);
    refill[g] = Isa::below32(newcnt[g]);
    words += Isa::count(refill[g]);
  }
  return words;
}

// Applies a plan_refill(): the words go to the lanes in lane order (the GDeflate refill rule), starting
// at in[next].
template <class Isa>
GDFS_SIMD inline void consume_refill(Lanes<Isa>& v, const typename Isa::Vec* total,
                                     const typename Isa::Vec* newcnt, const typename Isa::Mask* refill,
                                     const uint8_t* in, size_t& next) {
  for (unsigned g = 0; g < kRegs<Isa>; ++g) {
    Isa::refill(v.lo[g], v.hi[g], v.cnt[g], total[g], newcnt[g], refill[g], in + 4 * next);
    next += Isa::count(refill[g]);
  }
}

// The copies owed from the previous round, in lane order: a copy may read what a lower lane's copy
// writes. dist[l] is lane l's distance, decoded this round.
template <class Isa>
GDFS_SIMD inline void copy_owed(Output& o, const OwedMatches& m, uint32_t pending, const uint32_t* dist) {
  for (uint32_t b = pending; b; b &= b - 1) {
    const unsigned l = static_cast<unsigned>(__builtin_ctz(b));
    Isa::copy_match(o.data + m.pos[l], dist[l], m.len[l]);
  }
}

// This round's literals: lane l (a bit of `lit`) writes byte val[l] at output position pos[l].
GDFS_SIMD inline void put_literals(Output& o, uint32_t lit, const uint32_t* pos, const uint32_t* val) {
  for (uint32_t b = lit; b; b &= b - 1) {
    const unsigned l = static_cast<unsigned>(__builtin_ctz(b));
    o.data[pos[l]] = static_cast<uint8_t>(val[l]);
  }
}

// Whole data rounds for as long as each is ordinary (decoder_rounds.h). Per round the traits
//   lookup_round(lo, pending, tables, rd)  decode every lane's symbol; false at end of block or a bad code
//   place(rd, opos)                        the round's output bytes (and, if the ISA wants them before
//                                          commit, each lane's output position)
//   bad_distance(rd, pending, m)           whether an owed distance reaches before the page
//   commit(rd, pending, opos, o, m)        write the owed copies, the literals and the new reservations
//   match_lanes(rd)                        the lanes that now owe a distance
// Nothing is written before a round is known to be ordinary, so the scalar code can take over any round.
template <class Isa>
GDFS_SIMD inline void data_rounds(LaneReader& r, Output& o, OwedMatches& m, const uint32_t* tables) {
  Lanes<Isa> v;
  load_lanes(r, v);
  size_t next = r.next, opos = o.pos;
  uint32_t pending = m.pending;
  typename Isa::Round rd;
  while (Isa::lookup_round(v.lo, pending, tables, rd)) {
    const uint32_t sum = Isa::place(rd, opos);
    if (sum > o.size - opos) break;
    typename Isa::Vec newcnt[kRegs<Isa>];
    typename Isa::Mask refill[kRegs<Isa>];
    const size_t words = plan_refill(v, rd.total, newcnt, refill);
    if (Isa::bad_distance(rd, pending, m) || next + words > r.nwords) break;
    Isa::commit(rd, pending, opos, o, m);
    pending = Isa::match_lanes(rd);
    opos += sum;
    consume_refill(v, rd.total, newcnt, refill, r.in, next);
  }
  store_lanes(v, r);
  r.next = next;
  m.pending = pending;
  o.pos = opos;
}

// Stored-block body: byte k on lane k mod 32 (8 bits a lane a round), so a full round is 32 consecutive
// output bytes.
template <class Isa>
GDFS_SIMD inline void stored_rounds(LaneReader& r, Output& o, uint32_t& remaining) {
  Lanes<Isa> v;
  load_lanes(r, v);
  typename Isa::Vec total[kRegs<Isa>];
  for (auto& t : total) t = Isa::set1(8);
  size_t next = r.next;
  while (remaining >= 32) {
    typename Isa::Vec newcnt[kRegs<Isa>];
    typename Isa::Mask refill[kRegs<Isa>];
    if (next + plan_refill(v, total, newcnt, refill) > r.nwords) break;
    Isa::store_low_bytes(v.lo, o.data + o.pos);
    o.pos += 32;
    remaining -= 32;
    consume_refill(v, total, newcnt, refill, r.in, next);
  }
  store_lanes(v, r);
  r.next = next;
}

}  // namespace
}  // namespace gdfs::gdeflate
