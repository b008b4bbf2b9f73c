// The batch decode kernel: one warp per page, two warps per block, each warp with its own slice of shared
// memory. Non-persistent: the hardware block scheduler balances pages of uneven cost, and a grid of n/2
// blocks needs no work counter in global memory. Two warps a block because a block's shared memory
// returns only when all its warps are done: with four, a slow GDeflate page held three finished warps'
// slots (an H200 profile showed 13.5 warps active per SM against 28 possible,
// bench/results/2026-11-26-gpu-ncu-h200.txt); one warp a block is capped at 32 warps by the blocks an SM
// keeps. On the H200, two beat one by 1-10% and four by 2-3% (bench/results/2026-11-26-gpu-ab-3-h200.txt).
#include "gdfs/gpu_device.h"
#include "page_warp.h"

namespace gdfs::gpu {
namespace {

constexpr unsigned kWarpsPerBlock = 2;
// Hopper's shared memory holds 20 such blocks (228 KiB over two 5,128-byte warp slices and 1 KiB a
// block): 40 warps, which caps the kernel at 51 registers a thread. Parts that keep only 16 blocks an SM
// get 16.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 750 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870)
constexpr unsigned kMinBlocksPerSm = 16;
#else
constexpr unsigned kMinBlocksPerSm = 20;
#endif

__global__ void __launch_bounds__(kWarpsPerBlock * 32, kMinBlocksPerSm)
    decode_pages_kernel(const DevicePage* __restrict__ pages, uint32_t n, PageStatus* __restrict__ results) {
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned warp = threadIdx.x / 32;
  const uint32_t i = blockIdx.x * kWarpsPerBlock + warp;
  if (i >= n) return;  // the whole warp leaves together
  const DevicePage page = pages[i];
  WarpSmem& sm = reinterpret_cast<WarpSmem*>(smem)[warp];
  const PageStatus r = decode_page_warp(page, sm);
  if (simt::lane_id() == 0) results[i] = r;
}

}  // namespace

size_t decode_smem_per_warp() {
  return sizeof(WarpSmem);
}
unsigned decode_warps_per_block() {
  return kWarpsPerBlock;
}

cudaError_t decode_pages_async(const DevicePage* d_pages, uint32_t n, PageStatus* d_results,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const size_t smem = kWarpsPerBlock * sizeof(WarpSmem);
  static_assert(kWarpsPerBlock * sizeof(WarpSmem) <= 48 * 1024, "needs cudaFuncSetAttribute beyond 48 KiB");
  const unsigned blocks = (n + kWarpsPerBlock - 1) / kWarpsPerBlock;
  decode_pages_kernel<<<blocks, kWarpsPerBlock * 32, smem, stream>>>(d_pages, n, d_results);
  return cudaGetLastError();
}

}  // namespace gdfs::gpu
