// Device-side batch API, for callers whose pages are already in GPU memory or who want the decoded
// pages to stay there. CUDA builds only (it names CUDA types).
//
// decode_pages_async() decodes n pages in one launch on `stream`, one warp per page, and writes one
// PageStatus per page. It does not synchronise the host, allocates nothing and needs no scratch
// memory (every warp works in shared memory), and checks the launch. The inputs may be corrupt: a page
// never reads past its in_size or writes past its out_size, and a bad page only sets its own result.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "gdfs/gpu_batch.h"
#include "gdfs/gpu_page.h"

namespace gdfs::gpu {

// d_pages: n DevicePage records in device memory, their in/out pointers device pointers.
// d_results: n results in device memory. Always read the results back and act on them.
cudaError_t decode_pages_async(const DevicePage* d_pages, uint32_t n, PageStatus* d_results,
                               cudaStream_t stream);

// Shared memory per warp and warps per block of the launch (for benchmarks and occupancy reports).
size_t decode_smem_per_warp();
unsigned decode_warps_per_block();

}  // namespace gdfs::gpu
