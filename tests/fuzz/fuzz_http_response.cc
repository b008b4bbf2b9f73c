// Fuzzes what a remote image's reader takes from an HTTP server (reader/src/fetch/remote/http_response.h):
// one response to a ranged GET, fed as libcurl's callbacks feed it. Input: 7 bytes of setup, then the
// response as text: header lines ending in '\n', an empty line, and the body.
//   byte 0: bit 0 a probe (opening the object) rather than a read; bit 1 the opened version has an ETag;
//           bit 2 it has a Last-Modified; bits 3-7 the body's chunk size less one (1..32 bytes)
//   bytes 1-2, 3-4, 5-6: the range's offset, its length less one, the object's size (little endian;
//           the size is raised to cover the range, as a read outside the object is never requested)
// Besides the sanitizers' checks, it asserts what the reader relies on: never more bytes than asked for;
// an accepted response is exactly the range asked for, of the version opened, and its bytes are the
// body's; a message carries printable ASCII only.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fetch/remote/http_response.h"

namespace {

using gdfs::remote::Outcome;

void require(bool ok) {
  if (!ok) std::abort();
}

bool printable_only(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

uint16_t u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gdfs::remote;
  if (size < 7) return 0;
  const bool probe = data[0] & 1;
  const size_t chunk = (data[0] >> 3) + 1;
  const uint64_t offset = probe ? 0 : u16(data + 1);
  const uint64_t length = uint64_t{u16(data + 3)} + 1;
  ObjectIdentity id;
  id.size = std::max<uint64_t>(u16(data + 5), offset + length);
  if (data[0] & 2) id.etag = "\"v1\"";
  if (data[0] & 4) id.last_modified = "Wed, 21 Oct 2015 07:28:00 GMT";
  const std::string_view text(reinterpret_cast<const char*>(data + 7), size - 7);

  std::vector<uint8_t> dst(length);  // exactly the range: ASan sees any byte written past it
  RangeGet get{offset, length, dst.data(), false};
  RangeResponse r;
  r.get = &get;
  r.probe = probe;
  r.id = &id;

  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos + 1);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line == "\n" || line == "\r\n") break;  // the end of the headers
    r.header(line);
    uint64_t first, last, total;
    if (parse_content_range(line, first, last, total)) require(first <= last && last < total);
  }
  const std::string_view body = text.substr(pos);
  size_t taken = 0;
  bool refused = false;
  for (size_t i = 0; i < body.size() && !refused; i += chunk) {
    const size_t n = std::min(chunk, body.size() - i);
    const uint64_t before = r.got;
    refused = !r.take_body(body.data() + i, n);
    require(r.got <= length);
    require(refused ? r.got == before : (r.error_body || r.got == before + n));
    if (!refused) taken += n;
  }
  const Outcome o = r.conclude();
  require(r.got <= length);
  require(printable_only(r.why));
  if (o != Outcome::kOk) return 0;

  // Accepted: a 200 or a 206 with an unencoded body that is exactly the bytes fed.
  require(r.status == 200 || r.status == 206);
  require(!r.error_body && taken == r.got);
  require(std::memcmp(dst.data(), body.data(), r.got) == 0);
  require(r.content_encoding.empty() || r.content_encoding == "identity");
  if (probe) {
    require(r.got == std::min(length, r.found.size));
    uint64_t first, last, total;
    if (r.status == 206)
      require(parse_content_range(r.content_range, first, last, total) && first == 0 &&
              total == r.found.size);
    return 0;
  }
  require(r.got == length);
  if (!id.etag.empty() && !r.etag.empty()) require(same_etag(id.etag, r.etag));
  if (id.etag.empty() && !id.last_modified.empty() && !r.last_modified.empty())
    require(r.last_modified == id.last_modified);
  if (r.status == 200) {
    require(offset == 0 && length == id.size);
  } else {
    uint64_t first, last, total;
    require(parse_content_range(r.content_range, first, last, total));
    require(first == offset && last == offset + length - 1 && total == id.size);
  }
  return 0;
}
