// The few nvCOMP C entry points gdfs-gpu-bench calls, bound at run time with dlopen (--nvcomp LIB), so
// that nothing of nvCOMP is needed to build. Our own declarations, written from the C signatures of
// nvCOMP 6.0.0 (wheel nvidia-libnvcomp-cu13 6.0.0.12: include/nvcomp.h, nvcomp/shared_types.h,
// nvcomp/gdeflate.h). nvCOMP 5.x names and takes these differently (GetTempSizeAsync, ...): the loader
// accepts major version 6 only, read from nvcompGetProperties.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gdfs::gpubench::nvcomp {

// nvcompStatus_t: a C enum (int-sized); 0 is success. Device status arrays hold one per chunk.
using Status = int32_t;
inline constexpr Status kSuccess = 0;
const char* status_name(Status s);

// nvcompProperties_t: two uint32_t, version first (1000 * major + 100 * minor + patch), then the CUDA
// runtime version nvCOMP was built with.
struct Properties {
  uint32_t version;
  uint32_t cudart_version;
};

// nvcompAlignmentRequirements_t: three size_t, minimum alignment of input, output and temp buffers.
struct AlignmentRequirements {
  size_t input;
  size_t output;
  size_t temp;
};

// nvcompBatchedGdeflateDecompressOpts_t as of nvCOMP 6.0.0, passed by value: the backend
// (nvcompDecompressBackend_t, a C enum: 0 default, 1 hardware, 2 CUDA) then 60 reserved bytes that
// must be zero; 64 bytes in all.
struct GdeflateDecompressOpts {
  int32_t backend;
  char reserved[60];
};
static_assert(sizeof(GdeflateDecompressOpts) == 64);

extern "C" {
// nvcompGetProperties(nvcompProperties_t* properties)
using GetPropertiesFn = Status (*)(Properties* properties);
// nvcompBatchedGdeflateDecompressGetRequiredAlignments(opts, nvcompAlignmentRequirements_t* out)
using GetRequiredAlignmentsFn = Status (*)(GdeflateDecompressOpts decompress_opts,
                                           AlignmentRequirements* out);
// nvcompBatchedGdeflateDecompressGetTempSize(num_chunks, max_uncompressed_chunk_bytes, opts,
//   size_t* temp_bytes, max_total_uncompressed_bytes, stream): host result, enqueues nothing.
using DecompressGetTempSizeFn = Status (*)(size_t num_chunks, size_t max_uncompressed_chunk_bytes,
                                           GdeflateDecompressOpts decompress_opts, size_t* temp_bytes,
                                           size_t max_total_uncompressed_bytes, cudaStream_t stream);
// nvcompBatchedGdeflateDecompressAsync: every array has num_chunks entries in device memory.
using DecompressAsyncFn = Status (*)(const void* const* device_compressed_chunk_ptrs,
                                     const size_t* device_compressed_chunk_bytes,
                                     const size_t* device_uncompressed_buffer_bytes,
                                     size_t* device_uncompressed_chunk_bytes, size_t num_chunks,
                                     void* const device_temp_ptr, size_t temp_bytes,
                                     void* const* device_uncompressed_chunk_ptrs,
                                     GdeflateDecompressOpts decompress_opts, Status* device_statuses,
                                     cudaStream_t stream);
}

struct Library {
  void* handle = nullptr;
  GetPropertiesFn get_properties = nullptr;
  GetRequiredAlignmentsFn get_alignments = nullptr;
  DecompressGetTempSizeFn get_temp_size = nullptr;
  DecompressAsyncFn decompress = nullptr;
  Properties props{};

  // dlopens `path` and binds the functions; false with `why` when it cannot, or the version is not 6.x.
  bool open(const std::string& path, std::string& why);
  ~Library();
  std::string version() const;  // "6.0.0"
};

}  // namespace gdfs::gpubench::nvcomp
