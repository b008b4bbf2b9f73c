#include "device_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "gdfs/format.h"
#include "gdfs/gpu_batch.h"
#include "gdfs/gpu_device.h"
#include "parallel.h"

namespace gdfs::gpubench {
namespace {

using Clock = std::chrono::steady_clock;
using gpu::DevicePage;

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

// cuda_runtime_api.h takes void**; these take any T**.
template <class T>
cudaError_t dev_alloc(T** p, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
template <class T>
cudaError_t host_alloc(T** p, size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(p), bytes);
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string pages_text(uint64_t n) {
  return std::to_string(n) + (n == 1 ? " page" : " pages");
}

// The device buffers of nvCOMP's batched API: one entry per GDeflate page, in device memory.
struct NvcompArrays {
  const void** in_ptrs = nullptr;
  size_t* in_bytes = nullptr;
  size_t* out_cap = nullptr;
  size_t* out_actual = nullptr;
  void** out_ptrs = nullptr;
  nvcomp::Status* status = nullptr;
  void* temp = nullptr;
  ~NvcompArrays() {
    cudaFree(in_ptrs);
    cudaFree(in_bytes);
    cudaFree(out_cap);
    cudaFree(out_actual);
    cudaFree(out_ptrs);
    cudaFree(status);
    cudaFree(temp);
  }
};

}  // namespace

DeviceInfo probe_device(int device) {
  DeviceInfo d;
  d.index = device;
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    d.why = std::string("no CUDA device: ") + cudaGetErrorString(e);
    cudaGetLastError();
    return d;
  }
  if (count == 0) {
    d.why = "no CUDA device: none found";
    return d;
  }
  if (device >= count) {
    d.why = "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " found)";
    return d;
  }
  cudaDeviceProp p{};
  if (cudaError_t e = cudaGetDeviceProperties(&p, device); e != cudaSuccess) {
    d.why = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    return d;
  }
  d.present = true;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sms = p.multiProcessorCount;
  d.global_mem = p.totalGlobalMem;
  d.l2 = static_cast<uint64_t>(p.l2CacheSize);
  d.smem_per_sm = p.sharedMemPerMultiprocessor;
  d.smem_per_block_optin = p.sharedMemPerBlockOptin;
  cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&d.bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  cudaDriverGetVersion(&d.driver);
  cudaRuntimeGetVersion(&d.runtime);
  cudaGetLastError();
  d.smem_per_warp = gpu::decode_smem_per_warp();
  d.warps_per_block = gpu::decode_warps_per_block();
  return d;
}

DeviceBench::DeviceBench(const Corpus& c, const Args& a, unsigned host_threads)
    : c_(c), a_(a), threads_(host_threads) {
  const size_t n = c.pages.size();
  for (uint32_t i = 0; i < n; ++i) {
    all_ids_.push_back(i);
    if (c.pages[i].codec == format::kCodecGDeflate) gd_ids_.push_back(i);
  }
  kernel_ids_ = all_ids_;
  if (a.largest_first) {
    const auto larger = [&c](uint32_t x, uint32_t y) { return c.pages[x].enc_size > c.pages[y].enc_size; };
    std::stable_sort(kernel_ids_.begin(), kernel_ids_.end(), larger);
    std::stable_sort(gd_ids_.begin(), gd_ids_.end(), larger);
  }
  try {
    ck(cudaSetDevice(a.device), "cudaSetDevice");
    ck(dev_alloc(&d_in_, c.enc.size()), "cudaMalloc (compressed pages)");
    ck(dev_alloc(&d_out_, c.out_bytes), "cudaMalloc (decoded pages)");
    ck(dev_alloc(&d_pages_, n * sizeof(DevicePage)), "cudaMalloc");
    ck(dev_alloc(&d_pages_gd_, std::max<size_t>(1, gd_ids_.size()) * sizeof(DevicePage)), "cudaMalloc");
    ck(dev_alloc(&d_results_, n), "cudaMalloc");
    ck(host_alloc(&h_in_, c.enc.size()), "cudaMallocHost (compressed pages)");
    ck(host_alloc(&h_out_, c.out_bytes), "cudaMallocHost (decoded pages)");
    ck(host_alloc(&h_pages_, n * sizeof(DevicePage)), "cudaMallocHost");
    ck(host_alloc(&h_results_, n), "cudaMallocHost");
    unsigned max_streams = 1;
    for (const E2eConfig& e : a.e2e) max_streams = std::max(max_streams, e.streams);
    streams_.assign(max_streams, nullptr);
    for (cudaStream_t& s : streams_)
      ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    for (cudaEvent_t& e : ev_) ck(cudaEventCreate(&e), "cudaEventCreate");

    std::memcpy(h_in_, c.enc.data(), c.enc.size());
    for (size_t i = 0; i < n; ++i) {  // corpus order, for the end-to-end runs' chunks
      const Page& p = c.pages[i];
      h_pages_[i] =
          DevicePage{d_in_ + p.enc_off, d_out_ + p.out_off, p.enc_size, p.raw_size, p.codec, 0, p.param, 0};
    }
    // The kernel-only runs' order (ids), which the end-to-end runs overwrite chunk by chunk.
    std::vector<DevicePage> all, gd;
    for (uint32_t i : kernel_ids_) all.push_back(h_pages_[i]);
    for (uint32_t i : gd_ids_) gd.push_back(h_pages_[i]);
    ck(cudaMemcpy(d_in_, h_in_, c.enc.size(), cudaMemcpyHostToDevice), "upload");
    ck(cudaMemcpy(d_pages_, all.data(), n * sizeof(DevicePage), cudaMemcpyHostToDevice), "upload");
    if (!gd.empty())
      ck(cudaMemcpy(d_pages_gd_, gd.data(), gd.size() * sizeof(DevicePage), cudaMemcpyHostToDevice),
         "upload");
  } catch (...) {
    release();
    throw;
  }
}

