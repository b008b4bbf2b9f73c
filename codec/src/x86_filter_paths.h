// The x86 branch filter's scan paths one by one, for the tests: the public functions (gdfs/x86_filter.h)
// take the best this CPU has, so without these a machine would only ever test one of them.
#pragma once
#include <cstddef>
#include <cstdint>

namespace gdfs::x86 {

enum class ScanPath : uint8_t { kScalar, kAvx2, kAvx512 };
// Whether this CPU can run `path`.
bool path_usable(ScanPath path);
// encode (direction > 0), decode (< 0) or count (0) `n` bytes on `path`; returns the sites found.
size_t run_path(ScanPath path, int direction, uint8_t* data, size_t n);

}  // namespace gdfs::x86
