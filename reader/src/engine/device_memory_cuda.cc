// The GPU as DeviceMemory, through the CUDA runtime and kernels/' device API (gpu::decode_pages_async).
// Builds without CUDA say why there is no device.
#include "engine/device_memory.h"

#if GDFS_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gdfs/gpu_device.h"
#endif

namespace gdfs::engine {

#if GDFS_HAVE_CUDA
namespace {

bool check(cudaError_t e, const char* what, std::string& err) {
  if (e == cudaSuccess) return true;
  err = std::string(what) + ": " + cudaGetErrorString(e);
  return false;
}

cudaStream_t as_stream(void* s) {
  return static_cast<cudaStream_t>(s);
}

// A device buffer that grows and is never shrunk: steady reads allocate nothing.
class DeviceBuffer {
 public:
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  void* get(size_t n, std::string& err) {
    if (n <= size_) return ptr_;
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    size_ = 0;
    if (!check(cudaMalloc(&ptr_, n), "cudaMalloc", err)) return nullptr;
    size_ = n;
    return ptr_;
  }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

class CudaDeviceMemory final : public DeviceMemory {
 public:
  CudaDeviceMemory(bool decode, std::string device) : decode_(decode), device_(std::move(device)) {}
  std::string describe() const override {
    return (decode_ ? "GPU decode on " : "CPU decode, copied to ") + device_;
  }
  bool can_decode() const override { return decode_; }
  uint8_t* scratch(size_t n, std::string& err) override {
    return static_cast<uint8_t*>(scratch_.get(n, err));
  }
  bool upload(void* dst, const void* src, size_t n, void* s, std::string& err) override {
    return check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, as_stream(s)), "cudaMemcpyAsync", err);
  }
  bool zero(void* dst, size_t n, void* s, std::string& err) override {
    return check(cudaMemsetAsync(dst, 0, n, as_stream(s)), "cudaMemsetAsync", err);
  }
  bool copy(void* dst, const void* src, size_t n, void* s, std::string& err) override {
    return check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, as_stream(s)), "cudaMemcpyAsync",
                 err);
  }
  bool decode(std::span<const gpu::DevicePage> pages, std::span<gpu::PageResult> results, void* s,
              std::string& err) override {
    const size_t rec = pages.size() * sizeof(gpu::DevicePage);
    auto* d = static_cast<uint8_t*>(records_.get(rec + results.size_bytes(), err));
    if (!d) return false;
    auto* d_pages = reinterpret_cast<gpu::DevicePage*>(d);
    auto* d_results = reinterpret_cast<gpu::PageResult*>(d + rec);
    const cudaStream_t st = as_stream(s);
    return check(cudaMemcpyAsync(d_pages, pages.data(), rec, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync",
                 err) &&
           check(gpu::decode_pages_async(d_pages, static_cast<uint32_t>(pages.size()), d_results, st),
                 "decode_pages_async", err) &&
           check(cudaMemcpyAsync(results.data(), d_results, results.size_bytes(), cudaMemcpyDeviceToHost, st),
                 "cudaMemcpyAsync", err) &&
           check(cudaStreamSynchronize(st), "cudaStreamSynchronize", err);
  }
  bool sync(void* s, std::string& err) override {
    return check(cudaStreamSynchronize(as_stream(s)), "cudaStreamSynchronize", err);
  }

 private:
  bool decode_;
  std::string device_;
  DeviceBuffer scratch_;
  DeviceBuffer records_;  // page records and results of one decode
};

}  // namespace

std::unique_ptr<DeviceMemory> make_cuda_device_memory(bool decode, std::string& why) {
  int count = 0;
  if (!check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", why)) return nullptr;
  if (count == 0) {
    why = "no CUDA device";
    return nullptr;
  }
  int dev = 0;
  cudaDeviceProp prop{};
  if (!check(cudaGetDevice(&dev), "cudaGetDevice", why) ||
      !check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties", why))
    return nullptr;
  return std::make_unique<CudaDeviceMemory>(decode, prop.name);
}

#else

std::unique_ptr<DeviceMemory> make_cuda_device_memory(bool, std::string& why) {
  why = "this build has no CUDA";
  return nullptr;
}

#endif

}  // namespace gdfs::engine