DeviceBench::~DeviceBench() {
  release();
}

void DeviceBench::release() {
  cudaDeviceSynchronize();
  for (cudaEvent_t& e : ev_)
    if (e) cudaEventDestroy(e), e = nullptr;
  for (cudaStream_t s : streams_)
    if (s) cudaStreamDestroy(s);
  streams_.clear();
  cudaFree(d_in_);
  cudaFree(d_out_);
  cudaFree(d_pages_);
  cudaFree(d_pages_gd_);
  cudaFree(d_results_);
  cudaFreeHost(h_in_);
  cudaFreeHost(h_out_);
  cudaFreeHost(h_pages_);
  cudaFreeHost(h_results_);
  d_in_ = d_out_ = h_in_ = h_out_ = nullptr;
  d_pages_ = d_pages_gd_ = h_pages_ = nullptr;
  d_results_ = h_results_ = nullptr;
  cudaGetLastError();
}

uint64_t DeviceBench::bytes_of(const std::vector<uint32_t>& ids, size_t count) const {
  uint64_t b = 0;
  for (size_t k = 0; k < count; ++k) b += c_.pages[ids[k]].raw_size;
  return b;
}

void DeviceBench::clear_device() {
  ck(cudaMemsetAsync(d_out_, 0xA5, c_.out_bytes, streams_[0]), "cudaMemset");
  ck(cudaMemsetAsync(d_results_, 0xFF, c_.pages.size(), streams_[0]), "cudaMemset");
}

void DeviceBench::fetch_results(size_t count) {
  ck(cudaStreamSynchronize(streams_[0]), "synchronize");
  ck(cudaMemcpy(h_results_, d_results_, count, cudaMemcpyDeviceToHost), "copy results");
  ck(cudaMemcpy(h_out_, d_out_, c_.out_bytes, cudaMemcpyDeviceToHost), "copy decoded pages");
}

template <class Status, class IsOk>
uint64_t DeviceBench::check(const std::vector<uint32_t>& ids, size_t count, const Status* status, IsOk is_ok,
                            const uint8_t* out, std::string& first_bad) {
  std::atomic<uint64_t> bad{0};
  std::mutex mu;
  size_t first = count;
  parallel_for(
      count, threads_,
      [&](size_t k, unsigned) {
        const Page& p = c_.pages[ids[k]];
        std::string why;
        if (!is_ok(status[k], k, why)) {
        } else if (std::memcmp(out + p.out_off, c_.raw.data() + p.raw_off, p.raw_size) != 0) {
          why = "wrong bytes";
        } else {
          return;
        }
        ++bad;
        std::lock_guard lock(mu);
        if (k < first) {
          first = k;
          first_bad = "first bad: page " + std::to_string(ids[k]) + " (" + codec_name(p.codec) + ", " +
                      std::to_string(p.enc_size) + " -> " + std::to_string(p.raw_size) + " bytes): " + why;
        }
      },
      64);
  return bad.load();
}

