// kernels/' gpu::BatchDecoder as a DecodeDevice. In a build or on a machine without CUDA,
// BatchDecoder::create() says why and the daemon decodes on the CPU.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "decode/decode_device.h"
#include "gdfs/unique_fd.h"

namespace gdfs::engine {
namespace {

class CudaDecodeDevice final : public DecodeDevice {
 public:
  explicit CudaDecodeDevice(std::unique_ptr<gpu::BatchDecoder> decoder) : decoder_(std::move(decoder)) {}

  bool decode(std::span<const DeviceJob> pages, std::span<PageStatus> results, std::string& err) override {
    host_.clear();
    sent_.clear();
    for (size_t i = 0; i < pages.size(); ++i) {
      const format::PageEntry& e = *pages[i].entry;
      if (!format::known_codec(e.codec)) {  // Image::open refuses these, but a device never trusts its input
        results[i] = PageStatus::kUnsupported;
        continue;
      }
      const auto codec = static_cast<format::Codec>(e.codec);
      host_.push_back(gpu::HostPage{pages[i].stored, e.csize, pages[i].out, e.usize, codec, e.param});
      sent_.push_back(i);
    }
    got_.assign(host_.size(), PageStatus::kNotRun);
    const bool ok = host_.empty() || decoder_->decode(host_, got_, err);
    for (size_t k = 0; k < sent_.size(); ++k) results[sent_[k]] = got_[k];
    return ok;
  }
  std::string name() const override { return decoder_->device_name(); }

 private:
  std::unique_ptr<gpu::BatchDecoder> decoder_;
  // Reused from batch to batch, so a steady stream of batches allocates nothing.
  std::vector<gpu::HostPage> host_;
  std::vector<size_t> sent_;  // host_[k] is pages[sent_[k]]
  std::vector<PageStatus> got_;
};

void write_all(int fd, const std::string& s) {
  for (size_t at = 0; at < s.size();) {
    const ssize_t n = write(fd, s.data() + at, s.size() - at);
    if (n > 0)
      at += static_cast<size_t>(n);
    else if (errno != EINTR)
      return;
  }
}

std::string read_all(int fd) {
  std::string s;
  char buf[512];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n > 0)
      s.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR)
      break;
  }
  return s;
}

// The child's exit status, or -1 when it did not exit normally.
int exit_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::unique_ptr<DecodeDevice> make_cuda_decode_device(std::string& why) {
  std::unique_ptr<gpu::BatchDecoder> decoder = gpu::BatchDecoder::create(gpu::BatchOptions{}, why);
  if (!decoder) return nullptr;
  return std::make_unique<CudaDecodeDevice>(std::move(decoder));
}

bool probe_cuda_decode_device(std::string& why) {
  int fds[2];
  if (pipe(fds) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t pid = fork();
  if (pid < 0) {
    why = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    read_end.reset();
    std::string reason;
    const bool ok = make_cuda_decode_device(reason) != nullptr;
    write_all(write_end.get(), reason);
    _exit(ok ? 0 : 1);  // no exit handlers or stdio flushes: those belong to the parent
  }
  write_end.reset();  // the child's copy is the only writer: read_all sees end of file when it exits
  why = read_all(read_end.get());
  if (exit_status(pid) == 0) return true;
  if (why.empty()) why = "the GPU probe process failed";
  return false;
}

}  // namespace gdfs::engine
