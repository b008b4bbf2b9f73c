// The GPU as DeviceMemory, through the CUDA runtime and kernels/' device API (gpu::decode_pages_async).
// Builds without CUDA copy CPU-decoded bytes through a CUDA runtime loaded at run time, where there is one.
#include "device/device_memory.h"

#if GDFS_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gdfs/gpu_device.h"
#else
#include <dlfcn.h>

#include <type_traits>
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
  bool decode(std::span<const gpu::DevicePage> pages, std::span<PageStatus> results, void* s,
              std::string& err) override {
    const size_t rec = pages.size() * sizeof(gpu::DevicePage);
    auto* d = static_cast<uint8_t*>(records_.get(rec + results.size_bytes(), err));
    if (!d) return false;
    auto* d_pages = reinterpret_cast<gpu::DevicePage*>(d);
    auto* d_results = reinterpret_cast<PageStatus*>(d + rec);
    gpu::launch_order(pages, order_);
    launched_.resize(pages.size());
    for (size_t j = 0; j < pages.size(); ++j) launched_[j] = pages[order_[j]];
    status_.resize(pages.size());
    const cudaStream_t st = as_stream(s);
    if (!(check(cudaMemcpyAsync(d_pages, launched_.data(), rec, cudaMemcpyHostToDevice, st),
                "cudaMemcpyAsync", err) &&
          check(gpu::decode_pages_async(d_pages, static_cast<uint32_t>(pages.size()), d_results, st),
                "decode_pages_async", err) &&
          check(cudaMemcpyAsync(status_.data(), d_results, results.size_bytes(), cudaMemcpyDeviceToHost, st),
                "cudaMemcpyAsync", err) &&
          check(cudaStreamSynchronize(st), "cudaStreamSynchronize", err)))
      return false;
    for (size_t j = 0; j < pages.size(); ++j) results[order_[j]] = status_[j];
    return true;
  }
  bool sync(void* s, std::string& err) override {
    return check(cudaStreamSynchronize(as_stream(s)), "cudaStreamSynchronize", err);
  }

 private:
  bool decode_;
  std::string device_;
  DeviceBuffer scratch_;
  DeviceBuffer records_;  // page records and results of one decode
  // One decode's pages in launch order (gpu::launch_order), and their results in that order.
  std::vector<uint32_t> order_;
  std::vector<gpu::DevicePage> launched_;
  std::vector<PageStatus> status_;
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

// A build without CUDA cannot decode on a device, but it can still put file bytes into device memory a
// program allocated, through the CUDA runtime if the machine has one: loaded at run time, so the build
// and the package need no CUDA. The declarations are the runtime API's documented C signatures.
namespace {

using cudaError = int;
constexpr int kHostToDevice = 1, kDeviceToDevice = 3;

struct Runtime {
  void* lib = nullptr;
  cudaError (*get_device_count)(int*) = nullptr;
  cudaError (*malloc_)(void**, size_t) = nullptr;
  cudaError (*free_)(void*) = nullptr;
  cudaError (*memcpy_async)(void*, const void*, size_t, int, void*) = nullptr;
  cudaError (*memset_async)(void*, int, size_t, void*) = nullptr;
  cudaError (*stream_synchronize)(void*) = nullptr;
  const char* (*error_string)(cudaError) = nullptr;

  bool load(std::string& why) {
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      why = "this build has no CUDA, and no CUDA runtime (libcudart) could be loaded";
      return false;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)> >(dlsym(lib, name));
      ok = ok && fn;
    };
    sym(get_device_count, "cudaGetDeviceCount");
    sym(malloc_, "cudaMalloc");
    sym(free_, "cudaFree");
    sym(memcpy_async, "cudaMemcpyAsync");
    sym(memset_async, "cudaMemsetAsync");
    sym(stream_synchronize, "cudaStreamSynchronize");
    sym(error_string, "cudaGetErrorString");
    if (!ok) why = "the CUDA runtime lacks a function gdfs needs";
    return ok;
  }
  bool check(cudaError e, const char* what, std::string& err) const {
    if (e == 0) return true;
    err = std::string(what) + ": " + error_string(e);
    return false;
  }
};

class RuntimeDeviceMemory final : public DeviceMemory {
 public:
  explicit RuntimeDeviceMemory(Runtime rt) : rt_(rt) {}
  ~RuntimeDeviceMemory() override {
    if (scratch_) rt_.free_(scratch_);
  }
  std::string describe() const override {
    return "CPU decode, copied to the device (CUDA runtime loaded at run time)";
  }
  bool can_decode() const override { return false; }
  uint8_t* scratch(size_t n, std::string& err) override {
    if (n <= size_) return static_cast<uint8_t*>(scratch_);
    if (scratch_) rt_.free_(scratch_);
    scratch_ = nullptr;
    size_ = 0;
    if (!rt_.check(rt_.malloc_(&scratch_, n), "cudaMalloc", err)) return nullptr;
    size_ = n;
    return static_cast<uint8_t*>(scratch_);
  }
  bool upload(void* dst, const void* src, size_t n, void* s, std::string& err) override {
    return rt_.check(rt_.memcpy_async(dst, src, n, kHostToDevice, s), "cudaMemcpyAsync", err);
  }
  bool zero(void* dst, size_t n, void* s, std::string& err) override {
    return rt_.check(rt_.memset_async(dst, 0, n, s), "cudaMemsetAsync", err);
  }
  bool copy(void* dst, const void* src, size_t n, void* s, std::string& err) override {
    return rt_.check(rt_.memcpy_async(dst, src, n, kDeviceToDevice, s), "cudaMemcpyAsync", err);
  }
  bool decode(std::span<const gpu::DevicePage>, std::span<PageStatus>, void*, std::string& err) override {
    err = "no device decoder in this build";
    return false;
  }
  bool sync(void* s, std::string& err) override {
    return rt_.check(rt_.stream_synchronize(s), "cudaStreamSynchronize", err);
  }

 private:
  Runtime rt_;
  void* scratch_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_cuda_device_memory(bool, std::string& why) {
  Runtime rt;
  if (!rt.load(why)) return nullptr;
  int count = 0;
  if (!rt.check(rt.get_device_count(&count), "cudaGetDeviceCount", why)) return nullptr;
  if (count == 0) {
    why = "no CUDA device";
    return nullptr;
  }
  return std::make_unique<RuntimeDeviceMemory>(rt);
}

#endif

}  // namespace gdfs::engine