std::vector<uint32_t> DeviceBench::batch_sizes(uint32_t m) const {
  std::vector<uint32_t> sizes;
  for (uint32_t b : a_.batches) {
    const uint32_t s = b == 0 ? m : std::min(b, m);
    if (std::find(sizes.begin(), sizes.end(), s) == sizes.end()) sizes.push_back(s);
  }
  return sizes;
}

// One row per batch size, timed the same way for every decoder so that the rows compare like with
// like: a warm-up pass, then `reps` passes of back-to-back launches on stream 0 between two events,
// each after an untimed clear; the last pass is the one verified.
void DeviceBench::sweep(const char* section, const std::vector<uint32_t>& ids, const SweepOps& ops,
                        std::vector<Row>& rows) {
  const uint32_t m = static_cast<uint32_t>(ids.size());
  cudaStream_t s0 = streams_[0];
  for (const uint32_t batch : batch_sizes(m)) {
    Row row;
    row.section = section;
    row.config = batch == m ? "batch all (" + std::to_string(m) + ")" : "batch " + std::to_string(batch);
    row.batch = batch;
    try {
      const uint64_t batches = (uint64_t{m} + batch - 1) / batch;
      const uint64_t launches = std::min<uint64_t>(batches, a_.max_launches);
      const size_t pages = static_cast<size_t>(std::min<uint64_t>(m, launches * batch));
      row.launches = launches;
      row.pages = pages;
      row.bytes = bytes_of(ids, pages);
      if (launches < batches) row.note = "first " + pages_text(pages) + " only (--max-launches)";
      auto pass = [&] {
        for (uint64_t k = 0; k < launches; ++k) {
          const uint64_t off = k * batch;
          ops.launch(off, static_cast<uint32_t>(std::min<uint64_t>(batch, m - off)));
        }
      };
      ops.clear();
      pass();  // warm-up
      ck(cudaStreamSynchronize(s0), "decode (warm-up)");
      for (unsigned r = 0; r < a_.reps; ++r) {
        ops.clear();
        ck(cudaEventRecord(ev_[0], s0), "cudaEventRecord");
        pass();
        ck(cudaEventRecord(ev_[1], s0), "cudaEventRecord");
        ck(cudaEventSynchronize(ev_[1]), "decode");
        float ms = 0;
        ck(cudaEventElapsedTime(&ms, ev_[0], ev_[1]), "cudaEventElapsedTime");
        row.ms.push_back(ms);
      }
      std::string first_bad;
      row.bad = ops.verify(pages, first_bad);
      row.checked = true;
      if (row.bad) row.note += (row.note.empty() ? "" : "; ") + first_bad;
    } catch (const CudaError& e) {
      row.error = e.what();
      row.ms.clear();
    }
    rows.push_back(row);
  }
}

void DeviceBench::kernel_sweep(bool gdeflate_only, std::vector<Row>& rows) {
  const std::vector<uint32_t>& ids = gdeflate_only ? gd_ids_ : kernel_ids_;
  const DevicePage* dp = gdeflate_only ? d_pages_gd_ : d_pages_;
  if (ids.empty()) return;
  SweepOps ops;
  ops.launch = [&](uint64_t off, uint32_t cnt) {
    ck(gpu::decode_pages_async(dp + off, cnt, d_results_ + off, streams_[0]), "decode_pages_async");
  };
  ops.clear = [&] { clear_device(); };
  ops.verify = [&](size_t pages, std::string& first_bad) {
    fetch_results(pages);
    return check(
        ids, pages, h_results_,
        [](PageStatus r, size_t, std::string& why) {
          if (r == PageStatus::kOk) return true;
          why = r <= PageStatus::kNotRun ? page_status_message(r) : "no result written";
          return false;
        },
        h_out_, first_bad);
  };
  sweep(gdeflate_only ? "kernel-gdeflate" : "kernel", ids, ops, rows);
}

