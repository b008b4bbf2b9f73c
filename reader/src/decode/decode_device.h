// Something that decodes a batch of pages in one go: the GPU (kernels/' BatchDecoder) or, for tests and
// as a stand-in, the CPU. A device only decodes. The GPU decode scheduler (gpu_scheduler.cc) gathers the
// batches, checks both page checksums and re-decodes on the CPU whatever a device gets wrong.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "gdfs/format.h"
#include "gdfs/gpu_batch.h"

namespace gdfs::engine {

struct DeviceJob {
  const format::PageEntry* entry = nullptr;  // codec, param, csize, usize
  const uint8_t* stored = nullptr;           // entry->csize bytes
  uint8_t* out = nullptr;                    // entry->usize bytes
};

class DecodeDevice {
 public:
  virtual ~DecodeDevice() = default;
  // Decodes every page and sets results[i] (same length): PageStatus, the device's word on the page.
  // Even kOk is only a claim until the page's checksum confirms it. Pages are independent: a bad one never
  // disturbs the others. Returns false, with `err` set and the pages it did not decode kNotRun, when
  // the batch failed as a whole. Called by one thread at a time.
  virtual bool decode(std::span<const DeviceJob> pages, std::span<PageStatus> results, std::string& err) = 0;
  virtual std::string name() const = 0;  // for the log
};

// The GPU through gpu::BatchDecoder; null, with `why`, where this build or machine has no usable GPU.
std::unique_ptr<DecodeDevice> make_cuda_decode_device(std::string& why);

// Whether make_cuda_decode_device would succeed, asked in a child process: this process must not
// initialise CUDA before fuse_daemonize() forks, since a CUDA context does not survive a fork.
bool probe_cuda_decode_device(std::string& why);

// The CPU decoders, without checksums, on the calling thread.
std::unique_ptr<DecodeDevice> make_cpu_decode_device();

}  // namespace gdfs::engine
