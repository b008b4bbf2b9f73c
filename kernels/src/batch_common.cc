// Parts of the host API that do not need CUDA.
#include "gdfs/gpu_batch.h"

namespace gdfs::gpu {

const char* result_name(PageResult r) {
  switch (r) {
    case PageResult::kOk:
      return "ok";
    case PageResult::kBadData:
      return "bad data";
    case PageResult::kSizeMismatch:
      return "size mismatch";
    case PageResult::kUnsupported:
      return "unsupported";
    case PageResult::kNotRun:
      return "not run";
  }
  return "unknown";
}

const char* built_architectures() {
#ifdef GDFS_CUDA_ARCHS
  return GDFS_CUDA_ARCHS;
#else
  return "none";
#endif
}

}  // namespace gdfs::gpu