void DeviceBench::nvcomp_sweep(nvcomp::Library& lib, std::vector<Row>& rows) {
  const std::vector<uint32_t>& ids = gd_ids_;
  const uint32_t m = static_cast<uint32_t>(ids.size());
  if (m == 0) return;
  cudaStream_t s0 = streams_[0];
  nvcomp::GdeflateDecompressOpts opts{};
  opts.backend = a_.nvcomp_backend;
  auto nv_check = [](nvcomp::Status st, const char* what) {
    if (st != nvcomp::kSuccess)
      throw CudaError(std::string(what) + ": nvcompStatus " + std::to_string(st) + " (" +
                      nvcomp::status_name(st) + ")");
  };

  NvcompArrays nv;
  size_t temp_bytes = 0;
  try {
    nvcomp::AlignmentRequirements al{};
    nv_check(lib.get_alignments(opts, &al), "nvcompBatchedGdeflateDecompressGetRequiredAlignments");
    if (al.input == 0 || al.output == 0 || kAlign % al.input || kAlign % al.output)
      throw CudaError("nvCOMP wants input alignment " + std::to_string(al.input) + " and output alignment " +
                      std::to_string(al.output) + "; the pages are 16-byte aligned");
    for (const uint32_t batch : batch_sizes(m)) {
      size_t t = 0;
      nv_check(lib.get_temp_size(batch, kPageBytes, opts, &t, uint64_t{batch} * kPageBytes, s0),
               "nvcompBatchedGdeflateDecompressGetTempSize");
      temp_bytes = std::max(temp_bytes, t);
    }
    std::vector<const void*> in_ptrs(m);
    std::vector<void*> out_ptrs(m);
    std::vector<size_t> in_bytes(m), out_cap(m);
    for (uint32_t k = 0; k < m; ++k) {
      const Page& p = c_.pages[ids[k]];
      in_ptrs[k] = d_in_ + p.enc_off;
      out_ptrs[k] = d_out_ + p.out_off;
      in_bytes[k] = p.enc_size;
      out_cap[k] = p.raw_size;
    }
    ck(dev_alloc(const_cast<void***>(&nv.in_ptrs), m * sizeof(void*)), "cudaMalloc");
    ck(dev_alloc(&nv.out_ptrs, m * sizeof(void*)), "cudaMalloc");
    ck(dev_alloc(&nv.in_bytes, m * sizeof(size_t)), "cudaMalloc");
    ck(dev_alloc(&nv.out_cap, m * sizeof(size_t)), "cudaMalloc");
    ck(dev_alloc(&nv.out_actual, m * sizeof(size_t)), "cudaMalloc");
    ck(dev_alloc(&nv.status, m * sizeof(nvcomp::Status)), "cudaMalloc");
    if (temp_bytes) ck(dev_alloc(&nv.temp, temp_bytes), "cudaMalloc (nvCOMP temp)");
    ck(cudaMemcpy(nv.in_ptrs, in_ptrs.data(), m * sizeof(void*), cudaMemcpyHostToDevice), "upload");
    ck(cudaMemcpy(nv.out_ptrs, out_ptrs.data(), m * sizeof(void*), cudaMemcpyHostToDevice), "upload");
    ck(cudaMemcpy(nv.in_bytes, in_bytes.data(), m * sizeof(size_t), cudaMemcpyHostToDevice), "upload");
    ck(cudaMemcpy(nv.out_cap, out_cap.data(), m * sizeof(size_t), cudaMemcpyHostToDevice), "upload");
  } catch (const CudaError& e) {
    Row row;
    row.section = "nvcomp";
    row.config = "setup";
    row.error = e.what();
    rows.push_back(row);
    return;
  }

  std::vector<nvcomp::Status> status(m);
  std::vector<size_t> actual(m);
  SweepOps ops;
  ops.launch = [&](uint64_t off, uint32_t cnt) {
    nv_check(lib.decompress(nv.in_ptrs + off, nv.in_bytes + off, nv.out_cap + off, nv.out_actual + off, cnt,
                            nv.temp, temp_bytes, nv.out_ptrs + off, opts, nv.status + off, s0),
             "nvcompBatchedGdeflateDecompressAsync");
  };
  ops.clear = [&] {
    clear_device();
    ck(cudaMemsetAsync(nv.status, 0xFF, m * sizeof(nvcomp::Status), s0), "cudaMemset");
    ck(cudaMemsetAsync(nv.out_actual, 0xFF, m * sizeof(size_t), s0), "cudaMemset");
  };
  ops.verify = [&](size_t pages, std::string& first_bad) {
    fetch_results(0);
    ck(cudaMemcpy(status.data(), nv.status, pages * sizeof(nvcomp::Status), cudaMemcpyDeviceToHost), "copy");
    ck(cudaMemcpy(actual.data(), nv.out_actual, pages * sizeof(size_t), cudaMemcpyDeviceToHost), "copy");
    return check(
        ids, pages, status.data(),
        [&](nvcomp::Status st, size_t k, std::string& why) {
          if (st != nvcomp::kSuccess) {
            why = std::string("nvcompStatus ") + std::to_string(st) + " (" + nvcomp::status_name(st) + ")";
            return false;
          }
          if (actual[k] != c_.pages[ids[k]].raw_size) {
            why = "decoded " + std::to_string(actual[k]) + " bytes";
            return false;
          }
          return true;
        },
        h_out_, first_bad);
  };
  sweep("nvcomp", ids, ops, rows);
}

