// Device memory that Reader::read_device puts file bytes into: the GPU through the CUDA runtime, or, in
// tests, a stand-in that keeps "device" bytes in host memory and decodes with the CPU codecs, so the
// orchestration (which page decodes where, scratch, holes, fallback) is tested without a GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "gdfs/gpu_page.h"
#include "gdfs/reader.h"

namespace gdfs::engine {

class ReadEngine;

// Operations are queued on `stream` (a cudaStream_t; null: the default stream) in order; sync() waits
// for them. Pointers named dst/src below are device pointers unless they say host.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual std::string describe() const = 0;
  // True: pages are decoded on the device. False: they are decoded on the CPU and uploaded.
  virtual bool can_decode() const = 0;
  // Device scratch of at least `n` bytes, reused by the next call (one read at a time: read_to_device
  // serialises them). Null, with `err`, when it cannot be had.
  virtual uint8_t* scratch(size_t n, std::string& err) = 0;
  virtual bool upload(void* dst, const void* host_src, size_t n, void* stream, std::string& err) = 0;
  virtual bool zero(void* dst, size_t n, void* stream, std::string& err) = 0;
  virtual bool copy(void* dst, const void* src, size_t n, void* stream, std::string& err) = 0;
  // Decodes `pages` (their in/out pointers on the device; the records themselves in host memory) and
  // sets one result per page once known. Only when can_decode().
  virtual bool decode(std::span<const gpu::DevicePage> pages, std::span<PageStatus> results, void* stream,
                      std::string& err) = 0;
  virtual bool sync(void* stream, std::string& err) = 0;

  std::mutex mu;  // held by read_to_device for a whole read: the scratch area is shared
};

// The GPU through the CUDA runtime (CUDA builds with a usable device). With `decode` false it only
// copies (the pages are decoded on the CPU). Null, with `why`, where there is no usable device. Creating
// one initialises CUDA in this process.
std::unique_ptr<DeviceMemory> make_cuda_device_memory(bool decode, std::string& why);
// Host memory posing as device memory; decodes with the CPU codecs when `decode` is set (tests).
std::unique_ptr<DeviceMemory> make_standin_device_memory(bool decode);

// Replaces a reader's device memory (tests: a stand-in device; null: no device).
void set_device_memory(Reader& reader, std::unique_ptr<DeviceMemory> mem);

// Reads every request's range into its device destination: see Reader::read_batch_device.
void read_to_device(ReadEngine& engine, DeviceMemory& mem, std::span<ReadRequest> requests, void* stream);

}  // namespace gdfs::engine
