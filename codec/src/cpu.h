// Run-time CPU feature checks for every SIMD code path of the codec, in one place: each path's check
// names exactly the features its target attribute compiles for.
#pragma once

namespace gdfs {

// The x86-64 features the codec's SIMD paths use; all false elsewhere.
struct CpuFeatures {
  bool avx2, bmi2, popcnt, avx512f, avx512bw, avx512vl, avx512dq, avx512vbmi, avx512vbmi2, gfni;
};

inline CpuFeatures cpu_features() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  CpuFeatures f;
  f.avx2 = __builtin_cpu_supports("avx2");
  f.bmi2 = __builtin_cpu_supports("bmi2");
  f.popcnt = __builtin_cpu_supports("popcnt");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
  f.avx512vbmi2 = __builtin_cpu_supports("avx512vbmi2");
  f.gfni = __builtin_cpu_supports("gfni");
  return f;
#else
  return {};
#endif
}

}  // namespace gdfs

namespace gdfs::gdeflate {

// The GDeflate decoder's and encoder's AVX-512 rounds (decoder_avx512.cc, emit_avx512.cc).
inline bool avx512_usable() {
  const CpuFeatures f = cpu_features();
  return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vbmi2;
}
// The GDeflate decoder's AVX2 rounds (decoder_avx2.cc).
inline bool avx2_usable() {
  const CpuFeatures f = cpu_features();
  return f.avx2 && f.bmi2 && f.popcnt;
}

}  // namespace gdfs::gdeflate

namespace gdfs::bitpack {

// The bitpack page loops: bitpack_avx512.cc (GF2P8AFFINEQB, VPERMB) and bitpack_avx2.cc.
inline bool avx512_bitpack_usable() {
  const CpuFeatures f = cpu_features();
  return f.avx512f && f.avx512bw && f.avx512vbmi && f.gfni && f.bmi2;
}
inline bool avx2_bitpack_usable() {
  return cpu_features().avx2;
}

}  // namespace gdfs::bitpack