void DeviceBench::end_to_end(std::vector<Row>& rows, Pass mode) {
  const size_t n = c_.pages.size();
  const bool with_decode = mode == Pass::kHostOut || mode == Pass::kDeviceOut;
  const bool copy_out = mode == Pass::kHostOut || mode == Pass::kCopies;
  static const char* const kSection[] = {"e2e", "e2e-device", "copies", "h2d"};
  std::vector<E2eConfig> configs = a_.e2e;
  if (!with_decode) {
    // The transfer bound of the first multi-stream configuration (or the first one).
    E2eConfig pick = configs.front();
    for (const E2eConfig& e : configs)
      if (e.streams > 1) {
        pick = e;
        break;
      }
    configs = {pick};
  }
  for (const E2eConfig& cfg : configs) {
    const size_t chunk = cfg.chunk == 0 ? n : std::min<size_t>(cfg.chunk, n);
    Row row;
    row.section = kSection[static_cast<int>(mode)];
    row.config = std::to_string(cfg.streams) + (cfg.streams == 1 ? " stream x " : " streams x ") +
                 (cfg.chunk == 0 ? "all" : std::to_string(chunk)) + " pages";
    row.batch = chunk;
    row.pages = n;
    row.bytes = mode == Pass::kCopyIn ? c_.enc.size() : c_.raw_bytes();  // h2d: GB/s of stored bytes
    row.launches = with_decode ? (n + chunk - 1) / chunk : 0;
    try {
      auto pass = [&] {
        for (size_t first = 0, k = 0; first < n; first += chunk, ++k) {
          const size_t end = std::min(n, first + chunk), cnt = end - first;
          cudaStream_t s = streams_[k % cfg.streams];
          const Page &p0 = c_.pages[first], &p1 = c_.pages[end - 1];
          const uint64_t in_lo = p0.enc_off, in_len = p1.enc_off + align_up(p1.enc_size) - in_lo;
          const uint64_t out_lo = p0.out_off, out_len = p1.out_off + align_up(p1.raw_size) - out_lo;
          ck(cudaMemcpyAsync(d_in_ + in_lo, h_in_ + in_lo, in_len, cudaMemcpyHostToDevice, s), "copy in");
          if (with_decode) {
            ck(cudaMemcpyAsync(d_pages_ + first, h_pages_ + first, cnt * sizeof(DevicePage),
                               cudaMemcpyHostToDevice, s),
               "copy in");
            ck(gpu::decode_pages_async(d_pages_ + first, static_cast<uint32_t>(cnt), d_results_ + first, s),
               "decode_pages_async");
          }
          if (copy_out)
            ck(cudaMemcpyAsync(h_out_ + out_lo, d_out_ + out_lo, out_len, cudaMemcpyDeviceToHost, s),
               "copy out");
          if (with_decode)
            ck(cudaMemcpyAsync(h_results_ + first, d_results_ + first, cnt, cudaMemcpyDeviceToHost, s),
               "copy out");
        }
        for (unsigned i = 0; i < cfg.streams; ++i) ck(cudaStreamSynchronize(streams_[i]), "end to end");
      };
      pass();  // warm-up
      for (unsigned r = 0; r < a_.reps; ++r) {
        if (r + 1 == a_.reps && with_decode) {  // the pass that is checked starts from cleared buffers
          parallel_for((c_.out_bytes + (1 << 24) - 1) >> 24, threads_,
                       [&](size_t i, unsigned) {
                         const uint64_t lo = uint64_t{i} << 24;
                         std::memset(h_out_ + lo, 0x5A, std::min<uint64_t>(c_.out_bytes - lo, 1 << 24));
                       },
                       1);
          std::memset(h_results_, 0xFF, n);
          clear_device();
          ck(cudaStreamSynchronize(streams_[0]), "clear");
        }
        const auto t0 = Clock::now();
        pass();
        row.ms.push_back(ms_since(t0));
      }
      if (mode == Pass::kDeviceOut) {  // the decoded bytes come back for the check only, untimed
        ck(cudaMemcpy(h_out_, d_out_, c_.out_bytes, cudaMemcpyDeviceToHost), "copy out");
        char in[96];
        std::snprintf(in, sizeof in, "%.2f GB/s of stored bytes in",
                      static_cast<double>(c_.enc.size()) / row.median_ms() / 1e6);
        row.note = in;
      }
      if (with_decode) {
        std::string first_bad;
        row.bad = check(
            all_ids_, n, h_results_,
            [](PageStatus r, size_t, std::string& why) {
              if (r == PageStatus::kOk) return true;
              why = r <= PageStatus::kNotRun ? page_status_message(r) : "no result written";
              return false;
            },
            h_out_, first_bad);
        row.checked = true;
        if (row.bad) row.note = first_bad;
      } else if (mode == Pass::kCopies) {
        row.note = "moves " + std::to_string(c_.enc.size() / 1000000) + " MB in, " +
                   std::to_string(c_.out_bytes / 1000000) + " MB out";
      } else {
        row.note = "moves " + std::to_string(c_.enc.size() / 1000000) + " MB in";
      }
    } catch (const CudaError& e) {
      row.error = e.what();
      row.ms.clear();
    }
    rows.push_back(row);
  }
}

