// The server-facing half of one ranged GET (http_object.h): what a response's header lines say, whether
// its body may be taken, and what the finished response amounts to. Every byte it sees comes from the
// server and is untrusted; a body byte is written only inside the range asked for. Nothing here touches
// libcurl, so tests/fuzz/fuzz_http_response.cc drives it with arbitrary responses.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fetch/remote/http_object.h"

namespace gdfs::remote {

enum class Outcome { kOk, kRetry, kChanged, kFail };

// Up to this much of an error response is kept, for its S3 error code.
inline constexpr size_t kErrorBodyBytes = 2048;

struct RangeResponse {
  // Set once, before the first attempt.
  RangeGet* get = nullptr;
  bool probe = false;                  // opening the object: learns its size and identity into `found`
  const ObjectIdentity* id = nullptr;  // a read: the version the probe found (unused by a probe)

  // One attempt's response (reset() clears them).
  long status = 0;
  std::string content_range, etag, last_modified, retry_after, content_encoding, content_length;
  bool body_checked = false;       // the checks before the first body byte have run
  bool error_body = false;         // not a 200/206: the body is an error document, never data
  uint64_t got = 0;                // body bytes written to get->dst
  std::string body;                // the start of an error response
  Outcome refused = Outcome::kOk;  // set when take_body() refused the response
  std::string why;
  ObjectIdentity found;  // a probe's findings

  void reset();
  // One header line as received (CRLF included or not). A status line ("HTTP/...") starts a new response:
  // after a redirect or a 100 Continue only the last response's headers count.
  void header(std::string_view line);
  // Body bytes as they arrive; false refuses the response (`refused` and `why` say why).
  bool take_body(const char* data, size_t len);
  // The transfer ended without a transport error: its outcome, and `why` unless kOk. Call once.
  Outcome conclude();

 private:
  bool check();  // the checks made before the first body byte is taken
};

// Parsers (exposed for tests). "bytes FIRST-LAST/TOTAL" (TOTAL may not be '*'); false on anything else.
bool parse_content_range(std::string_view value, uint64_t& first, uint64_t& last, uint64_t& total);
// The weak comparison of RFC 9110 (W/ prefixes ignored, opaque tags compared byte for byte).
bool same_etag(std::string_view a, std::string_view b);
// Retry-After as delay seconds; -1 when absent or not a number (HTTP dates are not honoured).
long parse_retry_after(std::string_view value);
// A header value for a message: printable ASCII only (anything else as '?'), at most `max` bytes, then
// "...". Header values are ASCII; a byte that is not is shown as damage, not decoded.
std::string clipped_ascii(std::string_view s, size_t max = 80);

}  // namespace gdfs::remote
