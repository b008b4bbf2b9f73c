// The GPU runs of gdfs-gpu-bench: kernel only (pages resident in device memory), end to end from pinned
// host memory over several streams (output to host or left on the device), copies only, BatchDecoder::decode,
// and nvCOMP's batched GDeflate decoder on the same device pages. Every run checks every page's status and
// bytes.
#pragma once
#include <cuda_runtime_api.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "args.h"
#include "corpus.h"
#include "gdfs/gpu_page.h"
#include "nvcomp_api.h"
#include "report.h"

namespace gdfs::gpubench {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the device is; present == false with `why` when there is none (never throws).
DeviceInfo probe_device(int device);

class DeviceBench {
 public:
  // Allocates device and pinned memory for the whole corpus and uploads the pages. Throws CudaError.
  DeviceBench(const Corpus& c, const Args& a, unsigned host_threads);
  ~DeviceBench();
  DeviceBench(const DeviceBench&) = delete;
  DeviceBench& operator=(const DeviceBench&) = delete;

  // Rows are appended; a failed run gets a row with `error` set (a CUDA error may leave the device
  // unusable, and later runs then fail too).
  void kernel_sweep(bool gdeflate_only, std::vector<Row>& rows);
  void nvcomp_sweep(nvcomp::Library& lib, std::vector<Row>& rows);
  // What an end-to-end pass moves: copy in, decode, copy out (e2e); copy in and decode, the output
  // left in device memory (e2e-device); copy in and out, no decode (copies); copy in alone (h2d).
  enum class Pass { kHostOut, kDeviceOut, kCopies, kCopyIn };
  void end_to_end(std::vector<Row>& rows, Pass mode);
  void batch_decoder(std::vector<Row>& rows);
  size_t gdeflate_pages() const { return gd_ids_.size(); }

 private:
  // What a sweep does per launch, before each timed pass, and to check the last pass (bad pages).
  struct SweepOps {
    std::function<void(uint64_t off, uint32_t count)> launch;
    std::function<void()> clear;
    std::function<uint64_t(size_t pages, std::string& first_bad)> verify;
  };
  std::vector<uint32_t> batch_sizes(uint32_t m) const;  // --batch values for m pages, 0 = all, no repeats
  void sweep(const char* section, const std::vector<uint32_t>& ids, const SweepOps& ops,
             std::vector<Row>& rows);
  uint64_t bytes_of(const std::vector<uint32_t>& ids, size_t count) const;
  // Checks pages ids[0, count): status (results[k] for ids[k]) and bytes in h_out_ against the source.
  template <class Status, class IsOk>
  uint64_t check(const std::vector<uint32_t>& ids, size_t count, const Status* status, IsOk is_ok,
                 const uint8_t* out, std::string& first_bad);
  void fetch_results(size_t count);  // d_out_ and d_results_[0, count) to the host
  void clear_device();
  void release();  // d_out_ to 0xA5, d_results_ to 0xFF (stream 0)

  const Corpus& c_;
  const Args& a_;
  unsigned threads_;
  std::vector<uint32_t> all_ids_;     // corpus order (end to end, BatchDecoder)
  std::vector<uint32_t> kernel_ids_;  // the kernel-only runs' order (--order)
  std::vector<uint32_t> gd_ids_;      // the GDeflate pages, in the kernel-only order (with nvCOMP's)
  uint8_t *d_in_ = nullptr, *d_out_ = nullptr, *h_in_ = nullptr, *h_out_ = nullptr;
  gpu::DevicePage *d_pages_ = nullptr, *d_pages_gd_ = nullptr, *h_pages_ = nullptr;
  PageStatus *d_results_ = nullptr, *h_results_ = nullptr;
  std::vector<cudaStream_t> streams_;
  cudaEvent_t ev_[2] = {};
};

}  // namespace gdfs::gpubench