void DeviceBench::batch_decoder(std::vector<Row>& rows) {
  const size_t n = c_.pages.size();
  Row row;
  row.section = "batch-decoder";
  gpu::BatchOptions opt;
  opt.device = a_.device;
  row.config = std::to_string(opt.slots) + " slots x " + std::to_string(opt.slot_bytes >> 20) + " MiB";
  row.pages = n;
  row.bytes = c_.raw_bytes();
  std::string why;
  auto dec = gpu::BatchDecoder::create(opt, why);
  if (!dec) {
    row.error = "BatchDecoder::create: " + why;
    rows.push_back(row);
    return;
  }
  std::vector<uint8_t> out(c_.out_bytes);  // pageable, as a caller's buffers are
  std::vector<gpu::HostPage> pages(n);
  for (size_t i = 0; i < n; ++i) {
    const Page& p = c_.pages[i];
    pages[i] = gpu::HostPage{
        c_.enc.data() + p.enc_off, p.enc_size, out.data() + p.out_off, p.raw_size, p.codec, p.param};
  }
  std::vector<PageStatus> results(n, PageStatus::kNotRun);
  gpu::BatchTimings t{};
  std::string err;
  if (!dec->decode(pages, results, err)) {  // warm-up (and the page faults of `out`)
    row.error = "BatchDecoder::decode: " + err;
    rows.push_back(row);
    return;
  }
  for (unsigned r = 0; r < a_.reps; ++r) {
    if (r + 1 == a_.reps) {
      std::fill(out.begin(), out.end(), uint8_t{0x5A});
      std::fill(results.begin(), results.end(), PageStatus::kNotRun);
    }
    const auto t0 = Clock::now();
    const bool ok = dec->decode(pages, results, err, &t);
    row.ms.push_back(ms_since(t0));
    if (!ok) {
      row.error = "BatchDecoder::decode: " + err;
      row.ms.clear();
      rows.push_back(row);
      return;
    }
  }
  std::string first_bad;
  row.bad = check(
      all_ids_, n, results.data(),
      [](PageStatus r, size_t, std::string& why) {
        if (r == PageStatus::kOk) return true;
        why = page_status_message(r);
        return false;
      },
      out.data(), first_bad);
  row.checked = true;
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "last pass, summed over slots: copy in %.2f ms, kernel %.2f ms, copy out %.2f ms", t.h2d_ms,
                t.kernel_ms, t.d2h_ms);
  row.note = buf;
  if (row.bad) row.note += "; " + first_bad;
  rows.push_back(row);
}

}  // namespace gdfs::gpubench
