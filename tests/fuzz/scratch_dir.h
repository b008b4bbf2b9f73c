// A harness's scratch folder: made on first use, in /dev/shm where there is one (mkfs syncs each image
// before its rename, which on tmpfs costs nothing, and a disk's syncs would slow every input down), and
// removed with what is in it when the process exits, so that neither libFuzzer runs nor ctest's replays
// leave folders behind.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gdfs::fuzz {

class ScratchDir {
 public:
  explicit ScratchDir(const char* name) {
    path_ = std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm/" : "/tmp/") + name + "-XXXXXX";
    if (::mkdtemp(path_.data()) == nullptr) std::abort();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gdfs::fuzz
