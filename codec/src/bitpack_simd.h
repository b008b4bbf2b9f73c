// The bitpack page loop, written once for every instruction set (the way libdeflate's
// decompress_template.h is): bitpack_avx2.cc and bitpack_avx512.cc each define GDFS_SIMD as their target
// attribute and, in their unnamed namespace, how they decode one whole block, then include this file at
// the end of that namespace, which builds their page loops on those:
//   Scan                                  per-page constants of the first-difference undo
//   make_scan<S>(stride, block)           those constants for S-byte samples in blocks of `block`
//   block<U, NB>(src, rate, k, outliers, stride, scan, out)
//                                         one whole block of 8 * NB samples: `outliers` k-byte outliers
//                                         at src (none when k == 0), then the sign bitmap and planes
//
// So each including file gets its own copy, compiled for its target; the file has no includes or
// namespaces of its own.
#pragma once

#ifndef GDFS_SIMD
#error "define GDFS_SIMD (the target attribute) before including bitpack_simd.h"
#endif

// kMeta: metadata bytes per block (1: plain, 2: outlier mode), a template parameter so that the block
// loop has no branch on it. The page's fields are copied to locals: the output is bytes, which the
// compiler must assume could alias them.
template <class U, unsigned NB, unsigned kMeta>
GDFS_SIMD void simd_page(const uint8_t* in, const Geometry& g, const Params& p, uint8_t* out) {
  constexpr unsigned kBlock = 8 * NB;
  const unsigned stride = p.stride, n_out = outlier_count(stride, kBlock);
  const size_t whole = whole_blocks(g, kBlock);
  const Scan scan = make_scan<sizeof(U)>(stride, kBlock);
  const uint8_t* src = in + g.blocks * kMeta;
  for (size_t i = 0; i < whole; ++i) {
    const unsigned rate = in[i * kMeta], sel = kMeta == 2 ? in[i * 2 + 1] : 0;
    // outlier_bytes() and planes_cost() without a branch: whether a block has outliers, and their
    // width, change from block to block unpredictably.
    const unsigned k = (sel & kSelOutlier) * (((sel >> 1) & 3) + 1);
    const unsigned outliers = k ? n_out : 0;
    block<U, NB>(src, rate, k, outliers, stride, scan, out + i * kBlock * sizeof(U));
    src += k * outliers + (rate + (rate != 0)) * NB;
  }
  finish_page<U>(in, g, p, whole, src, out);
}

// Every block of a page whose metadata was checked, with a vector_block() size.
template <class U>
void simd_page(const uint8_t* in, const Geometry& g, const Params& p, uint8_t* out) {
  with_plane_bytes(p.block, [&]<unsigned NB>() {
    if (g.meta_each == 2) return simd_page<U, NB, 2>(in, g, p, out);
    return simd_page<U, NB, 1>(in, g, p, out);
  });
}
