// The warp-level primitives the page kernels are written against.
//
// Under nvcc they are the CUDA intrinsics, always over the full warp. In a host build they run on the
// warp emulator (kernels/emu/warp_emu.h), which executes the same kernel source as 32 lanes in lockstep
// at every collective, so machines without a GPU still test the kernels' logic and bounds.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define GDFS_DEV __device__ __forceinline__
#define GDFS_SHARED_SYNC() __syncwarp()

namespace gdfs::gpu::simt {
inline constexpr uint32_t kFull = 0xffffffffu;
GDFS_DEV unsigned lane_id() {
  return threadIdx.x & 31u;
}
GDFS_DEV uint32_t ballot(bool p) {
  return __ballot_sync(kFull, p);
}
GDFS_DEV uint32_t shfl(uint32_t v, unsigned src) {
  return __shfl_sync(kFull, v, src);
}
GDFS_DEV uint32_t shfl_up(uint32_t v, unsigned delta) {
  return __shfl_up_sync(kFull, v, delta);
}
GDFS_DEV uint32_t shfl_xor(uint32_t v, unsigned mask) {
  return __shfl_xor_sync(kFull, v, mask);
}
GDFS_DEV void syncwarp() {
  __syncwarp();
}
GDFS_DEV unsigned popc(uint32_t x) {
  return __popc(x);
}
GDFS_DEV uint32_t brev(uint32_t x) {
  return __brev(x);
}
GDFS_DEV unsigned ffs(uint32_t x) {
  return __ffs(x);
}
GDFS_DEV unsigned clz(uint32_t x) {
  return __clz(x);
}
}  // namespace gdfs::gpu::simt

#else  // host build: the warp emulator

#include <bit>

#include "emu/warp_emu.h"

#define GDFS_DEV inline

namespace gdfs::gpu::simt {
inline constexpr uint32_t kFull = 0xffffffffu;
inline unsigned lane_id() {
  return emu::lane_id();
}
inline uint32_t ballot(bool p) {
  return static_cast<uint32_t>(emu::collective(emu::Op::kBallot, p, 0));
}
inline uint32_t shfl(uint32_t v, unsigned src) {
  return static_cast<uint32_t>(emu::collective(emu::Op::kShfl, v, src));
}
inline uint32_t shfl_up(uint32_t v, unsigned delta) {
  return static_cast<uint32_t>(emu::collective(emu::Op::kShflUp, v, delta));
}
inline uint32_t shfl_xor(uint32_t v, unsigned mask) {
  return static_cast<uint32_t>(emu::collective(emu::Op::kShflXor, v, mask));
}
inline void syncwarp() {
  emu::collective(emu::Op::kSync, 0, 0);
}
inline unsigned popc(uint32_t x) {
  return static_cast<unsigned>(std::popcount(x));
}
inline uint32_t brev(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned ffs(uint32_t x) {
  return x ? static_cast<unsigned>(std::countr_zero(x)) + 1 : 0;
}
inline unsigned clz(uint32_t x) {
  return static_cast<unsigned>(std::countl_zero(x));
}
}  // namespace gdfs::gpu::simt

#endif

namespace gdfs::gpu::simt {
// Bit mask of the lanes below this one.
GDFS_DEV uint32_t lanes_below() {
  return (1u << lane_id()) - 1u;
}
// Inclusive prefix sum over the warp in lane order.
GDFS_DEV uint32_t inclusive_sum(uint32_t x) {
  const unsigned lane = lane_id();
  for (unsigned d = 1; d < 32; d <<= 1) {
    const uint32_t t = shfl_up(x, d);
    if (lane >= d) x += t;
  }
  return x;
}
}  // namespace gdfs::gpu::simt
