// The batch decode kernel: one warp per page, a few warps per block, each warp with its own slice of
// shared memory. Non-persistent: the hardware block scheduler already balances pages of uneven cost,
// and a grid of n/4 blocks needs no work counter in global memory.
#include "gdfs/gpu_device.h"
#include "page_warp.h"

namespace gdfs::gpu {
namespace {

constexpr unsigned kWarpsPerBlock = 4;

__global__ void __launch_bounds__(kWarpsPerBlock * 32)
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
