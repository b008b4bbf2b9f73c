// Run-time CPU feature checks for the SIMD code paths (x86-64; false elsewhere).
#pragma once

namespace gdfs::gdeflate {

bool avx512_usable();  // AVX-512 F, BW, VL, DQ and VBMI2 (decoder_avx512.cc)
bool avx2_usable();    // AVX2, BMI2 and POPCNT (decoder_avx2.cc)

}  // namespace gdfs::gdeflate
