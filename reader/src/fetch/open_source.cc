// Choosing a source by what the user named. Remote sources live in reader/src/fetch/remote/ and are built
// only with libcurl (GDFS_HAVE_REMOTE).
#include <cctype>
#include <cerrno>

#include "gdfs/source.h"

#if GDFS_HAVE_REMOTE
#include "fetch/remote/remote.h"
#endif

namespace gdfs {

std::string url_for_messages(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t auth_begin = scheme_end + 3;
  size_t auth_end = url.find_first_of("/?#", auth_begin);
  if (auth_end == std::string_view::npos) auth_end = url.size();
  std::string_view authority = url.substr(auth_begin, auth_end - auth_begin);
  // The host comes after the last '@': a password may itself hold '@' only percent-encoded, but take
  // no chances.
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view rest = url.substr(auth_end);
  rest = rest.substr(0, rest.find_first_of("?#"));
  std::string out(url.substr(0, auth_begin));
  out.append(authority).append(rest);
  return out;
}

namespace {

// "ftp" of "ftp://host/x": a URL's scheme as RFC 3986 spells one, or "" for anything else.
std::string_view url_scheme(std::string_view s) {
  const size_t end = s.find("://");
  if (end == std::string_view::npos || end == 0 || !std::isalpha(static_cast<unsigned char>(s[0]))) return {};
  for (const char c : s.substr(0, end))
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return {};
  return s.substr(0, end);
}

std::unique_ptr<Source> open_local(const std::string& path) {
  try {
    return open_file_source(path);
  } catch (const ImageError& e) {
    // A URL gdfs cannot fetch reads as a local path that is not there: say what it is instead.
    const std::string_view scheme = url_scheme(path);
    if (e.code() != ENOENT || scheme.empty()) throw;
    throw ImageError(url_for_messages(path) + ": cannot open: no such file, and " + std::string(scheme) +
                         ":// is not a URL scheme gdfs reads (http://, https://, s3://)",
                     ENOTSUP);
  }
}

}  // namespace

std::unique_ptr<Source> open_source(const std::string& path_or_url, const SourceOptions& options) {
  if (!is_url(path_or_url)) return open_local(path_or_url);
#if GDFS_HAVE_REMOTE
  return open_remote_source(path_or_url, options);
#else
  (void)options;
  throw ImageError(url_for_messages(path_or_url) +
                       ": remote images are not supported by this build (it was built without libcurl)",
                   ENOTSUP);
#endif
}

}  // namespace gdfs
