// Choosing a source by what the user named. Remote sources live in reader/src/remote/ and are built
// only with libcurl (GDFS_HAVE_REMOTE).
#include "gdfs/source.h"

namespace gdfs {

#if GDFS_HAVE_REMOTE
std::unique_ptr<Source> open_remote_source(const std::string& url, const SourceOptions& options);  // remote/
#endif

std::unique_ptr<Source> open_source(const std::string& path_or_url, const SourceOptions& options) {
  if (!is_url(path_or_url)) return open_file_source(path_or_url);
#if GDFS_HAVE_REMOTE
  return open_remote_source(path_or_url, options);
#else
  (void)options;
  throw ImageError(path_or_url.substr(0, path_or_url.find('?')) +
                   ": remote images are not supported by this build (it was built without libcurl)");
#endif
}

}  // namespace gdfs
