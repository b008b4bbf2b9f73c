// Remote images (http://, https://, s3://): built only with libcurl (GDFS_HAVE_REMOTE=1). docs/REMOTE.md
// says how they are read, checked, retried and cached.
#pragma once
#include <memory>
#include <string>

#include "gdfs/source.h"

namespace gdfs {

// Opens `url`: one ranged GET learns the object's size and identity (ETag, else Last-Modified) and
// brings the first bytes (the superblock). Throws ImageError, naming the URL without credentials.
std::unique_ptr<Source> open_remote_source(const std::string& url, const SourceOptions& options);

}  // namespace gdfs
