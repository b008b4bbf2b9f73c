// BatchDecoder on a CUDA device: pinned staging slots, one stream each, so that the host-to-device
// copy, the decode and the device-to-host copy of consecutive chunks of a batch overlap.
//
// A batch is cut into chunks that fit a slot. Chunk c goes to slot c mod S: the slot first finishes
// its previous chunk (waits for its stream, hands the bytes and results back), then gathers the new
// chunk's pages into its pinned input buffer and queues copy-in, kernel and copy-out on its stream.
// Every CUDA call is checked; any failure fails the whole call (results kNotRun) and the caller
// decodes on the CPU.
#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "gdfs/gpu_batch.h"
#include "gdfs/gpu_device.h"

namespace gdfs::gpu {
namespace {

constexpr size_t kAlign = 16;  // each page starts 16-byte aligned: word and vector loads

size_t align_up(size_t n) {
  return (n + kAlign - 1) & ~(kAlign - 1);
}

struct CudaFailure {
  std::string what;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure{std::string(what) + ": " + cudaGetErrorString(e)};
}

struct Slot {
  cudaStream_t stream = nullptr;
  cudaEvent_t ev[4] = {};  // start, after copy-in, after kernel, after copy-out
  uint8_t *h_in = nullptr, *d_in = nullptr, *h_out = nullptr, *d_out = nullptr;
  DevicePage *h_pages = nullptr, *d_pages = nullptr;
  PageStatus *h_results = nullptr, *d_results = nullptr;
  // The chunk in flight: where its pages came from and go back to. h_pages[j] is page first + order[j]
  // (launch_order); the staged bytes stay in page order.
  size_t first = 0, count = 0;
  std::vector<DevicePage> staged;
  std::vector<uint32_t> order;
  bool busy = false;
};

class CudaBatchDecoder final : public BatchDecoder {
 public:
  CudaBatchDecoder(const BatchOptions& opt, std::string name)
      : opt_(opt), name_(std::move(name)), max_pages_(opt.slot_bytes / 128 + 1) {}
  ~CudaBatchDecoder() override { release(); }

  void init() {
    check(cudaSetDevice(opt_.device), "cudaSetDevice");
    slots_.resize(opt_.slots ? opt_.slots : 1);
    for (Slot& s : slots_) {
      check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      for (cudaEvent_t& e : s.ev) check(cudaEventCreate(&e), "cudaEventCreate");
      check(cudaMallocHost(&s.h_in, opt_.slot_bytes), "cudaMallocHost");
      check(cudaMallocHost(&s.h_out, opt_.slot_bytes), "cudaMallocHost");
      check(cudaMalloc(&s.d_in, opt_.slot_bytes), "cudaMalloc");
      check(cudaMalloc(&s.d_out, opt_.slot_bytes), "cudaMalloc");
      check(cudaMallocHost(&s.h_pages, max_pages_ * sizeof(DevicePage)), "cudaMallocHost");
      check(cudaMalloc(&s.d_pages, max_pages_ * sizeof(DevicePage)), "cudaMalloc");
      check(cudaMallocHost(&s.h_results, max_pages_ * sizeof(PageStatus)), "cudaMallocHost");
      check(cudaMalloc(&s.d_results, max_pages_ * sizeof(PageStatus)), "cudaMalloc");
    }
  }

  bool decode(std::span<const HostPage> pages, std::span<PageStatus> results, std::string& err,
              BatchTimings* timings) override {
    std::lock_guard lock(mu_);  // one batch at a time: the slots are shared
    if (timings) *timings = {};
    try {
      check(cudaSetDevice(opt_.device), "cudaSetDevice");
      run(pages, results, timings);
      return true;
    } catch (const CudaFailure& f) {
      err = f.what;
      for (Slot& s : slots_) {
        cudaStreamSynchronize(s.stream);  // let queued copies finish before anyone reuses the buffers
        s.busy = false;
      }
      for (PageStatus& r : results) r = PageStatus::kNotRun;
      return false;
    }
  }

  std::string device_name() const override { return name_; }

 private:
  // Pages [first, end) that fit one slot.
  size_t chunk_end(std::span<const HostPage> pages, size_t first) const {
    size_t in = 0, out = 0, i = first;
    for (; i < pages.size() && i - first < max_pages_; ++i) {
      const size_t a = align_up(pages[i].in_size), b = align_up(pages[i].out_size);
      if (in + a > opt_.slot_bytes || out + b > opt_.slot_bytes) break;
      in += a;
      out += b;
    }
    return i;
  }

  void run(std::span<const HostPage> pages, std::span<PageStatus> results, BatchTimings* timings) {
    size_t next_slot = 0;
    for (size_t first = 0; first < pages.size();) {
      size_t end = chunk_end(pages, first);
      Slot& s = slots_[next_slot];
      next_slot = (next_slot + 1) % slots_.size();
      finish(s, pages, results, timings);
      if (end == first) {  // a page larger than a slot: only a malformed caller does that
        results[first] = PageStatus::kUnsupported;
        ++first;
        continue;
      }
      submit(s, pages, first, end);
      first = end;
    }
    for (Slot& s : slots_) finish(s, pages, results, timings);
  }

