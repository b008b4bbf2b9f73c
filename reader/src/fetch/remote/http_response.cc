#include "fetch/remote/http_response.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace gdfs::remote {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool parse_content_range(std::string_view v, uint64_t& first, uint64_t& last, uint64_t& total) {
  v = trim(v);
  if (v.size() < 6 || lower(v.substr(0, 6)) != "bytes ") return false;
  v = trim(v.substr(6));
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return false;
  return parse_u64(v.substr(0, dash), first) && parse_u64(v.substr(dash + 1, slash - dash - 1), last) &&
         parse_u64(v.substr(slash + 1), total) && first <= last && last < total;
}

bool same_etag(std::string_view a, std::string_view b) {
  if (a.starts_with("W/")) a.remove_prefix(2);
  if (b.starts_with("W/")) b.remove_prefix(2);
  return a == b;
}

long parse_retry_after(std::string_view v) {
  uint64_t s = 0;
  if (!parse_u64(trim(v), s)) return -1;
  return static_cast<long>(std::min<uint64_t>(s, 86400));
}

std::string clipped_ascii(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  if (s.size() > max) out += "...";
  return out;
}

void RangeResponse::reset() {
  status = 0;
  content_range.clear(), etag.clear(), last_modified.clear(), retry_after.clear();
  content_encoding.clear(), content_length.clear();
  body_checked = error_body = false;
  got = 0;
  body.clear();
  refused = Outcome::kOk;
  why.clear();
}

void RangeResponse::header(std::string_view line) {
  if (line.starts_with("HTTP/")) {
    content_range.clear(), etag.clear(), last_modified.clear(), retry_after.clear();
    content_encoding.clear(), content_length.clear();
    const size_t sp = line.find(' ');
    uint64_t code = 0;
    status = sp != std::string_view::npos && parse_u64(line.substr(sp + 1, 3), code) ? long(code) : 0;
    return;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  const std::string name = lower(trim(line.substr(0, colon)));
  const std::string value(trim(line.substr(colon + 1)));
  if (name == "content-range")
    content_range = value;
  else if (name == "etag")
    etag = value;
  else if (name == "last-modified")
    last_modified = value;
  else if (name == "retry-after")
    retry_after = value;
  else if (name == "content-encoding")
    content_encoding = lower(value);
  else if (name == "content-length")
    content_length = value;
}

bool RangeResponse::check() {
  auto refuse = [&](Outcome o, std::string reason) {
    refused = o;
    why = std::move(reason);
    return false;
  };
  const RangeGet& g = *get;
  if (status != 200 && status != 206) {
    error_body = true;  // keep the start of it for the error code; it is never data
    return true;
  }
  if (!content_encoding.empty() && content_encoding != "identity")
    return refuse(Outcome::kFail,
                  "the server sent an encoded body (" + clipped_ascii(content_encoding) + ")");
  if (probe) {
    if (status == 200) {
      // A server without ranges sends the whole object: take it only when it fits what we asked for.
      uint64_t len = 0;
      if (!parse_u64(content_length, len) || len > g.length)
        return refuse(Outcome::kFail, "the server does not support range requests (HTTP 200 to a Range GET)");
      found.size = len;
    } else {
      uint64_t first, last, total;
      if (!parse_content_range(content_range, first, last, total))
        return refuse(Outcome::kRetry, "bad Content-Range '" + clipped_ascii(content_range) + "'");
      if (first != 0 || last != std::min<uint64_t>(g.length, total) - 1)
        return refuse(Outcome::kRetry,
                      "Content-Range '" + clipped_ascii(content_range) + "' is not the range asked for");
      found.size = total;
    }
    found.etag = etag;
    found.last_modified = last_modified;
    return true;
  }
  // Whatever the preconditions did, check the response against the identity ourselves: a server or
  // cache that ignores If-Match must not slip a new version in.
  const bool etag_changed = !id->etag.empty() && !etag.empty() && !same_etag(id->etag, etag);
  const bool lm_changed = id->etag.empty() && !id->last_modified.empty() && !last_modified.empty() &&
                          last_modified != id->last_modified;
  if (etag_changed || lm_changed)
    return refuse(Outcome::kChanged,
                  etag_changed ? "ETag " + clipped_ascii(id->etag) + " is now " + clipped_ascii(etag)
                               : "Last-Modified changed");
  if (status == 200) {
    uint64_t len = 0;
    if (g.offset != 0 || g.length != id->size || !parse_u64(content_length, len) || len != id->size)
      return refuse(Outcome::kFail, "the server ignored the Range header (HTTP 200)");
    return true;
  }
  uint64_t first, last, total;
  if (!parse_content_range(content_range, first, last, total))
    return refuse(Outcome::kRetry, "bad Content-Range '" + clipped_ascii(content_range) + "'");
  if (total != id->size) {
    // Same ETag but another size is a broken response, not a new object: try again.
    if (!etag.empty() && !id->etag.empty())
      return refuse(Outcome::kRetry, "inconsistent Content-Range total");
    return refuse(Outcome::kChanged, "the size is now " + std::to_string(total));
  }
  if (first != g.offset || last != g.offset + g.length - 1)
    return refuse(Outcome::kRetry,
                  "Content-Range '" + clipped_ascii(content_range) + "' is not the range asked for");
  return true;
}

bool RangeResponse::take_body(const char* data, size_t len) {
  if (!body_checked) {
    body_checked = true;
    if (!check()) return false;
  }
  if (error_body) {
    if (body.size() < kErrorBodyBytes) body.append(data, std::min(len, kErrorBodyBytes - body.size()));
    return true;
  }
  const RangeGet& g = *get;
  if (len > g.length - got) {
    refused = Outcome::kRetry;
    why = "the server sent more bytes than asked for";
    return false;
  }
  std::memcpy(g.dst + got, data, len);
  got += len;
  return true;
}

Outcome RangeResponse::conclude() {
  if (refused != Outcome::kOk) return refused;
  const RangeGet& g = *get;
  if (status == 206 || status == 200) {
    if (!body_checked) {  // an empty body: the checks have not run yet
      body_checked = true;
      if (!check()) return refused;
    }
    const uint64_t want = probe ? std::min<uint64_t>(g.length, found.size) : g.length;
    if (got != want) {
      why = "short body (" + std::to_string(got) + " of " + std::to_string(want) + " bytes)";
      return Outcome::kRetry;
    }
    return Outcome::kOk;
  }
  why = "HTTP " + std::to_string(status);
  // An S3 error names itself in <Code>; show it (letters and digits only: it is untrusted).
  const size_t c = body.find("<Code>");
  if (c != std::string::npos) {
    std::string code;
    for (size_t i = c + 6;
         i < body.size() && code.size() < 64 && std::isalnum(static_cast<unsigned char>(body[i])); ++i)
      code.push_back(body[i]);
    if (!code.empty()) why += " (" + code + ")";
  }
  if (status == 412) {
    why += ": the precondition on the image's version failed";
    return Outcome::kChanged;
  }
  if (status == 416 && !probe) {
    why += ": the object is shorter than it was";
    return Outcome::kChanged;
  }
  if (status == 408 || status == 429 || status >= 500) return Outcome::kRetry;
  return Outcome::kFail;
}

}  // namespace gdfs::remote
