// Seams for the library's own white-box tests (reader/tests/): never installed, never used by a front end.
#pragma once
#include <atomic>
#include <memory>

#include "gdfs/reader.h"
#include "gdfs/reader_c.h"

namespace gdfs::engine {
class DeviceMemory;
}

namespace gdfs::testing {

// Replaces the reader's device memory (null: as on a machine without CUDA or a GPU): a stand-in device
// lets the CPU-only build test read_device and read_batch_device.
void set_device_memory(Reader& reader, std::unique_ptr<engine::DeviceMemory> mem);
// Returns once the reader's readahead and checks ahead are done (tests that count them take the
// scheduling out of their counts).
void wait_readahead(Reader& reader);
// The Reader behind a C handle.
Reader& reader_of(gdfs_reader* handle);
// Called by a remote source's prefetch after the store has shown its claimed chunks to readers and before
// the prefetch has recorded them (null: nothing). A test widens that window to show that a reader which
// runs the prefetch then still gets its bytes. Defined where remote sources are built.
extern std::atomic<void (*)()> after_prefetch_claim;

}  // namespace gdfs::testing
