// Whole-file input and output for the tools, "-" meaning the given streams.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gdfs::tools {

// An I/O failure; the message names the file and the system error.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<uint8_t> read_input(const std::string& path, std::istream& in);

// Regular files (new or existing) are written to a temporary file beside them and renamed into
// place, so a failure never leaves a partial OUTPUT. Devices, FIFOs and symlinks are written directly.
void write_output(const std::string& path, std::span<const uint8_t> data, std::ostream& out);

}  // namespace gdfs::tools