  void submit(Slot& s, std::span<const HostPage> pages, size_t first, size_t end) {
    size_t in = 0, out = 0;
    s.staged.clear();
    for (size_t i = first; i < end; ++i) {
      const HostPage& p = pages[i];
      if (p.in_size) std::memcpy(s.h_in + in, p.in, p.in_size);
      s.staged.push_back(
          DevicePage{s.d_in + in, s.d_out + out, p.in_size, p.out_size, p.codec, 0, p.param, 0});
      in += align_up(p.in_size);
      out += align_up(p.out_size);
    }
    const size_t n = end - first;
    launch_order(s.staged, s.order);
    for (size_t j = 0; j < n; ++j) s.h_pages[j] = s.staged[s.order[j]];
    check(cudaEventRecord(s.ev[0], s.stream), "cudaEventRecord");
    check(cudaMemcpyAsync(s.d_in, s.h_in, in, cudaMemcpyHostToDevice, s.stream), "copy in");
    check(cudaMemcpyAsync(s.d_pages, s.h_pages, n * sizeof(DevicePage), cudaMemcpyHostToDevice, s.stream),
          "copy in");
    check(cudaEventRecord(s.ev[1], s.stream), "cudaEventRecord");
    check(decode_pages_async(s.d_pages, static_cast<uint32_t>(n), s.d_results, s.stream), "decode kernel");
    check(cudaEventRecord(s.ev[2], s.stream), "cudaEventRecord");
    check(cudaMemcpyAsync(s.h_out, s.d_out, out, cudaMemcpyDeviceToHost, s.stream), "copy out");
    check(cudaMemcpyAsync(s.h_results, s.d_results, n * sizeof(PageStatus), cudaMemcpyDeviceToHost, s.stream),
          "copy out");
    check(cudaEventRecord(s.ev[3], s.stream), "cudaEventRecord");
    s.first = first;
    s.count = n;
    s.busy = true;
  }

  // Waits for the slot's chunk, then hands back its pages: bytes only where the result is kOk.
  void finish(Slot& s, std::span<const HostPage> pages, std::span<PageStatus> results,
              BatchTimings* timings) {
    if (!s.busy) return;
    s.busy = false;
    check(cudaStreamSynchronize(s.stream), "decode batch");
    for (size_t j = 0; j < s.count; ++j) results[s.first + s.order[j]] = s.h_results[j];
    size_t out = 0;
    for (size_t k = 0; k < s.count; ++k) {
      const HostPage& p = pages[s.first + k];
      PageStatus r = results[s.first + k];
      if (static_cast<uint8_t>(r) > static_cast<uint8_t>(PageStatus::kUnsupported)) r = PageStatus::kBadData;
      results[s.first + k] = r;
      if (r == PageStatus::kOk && p.out_size) std::memcpy(p.out, s.h_out + out, p.out_size);
      out += align_up(p.out_size);
    }
    if (timings) {
      float ms[3];
      for (int i = 0; i < 3; ++i)
        check(cudaEventElapsedTime(&ms[i], s.ev[i], s.ev[i + 1]), "cudaEventElapsedTime");
      timings->h2d_ms += ms[0];
      timings->kernel_ms += ms[1];
      timings->d2h_ms += ms[2];
    }
  }

  void release() {
    for (Slot& s : slots_) {
      if (s.stream) cudaStreamSynchronize(s.stream);
      for (cudaEvent_t e : s.ev)
        if (e) cudaEventDestroy(e);
      cudaFreeHost(s.h_in);
      cudaFreeHost(s.h_out);
      cudaFreeHost(s.h_pages);
      cudaFreeHost(s.h_results);
      cudaFree(s.d_in);
      cudaFree(s.d_out);
      cudaFree(s.d_pages);
      cudaFree(s.d_results);
      if (s.stream) cudaStreamDestroy(s.stream);
    }
    slots_.clear();
  }

  BatchOptions opt_;
  std::string name_;
  size_t max_pages_;
  std::vector<Slot> slots_;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<BatchDecoder> BatchDecoder::create(const BatchOptions& opt, std::string& why) {
  // With the static runtime, a machine without the driver gets an error code here, not a failed
  // program start: that is what lets one binary serve with and without a GPU.
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    why = std::string("no CUDA device: ") + cudaGetErrorString(e);
    cudaGetLastError();  // clear it
    return nullptr;
  }
  if (opt.device < 0 || opt.device >= count) {
    why =
        "CUDA device " + std::to_string(opt.device) + " does not exist (" + std::to_string(count) + " found)";
    return nullptr;
  }
  if (opt.slot_bytes < kMaxPageBytes + kAlign) {
    why = "slot_bytes must hold at least one page";
    return nullptr;
  }
  cudaDeviceProp prop{};
  if (cudaError_t e = cudaGetDeviceProperties(&prop, opt.device); e != cudaSuccess) {
    why = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    return nullptr;
  }
  if (prop.major < 7) {  // __match_any/independent thread scheduling era and newer
    why = std::string(prop.name) + " is older than compute capability 7.0";
    return nullptr;
  }
  auto d = std::make_unique<CudaBatchDecoder>(opt, prop.name);
  try {
    d->init();
  } catch (const CudaFailure& f) {
    why = f.what;
    return nullptr;
  }
  return d;
}

}  // namespace gdfs::gpu
