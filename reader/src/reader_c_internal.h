// What the C API (reader_c.cc) shares with the other front ends in this project (the Python module) and
// the tests: the errno value of an exception, and the C++ Reader behind a C handle.
#pragma once
#include <exception>
#include <string>

#include "gdfs/reader.h"
#include "gdfs/reader_c.h"

namespace gdfs {

// ReadError's own code; ENOMEM for std::bad_alloc; EINVAL for std::invalid_argument and
// std::length_error; EIO for anything else (an ImageError: a damaged image).
int error_code(const std::exception& e);
// The same for a failed Reader::open of `path_or_url`: when a local path cannot be opened, why (ENOENT,
// EACCES, EISDIR, ...); else error_code(e).
int open_error_code(const std::exception& e, const std::string& path_or_url);

// The Reader behind a handle (tests: to give it a stand-in device).
Reader& reader_of(gdfs_reader* handle);

}  // namespace gdfs
