// A test seam on the reads of the source tree. Races such as a file that vanishes between the scan and
// its read, or failures such as EIO, cannot be produced on demand on a real file system; a test
// installs a hook that is called just before each such system call and may change the tree there
// (unlink, truncate or replace the file) or make the call fail with an errno of its choice.
// mkfs.gdfs itself never installs one.
#pragma once

#include <functional>
#include <string_view>

namespace gdfs::mkfs {

enum class SourceOp {
  kListDir,  // the scan opens a directory to list it
  kStat,     // the scan lstats an entry
  kOpen,     // the data pass opens a regular file
  kRead,     // the data pass reads from a regular file (once per read call)
};

// Returns 0 to let the call go ahead, or an errno to fail it with. `rel` is the entry's path relative to
// SOURCE_DIR. It may be called from several threads at once (the prefetcher's readers).
using SourceHook = std::function<int(SourceOp op, std::string_view rel)>;

// Installs `hook` (an empty one removes it). Not thread-safe: only between runs.
void set_source_hook(SourceHook hook);

// The hook's verdict for one call: 0 when no hook is installed.
int source_fault(SourceOp op, std::string_view rel);

}  // namespace gdfs::mkfs
