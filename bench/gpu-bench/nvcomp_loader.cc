#include <dlfcn.h>

#include <type_traits>

#include "nvcomp_api.h"

namespace gdfs::gpubench::nvcomp {

const char* status_name(Status s) {
  switch (s) {  // nvcompStatus_t values (nvCOMP 6.0 shared_types.h)
    case 0:
      return "success";
    case 10:
      return "invalid value";
    case 11:
      return "not supported";
    case 12:
      return "cannot decompress";
    case 13:
      return "bad checksum";
    case 15:
      return "output buffer too small";
    case 17:
      return "alignment";
    case 18:
      return "chunk size too large";
    case 20:
      return "wrong input length";
    case 21:
      return "batch size too large";
    case 1000:
      return "CUDA error";
    case 10000:
      return "internal error";
    default:
      return "other error";
  }
}

bool Library::open(const std::string& path, std::string& why) {
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    why = "cannot load " + path + ": " + (e ? e : "dlopen failed");
    return false;
  }
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    if (!fn) why = path + " has no " + name;
    return fn != nullptr;
  };
  if (!bind(get_properties, "nvcompGetProperties")) return false;
  if (get_properties(&props) != kSuccess) {
    why = "nvcompGetProperties failed";
    return false;
  }
  if (props.version / 1000 != 6) {
    why = "nvCOMP " + version() + " found; gdfs-gpu-bench binds the nvCOMP 6 signatures only";
    return false;
  }
  return bind(get_alignments, "nvcompBatchedGdeflateDecompressGetRequiredAlignments") &&
         bind(get_temp_size, "nvcompBatchedGdeflateDecompressGetTempSize") &&
         bind(decompress, "nvcompBatchedGdeflateDecompressAsync");
}

Library::~Library() {
  // Left loaded: nvCOMP may keep CUDA state that outlives our last call (its own static runtime).
}

std::string Library::version() const {
  const uint32_t v = props.version;
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) + "." + std::to_string(v % 100);
}

}  // namespace gdfs::gpubench::nvcomp
