// Parts of the host API that do not need CUDA.
#include "gdfs/gpu_batch.h"

namespace gdfs::gpu {

const char* built_architectures() {
#ifdef GDFS_CUDA_ARCHS
  return GDFS_CUDA_ARCHS;
#else
  return "none";
#endif
}

}  // namespace gdfs::gpu
