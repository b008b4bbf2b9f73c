// BatchDecoder in a build without CUDA: there is never a device, and the caller decodes on the CPU.
#include "gdfs/gpu_batch.h"

namespace gdfs::gpu {

std::unique_ptr<BatchDecoder> BatchDecoder::create(const BatchOptions&, std::string& why) {
  why = "this build has no CUDA support";
  return nullptr;
}

}  // namespace gdfs::gpu
